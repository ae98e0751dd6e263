"""The compiled op of exported packages: finds or builds kforge_torch (csrc/kforge_torch.cpp)
against the torch of this process (copied into each exported package as _kforge_native.py).

extension(package_dir) returns the kforge_torch module, or None after saying once (a warning
naming why) that calls take the ctypes path (still kforge's kernel; only more host time per call).
Where it comes from, in order:
  1. an importable `kforge_torch` built against this torch (kforge's CMake build: target
     kforge_torch, in <build>/python and installed beside kforge_py),
  2. else a build of the package's own csrc/kforge_torch.cpp with torch.utils.cpp_extension.load,
     cached per torch version, Python and source under $KFORGE_TORCH_EXT_CACHE (default
     ~/.cache/kforge/torch_ext): the first import on a machine compiles for about half a minute.
KFORGE_TORCH_EXT picks: "auto" (default, 1 then 2), "prebuilt" (1 only), "build" (2 only), "off"
(the ctypes path, said once). One process loads one extension, shared by every exported package
(the state lives in sys.modules["_kforge_torch_state"])."""
import hashlib
import importlib
import os
import shutil
import sys
import sysconfig
import types
import warnings

import torch

INTERFACE = 1  # kforge_torch.cpp's kInterface: register_op's arguments, native_entry's result
STATE_MODULE = "_kforge_torch_state"


def _state():
    s = sys.modules.get(STATE_MODULE)
    if s is None:
        s = types.ModuleType(STATE_MODULE)
        s.done, s.module, s.why = False, None, None
        sys.modules[STATE_MODULE] = s
    return s


def _torch_base_version():
    return torch.__version__.split("+")[0]


def _usable(mod):
    """Why a loaded kforge_torch cannot serve this process, or None."""
    if getattr(mod, "INTERFACE", None) != INTERFACE:
        return (f"{getattr(mod, '__file__', mod)} has interface {getattr(mod, 'INTERFACE', None)}"
                f", this package needs {INTERFACE}")
    if mod.TORCH_VERSION != _torch_base_version():
        return (f"{mod.__file__} was built against torch {mod.TORCH_VERSION}, this process runs "
                f"torch {torch.__version__}")
    return None


def _prebuilt():
    try:
        mod = importlib.import_module("kforge_torch")
    except ImportError as e:
        return None, f"no prebuilt kforge_torch ({e})"
    why = _usable(mod)
    return (None, why) if why else (mod, None)


def _missing_tools():
    """What a build here lacks (a clear reason), or None."""
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx.split()[0]) is None:
        return f"no C++ compiler: '{cxx}' is not on PATH (install g++, or set CXX)"
    from torch.utils import cpp_extension
    if not cpp_extension.is_ninja_available():
        return "ninja is not installed (torch.utils.cpp_extension needs it: pip install ninja)"
    inc = sysconfig.get_paths().get("include", "")
    if not os.path.exists(os.path.join(inc, "Python.h")):
        return f"the Python headers are missing ({inc}/Python.h: install python3-dev)"
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
    if not os.path.exists(os.path.join(build_dir, "kforge_torch.so")):
        print(f"kforge: building the compiled op kforge_torch for torch {torch.__version__} "
              f"(once; cached in {build_dir})", file=sys.stderr, flush=True)
    try:
        mod = cpp_extension.load(name="kforge_torch", sources=[source], build_directory=build_dir,
                                 extra_cflags=["-O2"], with_cuda=False, verbose=False)
    except Exception as e:  # noqa: BLE001 - a failed build is a reason, said once
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        return None, "building it failed: " + " | ".join(lines[-6:])
    why = _usable(mod)
    return (None, why) if why else (mod, None)


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
