"""`kforge import kernelbench` runs each file in a child process under a time and a memory
limit (issue 31, item 7): a file that exits, crashes, hangs or allocates past the limit fails by
name with the reason while the rest of the batch imports; full-size inputs are never
materialized (the file runs on the meta device) and the numeric check runs at reduced sizes.
The files are in fixtures/import_limits/."""
import os
import re
import tempfile
import time
import unittest

import kforge_test_util as util
from kforge_py import check_dims, import_kernelbench

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "import_limits")
# Above the importer's own address space (~3.5 GB: PyTorch's libraries), below what a file
# that materialized huge_inputs.py's inputs (64 GiB) or memory_hog.py's array (6 GiB) needs.
LIMIT_MB = 6144


def fixture(name):
    return os.path.join(FIXTURES, name + ".py")


def lines_of(stdout):
    """Stem -> (status, message) of each file's line of `kforge import` output."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"(ok|FAILED): (\S+): (.*)", line)
        if m:
            out[os.path.splitext(os.path.basename(m.group(2)))[0]] = (m.group(1), m.group(3))
    return out


class HostileBatch(unittest.TestCase):
    """One batch of every misbehaving file with two good ones, under LIMIT_MB."""

    FILES = ["exit_at_import", "exit_in_forward", "os_exit_in_get_inputs",
             "segfault_at_import", "good", "memory_hog", "huge_inputs", "fixed_sizes_large",
             "fixed_weights_large", "wide_weights"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.r = util.kforge("import", "kernelbench", *[fixture(f) for f in cls.FILES],
                            "-o", cls.tmp.name, "--max-memory-mb", str(LIMIT_MB), timeout=300)
        cls.lines = lines_of(cls.r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def line(self, stem, status):
        self.assertIn(stem, self.lines, self.r.stdout + self.r.stderr)
        got, msg = self.lines[stem]
        self.assertEqual(got, status, msg)
        return msg

    def test_every_file_gets_a_line_and_the_batch_exits_1(self):
        self.assertEqual(self.r.returncode, 1, self.r.stdout + self.r.stderr)
        self.assertEqual(sorted(self.lines), sorted(self.FILES))
        self.assertIn(f"imported 5 of {len(self.FILES)} file(s)", self.r.stdout)

    def test_sys_exit_at_import_and_in_forward_fail_that_file_by_name(self):
        self.assertEqual(self.line("exit_at_import", "FAILED"),
                         "the file ended the process: sys.exit(0) while running the file")
        self.assertEqual(self.line("exit_in_forward", "FAILED"),
                         "the file ended the process: sys.exit(0) while tracing Model")

    def test_os_exit_and_a_signal_fail_that_file_by_name(self):
        self.assertIn("the process ended with exit status 0 before finishing (os._exit()",
                      self.line("os_exit_in_get_inputs", "FAILED"))
        self.assertIn("died from signal SIGSEGV", self.line("segfault_at_import", "FAILED"))

    def test_the_good_file_imports_checked_at_reduced_sizes(self):
        msg = self.line("good", "ok")
        self.assertIn("interpreter = PyTorch (fp64) at batch_size=8,features=16,features_1=16, "
                      "reduced sizes (the file's: batch_size 8, features 64, features_1 64), "
                      "max |diff| ", msg)
        spec = util.load_json(os.path.join(self.tmp.name, "good.json"))
        self.assertEqual(spec["dims"], {"batch_size": 8, "features": 64, "features_1": 64})

    def test_an_allocation_past_the_memory_limit_fails_that_file(self):
        msg = self.line("memory_hog", "FAILED")
        self.assertIn("running the file raised MemoryError", msg)
        self.assertIn(f"[the memory limit: --max-memory-mb {LIMIT_MB} of address space", msg)

    def test_huge_inputs_are_traced_on_meta_and_checked_at_reduced_sizes(self):
        # 64 GiB of input and a 1 GiB weight at the file's sizes, under a 6 GiB limit
        msg = self.line("huge_inputs", "ok")
        self.assertIn("interpreter = PyTorch (fp64) at batch_size=32,dim=16,dim_1=16, reduced "
                      "sizes (the file's: batch_size 1048576, dim 16384, dim_1 16384), "
                      "max |diff| ", msg)
        spec = util.load_json(os.path.join(self.tmp.name, "huge_inputs.json"))
        self.assertEqual(spec["dims"], {"batch_size": 1048576, "dim": 16384, "dim_1": 16384})
        self.assertEqual(util.kforge("check", os.path.join(self.tmp.name, "huge_inputs.json"))
                         .returncode, 0)

    def test_sizes_that_cannot_be_reduced_are_said_with_the_size(self):
        msg = self.line("fixed_weights_large", "ok")
        self.assertIn("not checked numerically: the sizes cannot be reduced: the file has no "
                      "literal size variables (NAME = <int>) to re-bind; by the inputs' dims: "
                      "no dim that only the inputs carry, and at the file's own sizes "
                      "(D8192=8192,D8192_1=8192) its tensors hold 134,217,728 elements (the "
                      "check's limit is 67,108,864)", msg)

    def test_sizes_written_inline_are_reduced_on_the_inputs_dims(self):
        # no size variable to re-bind, but the input's dims are no weight's: the written spec
        # at [2, 32] against the model on inputs of that shape
        msg = self.line("fixed_sizes_large", "ok")
        self.assertIn("interpreter = PyTorch (fp64) at D16384=2,D8192=32, the inputs' "
                      "batch/spatial dims reduced and the weights at the file's sizes", msg)


    def test_weights_above_the_old_json_feed_are_checked_with_the_raw_feed(self):
        # 16.8M weight elements: above the 12,582,912 the JSON feed allowed, within the raw
        # float64 feed's 64M (and under this batch's 6 GiB limit); the file's own batch is
        # above the interpreter's time budget (check_dims.MAX_CHECK_S), so the batch shrinks
        msg = self.line("wide_weights", "ok")
        self.assertIn("interpreter = PyTorch (fp64) at D3000=2,D4096=4096,D4096_1=4096,D10=10, "
                      "the inputs' batch/spatial dims reduced and the weights at the file's "
                      "sizes, max |diff| ", msg)
        weights = 4096 * 4096 + 4096 + 4096 * 10 + 10
        self.assertGreater(weights, 12 << 20)
        self.assertLessEqual(weights, check_dims.WEIGHTS_MAX_ELEMENTS)


class Timeout(unittest.TestCase):
    def test_a_hanging_file_times_out_and_its_programs_end_with_it(self):
        with tempfile.TemporaryDirectory() as d:
            pidfile = os.path.join(d, "helper.pid")
            start = time.monotonic()
            r = util.kforge("import", "kernelbench", fixture("sleeps_forever"), "-o", d,
                            "--timeout-s", "1.5", env={"KFORGE_TEST_PIDFILE": pidfile},
                            timeout=120)
            self.assertLess(time.monotonic() - start, 60)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            status, msg = lines_of(r.stdout)["sleeps_forever"]
            self.assertEqual((status, msg), ("FAILED", "timed out after 1.5 s (--timeout-s) "
                                                       "while running the file"))
            with open(pidfile) as f:
                helper = int(f.read())
            # the `sleep 3600` the file started was in the child's process group: killed
            # with it (reaped by init; /proc shows at most a zombie for a moment)
            for _ in range(50):
                if not _alive(helper):
                    break
                time.sleep(0.1)
            self.assertFalse(_alive(helper), f"pid {helper} outlived the timeout")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


class Flags(unittest.TestCase):
    def test_bad_limits_are_user_errors(self):
        for flag, value, message in (("--timeout-s", "0", "--timeout-s: expected a number"),
                                     ("--timeout-s", "nan", "--timeout-s: expected a number"),
                                     ("--max-memory-mb", "-5", "--max-memory-mb: expected a"),
                                     ("--max-memory-mb", "1.5", "--max-memory-mb: expected a")):
            with self.subTest(f"{flag} {value}"):
                r = util.kforge("import", "kernelbench", fixture("good"), flag, value)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)

    def test_help_states_the_defaults_of_the_python_side(self):
        r = util.kforge("import", "kernelbench", "--help")
        text = " ".join(r.stdout.split())
        self.assertIn(f"(default {import_kernelbench.DEFAULT_TIMEOUT_S})", text)
        self.assertIn(f"(default {import_kernelbench.DEFAULT_MAX_MEMORY_MB})", text)


if __name__ == "__main__":
    unittest.main()
