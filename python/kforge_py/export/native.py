"""The compiled op of exported packages: finds or builds kforge_torch (csrc/kforge_torch.cpp, a
plain C++ library over torch's headers, no Python or CUDA headers) against the torch of this
process, loads it with ctypes (copied into each exported package as _kforge_native.py).

extension(package_dir) returns an Extension (register_op), or None after saying once (a warning
naming why) that calls take the ctypes path (still kforge's kernel; only more host time per call).
Where it comes from, in order:
  1. a prebuilt kforge_torch/libkforge_torch.so in a sys.path folder, built against this torch
     (kforge's CMake build: target kforge_torch, in <build>/python and installed beside
     kforge_py), or the file $KFORGE_TORCH_LIB names,
  2. else a build of the package's own csrc/kforge_torch.cpp with torch.utils.cpp_extension.load,
     cached per torch version, Python and source under $KFORGE_TORCH_EXT_CACHE (default
     ~/.cache/kforge/torch_ext): the first import on a machine compiles for about half a minute.
KFORGE_TORCH_EXT picks: "auto" (default, 1 then 2), "prebuilt" (1 only), "build" (2 only), "off"
(the ctypes path, said once). One process loads one extension, shared by every exported package
(the state lives in sys.modules["_kforge_torch_state"])."""
import ctypes
import hashlib
import os
import re
import shutil
import sys
import types
import warnings

import torch

INTERFACE = 2  # kforge_torch.cpp's kInterface: kforge_torch_register's arguments, the callback
STATE_MODULE = "_kforge_torch_state"


def _state():
    s = sys.modules.get(STATE_MODULE)
    if s is None:
        s = types.ModuleType(STATE_MODULE)
        s.done, s.module, s.why = False, None, None
        sys.modules[STATE_MODULE] = s
    return s


def _release(version):
    """"2.11.0" of "2.11.0+cu130" or "2.12.0.dev20260101" (torch/version.h's TORCH_VERSION form)."""
    m = re.match(r"\d+\.\d+\.\d+", version)
    return m.group(0) if m else version


class Entry(ctypes.Structure):  # kforge_torch.cpp's kforge_torch_entry
    _fields_ = [("program", ctypes.c_void_p), ("workspace_bytes", ctypes.c_uint64),
                ("launch", ctypes.c_void_p), ("last_error", ctypes.c_void_p),
                ("runtime_abi", ctypes.c_int32)]


ENTRY_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(Entry),
                                  ctypes.c_void_p, ctypes.c_uint64)


class Extension:
    """kforge_torch loaded in this process (ctypes over its C functions)."""

    def __init__(self, path):
        self.__file__ = path
        self.lib = ctypes.CDLL(path)
        self.lib.kforge_torch_interface.restype = ctypes.c_int32
        self.lib.kforge_torch_version.restype = ctypes.c_char_p
        self.interface = int(self.lib.kforge_torch_interface())
        self.torch_version = self.lib.kforge_torch_version().decode()
        self._callbacks = []  # kept alive: the registered kernels call them

    def __repr__(self):
        return f"<kforge_torch {self.__file__} (torch {self.torch_version})>"

    def register_op(self, name, inputs, outputs, native_entry):
        """Registers kforge::<name>'s C++ kernels; inputs and outputs as (name, dtype, shape)."""
        def arrays(rows):
            names = (ctypes.c_char_p * len(rows))(*[r[0].encode() for r in rows])
            dtypes = (ctypes.c_char_p * len(rows))(*[r[1].encode() for r in rows])
            ranks = (ctypes.c_int32 * len(rows))(*[len(r[2]) for r in rows])
            flat = [int(d) for r in rows for d in r[2]]
            dims = (ctypes.c_int64 * max(len(flat), 1))(*flat)
            return [ctypes.c_int32(len(rows)), names, dtypes, ranks, dims]

        cb = entry_callback(native_entry)
        self._callbacks.append(cb)
        msg = ctypes.create_string_buffer(4096)
        rc = self.lib.kforge_torch_register(name.encode(), *arrays(inputs), *arrays(outputs),
                                            cb, msg, ctypes.c_uint64(len(msg)))
        if rc != 0:
            raise RuntimeError(msg.value.decode(errors="replace"))


def entry_callback(native_entry):
    """The C callback kforge_torch calls once per device: native_entry(index) -> (program,
    workspace bytes, kforge_rt_launch, kforge_rt_last_error, runtime ABI) into *entry and 0, or
    its exception's words into message and 1 (ValueError) / 2 (any other: RuntimeError)."""
    def callback(device, entry, message, message_bytes):
        try:
            program, ws, launch, last_error, abi = native_entry(int(device))
            e = entry[0]
            e.program, e.workspace_bytes, e.launch, e.last_error, e.runtime_abi = (
                program, ws, launch, last_error, abi)
            return 0
        except Exception as e:  # noqa: BLE001 - raised again by the kernel, same type and words
            text = str(e).encode(errors="replace")[:max(int(message_bytes) - 1, 0)]
            ctypes.memmove(message, text + b"\0", len(text) + 1)
            return 1 if isinstance(e, ValueError) else 2
    return ENTRY_CALLBACK(callback)


