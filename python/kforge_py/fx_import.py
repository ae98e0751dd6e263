"""torch.fx graph of a KernelBench Model -> a kforge problem spec (docs/problem-spec.md).

Every fx node maps onto spec ops (one node may become a short chain: `c - x` is neg then
add_scalar); parameters and buffers the graph reads become `param` inputs, nn.Linear and
nn.Conv2d weights included. Shapes and dtypes come from the real inputs (fx ShapeProp). A node
with no spec equivalent raises Unsupported naming the op ("conv3d (a 3-d convolution) is not
supported").

The shared values (Tensor, the views, Unsupported) live in fx_types; the converters of each kind
of node in fx_ops (call_function / call_method), fx_conv, fx_decomp, fx_forms, fx_losses and
fx_chains, none of which imports this module. Unsupported and the value types are re-exported
here for callers that import them from fx_import."""
import contextlib
import copy
import io
import re

import torch
import torch.fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from kforge_py import fx_attention, fx_conv, fx_decomp, fx_fold, fx_index, fx_losses, fx_ops
from kforge_py import fx_pool, fx_rnn, fx_rnn_cell, fx_shape
from kforge_py.fx_chains import elu, hardsigmoid
from kforge_py.fx_types import (DTYPES, ConstantTensor, Flipped, MaxPair, Tensor,  # noqa: F401
                                Transposed, Unsupported, is_scalar)


def propagate_shapes(gm, example_inputs):
    """Shapes and dtypes of every node (fx ShapeProp), on the meta device where every op has a
    meta kernel (no arithmetic: full-size problems cost nothing), else on the real inputs.
    The meta run works on a copy, so `gm` keeps its real parameters."""
    try:
        meta_gm = copy.deepcopy(gm).to("meta")
        args = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in example_inputs]
        with contextlib.redirect_stderr(io.StringIO()):  # (ShapeProp prints what it raises)
            ShapeProp(meta_gm).propagate(*args)
        for mine, theirs in zip(gm.graph.nodes, meta_gm.graph.nodes):
            if "tensor_meta" in theirs.meta:
                mine.meta["tensor_meta"] = theirs.meta["tensor_meta"]
        return
    except Exception:
        pass
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # (the failure is the message below)
            ShapeProp(gm).propagate(*example_inputs)
    except RuntimeError as e:  # PyTorch itself rejects the model (e.g. a float mask)
        cause = e.__cause__ or e
        raise Unsupported("the model fails in PyTorch on its own inputs: " +
                          (str(cause).strip().splitlines() or ["?"])[0]) from e


def _ident(text):
    s = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return s if re.match(r"[A-Za-z_]", s) else "t_" + s


def _fn_name(target):
    return getattr(target, "__name__", str(target)).lstrip("_")


