"""Running one piece of untrusted work (a KernelBench file's import) in a child process with a
wall-clock limit and a memory limit, so that whatever the work does to its process - sys.exit(),
os._exit(), a signal, an allocation past the limit, a hang - ends that work only, with a reason.

The child is forked from the calling process (PyTorch already imported: no second start-up), in
a process group of its own (the timeout kills the group, so programs it started go too), with
RLIMIT_AS (its address space) at the memory limit, no core dumps, stdin from /dev/null and
SIGKILL when the parent dies. It reports through a pipe, one JSON object per line: `stage`
(what it is doing, named in a timeout), `result` (the work's return value) or `died` (it ended
the process itself, e.g. by sys.exit()). This bounds accidents; it is no sandbox: the child
runs with the user's rights (files, network, other processes) - see README.md, "Import
KernelBench modules"."""
import ctypes
import json
import os
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1
MAX_LINE_BYTES = 1 << 20  # a longer line from the child is dropped


@dataclass
class Outcome:
    result: object = None     # what the work returned (JSON-compatible), None if it died
    failure: str = ""         # why the child ended without a result
    stage: str = ""           # the child's last reported stage


def address_space_mb():
    """This process's address space (VmSize) in MB: what a forked child starts with, against
    its memory limit."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def run_limited(work, timeout_s, max_memory_mb):
    """Runs work(report) in a forked child and returns an Outcome. `report(stage)` tells the
    parent what the child is doing; work's return value must be JSON-compatible."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(r)
        _child(work, w, parent, max_memory_mb)
    os.close(w)
    try:
        os.setpgid(pid, pid)  # (the child does it too: whichever runs first)
    except OSError:
        pass
    child = _Child(pid)
    try:
        return _supervise(child, r, timeout_s, max_memory_mb)
    finally:
        os.close(r)
        child.kill_and_reap()  # (after an interrupt of the parent: no child left behind)


def _child(work, w, parent, max_memory_mb):
    code = 0
    try:
        os.setpgid(0, 0)
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            os._exit(1)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # (a background group writing to a tty)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        limit = max_memory_mb << 20
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        def send(obj):
            data = (json.dumps(obj) + "\n").encode()
            while data:
                data = data[os.write(w, data):]

        try:
            send({"result": work(lambda stage: send({"stage": stage}))})
        except SystemExit as e:
            send({"died": f"the file ended the process: sys.exit({e.code!r})"})
        except MemoryError:
            send({"died": "out of memory (MemoryError)"})
        except BaseException as e:  # (work reports its own errors; this is a bug of it)
            send({"died": f"{type(e).__name__}: {e}"})
    except BaseException:
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(code)


class _Child:
    def __init__(self, pid):
        self.pid = pid
        self.status = None
        self.reaped = False

    def kill_and_reap(self):
        """Kills the child's process group (its programs too) and reaps the child; then its
        wait status is in `status`. Before the reaping the group id cannot be reused (the
        child, a zombie at worst, still holds it): after it, nothing is killed again."""
        if self.reaped:
            return
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.status = os.waitpid(self.pid, 0)[1]
        self.reaped = True


def _supervise(child, r, timeout_s, max_memory_mb):
    out = Outcome()
    deadline = time.monotonic() + timeout_s
    buf, eof = b"", False

    def take(data):
        nonlocal buf
        buf += data
        *lines, buf = buf.split(b"\n")
        if len(buf) > MAX_LINE_BYTES:  # (not a report of ours)
            buf = b""
        for line in lines:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "stage" in msg:
                out.stage = msg["stage"]
            elif "result" in msg:
                out.result = msg["result"]
            elif "died" in msg:
                out.failure = msg["died"]

    while True:
        if os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            child.kill_and_reap()
            out.result = None
            out.failure = f"timed out after {timeout_s:g} s (--timeout-s)"
            return out
        if eof:  # (the child closed its end, and runs on)
            time.sleep(min(left, 0.1))
            continue
        ready, _, _ = select.select([r], [], [], min(left, 0.1))
        if ready:
            data = os.read(r, 1 << 16)
            eof = not data
            take(data)
    child.kill_and_reap()
    while not eof and select.select([r], [], [], 0)[0]:  # what it wrote before it ended
        data = os.read(r, 1 << 16)
        if not data:
            break
        take(data)
    if out.result is None and not out.failure:
        out.failure = _death(child.status, max_memory_mb)
    return out


def _death(status, max_memory_mb):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        text = f"died from signal {name}"
        if sig in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS):
            text += (f" (an allocation past the memory limit, --max-memory-mb "
                     f"{max_memory_mb}, can end a process this way)")
        elif sig == signal.SIGKILL:
            text += " (sent by another process, or the system's out-of-memory killer)"
        return text
    return (f"the process ended with exit status {os.WEXITSTATUS(status)} before finishing "
            "(os._exit() or a similar exit in the file)")