def _load(path):
    """(Extension, None), or (None, why it cannot serve this process)."""
    try:
        ext = Extension(path)
    except (OSError, AttributeError) as e:
        return None, f"{path} does not load here ({e})"
    if ext.interface != INTERFACE:
        return None, f"{path} has interface {ext.interface}, this package needs {INTERFACE}"
    if _release(ext.torch_version) != _release(torch.__version__):
        return None, (f"{path} was built against torch {ext.torch_version}, this process runs "
                      f"torch {torch.__version__}")
    return ext, None


def _prebuilt():
    named = os.environ.get("KFORGE_TORCH_LIB")
    candidates = [named] if named else [
        os.path.join(p or ".", "kforge_torch", "libkforge_torch.so") for p in sys.path]
    reasons = []
    for path in candidates:
        if not os.path.exists(path):
            if named:
                reasons.append(f"KFORGE_TORCH_LIB={named} does not exist")
            continue
        ext, why = _load(path)
        if ext:
            return ext, None
        reasons.append(why)
    return None, "; ".join(reasons) or "no prebuilt kforge_torch (kforge_torch/libkforge_torch.so " \
        "in no sys.path folder)"


def _missing_tools():
    """What a build here lacks (a clear reason), or None."""
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx.split()[0]) is None:
        return f"no C++ compiler: '{cxx}' is not on PATH (install g++, or set CXX)"
    from torch.utils import cpp_extension
    if not cpp_extension.is_ninja_available():
        return "ninja is not installed (torch.utils.cpp_extension needs it: pip install ninja)"
    return None


def cache_dir(source):
    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    root = os.environ.get("KFORGE_TORCH_EXT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kforge", "torch_ext")
    tag = f"torch{torch.__version__}-py{sys.version_info[0]}{sys.version_info[1]}-{digest}"
    return os.path.join(root, tag)


def _build(package_dir):
    source = os.path.join(package_dir, "csrc", "kforge_torch.cpp")
    if not os.path.exists(source):
        return None, f"{source} is missing (export again with this kforge)"
    why = _missing_tools()
    if why:
        return None, why
    from torch.utils import cpp_extension
    build_dir = cache_dir(source)
    os.makedirs(build_dir, exist_ok=True)
    built = os.path.join(build_dir, "kforge_torch.so")
    if os.path.exists(built):
        # cached (the directory's name holds the source's digest and the torch version): loaded
        # as it is, without cpp_extension.load, whose build lock a process killed mid-load
        # leaves behind and every later load then waits on for ever (an import hung >100 s on
        # the H100 after a harness process was killed at its deadline, 2026-12-06)
        return _load(built)
    print(f"kforge: building the compiled op kforge_torch for torch {torch.__version__} "
          f"(once; cached in {build_dir})", file=sys.stderr, flush=True)
    try:  # a plain library (no Python module): loaded into the process, then by ctypes below
        cpp_extension.load(name="kforge_torch", sources=[source], build_directory=build_dir,
                           extra_cflags=["-O2"], with_cuda=False, is_python_module=False,
                           verbose=False)
    except Exception as e:  # noqa: BLE001 - a failed build is a reason, said once
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        return None, "building it failed: " + " | ".join(lines[-6:])
    return _load(built)


def extension(package_dir):
    s = _state()
    if s.done:
        return s.module
    mode = os.environ.get("KFORGE_TORCH_EXT", "auto").strip().lower() or "auto"
    mod, why = None, None
    if mode in ("off", "0", "no", "false"):
        why = f"KFORGE_TORCH_EXT={mode}"
    elif mode not in ("auto", "prebuilt", "build"):
        why = f"KFORGE_TORCH_EXT={mode} is not one of auto, prebuilt, build, off"
    else:
        reasons = []
        if mode in ("auto", "prebuilt"):
            mod, w = _prebuilt()
            reasons.append(w)
        if mod is None and mode in ("auto", "build"):
            mod, w = _build(package_dir)
            reasons.append(w)
        why = None if mod is not None else "; ".join(r for r in reasons if r)
    s.done, s.module, s.why = True, mod, why
    if mod is None:
        warnings.warn(f"kforge: the compiled op (kforge_torch) is not available: {why}. Exported "
                      "ops run through the ctypes path instead (kforge's same kernels, about 20 "
                      "us more host time per call).", RuntimeWarning, stacklevel=3)
    return mod
