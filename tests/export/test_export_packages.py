"""`kforge export --no-build` of every built-in suite problem (problems/*.json with its .kf) and
of the KernelBench examples (examples/kernelbench, imported with `kforge import kernelbench`,
exported with --kernelbench): the package imports, its custom op passes torch.library.opcheck on
meta tensors, bad calls raise the named ValueError, a call that would launch says the package has
no cubin, and ModelNew matches Model (parameter and buffer names, shapes, seeded values,
load_state_dict both ways). No GPU, no compile (the export lowers only)."""
import glob
import importlib
import time
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

SRC = os.environ["KFORGE_SOURCE_DIR"]
CLI = os.environ["KFORGE_CLI"]
# KernelBench examples the export test covers (each import and export with ModelNew starts
# PyTorch in a child, seconds each, so three): a linear layer's weight and bias feeding the op,
# a norm's affine parameters, a loss whose scalar output ModelNew reshapes back. bench/export
# exports ten on the GPU.
KB_EXAMPLES = ["01_gemm_bias_relu", "04_layer_norm", "23_mse_loss"]


def kforge(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))


def import_package(out, package):
    sys.path.insert(0, out)
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(out)


def meta_args(mod):
    return [torch.empty(d.shape, dtype=d.dtype, device="meta") for d in mod.PROGRAM.inputs]


class ExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kforge-export-test-")
        cls.exported = {}  # problem -> (folder, package)
        t0 = time.time()
        for spec in sorted(glob.glob(os.path.join(SRC, "problems", "*.json"))):
            if not os.path.exists(spec[:-5] + ".kf"):
                continue
            name = os.path.basename(spec)[:-5]
            out = os.path.join(cls.tmp.name, name)
            r = kforge("export", spec, "-o", out, "--no-build")
            cls.exported[name] = (out, r)
        cls.time_builtin_s = time.time() - t0
        cls.kb = {}
        kb_dir = os.path.join(SRC, "examples", "kernelbench")
        files = [os.path.join(kb_dir, f + ".py") for f in KB_EXAMPLES]
        specs = os.path.join(cls.tmp.name, "kb_specs")
        r = kforge("import", "kernelbench", *files, "-o", specs)
        cls.kb_import = r
        for f in KB_EXAMPLES:
            spec = os.path.join(specs, "kb_" + f + ".json")  # the importer's name for it
            if not os.path.exists(spec):
                continue
            out = os.path.join(cls.tmp.name, "kb_" + f)
            cls.kb[f] = (out, kforge("export", spec, "-o", out, "--no-build",
                                     "--kernelbench", kb_dir))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def package_of(self, out):
        pkgs = [d for d in os.listdir(out) if d.startswith("kforge_")]
        self.assertEqual(len(pkgs), 1, os.listdir(out))
        return import_package(out, pkgs[0])

    def check_package(self, name, out, r):
        self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        mod = self.package_of(out)
        op = mod.op
        args = meta_args(mod)
        outs = op(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        self.assertEqual([tuple(o.shape) for o in outs], [d.shape for d in mod.PROGRAM.outputs])
        torch.library.opcheck(op, args)
        # bad calls: the named ValueError, never a fallback
        first = mod.PROGRAM.inputs[0]
        wrong_shape = list(args)
        wrong_shape[0] = torch.empty([s + 1 for s in first.shape] or [2], dtype=first.dtype,
                                     device="meta")
        with self.assertRaisesRegex(ValueError, f"input '{first.name}' has shape"):
            op(*wrong_shape)
        other = torch.float64 if first.dtype != torch.float64 else torch.float32
        wrong_dtype = list(args)
        wrong_dtype[0] = torch.empty(first.shape, dtype=other, device="meta")
        with self.assertRaisesRegex(ValueError, f"input '{first.name}' has dtype"):
            op(*wrong_dtype)
        cpu = [torch.zeros(d.shape, dtype=d.dtype) for d in mod.PROGRAM.inputs]
        with self.assertRaisesRegex(ValueError, f"input '{first.name}' is on cpu"):
            op(*cpu)
        with self.assertRaisesRegex(ValueError, "takes"):
            mod.PROGRAM.check(args[:-1], fake=True)
        # a launch of a --no-build package is refused with the reason
        with self.assertRaisesRegex(RuntimeError, "exported with --no-build"):
            mod.PROGRAM._handle(torch.device("cuda", 0))
        for f in ("README.md", "spec.json", "evidence.json", "program.kf", "pyproject.toml"):
            self.assertTrue(os.path.exists(os.path.join(out, f)), f)
        return mod

    def test_builtin_problems(self):
        self.assertGreaterEqual(len(self.exported), 30)
        for name, (out, r) in self.exported.items():
            with self.subTest(problem=name):
                self.check_package(name, out, r)

    def test_kernelbench_model_new(self):
        self.assertEqual(sorted(self.kb), sorted(KB_EXAMPLES), self.kb_import.stdout +
                         self.kb_import.stderr)
        for f, (out, r) in self.kb.items():
            with self.subTest(example=f):
                self.check_package(f, out, r)
                self.assertTrue(os.path.exists(os.path.join(out, "model_new.py")))
                sys.path.insert(0, out)
                try:
                    ns = {"__file__": os.path.join(out, "model_new.py")}
                    with open(ns["__file__"]) as fh:
                        exec(compile(fh.read(), ns["__file__"], "exec"), ns)
                finally:
                    sys.path.remove(out)
                Model, ModelNew = ns["Model"], ns["ModelNew"]
                self.assertTrue(issubclass(ModelNew, torch.nn.Module))
                init = ns["get_init_inputs"]()
                torch.manual_seed(42)
                m = Model(*init)
                torch.manual_seed(42)
                mn = ModelNew(*init)
                sm, snew = m.state_dict(), mn.state_dict()
                self.assertEqual(list(sm), list(snew))
                for k in sm:
                    self.assertEqual(sm[k].shape, snew[k].shape, k)
                    self.assertTrue(torch.equal(sm[k], snew[k]), k)
                self.assertEqual([n for n, _ in m.named_parameters()],
                                 [n for n, _ in mn.named_parameters()])
                torch.manual_seed(7)
                other = ModelNew(*init)
                m.load_state_dict(other.state_dict())
                other.load_state_dict(m.state_dict())
                # forward on meta inputs goes through the op's fake implementation
                meta = ModelNew(*init).to("meta")
                inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x
                          for x in ns["get_inputs"]()]
                ref = Model(*init).to("meta")(*inputs)
                got = meta(*inputs)
                ref = ref if isinstance(ref, tuple) else (ref,)
                got = got if isinstance(got, tuple) else (got,)
                self.assertEqual([r.shape for r in ref], [g.shape for g in got])

    def test_export_from_run_and_folder(self):
        """The best program of a run in the store, and an optimize --out folder (simulated
        device: a one-round search), with their evidence."""
        spec = os.path.join(SRC, "problems", "softmax_short_rows_f32.json")
        env = {"KFORGE_DB": os.path.join(self.tmp.name, "runs.db")}
        opt = os.path.join(self.tmp.name, "opt")
        r = kforge("optimize", spec, "--device", "sim", "--out", opt, "--rounds", "1",
                   "--per-round", "1", "--profile-top", "0", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.tmp.name, "from_run")
        r = kforge("export", "1", "-o", out, "--no-build", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "evidence.json")) as f:
            ev = json.load(f)
        self.assertTrue(ev["simulated"])
        self.assertGreater(ev["median_ns"], 0)
        self.assertIn("correctness_full", [g["gate"] for g in ev["gates"]])
        with open(os.path.join(out, "README.md")) as f:
            self.assertIn("simulated device's model, not a measurement", f.read())
        self.check_package("from_run", out, r)
        out = os.path.join(self.tmp.name, "from_folder")
        r = kforge("export", opt, "-o", out, "--no-build", "--spec", spec)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "program.kf")) as f, open(os.path.join(opt, "best.kf")) as g:
            self.assertEqual(f.read().strip(), g.read().strip())
        # the launch mode the evaluation chose reaches the package's plan.json (the runtime
        # launches by it): stream on the simulated device; a timing gate that chose the graph
        # (eval/launch_mode.h) exports "graph"
        self.assertEqual(ev["launch_mode"], "stream")
        plans = glob.glob(os.path.join(self.tmp.name, "from_run", "*", "program", "plan.json"))
        self.assertEqual(len(plans), 1)
        with open(plans[0]) as f:
            plan = json.load(f)
        self.assertEqual(plan["launch_mode"], "stream")
        self.assertGreaterEqual(plan["memory"]["peak_bytes"], plan["memory"]["io_bytes"])
        with open(os.path.join(opt, "evidence.json")) as f:
            folder_ev = json.load(f)
        for g in folder_ev["gates"]:
            if g["gate"] == "timing":
                g["evidence"]["launch_mode"] = "graph"
        with open(os.path.join(opt, "evidence.json"), "w") as f:
            json.dump(folder_ev, f)
        out = os.path.join(self.tmp.name, "from_folder_graph")
        r = kforge("export", opt, "-o", out, "--no-build", "--spec", spec)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(glob.glob(os.path.join(out, "*", "program", "plan.json"))[0]) as f:
            self.assertEqual(json.load(f)["launch_mode"], "graph")
        r = kforge("export", "99", "-o", os.path.join(self.tmp.name, "z"), env=env)
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_optimize_and_suite_export(self):
        """optimize --export DIR and suite --export DIR (simulated device, one round): the best
        program built and exported there (DIR itself; a suite: DIR/<problem>), its evidence
        from the run; --export-kernelbench without --export is a user error."""
        env = {"KFORGE_DB": os.path.join(self.tmp.name, "conv.db")}
        one = ["--device", "sim", "--rounds", "1", "--per-round", "1", "--profile-top", "0"]
        spec = os.path.join(SRC, "problems", "softmax_short_rows_f32.json")
        out = os.path.join(self.tmp.name, "opt_export")
        r = kforge("optimize", spec, *one, "--export", out, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("exported softmax_short_rows_f32", r.stdout)
        with open(os.path.join(out, "evidence.json")) as f:
            self.assertTrue(json.load(f)["simulated"])
        with open(os.path.join(out, "kforge_softmax_short_rows_f32", "program",
                               "runtime.json")) as f:
            self.assertTrue(json.load(f)["built"])
        folder = os.path.join(self.tmp.name, "suite_specs")
        os.makedirs(folder)
        for name in ("softmax_short_rows_f32", "row_sum_f32"):
            shutil.copy(os.path.join(SRC, "problems", name + ".json"), folder)
        out = os.path.join(self.tmp.name, "suite_export")
        r = kforge("suite", folder, *one, "--export", out, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for name in ("softmax_short_rows_f32", "row_sum_f32"):
            self.assertTrue(os.path.exists(os.path.join(out, name, "evidence.json")), name)
        r = kforge("optimize", spec, *one, "--export-kernelbench", folder, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--export", r.stderr)

    def test_arch_rule(self):
        name, (out, _) = next(iter(self.exported.items()))
        mod = self.package_of(out)
        runs = mod._kforge_op.arch_runs_on
        self.assertTrue(runs("sm_90a", (9, 0)))
        self.assertFalse(runs("sm_90a", (10, 0)))   # arch-specific: that cc only
        self.assertFalse(runs("sm_90a", (8, 9)))
        self.assertTrue(runs("sm_80", (8, 6)))      # portable: later minors of the major
        self.assertFalse(runs("sm_86", (8, 0)))

    def test_bad_export_requests(self):
        bad = os.path.join(self.tmp.name, "bad.kf")
        with open(bad, "w") as f:
            f.write("program p for \"softmax_long_rows_f32\"\nkernel k0 = nonsense\n")
        r = kforge("export", os.path.join(SRC, "problems", "softmax_long_rows_f32.json"),
                   "--program", bad, "-o", os.path.join(self.tmp.name, "w"), "--no-build")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("bad.kf", r.stderr)
        r = kforge("export", os.path.join(SRC, "problems", "softmax_long_rows_f32.json"), "-o",
                   os.path.join(self.tmp.name, "x"), "--arch", "sm_80", "--no-build")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--arch sm_80 is not the arch of device", r.stderr)
        r = kforge("export", self.tmp.name, "-o", os.path.join(self.tmp.name, "y"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--spec", r.stderr)


if __name__ == "__main__":
    unittest.main()
