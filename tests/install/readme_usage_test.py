#!/usr/bin/env python3
"""The install is relocatable and README's usage lines work from it (issue 30's "done").

1. `cmake --install BUILD --prefix T/prefix`, then the prefix is moved to T/moved.
2. The installed binary must not need the CUDA runtime libraries to start: its ELF NEEDED entries
   name none of libcudart, libcublas, libcublasLt, libnvrtc, libnvidia-ml, libcuda, and
   `kforge check` / `kforge sol` run with the CUDA toolkit's lib folder hidden (a tmpfs over it).
3. In a private mount namespace (unshare -m) the source tree is hidden under an empty tmpfs, so
   nothing compiled in (KFORGE_SOURCE_DIR, the configured CUTLASS path, the .venv) can be read;
   CUTLASS and the Python environment are bind-mounted elsewhere and passed through
   KFORGE_CUTLASS_DIR and KFORGE_PYTHON, the two ways an installed kforge is told about them.
4. Every line of README.md's "Using it" block is parsed from the file at test time and run from
   the moved prefix on the simulated device: lines marked "(GPU)" must exit 3 with a message
   about the missing GPU where there is none; every other line must exit 0. Placeholders are made
   runnable: problems/ holds only the built-in problems the lines name, my_problem.json and
   P.json/P.kf are copies of built-in problems, RUN is the newest run in the store (after
   `--resume`: a run of my_problem.json interrupted by SIGINT three seconds in), the
   calibration file the calibrate line would write is the committed bench/calibration/h200.json,
   and wall budgets are cut to seconds. A `kforge compile` line
   gets --no-build (no CUTLASS compile in CI); a real compile of a plain kernel (kernels/*.cuh
   from share/kforge, NVRTC or nvcc) runs on its own.

usage: readme_usage_test.py --source DIR --build DIR --cuda-libdir DIR --cutlass-source INC
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

FORBIDDEN_NEEDED = ("libcudart", "libcublas", "libnvrtc", "libnvidia-ml", "libcuda.")
# wall budgets for the simulated device: enough for the start program of each of the few problems
# the work folder holds to reach the full tier (suite: 6 s left one of three short; 15 s did too
# on a machine loaded by parallel builds, and a suite with a problem never timed exits 1)
BUDGET_CAP_S = {"optimize": "6", "suite": "30"}


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def usage_lines(readme):
    """The command lines of the first ``` block under '## Using it', with their comments."""
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"^## Using it\s*$(.*?)^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    if not m:
        fail("README.md has no '## Using it' section with a ``` block")
    lines = []
    for raw in m.group(2).splitlines():
        if not raw.strip():
            continue
        cmd, _, comment = raw.partition("  #")
        lines.append((cmd.strip(), comment.strip()))
    if not lines:
        fail("the 'Using it' block is empty")
    return lines


LINE_TIMEOUT_S = 90


