"""Runtime of one exported kforge program as a PyTorch custom op (copied into each exported
package as _kforge_op.py by `kforge export`; needs only torch and the package's own files).

Program(package_dir) reads program/runtime.json (the tensors a call takes, their dtypes and
shapes, the dims, the target arch). check() holds every call to it and raises ValueError naming
the first mismatch (count, dtype, shape, device, contiguity); launch() runs the program on
torch's current stream through libkforge_runtime.so (ctypes), with its workspace from torch's
caching allocator and no synchronization, so it works under torch.compile and in CUDA-graph
capture. Nothing here falls back to PyTorch: a call that cannot run raises.

With the compiled op (kforge_torch, _kforge_native.py) the package registers C++ kernels instead
of run(); they call native_entry() once per device and then launch without Python."""
import ctypes
import json
import os
import threading

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}

RT_OK = 0
RT_NAMES = {1: "invalid_argument", 2: "bad_package", 3: "not_built", 4: "no_gpu",
            5: "wrong_arch", 6: "wrong_context", 7: "cuda_error", 8: "builder_failed"}


class Decl:
    def __init__(self, j):
        self.name = j["name"]
        self.dtype_name = j["dtype"]
        self.dtype = DTYPES[j["dtype"]]
        self.shape = tuple(int(d) for d in j["shape"])
        self.output = j["role"] == "output"


def arch_runs_on(arch, capability):
    """Whether a cubin for `arch` ("sm_90a", "sm_80") runs on compute capability (major, minor)."""
    digits = arch[3:]
    specific = digits.endswith("a")
    digits = digits.rstrip("a")
    major, minor = int(digits[:-1]), int(digits[-1])
    if capability[0] != major:
        return False
    return capability[1] == minor if specific else capability[1] >= minor


