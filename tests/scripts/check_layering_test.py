"""scripts/check_layering.py fails on what it must catch: an upward #include added to a copy of
the real tree (named by file and line), a cycle in the table, an include whose stage is missing
from CMake DEPS, a stage folder with no row; and passes a tree that keeps the table. Standard
library only; no GPU, no build."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE_DIR = os.environ.get(
    "KFORGE_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check_layering.py")
KEEP = (".h", ".hpp", ".cpp", ".cu", ".cuh")


def run_check(root):
    run = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                         text=True, timeout=60)
    return run.returncode, run.stdout + run.stderr


def copy_tree(dst):
    """The sources, CMakeLists.txt files and docs/ARCHITECTURE.md of the real tree under dst
    (every top-level folder, so the script sees the same folders)."""
    def ignore(folder, names):
        return [n for n in names if not os.path.isdir(os.path.join(folder, n))
                and not n.endswith(KEEP) and n not in ("CMakeLists.txt", "ARCHITECTURE.md")]
    for d in os.listdir(SOURCE_DIR):
        src = os.path.join(SOURCE_DIR, d)
        if d.startswith(".") or not os.path.isdir(src):
            continue
        if d == "build":
            os.makedirs(os.path.join(dst, d))
            continue
        shutil.copytree(src, os.path.join(dst, d), ignore=ignore, symlinks=True)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(textwrap.dedent(text))


TABLE = """\
    # arch

    ## Stage edges

    | stage | may include (direct deps) | its tests may also include |
    |---|---|---|
    | `common` | — | |
    | `problem` | — | |
    | `dsl` | `problem` | |
    | `search` | `dsl` | |
    | `llm` | `search` | |
    | `cli` | `*` | |

    ## Next section
    """


def small_tree(root, table=TABLE):
    """common <- problem <- dsl <- search <- llm, cli on top, each a stage that keeps the table."""
    write(root, "docs/ARCHITECTURE.md", table)
    write(root, "common/expected.h", "#pragma once\n")
    write(root, "problem/CMakeLists.txt", "kforge_add_stage(problem SOURCES p.cpp)\n")
    write(root, "problem/p.h", '#pragma once\n#include "common/expected.h"\n')
    write(root, "dsl/CMakeLists.txt", "kforge_add_stage(dsl SOURCES d.cpp DEPS kforge_problem)\n")
    write(root, "dsl/d.h", '#pragma once\n#include "problem/p.h"\n#include "cutlass/gemm.h"\n')
    write(root, "search/CMakeLists.txt",
          "# the search stage\nkforge_add_stage(search\n    SOURCES s.cpp\n"
          "    DEPS kforge_dsl)\n")
    write(root, "search/s.h", '#pragma once\n#include "dsl/d.h"\n#include "problem/p.h"\n')
    write(root, "llm/CMakeLists.txt",
          "kforge_add_stage(llm\n    SOURCES l.cpp\n    DEPS kforge_search CURL::libcurl)\n")
    write(root, "llm/l.cpp", '#include "search/s.h"\n#include <string>\n')
    write(root, "cli/main.cpp", '#include "llm/l.h"\n#include "search/s.h"\n')
    write(root, "tests/dsl/d_test.cpp", '#include "dsl/d.h"\n#include "tests/util.h"\n')


class RealTree(unittest.TestCase):
    def test_upward_include_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            copy_tree(root)
            _, before = run_check(root)
            target = os.path.join(root, "problem", "work.cpp")
            with open(target) as f:
                lines = f.read().splitlines()
            lines.insert(1, '#include "search/loop.h"')
            with open(target, "w") as f:
                f.write("\n".join(lines) + "\n")
            rc, out = run_check(root)
            print("\n".join(l for l in out.splitlines() if l.startswith("problem/")))
            self.assertNotIn("problem/work.cpp:2:", before)
            self.assertEqual(rc, 1, out)
            self.assertIn("problem/work.cpp:2: stage problem includes search/ (an upward edge)",
                          out)


class SmallTree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_clean_tree_passes(self):
        small_tree(self.root)
        rc, out = run_check(self.root)
        self.assertEqual(rc, 0, out)

    def test_undeclared_edge(self):
        small_tree(self.root)
        write(self.root, "dsl/bad.cpp", '#include "dsl/d.h"\n\n#include "llm/l.h"\n')
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("dsl/bad.cpp:3: stage dsl includes llm/ (an upward edge)", out)

    def test_test_folder_reaches_up_only_where_declared(self):
        small_tree(self.root)
        write(self.root, "tests/dsl/up_test.cpp", '#include "search/s.h"\n')
        rc, out = run_check(self.root)
        self.assertIn("tests/dsl/up_test.cpp:1: test folder tests/dsl includes search/", out)
        small_tree(self.root, TABLE.replace("| `dsl` | `problem` | |",
                                            "| `dsl` | `problem` | `search` |"))
        rc, out = run_check(self.root)
        self.assertEqual(rc, 0, out)

    def test_cycle_in_table(self):
        small_tree(self.root, TABLE.replace("| `problem` | — | |", "| `problem` | `llm` | |"))
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("the stage edges form a cycle: dsl -> problem -> llm -> search -> dsl", out)

    def test_missing_deps(self):
        small_tree(self.root)
        write(self.root, "llm/CMakeLists.txt",
              "kforge_add_stage(llm\n    SOURCES l.cpp\n    DEPS kforge_problem)\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("llm/CMakeLists.txt:3: llm/ includes search/ but kforge_llm does not link "
                      "kforge_search", out)

    def test_deps_the_row_does_not_allow(self):
        small_tree(self.root)
        write(self.root, "dsl/CMakeLists.txt",
              "kforge_add_stage(dsl SOURCES d.cpp DEPS kforge_problem kforge_search)\n")
        rc, out = run_check(self.root)
        self.assertIn("dsl/CMakeLists.txt:1: DEPS kforge_search, but the row of dsl", out)

    def test_unknown_stage_is_reported(self):
        small_tree(self.root)
        write(self.root, "planner/CMakeLists.txt",
              "kforge_add_stage(planner SOURCES x.cpp DEPS kforge_dsl)\n")
        write(self.root, "planner/x.cpp", '#include "dsl/d.h"\n')
        write(self.root, "search/uses_planner.cpp", '#include "planner/x.h"\n')
        rc, out = run_check(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("planner/: unknown stage", out)
        self.assertIn("search/uses_planner.cpp:1: stage search includes planner/", out)

    def test_no_table(self):
        small_tree(self.root, "# arch\n\nno table here\n")
        rc, out = run_check(self.root)
        self.assertEqual(rc, 2, out)
        self.assertIn("no '## Stage edges' section", out)


if __name__ == "__main__":
    unittest.main()