class Converter:
    def __init__(self, gm, example_inputs):
        self.gm = gm
        self.ops = []
        self.inputs = {}          # spec input name -> Tensor
        self.params = {}          # spec param name -> (attribute path, shape to feed)
        self.placeholders = []    # spec input names, in forward() argument order
        self.placeholder_pos = {} # spec input name -> forward() argument position
        self.used = set()
        self.env = {}
        self.shapes = {}          # op output name -> shape
        self.folded = {}          # spec param name -> fx node computed from buffers (fx_fold)
        self.indicators = set()   # tensors holding a comparison's 0/1 for a bool (fx_compare)
        propagate_shapes(gm, example_inputs)

    # ---- names and tensors ----
    def fresh(self, base):
        base = _ident(base)
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name

    def meta(self, node, allow_tuple=False):
        tm = node.meta.get("tensor_meta")
        # (TensorMetadata is a NamedTuple itself: only a tuple of them is a tuple output)
        if allow_tuple and isinstance(tm, (tuple, list)) and tm and not hasattr(tm, "shape"):
            tm = tm[0]  # torch.max/min with a dim: (values, indices)
        if tm is None or not hasattr(tm, "shape"):
            what = node.target if isinstance(node.target, str) else _fn_name(node.target)
            raise Unsupported(f"{what} is not supported (node {node.name} does not produce one "
                              "tensor)")
        if tm.dtype not in DTYPES:
            raise Unsupported(f"dtype {tm.dtype} is not supported (node {node.name})")
        dtype = DTYPES[tm.dtype]
        if dtype == "bool":  # a view of a comparison's indicator has the indicator's dtype
            for a in node.all_input_nodes:
                v = self.env.get(a)
                if isinstance(v, Tensor) and v.name in self.indicators:
                    return tuple(tm.shape), v.dtype
        return tuple(tm.shape), dtype

    def emit(self, op, inputs, node, shape, dtype, final=True, **attrs):
        entry = {"op": op, "inputs": [t.name for t in inputs]}
        entry.update({k: v for k, v in attrs.items() if v is not None})
        out = Tensor(self.fresh(node.name if final else f"{node.name}_{op}"), shape, dtype)
        entry["output"] = out.name
        self.shapes[out.name] = tuple(shape)
        self.ops.append(entry)
        return out

    def param(self, path, tensor, shape=None):
        if not isinstance(tensor, torch.Tensor):
            raise Unsupported(f"attribute {path} is not a tensor")
        if tensor.dtype not in DTYPES:
            raise Unsupported(f"dtype {tensor.dtype} of {path} is not supported")
        key = (path, tuple(shape) if shape is not None else tuple(tensor.shape))
        for name, (p, s) in self.params.items():
            if (p, s) == key:
                return self.inputs[name]
        name = self.fresh(path.replace(".", "_"))
        self.params[name] = key
        t = Tensor(name, key[1], DTYPES[tensor.dtype])
        self.inputs[name] = t
        return t

    def folded_param(self, node, shape=None, dtype=None):
        """A param input holding what `node` computes from the model's buffers (fx_fold; a
        FoldedCall gives its shape and dtype)."""
        if shape is None:
            shape, dtype = self.meta(node)
        name = self.fresh(node.name)
        self.params[name] = (fx_fold.FOLD_PREFIX + node.name, tuple(shape))
        self.folded[name] = node
        t = Tensor(name, tuple(shape), dtype)
        self.inputs[name] = t
        return t

    def tensor(self, v, what="operand"):
        if isinstance(v, Tensor):
            return v
        if isinstance(v, Transposed):  # read by something other than a matmul: a permute
            return fx_shape.materialize_transposed(self, v)
        if isinstance(v, Flipped):
            raise Unsupported("flip is supported only around a scan over the flipped dim: "
                              "x.flip(d).cumsum(d).flip(d) (a reverse cumsum / cumprod)")
        if isinstance(v, MaxPair):
            raise Unsupported(f"{v.what} with a dim returns (values, indices); "
                              "only its values ([0]) are supported")
        raise Unsupported(f"expected a tensor as {what}, got {type(v).__name__} {v!r}")

    def value(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.value(x) for x in a)
        return a

    # ---- conversion ----
    def run(self):
        gm = self.gm
        gm.graph.eliminate_dead_code()
        outputs = None
        position = -1
        folded = fx_fold.foldable(gm, gm)
        front = fx_fold.frontier(gm, folded)
        for node in gm.graph.nodes:
            if node in front:
                self.env[node] = self.folded_param(node)
            elif node in folded and (node.op != "get_attr" or
                                     all(u in folded for u in node.users)):
                continue  # an intermediate of a constant: computed when the inputs are fed
            elif node.op == "placeholder":
                position += 1
                if not node.users and not hasattr(node.meta.get("tensor_meta"), "shape"):
                    continue  # a scalar argument, baked in as a constant
                shape, dtype = self.meta(node)
                t = Tensor(self.fresh(node.target), shape, dtype)
                self.inputs[t.name] = t
                self.placeholders.append(t.name)
                self.placeholder_pos[t.name] = position
                self.env[node] = t
            elif node.op == "get_attr":
                attr = gm
                for part in node.target.split("."):
                    attr = getattr(attr, part)
                if (node.target.startswith("_tensor_constant") and isinstance(attr, torch.Tensor)
                        and attr.dim() == 0 and attr.dtype != torch.bool):
                    # torch.tensor(c) in forward, which tracing keeps as an attribute: the
                    # number it holds (fx_decomp.ConstantTensor), not an input
                    self.env[node] = ConstantTensor(attr.item())
                else:
                    self.env[node] = self.param(node.target, attr)
            elif node.op == "call_module":
                self.env[node] = self.call_module(node, gm.get_submodule(node.target))
            elif node.op in ("call_function", "call_method"):
                self.env[node] = v = self.call(node)
                if isinstance(v, Tensor) and v.dtype != "bool" and getattr(
                        node.meta.get("tensor_meta"), "dtype", None) == torch.bool:
                    self.indicators.add(v.name)  # a view of an indicator (fx_compare)
            elif node.op == "output":
                outputs = self.value(node.args[0])
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        names = []
        for o in outputs:
            t = self.tensor(o, "an output")
            if t.name in self.indicators:
                raise Unsupported(f"output {t.name} is a comparison's bool result, which the "
                                  "spec has no op for (cast it, e.g. .float(), or use it in "
                                  "torch.where)")
            if t.name in self.inputs:
                raise Unsupported(f"output {t.name} is an input returned unchanged")
            if t.name in names:
                raise Unsupported(f"tensor {t.name} is returned twice")
            names.append(t.name)
        return names

    def call_module(self, node, mod):
        if type(mod).__name__ in fx_losses.LOSS_MODULES and \
                type(mod).__module__.startswith("torch."):
            return fx_losses.loss_module(self, node, mod)
        if fx_index.is_loss_module(mod):
            return fx_index.loss_module(self, node, mod)
        if fx_attention.is_attention(mod):  # (output, weights): before meta
            return fx_attention.multi_head_attention(self, node, mod)
        if fx_rnn.is_rnn_module(mod):  # (output, h_n[, c_n]): before meta
            return fx_rnn.rnn_module(self, node, mod)
        if fx_rnn_cell.is_cell_module(mod):  # (h', c') of an LSTMCell: before meta
            return fx_rnn_cell.cell_module(self, node, mod)
        x = self.tensor(self.value(node.args[0]) if node.args else None, "the module input")
        if fx_pool.is_pool_module(mod):  # before meta: return_indices gives a tuple
            return fx_pool.pool_module(self, node, mod, x)
        shape, dtype = self.meta(node)
        p = node.target

        def e(op, inputs=(x,), **attrs):
            return self.emit(op, list(inputs), node, shape, dtype, **attrs)

        if fx_conv.is_conv_module(mod):
            return fx_conv.conv_module(self, node, mod, x, shape, dtype)
        if isinstance(mod, nn.Linear):
            ins = [x, self.param(p + ".weight", mod.weight)]
            if mod.bias is not None:
                ins.append(self.param(p + ".bias", mod.bias))
            return e("linear", ins)
        simple = {nn.ReLU: "relu", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.SiLU: "silu",
                  nn.Mish: "mish"}
        for cls, op in simple.items():
            if type(mod) is cls:
                return e(op)
        if type(mod) is nn.Identity:
            return x
        if isinstance(mod, nn.GELU):
            return e("gelu", approximate=mod.approximate)
        if isinstance(mod, nn.LeakyReLU):
            return e("leaky_relu", negative_slope=float(mod.negative_slope))
        if isinstance(mod, nn.Hardtanh) and type(mod) in (nn.Hardtanh, nn.ReLU6):
            return e("hardtanh", min=float(mod.min_val), max=float(mod.max_val))
        if type(mod) is nn.Hardsigmoid:
            return hardsigmoid(self, node, x, shape, dtype)
        # the modules of the functions fx_decomp writes as spec ops (KernelBench L2 92 uses
        # nn.Hardswish, refused as a module while F.hardswish imported)
        decomposed = {nn.Hardswish: ("hardswish", {}), nn.Softsign: ("softsign", {}),
                      nn.Tanhshrink: ("tanhshrink", {}), nn.LogSigmoid: ("logsigmoid", {}),
                      nn.Softmin: ("softmin", {"dim": getattr(mod, "dim", None)}),
                      nn.Upsample: ("upsample", {"mode": getattr(mod, "mode", None)}),
                      nn.UpsamplingNearest2d: ("upsample", {"mode": "nearest"}),
                      nn.UpsamplingBilinear2d: ("upsample", {"mode": "bilinear"}),
                      nn.PixelShuffle: ("pixel_shuffle",
                                        {"upscale_factor": getattr(mod, "upscale_factor", 0)}),
                      nn.PixelUnshuffle: ("pixel_unshuffle",
                                          {"downscale_factor": getattr(mod, "downscale_factor",
                                                                       0)})}
        if type(mod) in (nn.Flatten, nn.Unflatten):  # views: the reshape to the node's shape
            return fx_shape.reshape_to(self, node, x, shape)
        if type(mod) is nn.PReLU:
            return fx_decomp.DECOMPOSED["prelu"](self, node, [x, self.param(p + ".weight",
                                                                             mod.weight)],
                                                 {}, x, shape, dtype)
        if type(mod) in decomposed:
            name, kw = decomposed[type(mod)]
            return fx_decomp.DECOMPOSED[name](self, node, [x], kw, x, shape, dtype)
        if type(mod) in (nn.ELU, nn.SELU, nn.CELU):
            return elu(self, node, x, shape, dtype, type(mod).__name__.lower(),
                       float(getattr(mod, "alpha", 1.0)))
        if isinstance(mod, nn.Softplus):
            return e("softplus", beta=float(mod.beta), threshold=float(mod.threshold))
        if isinstance(mod, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)):
            return e("dropout", p=float(mod.p))
        if isinstance(mod, nn.Softmax):
            return e("softmax", axis=self.axis(mod.dim, x))
        if isinstance(mod, nn.Softmax2d):  # over the channels: dim -3 of [N,] C, H, W
            return e("softmax", axis=self.axis(-3, x))
        if isinstance(mod, nn.LogSoftmax):
            return e("log_softmax", axis=self.axis(mod.dim, x))
        if isinstance(mod, nn.LayerNorm):
            ins = [x]
            if mod.weight is not None:
                ins.append(self.param(p + ".weight", mod.weight))
                if mod.bias is not None:
                    ins.append(self.param(p + ".bias", mod.bias))
            elif mod.bias is not None:
                raise Unsupported("layer_norm with a bias but no weight is not supported")
            return e("layer_norm", ins, normalized_shape=list(mod.normalized_shape),
                     eps=float(mod.eps))
        if isinstance(mod, nn.GroupNorm):
            ins = [x]
            if mod.affine:
                ins += [self.param(p + ".weight", mod.weight), self.param(p + ".bias", mod.bias)]
            return e("group_norm", ins, num_groups=int(mod.num_groups), eps=float(mod.eps))
        if isinstance(mod, (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)):
            # each (sample, channel) normalized over its spatial extent: layer_norm over the
            # spatial dims, then the per-channel affine (fx_decomp.instance_norm_of)
            return fx_decomp.instance_norm_module(self, node, mod, x, shape, dtype)
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            # per-channel statistics over the batch and spatial dims in training mode (how
            # KernelBench runs a fresh module), the running statistics in eval mode
            return fx_decomp.batch_norm_module(self, node, mod, x, shape, dtype)
        if hasattr(nn, "RMSNorm") and isinstance(mod, nn.RMSNorm):
            ins = [x] + ([self.param(p + ".weight", mod.weight)] if mod.weight is not None else [])
            eps = mod.eps if mod.eps is not None else torch.finfo(self.torch_dtype(x)).eps
            return e("rms_norm", ins, normalized_shape=list(mod.normalized_shape),
                     eps=float(eps))
        raise Unsupported(f"{type(mod).__name__.lower()} is not supported (module {p})")

    @staticmethod
    def torch_dtype(t):
        return {v: k for k, v in DTYPES.items()}[t.dtype]

    @staticmethod
    def axis(dim, t):
        if dim is None:
            raise Unsupported("softmax without dim is not supported")
        rank = len(t.shape)
        if not -rank <= dim < rank:
            raise Unsupported(f"axis {dim} out of range for rank {rank}")
        return dim

    def call(self, node):
        return fx_ops.convert(self, node)