class Program:
    def __init__(self, package_dir, op_name):
        self.dir = os.path.join(package_dir, "program")
        self.op_name = op_name
        with open(os.path.join(self.dir, "runtime.json"), encoding="utf-8") as f:
            self.manifest = json.load(f)
        tensors = [Decl(t) for t in self.manifest["tensors"]]
        self.inputs = [t for t in tensors if not t.output]
        self.outputs = [t for t in tensors if t.output]
        self.arch = self.manifest["arch"]
        self.built = bool(self.manifest["built"])
        self._lib = None
        self._handles = {}  # CUDA device index -> (handle, workspace bytes)
        self._lock = threading.Lock()
        # the fast path's expectations, compared in one pass per call (run())
        self._expect = [(d.dtype, torch.Size(d.shape)) for d in self.inputs]
        self._out_decls = [(d.shape, d.dtype) for d in self.outputs]
        self._ptrs = (ctypes.c_void_p * (len(self.inputs) + len(self.outputs)))()
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def where(self):
        return f"kforge::{self.op_name}"

    # ---- checks (every call, real or fake)
    def check(self, args, fake):
        n = len(self.inputs)
        if len(args) != n:
            raise ValueError(f"{self.where()} takes {n} tensors "
                             f"({', '.join(d.name for d in self.inputs)}), got {len(args)}")
        device = None
        for x, d in zip(args, self.inputs):
            if not isinstance(x, torch.Tensor):
                raise ValueError(f"{self.where()}: input '{d.name}' is a {type(x).__name__}, "
                                 "not a tensor")
            if x.dtype != d.dtype:
                raise ValueError(f"{self.where()}: input '{d.name}' has dtype "
                                 f"{str(x.dtype).replace('torch.', '')}; the exported program takes "
                                 f"{str(d.dtype).replace('torch.', '')}")
            if tuple(x.shape) != d.shape:
                raise ValueError(f"{self.where()}: input '{d.name}' has shape {list(x.shape)}; "
                                 f"the exported program takes exactly {list(d.shape)} (it was "
                                 "exported for one shape)")
            allowed = ("cuda", "meta") if fake else ("cuda",)
            if x.device.type not in allowed:
                raise ValueError(f"{self.where()}: input '{d.name}' is on {x.device}; the "
                                 "exported program runs on CUDA only (no CPU fallback)")
            if device is None:
                device = x.device
            elif x.device != device:
                raise ValueError(f"{self.where()}: input '{d.name}' is on {x.device}, "
                                 f"'{self.inputs[0].name}' on {device}: all on one device")
            if not x.is_contiguous():
                raise ValueError(f"{self.where()}: input '{d.name}' is not contiguous "
                                 "(call .contiguous() first)")
        return device

    def empty_outputs(self, device):
        return [torch.empty(d.shape, dtype=d.dtype, device=device) for d in self.outputs]

    # ---- launching
    def _library(self):
        if self._lib is not None:
            return self._lib
        path = os.environ.get("KFORGE_RUNTIME_LIB") or os.path.join(self.dir,
                                                                    "libkforge_runtime.so")
        if not os.path.exists(path):
            raise RuntimeError(f"{self.where()}: {path} is missing: export again with kforge's "
                               "libkforge_runtime.so (--runtime-lib) or set KFORGE_RUNTIME_LIB")
        lib = ctypes.CDLL(path)
        lib.kforge_rt_last_error.restype = ctypes.c_char_p
        lib.kforge_rt_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.kforge_rt_workspace_bytes.argtypes = [ctypes.c_void_p,
                                                  ctypes.POINTER(ctypes.c_uint64)]
        lib.kforge_rt_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32,
                                         ctypes.c_void_p, ctypes.c_uint64]
        self._lib = lib
        return lib

    def _fail(self, lib, rc, what):
        msg = lib.kforge_rt_last_error().decode(errors="replace")
        raise RuntimeError(f"{self.where()}: {what} failed ({RT_NAMES.get(rc, rc)}): {msg}")

    def _handle(self, device):
        index = device.index if device.index is not None else torch.cuda.current_device()
        with self._lock:
            if index in self._handles:
                return self._handles[index]
            if not self.built:
                raise RuntimeError(f"{self.where()} was exported with --no-build: it has a plan "
                                   "but no cubin; run `kforge export` again without --no-build "
                                   "to launch it")
            cap = torch.cuda.get_device_capability(index)
            if not arch_runs_on(self.arch, cap):
                raise RuntimeError(f"{self.where()} was built for {self.arch}; cuda:{index} is "
                                   f"compute capability {cap[0]}.{cap[1]} "
                                   f"({torch.cuda.get_device_name(index)}): export it for this "
                                   "GPU's arch")
            lib = self._library()
            with torch.cuda.device(index):
                torch.cuda.init()
                torch.empty(1, device=f"cuda:{index}")  # the primary context is current
                h = ctypes.c_void_p()
                rc = lib.kforge_rt_open(self.dir.encode(), ctypes.byref(h))
                if rc != RT_OK:
                    self._fail(lib, rc, "loading the program")
                ws = ctypes.c_uint64()
                rc = lib.kforge_rt_workspace_bytes(h, ctypes.byref(ws))
                if rc != RT_OK:
                    self._fail(lib, rc, "the workspace query")
            self._handles[index] = (h, int(ws.value))
            return self._handles[index]

    def run(self, args):
        """The op's CUDA implementation: check, allocate the outputs, launch; the outputs.
        The common case (every input as exported) costs one comparison per input; anything
        else goes through check(), which names the mismatch."""
        expect = self._expect
        if len(args) != len(expect):
            self.check(args, fake=False)
        index = -2
        for x, (dtype, shape) in zip(args, expect):
            if (not isinstance(x, torch.Tensor) or x.dtype != dtype or x.shape != shape
                    or not x.is_cuda or not x.is_contiguous()):
                self.check(args, fake=False)
                break
            i = x.get_device()
            if index == -2:
                index = i
            elif i != index:
                self.check(args, fake=False)
        entry = self._handles.get(index)
        if entry is None:
            entry = self._handle(args[0].device)
        h, ws_bytes = entry
        device = args[0].device
        outs = [torch.empty(shape, dtype=dtype, device=device)
                for shape, dtype in self._out_decls]
        self._enqueue(h, ws_bytes, index, device, args, outs)
        return outs

    def _enqueue(self, h, ws_bytes, index, device, args, outs):
        # from the caching allocator, on the current stream: reused by the next call (or the
        # graph's private pool under capture); none when the program needs none
        workspace = (torch.empty(ws_bytes, dtype=torch.uint8, device=device)
                     if ws_bytes else None)
        with self._lock:  # one pointer array per program: one call at a time fills it
            self._call(h, ws_bytes, index, device, args, outs, workspace)

    def _call(self, h, ws_bytes, index, device, args, outs, workspace):
        lib = self._lib
        ptrs = self._ptrs
        n = 0
        for t in args:
            ptrs[n] = t.data_ptr()
            n += 1
        for t in outs:
            ptrs[n] = t.data_ptr()
            n += 1
        stream = (self._raw_stream(index) if self._raw_stream is not None
                  else torch.cuda.current_stream(device).cuda_stream)
        ws_ptr = workspace.data_ptr() if workspace is not None else None
        if index == torch.cuda.current_device():
            rc = lib.kforge_rt_launch(h, stream, ptrs, n, ws_ptr, ws_bytes)
        else:  # the program's context must be current: the tensors' device's
            with torch.cuda.device(device):
                rc = lib.kforge_rt_launch(h, stream, ptrs, n, ws_ptr, ws_bytes)
        if rc != RT_OK:
            self._fail(lib, rc, "the launch")

    # ---- the compiled op (kforge_torch: _kforge_native.py, csrc/kforge_torch.cpp)
    def native_decls(self):
        """(inputs, outputs) as kforge_torch.register_op takes them: (name, dtype, shape)."""
        def rows(decls):
            return [(d.name, str(d.dtype).replace("torch.", ""), list(d.shape)) for d in decls]
        return rows(self.inputs), rows(self.outputs)

    def native_entry(self, index):
        """The program loaded on cuda:index for kforge_torch (its first call there): (program
        handle, workspace bytes, kforge_rt_launch, kforge_rt_last_error, runtime ABI version).
        Raises as _handle does (--no-build, the GPU's arch, the runtime library)."""
        h, ws_bytes = self._handle(torch.device("cuda", index))
        lib = self._lib
        lib.kforge_rt_abi_version.restype = ctypes.c_int32

        def addr(fn):
            return ctypes.cast(fn, ctypes.c_void_p).value
        return (h.value, ws_bytes, addr(lib.kforge_rt_launch), addr(lib.kforge_rt_last_error),
                int(lib.kforge_rt_abi_version()))

    def launch(self, args, outputs):
        """Launches on torch's current stream into `outputs` (checked calls only)."""
        device = args[0].device
        index = device.index if device.index is not None else torch.cuda.current_device()
        h, ws_bytes = self._handle(device)
        self._enqueue(h, ws_bytes, index, device, args, outputs)
