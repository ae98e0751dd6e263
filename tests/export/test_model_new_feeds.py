"""ModelNew feeds every input of the exported op, checked on the CPU (no GPU, no compile):
kforge's own KernelBench-format files under fixtures/ - an LSTM whose forward() draws h0 and c0
(drawn arguments), a causal mask cut from a buffer (a folded bool constant), a table gathered
by a constant index buffer (a folded one-hot matrix), constants forward() makes from literals
and a scalar argument (made constants, a baked number) - imported with `kforge import
kernelbench`, exported with `kforge export --no-build --kernelbench`, and model_new.py run with
the op replaced by kforge_py.export.check_model_new's CPU stand-in: the package's own call
check, the arguments recorded, the outputs from the spec's fp64 interpreter (`kforge
interpret`). Each must feed, in the spec's order, exactly what the importer fed its check, and
give Model's outputs. Mutations of model_new.py (h0 and c0 drawn in the other order, a constant
left out, a stale cached constant) must fail. An op of more than PyTorch's 64 schema arguments
(deep_mlp_packed: 81) takes its inputs as one list; the real package registers it (compiled op
or ctypes path) and checks a call."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:  # scripts/setup.sh installs torch in .venv
    sys.exit(77)

from kforge_py.export import check_model_new as check
from kforge_py.export import feed_plan

CLI = os.environ["KFORGE_CLI"]
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
NAMES = ["lstm_drawn_state", "causal_mask_buffer", "gather_one_hot", "made_constant",
         "deep_mlp_packed", "pooled_flatten_linear"]
KINDS = {"lstm_drawn_state": {"arg", "drawn", "attr"}, "causal_mask_buffer": {"arg", "fold"},
         "gather_one_hot": {"arg", "attr", "fold"}, "made_constant": {"arg", "attr", "made"},
         "deep_mlp_packed": {"arg", "attr"}, "pooled_flatten_linear": {"arg", "attr"}}


def kforge(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


class ModelNewFeedsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kforge-model-new-")
        specs = os.path.join(cls.tmp.name, "specs")
        cls.imported = kforge("import", "kernelbench",
                              *[os.path.join(FIXTURES, n + ".py") for n in NAMES], "-o", specs)
        procs = {}
        for n in NAMES:  # the exports in parallel: each starts Python and the planner
            spec = os.path.join(specs, n + ".json")
            if os.path.exists(spec):
                procs[n] = subprocess.Popen(
                    [CLI, "export", spec, "-o", os.path.join(cls.tmp.name, n), "--no-build",
                     "--kernelbench", FIXTURES], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True)
        cls.exports = {n: (p.wait(timeout=300), p.communicate()[1]) for n, p in procs.items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def out(self, name):
        rc, err = self.exports.get(name, (None, self.imported.stdout + self.imported.stderr))
        self.assertEqual(rc, 0, err)
        return os.path.join(self.tmp.name, name)

    def run_check(self, out, name, interpret=True):
        work = tempfile.mkdtemp(dir=self.tmp.name)
        compute = check.interpret(CLI, os.path.join(out, "spec.json"), work) if interpret \
            else None
        return check.check(out, os.path.join(FIXTURES, name + ".py"), compute=compute)

    def mutated(self, name, old, new):
        """A copy of name's export with model_new.py's `old` replaced by `new`."""
        src = self.out(name)
        dst = tempfile.mkdtemp(dir=self.tmp.name)
        shutil.rmtree(dst)
        shutil.copytree(src, dst)
        path = os.path.join(dst, "model_new.py")
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, "w") as f:
            f.write(text.replace(old, new))
        return dst

    def test_every_input_fed_as_the_importer_fed_it(self):
        for name in NAMES:
            with self.subTest(fixture=name):
                out = self.out(name)
                with open(os.path.join(out, "spec.json")) as f:
                    spec = json.load(f)
                p = feed_plan.plan(os.path.join(FIXTURES, name + ".py"), spec)
                self.assertEqual({f.kind for f in p.feeds}, KINDS[name])
                problems, standin = self.run_check(out, name)
                self.assertEqual(problems, [])
                self.assertEqual(len(standin.calls[0]), len(spec["inputs"]))
        self.assertTrue(os.path.exists(os.path.join(self.out("made_constant"), "constants.pt")))

    def test_unmeasured_launch_mode_by_launch_count(self):
        """A spec exported without a run has no measured launch mode (driver/export.cpp): a plan
        of 16 launches or more is launched as one CUDA graph, a shorter one on the stream; the
        evidence says why."""
        for name, want in (("deep_mlp_packed", "graph"), ("lstm_drawn_state", "stream")):
            with self.subTest(fixture=name):
                out = self.out(name)
                plan_path = glob.glob(os.path.join(out, "*", "program", "plan.json"))[0]
                with open(plan_path) as f:
                    plan = json.load(f)
                with open(os.path.join(out, "evidence.json")) as f:
                    ev = json.load(f)
                self.assertEqual(plan["launch_mode"], want)
                self.assertEqual(ev["launch_mode"], want)
                self.assertIn(f"{len(plan['kernels'])} launches", ev["launch_mode_reason"])
                self.assertEqual(len(plan["kernels"]) >= 16, want == "graph")

    def test_draw_missing_draws_as_forward(self):
        """model_new.draw_missing (the harness gives Model and ModelNew its draws): the same
        tensors forward() draws, seeded alike."""
        problems, standin = self.run_check(self.out("lstm_drawn_state"), "lstm_drawn_state",
                                           interpret=False)
        self.assertEqual(problems, [])
        ns = standin.load()
        torch.manual_seed(1)
        full = ns["draw_missing"](*ns["get_inputs"]())
        self.assertEqual(len(full), 3)
        for got, fed in zip(full, standin.calls[0][:3]):
            self.assertTrue(torch.equal(got, fed))
        self.assertIsNone(check.StandIn(self.out("gather_one_hot")).load()["draw_missing"])

    def test_draws_in_the_other_order_fail(self):
        h0 = ("        if h0 is None:  # drawn as Model draws it (the same RNG call)\n"
              "            h0 = torch.randn((2, 4, 16), dtype=torch.float32, device=_dev)\n")
        c0 = h0.replace("h0", "c0")
        out = self.mutated("lstm_drawn_state", h0 + c0, c0 + h0)
        problems, _ = self.run_check(out, "lstm_drawn_state")
        self.assertTrue(any(p.startswith("input h0: not what the importer fed") for p in problems),
                        problems)
        self.assertTrue(any(p.startswith("output 0: ModelNew's differs") for p in problems),
                        problems)

    def test_a_missing_draw_or_constant_fails(self):
        out = self.mutated("lstm_drawn_state", "(x, h0, c0, s[0]", "(x, h0, h0, s[0]")
        problems, _ = self.run_check(out, "lstm_drawn_state", interpret=False)
        self.assertIn("input c0: not what the importer fed", problems[0])
        out = self.mutated("made_constant", "(x, s[0], s[1], s[2], s[3])",
                           "(x, s[0], s[2], s[3])")
        with self.assertRaisesRegex(RuntimeError, "missing value for argument"):
            self.run_check(out, "made_constant", interpret=False)
        out = self.mutated("gather_one_hot", "_fold_one_hot_rows(_f0, 9, torch.float32)",
                           "_fold_one_hot_rows(_f0.flip(0), 9, torch.float32)")
        problems, _ = self.run_check(out, "gather_one_hot")
        self.assertTrue(any("_one_hot: not what the importer fed" in p for p in problems),
                        problems)

    def test_cached_feeds_follow_the_state(self):
        """The views and folded constants are computed once and reused; a buffer changed in
        place (load_state_dict), a parameter replaced, or .to() computes them again."""
        out = self.out("causal_mask_buffer")
        standin = check.StandIn(out)
        ns = standin.load()
        m = ns["ModelNew"](*ns["get_init_inputs"]())
        x = ns["get_inputs"]()[0]
        m(x)
        m(x)
        cache = m.__dict__["_kforge_cache"]
        m(x)
        self.assertIs(m.__dict__["_kforge_cache"], cache)  # reused
        self.assertFalse(bool(standin.calls[-1][1].all()))  # a causal mask: some dropped
        state = m.state_dict()
        state["bias"] = torch.ones_like(state["bias"])
        m.load_state_dict(state)  # copied in place: the buffer's version moves
        m(x)
        self.assertTrue(bool(standin.calls[-1][1].all()))
        m.float()
        self.assertNotIn("_kforge_cache", m.__dict__)
        out = self.out("gather_one_hot")
        standin = check.StandIn(out)
        ns = standin.load()
        m = ns["ModelNew"](*ns["get_init_inputs"]())
        x = ns["get_inputs"]()[0]
        m(x)
        m.table = torch.nn.Parameter(torch.zeros_like(m.table))
        m(x)
        self.assertEqual(float(standin.calls[-1][1].abs().sum()), 0.0)

    def test_scalar_argument_checked(self):
        out = self.out("made_constant")
        ns = check.StandIn(out).load()
        m = ns["ModelNew"](*ns["get_init_inputs"]())
        x = ns["get_inputs"]()[0]
        with self.assertRaisesRegex(ValueError, "argument power is 3; the exported program "
                                                "was built for 2"):
            m(x, 3)

    def test_compile_fullgraph(self):
        """torch.compile(fullgraph=True) of ModelNew (backend eager: no C++ compiler needed):
        the draws, the folded constants and the views traced plainly, the same outputs."""
        for name in ("lstm_drawn_state", "gather_one_hot"):
            with self.subTest(fixture=name):
                standin = check.StandIn(self.out(name))
                ns = standin.load()
                m = ns["ModelNew"](*ns["get_init_inputs"]())
                torch.manual_seed(5)
                inputs = ns["get_inputs"]()
                torch.manual_seed(6)
                m(*inputs)
                compiled = torch.compile(m, fullgraph=True, backend="eager")
                torch.manual_seed(6)
                compiled(*inputs)
                for a, b in zip(standin.calls[-2], standin.calls[-1]):
                    self.assertTrue(torch.equal(a, b))

    def test_more_inputs_than_a_schema_takes(self):
        out = self.out("deep_mlp_packed")
        with open(os.path.join(out, "model_new.py")) as f:
            self.assertIn("torch.ops.kforge.deep_mlp_packed([x, s[0], ", f.read())
        # the real package, in a child (it registers kforge::deep_mlp_packed for real): opcheck
        # on meta tensors, the named errors of a bad call
        code = (
            "import sys, torch; sys.path.insert(0, sys.argv[1]); import kforge_deep_mlp_packed "
            "as m\n"
            "assert m.PACKED and m.SCHEMA.startswith('(Tensor[] inputs)'), m.SCHEMA\n"
            "args = [torch.empty(d.shape, dtype=d.dtype, device='meta') for d in "
            "m.PROGRAM.inputs]\n"
            "assert len(args) == 81\n"
            "assert tuple(m.op(args).shape) == (4, 16)\n"
            "torch.library.opcheck(m.op, (args,))\n"
            "for bad, words in ((args[:-1], 'takes 81 tensors'), ([torch.zeros(d.shape, "
            "dtype=d.dtype) for d in m.PROGRAM.inputs], \"'x' is on cpu\")):\n"
            "    try:\n"
            "        m.op(bad)\n"
            "    except ValueError as e:\n"
            "        assert words in str(e), e\n"
            "    else:\n"
            "        raise AssertionError('no ValueError')\n"
            "print('native' if m.NATIVE else 'ctypes')\n")
        r = subprocess.run([sys.executable, "-c", code, out], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