def _uses_and_producers(ops, outputs):
    """How often each tensor is read (graph outputs count as a read), and the op making each."""
    uses = {}
    for op in ops:
        for t in op["inputs"]:
            uses[t] = uses.get(t, 0) + 1
    for t in outputs:
        uses[t] = uses.get(t, 0) + 1
    return uses, {op["output"]: op for op in ops}


def _single_use(ops, outputs):
    """single(name, kind): the op of `kind` making `name` when `name` is read once and is not a
    graph output (a fold may then drop it), else None."""
    uses, by_output = _uses_and_producers(ops, outputs)

    def single(name, kind):
        op = by_output.get(name)
        return op if op is not None and op["op"] == kind and uses.get(name) == 1 else None
    return single


def _over_last_dim_keepdim(reduce_op, rank):
    """True when the reduction op is over the last of `rank` dims only, with keepdim."""
    axis = reduce_op.get("axis")
    axis = axis[0] if isinstance(axis, list) and len(axis) == 1 else axis
    return isinstance(axis, int) and axis % rank == rank - 1 and bool(reduce_op.get("keepdim"))


def fold_swish(ops, outputs):
    """mul(x, sigmoid(x)) -> silu(x) where the sigmoid has no other use: KernelBench writes
    Swish as `x * torch.sigmoid(x)`, and as a chain that reads x twice it cannot stay in one
    kernel (a GEMM epilogue included); silu is the same function. Returns the new op list."""
    single = _single_use(ops, outputs)
    dropped = set()
    for op in ops:
        if op["op"] != "mul" or len(op["inputs"]) != 2:
            continue
        a, b = op["inputs"]
        for x, s in ((a, b), (b, a)):
            sig = single(s, "sigmoid")
            if sig is not None and sig["inputs"] == [x]:
                op["op"], op["inputs"] = "silu", [x]
                dropped.add(id(sig))
                break
    return [op for op in ops if id(op) not in dropped]


