#!/usr/bin/env python3
"""Holds the #include lines and the CMake DEPS of every stage against the table of allowed stage
edges in docs/ARCHITECTURE.md (section "Stage edges"). Python 3 standard library only.

    scripts/check_layering.py [--root DIR] [--list-edges]

Rules (docs/ARCHITECTURE.md, "Stage edges", says them for the reader):
- A stage folder is a top-level folder whose CMakeLists.txt calls kforge_add_stage, plus
  kernels/ (headers only) and cli/. Every stage folder has a row; so does every test folder
  tests/<name>/ that holds C++ and is not named after a stage.
- A stage may include its own headers, common/ (every stage links kforge_common), the stages
  of its row, and through them every stage they may include (the closure). `*` allows any
  stage (cli/, the top). An include whose first folder is not a top-level folder of the tree
  (cutlass/, cute/) is external and not checked.
- tests/<stage>/ may include what <stage> may include, <stage> itself, tests/ helpers, and the
  stages (and their closures) in the row's third column (integration tests that reach up).
- The table has no cycle.
- CMake: each stage's kforge_add_stage DEPS kforge_X (and target_link_libraries(kforge_<stage>
  ... kforge_X)) names only stages its row allows, and every stage it includes that is a library
  is reachable through DEPS, directly or transitively (CMake passes PUBLIC links on).

Prints one line per violation, `path:line: message`, and exits 1 if there is any (0 when clean,
2 when the table cannot be read)."""
import argparse
import os
import re
import sys