def run_line(line, env, cwd):
    """`sh -c line` in its own process group, killed whole after LINE_TIMEOUT_S (exit 124)."""
    p = subprocess.Popen(["sh", "-c", line], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, cwd=cwd, start_new_session=True)
    try:
        out, err = p.communicate(timeout=LINE_TIMEOUT_S)
        return subprocess.CompletedProcess(line, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return subprocess.CompletedProcess(
            line, 124, out, err + f"\n[killed: still running after {LINE_TIMEOUT_S} s]")


def have_gpu():
    try:
        return run(["nvidia-smi", "-L"]).returncode == 0
    except OSError:
        return False


def newest_run_id(work):
    """The newest run in the store the README's lines write (.kforge/kforge.db)."""
    db = os.path.join(work, ".kforge", "kforge.db")
    if not os.path.exists(db):
        return None
    with sqlite3.connect(db) as c:
        return c.execute("SELECT max(id) FROM runs").fetchone()[0]


def interrupted_run(work, env):
    """A run stopped by Ctrl-C (SIGINT) a few seconds in, for `--resume RUN`; its id."""
    p = subprocess.Popen(["kforge", "optimize", "my_problem.json", "--device", "sim",
                          "--rounds", "3"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, cwd=work)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    rid = newest_run_id(work)
    if rid is None:
        fail("the optimize run interrupted for `--resume RUN` left no run:\n" + out)
    return rid


def make_runnable(cmd, work, env):
    """The README line with its placeholders filled in (see the module doc)."""
    argv = shlex.split(cmd)
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--budget-wall" and i + 1 < len(argv) and len(argv) > 1:
            out += [a, BUDGET_CAP_S.get(argv[1], "6")]
            i += 2
            continue
        if a == "RUN":
            resume = i > 0 and argv[i - 1] == "--resume"
            rid = interrupted_run(work, env) if resume else newest_run_id(work)
            if rid is None:
                fail(f"'{cmd}': no run in the store to stand for RUN (an earlier line should "
                     "have made one)")
            a = str(rid)
        out.append(a)
        i += 1
    if out[:2] == ["kforge", "compile"] and "--no-build" not in out:
        out.append("--no-build")
    return out


def prepare_work(source, work, readme):
    """problems/ holds the built-in problems README's lines name (spec and program), so globs and
    `suite problems/` run over a few problems, not the whole suite; a named file that does not
    exist is not made up (its line fails)."""
    os.makedirs(os.path.join(work, "problems"))
    names = {"row_sum_f32"}
    for cmd, _ in usage_lines(readme):
        names.update(re.findall(r"problems/([A-Za-z0-9_]+)\.(?:json|kf)\b", cmd))
    for name in sorted(names):
        for ext in (".json", ".kf"):
            f = os.path.join(source, "problems", name + ext)
            if os.path.exists(f):
                shutil.copy(f, os.path.join(work, "problems"))
    shutil.copy(os.path.join(source, "problems", "row_sum_f32.json"),
                os.path.join(work, "my_problem.json"))  # no .kf beside it: a start is synthesized
    shutil.copy(os.path.join(source, "problems", "row_sum_f32.json"), os.path.join(work, "P.json"))
    shutil.copy(os.path.join(source, "problems", "row_sum_f32.kf"), os.path.join(work, "P.kf"))
    os.makedirs(os.path.join(work, ".kforge"))
    # what `kforge calibrate -o .kforge/calibration-h200.json` writes on an H200
    shutil.copy(os.path.join(source, "bench", "calibration", "h200.json"),
                os.path.join(work, ".kforge", "calibration-h200.json"))


def unshare():
    """A private mount namespace (root: unshare -m; else through a user namespace)."""
    if not shutil.which("unshare"):
        fail("unshare (util-linux) is needed to hide the source tree")
    return ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]


def check_needed(kforge):
    r = run(["readelf", "-d", kforge])
    if r.returncode != 0:
        fail("readelf -d failed: " + r.stderr)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
    bad = [n for n in needed if n.startswith(FORBIDDEN_NEEDED)]
    if bad:
        fail(f"{kforge} links CUDA libraries at start-up: {bad} (they must load lazily)")
    print(f"ok: NEEDED = {needed}")


def inner(args):
    """Runs in the private mount namespace: hide the source tree, run the README lines."""
    t = args.tmp
    kforge_dir = os.path.join(t, "moved", "bin")
    kforge = os.path.join(kforge_dir, "kforge")
    cutlass = os.path.join(t, "cutlass")
    venv = os.path.join(t, "venv")
    os.makedirs(cutlass)  # CUTLASS's include/ and tools/ (cutlass_library/source)
    subprocess.run(["mount", "--bind", os.path.dirname(os.path.realpath(args.cutlass_source)),
                    cutlass], check=True)
    have_venv = os.path.isdir(os.path.join(args.source, ".venv"))
    if have_venv:
        os.makedirs(venv)
        subprocess.run(["mount", "--bind", os.path.join(args.source, ".venv"), venv], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "none", args.source], check=True)
    if os.listdir(args.source):
        fail("the source tree is still visible")

    work = os.path.join(t, "work")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KFORGE_")}
    env.update(PATH=kforge_dir + ":" + env.get("PATH", "/usr/bin:/bin"),
               KFORGE_CUTLASS_DIR=cutlass, KFORGE_CACHE_DIR=os.path.join(t, "cache"),
               HOME=os.path.join(t, "home"))
    env.pop("PYTHONPATH", None)
    if have_venv:
        env["KFORGE_PYTHON"] = os.path.join(venv, "bin", "python")

    # A real compile of a plain kernel: its source includes kernels/*.cuh from share/kforge.
    r = run([kforge, "compile", "problems/row_sum_f32.json", "problems/row_sum_f32.kf",
             "-o", "compiled/"], env=env, cwd=work)
    if r.returncode != 0:
        fail(f"compile of a plain kernel from the moved install failed ({r.returncode}):\n"
             f"{r.stdout}\n{r.stderr}")
    if not any(f.endswith(".cubin") for f in os.listdir(os.path.join(work, "compiled"))):
        fail("compile wrote no cubin: " + str(os.listdir(os.path.join(work, "compiled"))))
    print("ok: plain-kernel compile from the moved install (source tree hidden)", flush=True)

    gpu = have_gpu()
    failures = []
    for cmd, comment in usage_lines(args.readme):
        argv = make_runnable(cmd, work, env)
        if argv[0] != "kforge":
            failures.append(f"'{cmd}': not a kforge command line")
            continue
        # globs (problems/*.json) expand as in a shell
        line = " ".join(shlex.quote(a) if "*" not in a else a for a in argv)
        r = run_line(line, env, work)
        needs_gpu = "(GPU)" in comment
        if needs_gpu and not gpu:
            ok = r.returncode == 3 and re.search(r"GPU|CUDA device|ncu", r.stderr)
            want = "exit 3 with a 'no GPU' message"
        else:
            ok = r.returncode == 0
            want = "exit 0"
        status = "ok" if ok else "FAILED"
        print(f"{status}: {line}  -> exit {r.returncode} (want {want})", flush=True)
        if not ok:
            failures.append(f"'{cmd}' (run as: {line}) exited {r.returncode}, want {want}\n"
                            f"--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}")
    if failures:
        fail(f"{len(failures)} README usage line(s) failed from the installed prefix:\n\n" +
             "\n\n".join(failures))
    print("PASS: every README usage line ran from the moved install")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--cuda-libdir", required=True)
    ap.add_argument("--cutlass-source", required=True, help="the CUTLASS include folder to use")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    ap.add_argument("--readme", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.source = os.path.realpath(args.source)
    if args.inner:
        return inner(args)

    t = tempfile.mkdtemp(prefix="kforge-install-")
    try:
        prefix = os.path.join(t, "prefix")
        r = run(["cmake", "--install", args.build, "--prefix", prefix])
        if r.returncode != 0:
            fail("cmake --install failed:\n" + r.stdout + r.stderr)
        for rel in ("bin/kforge", "share/kforge/kernels/cstdint.cuh",
                    "share/kforge/codegen/host_abi.h", "share/kforge/python/kforge_py/__init__.py"):
            if not os.path.exists(os.path.join(prefix, rel)):
                fail(f"the install lacks {rel}")
        moved = os.path.join(t, "moved")
        shutil.move(prefix, moved)  # relocatable: nothing may point at the old prefix
        kforge = os.path.join(moved, "bin", "kforge")
        check_needed(kforge)

        work = os.path.join(t, "work")
        os.makedirs(work)
        readme = os.path.join(t, "README.md")
        shutil.copy(os.path.join(args.source, "README.md"), readme)
        prepare_work(args.source, work, readme)

        # Start-up without the CUDA libraries: the toolkit's lib folder hidden.
        hide_libs = (f"mount -t tmpfs none {shlex.quote(args.cuda_libdir)} && "
                     f"LD_LIBRARY_PATH=/nonexistent {shlex.quote(kforge)} check "
                     "problems/row_sum_f32.json && "
                     f"LD_LIBRARY_PATH=/nonexistent {shlex.quote(kforge)} sol "
                     "problems/row_sum_f32.json")
        r = run(unshare() + ["sh", "-c", hide_libs], cwd=work)
        if r.returncode != 0:
            fail("kforge check / sol with the CUDA libraries hidden failed "
                 f"({r.returncode}):\n{r.stdout}\n{r.stderr}")
        print("ok: check and sol start with the CUDA toolkit's libraries hidden", flush=True)

        for var in ("KFORGE_HOME", "KFORGE_CUTLASS_DIR"):  # an override that holds nothing
            r = run([kforge, "check", "problems/row_sum_f32.json"], cwd=work,
                    env=dict(os.environ, **{var: os.path.join(t, "nothing-here")}))
            if r.returncode != 3 or f"${var}:" not in r.stderr:
                fail(f"{var} naming an empty folder: want exit 3 naming ${var}, got "
                     f"{r.returncode}: {r.stderr}")
        print("ok: KFORGE_HOME / KFORGE_CUTLASS_DIR pointing nowhere exit 3 and say so")

        r = subprocess.run(unshare() + [sys.executable, os.path.abspath(__file__), "--inner",
                            "--tmp", t, "--readme", readme, "--source", args.source,
                            "--build", args.build, "--cuda-libdir", args.cuda_libdir,
                            "--cutlass-source", args.cutlass_source])
        sys.exit(r.returncode)
    finally:
        shutil.rmtree(t, ignore_errors=True)


if __name__ == "__main__":
    main()