def fold_rms_norm(ops, outputs, shapes):
    """x * rsqrt(mean(x^2 over the last dim, keepdim) + eps), or x / sqrt(... + eps), times an
    optional weight over the last dim -> rms_norm(x[, weight], eps) where the intermediates have
    no other use: KernelBench's hand-written RMSNorm. As ops it plans as three kernels (square,
    row mean, a map that reads x again); as rms_norm it is one row kernel. Returns the new op
    list."""
    uses, by_output = _uses_and_producers(ops, outputs)
    single = _single_use(ops, outputs)
    dropped, replaced = set(), {}
    for op in ops:
        if id(op) in dropped or len(op["inputs"]) != 2 or op["op"] not in ("mul", "div"):
            continue
        pairs = [op["inputs"]] if op["op"] == "div" else [op["inputs"], op["inputs"][::-1]]
        for x, r in pairs:
            root = single(r, "rsqrt" if op["op"] == "mul" else "sqrt")
            a = root and single(root["inputs"][0], "add_scalar")
            m = a and single(a["inputs"][0], "mean")
            sq = m and single(m["inputs"][0], "square")
            if not sq or sq["inputs"] != [x] or x not in shapes:
                continue
            if not _over_last_dim_keepdim(m, len(shapes[x])):
                continue
            rms = {"op": "rms_norm", "inputs": [x], "normalized_shape": [shapes[x][-1]],
                   "eps": float(a["value"]), "output": op["output"]}
            # a weight over the last dim that multiplies only this value joins it
            # (uses counts graph outputs: a value read once is not one)
            for w_op in ops if uses.get(op["output"]) == 1 else []:
                if w_op["op"] == "mul" and len(w_op["inputs"]) == 2 and op["output"] in \
                        w_op["inputs"]:
                    w = [t for t in w_op["inputs"] if t != op["output"]]
                    # (a graph input: an op's output could come after this op)
                    if len(w) == 1 and w[0] not in by_output and \
                            shapes.get(w[0]) == (shapes[x][-1],):
                        rms["inputs"].append(w[0])
                        rms["output"] = w_op["output"]
                        dropped.add(id(w_op))
                    break
            replaced[id(op)] = rms
            dropped.update({id(root), id(a), id(m), id(sq)})
            break
    return [replaced.get(id(op), op) for op in ops if id(op) not in dropped]


