"""Shared helpers of the python/ tests: the kforge binary, the example files, and a skip
(exit 77, which CTest reports as skipped) where PyTorch is missing."""
import json
import os
import subprocess
import sys
import unittest

try:
    import torch  # noqa: F401
except ImportError:
    print(f"SKIP: PyTorch is not installed for {sys.executable}; "
          "scripts/setup.sh installs it into .venv", flush=True)
    sys.exit(77)

SOURCE_DIR = os.environ.get("KFORGE_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
KFORGE = os.environ.get("KFORGE_CLI", os.path.join(SOURCE_DIR, "build", "dev", "cli", "kforge"))
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "kernelbench")
SUPPORTED = ["01_gemm_bias_relu", "02_bmm", "03_softmax", "04_layer_norm", "05_group_norm",
             "06_gemm_gelu_chain", "07_reductions", "08_rms_norm_manual", "09_conv2d_relu",
             "11_matmul_transposed", "12_activation_mix", "13_matrix_scalar",
             "14_square_matmul", "15_gemm_sigmoid_residual", "16_matmul_irregular",
             "17_linear_3d_gelu", "18_matvec", "19_selu_hardsigmoid_l2norm",
             "20_instance_norm", "21_l1_l2_normalize", "22_cumsum",
             "23_mse_loss", "24_hinge_loss", "25_frobenius_norm", "26_huber_loss",
             "27_cosine_similarity_loss", "28_triplet_margin_loss", "29_kl_div_loss",
             "30_prod_reduction", "31_gemm_min_hardswish_std", "32_elementwise_math",
             "33_batchnorm", "34_einsum_4d", "35_diag_matmul", "36_conv2d_bias_relu",
             "37_conv2d_strided", "40_conv1d_dilated_strided", "41_conv3d_asymmetric",
             "42_depthwise_separable_conv", "43_conv_transpose1d",
             "44_conv_transpose2d_grouped_relu", "45_conv_transpose3d_bias_add",
             "46_conv_functional_forms", "60_argmax_argmin", "61_masked_fill_where",
             "62_masked_cumsum", "63_cross_entropy", "64_triangular_matmul",
             "65_cross_entropy_module", "70_max_pool_1d_dilated", "71_max_pool_2d",
             "72_avg_pool_2d_ceil", "73_avg_pool_3d", "74_adaptive_pools",
             "75_conv2d_max_pool_relu", "76_global_avg_pool_mean", "90_diag_matmul_unsqueeze",
             "91_cumsum_exclusive_cat", "92_flatten_linear", "93_permute_transpose",
             "94_slice_index", "95_cat_stack_split", "96_constant_pad", "97_expand_broadcast",
             "80_resnet_basic_blocks", "81_causal_attention", "82_shape_branch_shuffle",
             "83_multihead_attention_encoder", "84_lstm_two_layer",
             "85_gru_bidirectional_batch_first", "100_dense_cat_channels", "101_channel_shuffle",
             "102_permute_gemm", "103_flatten_slice_linear", "110_collapse_at_tiny_sizes",
             "111_weak_recurrence", "120_batched_matmul_4d", "121_matmul_broadcast_batch",
             "122_matmul_rank5_fold", "130_window_scores_bias_softmax",
             "131_pairwise_distance_smoother", "132_chunk_decay_short_scan"]
DEGENERATE = ["10_degenerate_gemm_max", "112_degenerate_below_noise"]  # refused by the import


def import_fixture(test, stem):
    """`kforge import kernelbench` of our own network fixture fixtures/networks/STEM.py:
    (its stdout, the spec it wrote); `test` fails where the import does."""
    import tempfile
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "networks",
                        stem + ".py")
    with tempfile.TemporaryDirectory() as d:
        r = kforge("import", "kernelbench", path, "-o", d)
        test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout, load_json(os.path.join(d, stem + ".json"))


class ImportedFixtures(unittest.TestCase):
    """A TestCase whose setUpClass imports its files FILES (stems) with `kforge import
    kernelbench` once into a temporary folder (the exit code and output in rc / log / result),
    removed by tearDownClass; spec_path(stem) / spec(stem) give each spec. fixture(stem) says
    where a stem's file is (default: fixtures/sweep/STEM.py)."""
    FILES = ()

    @staticmethod
    def fixture(stem):
        return sweep_fixture(stem)

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.TemporaryDirectory()
        cls.result = kforge("import", "kernelbench", *[cls.fixture(s) for s in cls.FILES],
                            "-o", cls.tmp.name)
        cls.rc, cls.log = cls.result.returncode, cls.result.stdout + cls.result.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def spec_path(self, stem):
        from kforge_py import spec_build
        return os.path.join(self.tmp.name, spec_build.problem_name(stem) + ".json")

    def spec(self, stem):
        return load_json(self.spec_path(stem))

    def optimize_sim(self, stem, *args):
        """`kforge optimize` of stem's spec on the simulated device, one round (its own db and
        out folder in the temporary folder): the CompletedProcess."""
        return kforge("optimize", self.spec_path(stem), "--device", "sim", "--rounds", "1",
                      "--profile-top", "0", "--db", os.path.join(self.tmp.name, stem + ".db"),
                      "--out", os.path.join(self.tmp.name, stem + "_out"), *args)


