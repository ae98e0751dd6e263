"""The import graph of python/kforge_py has no cycle (issue 22: the fx_* modules once imported
each other in a cycle held together by function-local imports).

Static: every import of a kforge_py module, at the top of a module or inside a function, is an
edge; the graph must be acyclic, and the converter modules (fx_*) import only at the top.
Dynamic: each module imports on its own, first among kforge_py modules (torch loaded once), so
no module relies on another having been imported before it."""
import ast
import importlib.util
import os
import subprocess
import sys
import unittest

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                           "kforge_py")


def modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE_DIR)
                  if f.endswith(".py") and f != "__init__.py")


def imports_of(name, known):
    """[(imported kforge_py module, line, at the top of the module)] of module `name`."""
    with open(os.path.join(PACKAGE_DIR, name + ".py")) as f:
        tree = ast.parse(f.read())
    top = {id(n) for n in tree.body}
    out = []
    for n in ast.walk(tree):
        targets = []
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            if n.module == "kforge_py":  # from kforge_py import fx_ops, EXIT_OK
                targets = [a.name for a in n.names if a.name in known]
            elif n.module.startswith("kforge_py."):
                targets = [n.module.split(".")[1]]
        elif isinstance(n, ast.Import):
            targets = [a.name.split(".")[1] for a in n.names
                       if a.name.startswith("kforge_py.")]
        elif isinstance(n, ast.ImportFrom) and n.level > 0:
            targets = [n.module.split(".")[0]] if n.module else \
                [a.name for a in n.names if a.name in known]
        out += [(t, n.lineno, id(n) in top) for t in targets]
    return out


def _check_layering():
    """scripts/check_layering.py as a module: its find_cycle is the one cycle search (the stage
    edges' and this graph's)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                        "check_layering.py")
    spec = importlib.util.spec_from_file_location("check_layering", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


find_cycle = _check_layering().find_cycle


class ImportGraph(unittest.TestCase):
    maxDiff = None

    def test_graph_is_acyclic(self):
        known = set(modules())
        graph = {m: {t for t, _, _ in imports_of(m, known)} for m in known}
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, "kforge_py modules import each other in a cycle: " +
                          " -> ".join(cycle or []))

    def test_converters_import_at_top(self):
        known = set(modules())
        nested = [f"{m}.py:{line} imports {t} inside a function"
                  for m in sorted(known) if m.startswith("fx_")
                  for t, line, at_top in imports_of(m, known) if not at_top]
        self.assertEqual(nested, [], "the fx_* modules import kforge_py modules at the top "
                         "(shared values in fx_types, shared op chains in fx_chains)")

    def test_find_cycle_finds_one(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}))

    def test_each_module_imports_first(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not installed")
        script = (
            "import importlib, sys, torch, torch.fx\n"
            "bad = []\n"
            "for m in sys.argv[1:]:\n"
            "    for k in [k for k in sys.modules if k.startswith('kforge_py')]:\n"
            "        del sys.modules[k]\n"
            "    try:\n"
            "        importlib.import_module('kforge_py.' + m)\n"
            "    except Exception as e:\n"
            "        bad.append(f'{m}: {type(e).__name__}: {e}')\n"
            "print('\\n'.join(bad))\n"
            "sys.exit(1 if bad else 0)\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(PACKAGE_DIR)))
        run = subprocess.run([sys.executable, "-c", script] + modules(), capture_output=True,
                             text=True, env=env, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