def fold_normalize(ops, outputs, shapes):
    """x / sum(|x|) and x / sqrt(sum(x^2)) over the last dim (keepdim), optionally with the norm
    clamped from below (clamp_min(eps)) -> l1_normalize / l2_normalize(x, eps) where the
    intermediates have no other use: KernelBench's `x / torch.sum(torch.abs(x), dim=1,
    keepdim=True)` and `x / torch.norm(x, p=2, dim=1, keepdim=True)`. As ops they plan as two or
    three kernels (abs or square, a row sum, a divide that reads x again); as one op they are one
    row kernel. Returns the new op list."""
    single = _single_use(ops, outputs)
    dropped, replaced = set(), {}
    for op in ops:
        if op["op"] != "div" or len(op["inputs"]) != 2:
            continue
        x, d = op["inputs"]
        if x not in shapes:
            continue
        eps, chain = 0.0, []
        clamp = single(d, "max_scalar")
        if clamp is not None and clamp.get("value", -1.0) >= 0:
            eps, d = float(clamp["value"]), clamp["inputs"][0]
            chain.append(clamp)
        root = single(d, "sqrt")
        total = single(root["inputs"][0] if root else d, "sum")
        elem = total and (single(total["inputs"][0], "square") if root else
                          single(total["inputs"][0], "abs"))
        if not elem or elem["inputs"] != [x]:
            continue
        if not _over_last_dim_keepdim(total, len(shapes[x])):
            continue
        new = {"op": "l2_normalize" if root else "l1_normalize", "inputs": [x], "axis": -1,
               "output": op["output"]}
        if eps:
            new["eps"] = eps
        replaced[id(op)] = new
        dropped.update(id(o) for o in chain + [root, total, elem] if o is not None)
    return [replaced.get(id(op), op) for op in ops if id(op) not in dropped]


def to_spec(gm, example_inputs):
    """Converts a traced module; returns (Converter, output names)."""
    conv = Converter(gm, example_inputs)
    outs = conv.run()
    return conv, outs