def sweep_fixture(stem):
    """Our own KernelBench-format file tests/python/fixtures/sweep/STEM.py."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "sweep",
                        stem + ".py")


def ops_of(spec, kind):
    """The spec's graph ops of one kind, in order."""
    return [op for op in spec["graph"] if op["op"] == kind]


def import_lines(stdout):
    """`kforge import kernelbench`'s per-file lines by file stem: (status, message)."""
    lines = {}
    for line in stdout.splitlines():
        status, _, rest = line.partition(": ")
        path, _, msg = rest.partition(": ")
        lines[os.path.splitext(os.path.basename(path))[0]] = (status, msg)
    return lines


def example(stem):
    return os.path.join(EXAMPLES, stem + ".py")


def kforge(*args, env=None, timeout=600):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([KFORGE] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def validate(spec, loaded, path):
    """import_kernelbench.validate of `spec` (written to a temporary file) against the module
    `loaded` from `path`: (the degenerate flag or None, the summary line); raises ImportFailed
    where they differ."""
    import tempfile
    from kforge_py import import_kernelbench
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        with open(out, "w") as f:
            json.dump(spec, f)
        return import_kernelbench.validate(KFORGE, spec, out, loaded, path)


def kernelbench_file(init, forward, inputs, sizes):
    """A KernelBench-format module file (deleted by the caller, or by build_file): `init` in
    __init__ after super().__init__(), the statements `forward` as forward(x)'s body, `sizes` as
    its globals and `inputs` as get_inputs()'s list."""
    import tempfile
    import textwrap
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
        {init}
            def forward(self, x):
        {forward}

        {sizes}

        def get_inputs():
            return [{inputs}]

        def get_init_inputs():
            return []
        """).format(init=textwrap.indent(textwrap.dedent(init), " " * 8) if init else "",
                    forward=textwrap.indent(textwrap.dedent(forward), " " * 8),
                    sizes=sizes, inputs=inputs)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    return f.name


def build_file(path, name, keep=False):
    """(spec, loaded) of the module file at `path`, the spec named `name`; the file is deleted
    unless `keep`."""
    from kforge_py import kernelbench, spec_build
    try:
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, name, "")
        return spec, loaded
    finally:
        if not keep:
            os.unlink(path)


def assert_matches_pytorch(test, path, name, tolerance):
    """The spec of the module file at `path` through `kforge interpret` (fp64) equals PyTorch
    (fp64) within `tolerance` (util.validate's worst |diff|); returns (spec, the summary line).
    The file is deleted."""
    import re
    spec, loaded = build_file(path, name, keep=True)
    try:
        flag, line = validate(spec, loaded, path)
    finally:
        os.unlink(path)
    test.assertIsNone(flag)
    test.assertIn("interpreter = PyTorch (fp64) at", line)
    worst = float(re.search(r"max \|diff\| (\S+)", line).group(1))
    test.assertLess(worst, tolerance, line)
    return spec, line


def assert_spec_torch_matches(test, path, name):
    """The spec of the module file at `path` as PyTorch (spec_torch: what `kforge baseline`
    times) computes every output of the module, fp64. The file is deleted."""
    from kforge_py import import_check, kernelbench, spec_build, spec_torch
    try:
        loaded = kernelbench.load(path)
        spec, conv = spec_build.build(loaded, name, "")
        feed = spec_build.feeds(loaded, conv)
        got = spec_torch.make_forward(spec)(*[feed[n].double() for n in spec["inputs"]])
        ref = import_check.torch_outputs(loaded, loaded.inputs)
        test.assertEqual(len(got), len(ref))
        for g, r in zip(got, ref):
            torch.testing.assert_close(g, r, rtol=1e-12, atol=1e-12)
    finally:
        os.unlink(path)


def assert_attributes_caught(test, path, name, tampers):
    """For each (attributes, pattern) of `tampers`: the spec of the module file at `path` with
    its first op's attributes updated (its out_dims dropped: the defaults name the new sizes)
    must fail util.validate with an ImportFailed matching `pattern`. The file is deleted."""
    from kforge_py import import_kernelbench, kernelbench, spec_build
    try:
        loaded = kernelbench.load(path)
        for attributes, pattern in tampers:
            with test.subTest(attributes):
                spec, _ = spec_build.build(loaded, name, "")
                spec["graph"][0].update(attributes)
                spec["graph"][0].pop("out_dims", None)
                with test.assertRaisesRegex(import_kernelbench.ImportFailed, pattern):
                    validate(spec, loaded, path)
    finally:
        os.unlink(path)


def import_body(body, name, **module_kw):
    """The spec of a module whose forward is `body` (test_fx_import.module_file's options), and
    util.validate's (flag, line) for it; the module file is deleted."""
    from kforge_py import kernelbench, spec_build
    from test_fx_import import module_file
    path = module_file(body, **module_kw)
    try:
        loaded = kernelbench.load(path)
        spec, _ = spec_build.build(loaded, name, "")
        return (spec,) + tuple(validate(spec, loaded, path))
    finally:
        os.unlink(path)


def assert_build_refused(test, path, name, pattern):
    """The module file at `path` loads, but building its spec raises Unsupported matching
    `pattern` (what the spec cannot write is refused by name); the file is deleted."""
    from kforge_py import kernelbench, spec_build
    from kforge_py.fx_import import Unsupported
    try:
        loaded = kernelbench.load(path)
        with test.assertRaisesRegex(Unsupported, pattern):
            spec_build.build(loaded, name, "")
    finally:
        os.unlink(path)


def assert_tampering_caught(test, body, tampers, name, **module_kw):
    """For each (key, value) of `tampers`: the spec of `body` with its first op's `key` set to
    `value` must differ from PyTorch (validate raises ImportFailed)."""
    from kforge_py import import_kernelbench, kernelbench, spec_build
    from test_fx_import import module_file
    path = module_file(body, **module_kw)
    try:
        loaded = kernelbench.load(path)
        for key, value in tampers:
            with test.subTest(f"{key} {value}"):
                spec, _ = spec_build.build(loaded, name, "")
                spec["graph"][0][key] = value
                with test.assertRaisesRegex(import_kernelbench.ImportFailed, "differ"):
                    validate(spec, loaded, path)
    finally:
        os.unlink(path)


class ExampleBatch:
    """One `kforge import kernelbench` of every example file into a temporary directory: the
    process (`r`), each file's (status, message) by stem (`lines`) and the written specs."""

    def __init__(self):
        import glob
        import re
        import tempfile
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        files = sorted(glob.glob(os.path.join(EXAMPLES, "*.py")))
        self.r = kforge("import", "kernelbench", *files, "-o", self.dir)
        self.lines = {}
        for line in self.r.stdout.splitlines():
            m = re.match(r"(ok|FAILED): (\S+): (.*)", line)
            if m:
                self.lines[os.path.splitext(os.path.basename(m.group(2)))[0]] = (m.group(1),
                                                                                 m.group(3))

    def spec_path(self, stem):
        from kforge_py import spec_build
        return os.path.join(self.dir, spec_build.problem_name(stem) + ".json")


_BATCH = None


def example_batch():
    """The ExampleBatch of this process, made on the first call: the tests that read imported
    examples share one import (one PyTorch start, one fp64 check per file) instead of one
    `kforge import` each."""
    global _BATCH
    if _BATCH is None:
        _BATCH = ExampleBatch()
    return _BATCH


def import_example_and_optimize(test, stem, out_dir, *optimize_args):
    """Imports example `stem` (it must pass the fp64 check), then one simulated search round of
    it must succeed (its database in `out_dir`); returns (the spec, import's line for the file).
    Where this process has made its example_batch(), the import is the batch's."""
    if _BATCH is not None:
        status, out = _BATCH.lines[stem]
        test.assertEqual(status, "ok", out)
        spec_path = _BATCH.spec_path(stem)
    else:
        r = kforge("import", "kernelbench", example(stem), "-o", out_dir)
        test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = r.stdout
        from kforge_py import spec_build
        spec_path = os.path.join(out_dir, spec_build.problem_name(stem) + ".json")
    test.assertIn("interpreter = PyTorch (fp64) at", out)
    o = kforge("optimize", spec_path, "--device", "sim", "--rounds", "1",
               "--db", os.path.join(out_dir, "k.db"), *optimize_args)
    test.assertEqual(o.returncode, 0, o.stdout + o.stderr)
    return load_json(spec_path), out