SOURCE_EXTENSIONS = (".h", ".hpp", ".cpp", ".cu", ".cuh")
# stage folders with no kforge_add_stage call: common (its own add_library, linked by every
# stage), headers only (kernels) and the binary (cli)
EXTRA_STAGES = ("common", "kernels", "cli")
ANY = "*"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/[^"]*"')
TABLE_HEADING = re.compile(r"^#+\s*Stage edges\s*$", re.IGNORECASE)


class TableError(Exception):
    pass


# ---- the table ----

def _names(cell):
    """`a`, `b` c -> ['a', 'b', 'c']; empty, '-', '—' and '(none)' -> []."""
    cell = cell.replace("`", " ").replace(",", " ")
    return [w for w in cell.split() if w not in ("-", "—", "–", "(none)", "none")]


def read_table(doc_path):
    """{row name: (direct deps, tests' extra deps, line)} from the first markdown table after the
    "Stage edges" heading."""
    try:
        with open(doc_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TableError(f"{doc_path}: cannot read ({e.strerror})")
    start = next((i for i, l in enumerate(lines) if TABLE_HEADING.match(l)), None)
    if start is None:
        raise TableError(f"{doc_path}: no '## Stage edges' section")
    rows, in_table = {}, False
    for i in range(start + 1, len(lines)):
        line = lines[i].strip()
        if not line.startswith("|"):
            if in_table:
                break
            if line.startswith("#"):
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not in_table:  # the header row, then the |---| row
            in_table = True
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        names = _names(cells[0])
        if len(names) != 1:
            raise TableError(f"{doc_path}:{i + 1}: a row names one stage in its first cell, "
                             f"got {cells[0]!r}")
        name = names[0].rstrip("/")
        if name in rows:
            raise TableError(f"{doc_path}:{i + 1}: stage {name} has two rows")
        deps = [d.rstrip("/") for d in _names(cells[1])] if len(cells) > 1 else []
        extra = [d.rstrip("/") for d in _names(cells[2])] if len(cells) > 2 else []
        rows[name] = (deps, extra, i + 1)
    if not rows:
        raise TableError(f"{doc_path}:{start + 1}: the 'Stage edges' section has no table rows")
    return rows


def find_cycle(graph):
    """One cycle of `graph` (name -> iterable of names) as [a, b, ..., a], or None."""
    state = {}

    def visit(v, path):
        state[v] = "open"
        for w in sorted(graph.get(v, ())):
            if state.get(w) == "open":
                return path[path.index(w):] + [w]
            if w not in state:
                cycle = visit(w, path + [w])
                if cycle:
                    return cycle
        state[v] = "done"
        return None

    for v in sorted(graph):
        if v not in state:
            cycle = visit(v, [v])
            if cycle:
                return cycle
    return None


def closure(graph, starts):
    """Every name reachable from `starts` (included) through `graph`."""
    seen, todo = set(), list(starts)
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        todo.extend(graph.get(v, ()))
    return seen


# ---- the tree ----

def _strip_cmake_comments(text):
    return "\n".join(l.split("#", 1)[0] for l in text.splitlines())


def _words(text, start, end):
    """[(word, line)] of text[start:end]."""
    return [(m.group(0), text.count("\n", 0, start + m.start()) + 1)
            for m in re.finditer(r"\S+", text[start:end])]


def cmake_stage(folder_cmake):
    """(stage name, [(stage X of a kforge_X dep, line)]) of a CMakeLists.txt that calls
    kforge_add_stage, else None."""
    with open(folder_cmake, encoding="utf-8") as f:
        text = _strip_cmake_comments(f.read())
    m = re.search(r"kforge_add_stage\s*\(([^)]*)\)", text)
    if not m:
        return None
    words = _words(text, m.start(1), m.end(1))
    name = words[0][0]
    deps, in_deps = [], False
    for w, line in words[1:]:
        if w in ("SOURCES", "DEPS"):
            in_deps = w == "DEPS"
        elif in_deps and w.startswith("kforge_"):
            deps.append((w[len("kforge_"):], line))
    for tl in re.finditer(r"target_link_libraries\s*\(\s*kforge_" + re.escape(name) +
                          r"\b([^)]*)\)", text):
        deps += [(w[len("kforge_"):], line) for w, line in _words(text, tl.start(1), tl.end(1))
                 if w.startswith("kforge_")]
    return name, deps


def top_folders(root):
    return sorted(d for d in os.listdir(root)
                  if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))


def source_files(folder):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(SOURCE_EXTENSIONS):
                yield os.path.join(dirpath, fn)


def includes(path):
    """[(line number, first folder of the include)] of the quoted includes of a file."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                out.append((n, m.group(1)))
    return out


def has_sources(folder):
    return next(source_files(folder), None) is not None


# ---- the check ----

def check(root, list_edges=False):
    """[violation lines] of the tree at `root`."""
    doc = os.path.join(root, "docs", "ARCHITECTURE.md")
    rows = read_table(doc)
    rel_doc = os.path.relpath(doc, root)
    problems = []

    folders = top_folders(root)
    libraries = {}  # stage -> [(stage of a kforge_* dep, line)]
    stages = set()
    for d in folders:
        cm = os.path.join(root, d, "CMakeLists.txt")
        if os.path.isfile(cm):
            found = cmake_stage(cm)
            if found:
                name, deps = found
                if name != d:
                    problems.append(f"{d}/CMakeLists.txt:1: kforge_add_stage({name}) in folder "
                                    f"{d}/: a stage's library is named after its folder")
                stages.add(d)
                libraries[d] = deps
    stages |= {d for d in EXTRA_STAGES if d in folders}
    # every top-level folder an include may name: stages and any other folder of the tree
    internal = set(folders)

    # table rows: stages, test folders, rows for folders that are gone
    stage_rows = {k: v for k, v in rows.items() if not k.startswith("tests/")}
    for s in sorted(stages - set(stage_rows)):
        why = "is a stage" if s in EXTRA_STAGES else "calls kforge_add_stage"
        problems.append(f"{s}/: unknown stage: {s}/ {why} but has no row in {rel_doc} "
                        f"'Stage edges'; add one naming the stages it may include")
    for name, (deps, extra, line) in sorted(rows.items()):
        if not os.path.isdir(os.path.join(root, name)):
            problems.append(f"{rel_doc}:{line}: row {name}: there is no folder {name}/")
        for d in deps + extra:
            if d != ANY and d not in stage_rows:
                problems.append(f"{rel_doc}:{line}: row {name} names {d}, which has no row "
                                "(unknown stage)")

    graph = {k: [d for d in v[0] if d != ANY] for k, v in stage_rows.items()}
    cycle = find_cycle(graph)
    if cycle:
        problems.append(f"{rel_doc}:{stage_rows[cycle[0]][2]}: the stage edges form a cycle: "
                        + " -> ".join(cycle))

    def allowed_for(stage):
        """Stages `stage` may include, or None for any."""
        if stage not in stage_rows:
            return None
        deps = stage_rows[stage][0]
        if ANY in deps:
            return None
        return closure(graph, deps) | {stage, "common"}

    edges = {}

    def scan(folder, owner, layer, allowed, what):
        for path in source_files(os.path.join(root, folder)):
            rel = os.path.relpath(path, root)
            for n, target in includes(path):
                if target not in internal:
                    continue  # external: cutlass/, cute/, ...
                edges.setdefault(owner, set()).add(target)
                if allowed is None or target in allowed:
                    continue
                if target in stages or target in stage_rows:
                    kind = ("an upward edge" if layer in closure(graph, [target])
                            else "an edge the table does not declare")
                    problems.append(f"{rel}:{n}: {what} includes {target}/ ({kind}); "
                                    f"its row in {rel_doc} 'Stage edges' allows "
                                    f"{' '.join(sorted(allowed - {owner, layer})) or 'common'}")
                else:
                    problems.append(f"{rel}:{n}: {what} includes {target}/, which is not a "
                                    f"stage (no row in {rel_doc} 'Stage edges')")

    for s in sorted(stages & set(stage_rows)):
        scan(s, s, s, allowed_for(s), f"stage {s}")

    # tests/<name>/
    tests_dir = os.path.join(root, "tests")
    if os.path.isdir(tests_dir):
        for t in top_folders(tests_dir):
            if not has_sources(os.path.join(tests_dir, t)):
                continue
            key = "tests/" + t
            if t in stage_rows:
                base, extra = allowed_for(t), stage_rows[t][1]
            elif key in rows:
                base = allowed_for_row(rows[key][0], graph)
                extra = rows[key][1]
            else:
                inside = [(os.path.relpath(p, root), n, x)
                          for p in source_files(os.path.join(tests_dir, t))
                          for n, x in includes(p) if x in internal and x != "tests"]
                if inside:
                    rel, n, x = inside[0]
                    problems.append(f"{rel}:{n}: unknown test folder: tests/{t}/ includes {x}/ "
                                    f"but is named after no stage with a row and has no row "
                                    f"'tests/{t}' in {rel_doc} 'Stage edges'")
                continue
            if base is None or ANY in extra:
                allowed = None
            else:
                allowed = base | closure(graph, extra) | {"tests", "common"}
            scan(os.path.join("tests", t), key, t, allowed, f"test folder {key}")

    # CMake DEPS against the table and the includes
    lib_graph = {s: [d for d, _ in deps] for s, deps in libraries.items()}
    for s, deps in sorted(libraries.items()):
        cm = f"{s}/CMakeLists.txt"
        if s not in stage_rows:
            continue  # reported above as an unknown stage
        allowed = allowed_for(s)
        for d, line in deps:
            if d not in stages:
                problems.append(f"{cm}:{line}: DEPS kforge_{d}: there is no stage {d}/")
            elif allowed is not None and d not in allowed:
                problems.append(f"{cm}:{line}: DEPS kforge_{d}, but the row of {s} in "
                                f"{rel_doc} 'Stage edges' does not allow {d}")
        reach = closure(lib_graph, [s]) | {"common"}
        for target in sorted(edges.get(s, ())):
            if target in libraries and target not in reach:
                line = next((l for w, l in deps), 1)
                problems.append(f"{cm}:{line}: {s}/ includes {target}/ but kforge_{s} does not "
                                f"link kforge_{target}, directly or through its DEPS (add it "
                                "to DEPS)")
    lib_cycle = find_cycle(lib_graph)
    if lib_cycle:
        problems.append("CMake DEPS form a cycle: " + " -> ".join("kforge_" + c for c in lib_cycle))

    if list_edges:
        for owner in sorted(edges):
            print(f"{owner}: {' '.join(sorted(edges[owner] - {owner}))}")
    return problems


def allowed_for_row(deps, graph):
    if ANY in deps:
        return None
    return closure(graph, deps) | {"common"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."),
                    help="the repository root (default: this script's ../)")
    ap.add_argument("--list-edges", action="store_true",
                    help="also print the include edges found, one line per folder")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    try:
        problems = check(root, args.list_edges)
    except TableError as e:
        print(f"check_layering: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    if problems:
        print(f"check_layering: {len(problems)} layering violation(s); the rules are in "
              "docs/ARCHITECTURE.md, 'Stage edges'")
        return 1
    print("check_layering: every include and DEPS follows docs/ARCHITECTURE.md 'Stage edges'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
