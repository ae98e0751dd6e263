"""A kforge problem spec (JSON, docs/problem-spec.md) -> a PyTorch callable: the module that the
PyTorch baselines time. Each spec op maps onto the PyTorch op it is defined by."""
import math

import torch
import torch.nn.functional as F

from kforge_py import fx_index, fx_shape

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}

UNARY = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu,
         "mish": F.mish, "exp": torch.exp, "log": torch.log, "neg": torch.neg, "abs": torch.abs,
         "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "square": torch.square, "erf": torch.erf,
         "log1p": torch.log1p, "expm1": torch.expm1, "sin": torch.sin, "cos": torch.cos,
         "sign": torch.sign, "reciprocal": torch.reciprocal}


def shape_of(spec, entries):
    return [extent(spec, d) for d in entries]


def pool(op, x):
    """The spec's pools as PyTorch's F.max_pool{n}d / avg_pool{n}d / adaptive_*_pool{n}d."""
    n = x.dim() - 2
    k = op["op"]
    if k.startswith("adaptive"):
        return getattr(F, f"{k}{n}d")(x, op["output_size"])
    kernel = op["kernel_size"]
    common = dict(kernel_size=kernel, stride=op.get("stride", kernel),
                  padding=op.get("padding", 0), ceil_mode=op.get("ceil_mode", False))
    if k == "max_pool":
        return getattr(F, f"max_pool{n}d")(x, dilation=op.get("dilation", 1), **common)
    avg = dict(count_include_pad=op.get("count_include_pad", True), **common)
    if op.get("divisor_override") is not None:  # (F.avg_pool1d has no such argument)
        avg["divisor_override"] = op["divisor_override"]
    return getattr(F, f"avg_pool{n}d")(x, **avg)


def rnn(op, a):
    """The spec's lstm / gru as PyTorch's torch.lstm / torch.gru (what nn.LSTM / nn.GRU call):
    operands x, h0, [c0], then the weights in the module's flat order."""
    lstm = op["op"] == "lstm"
    states = a[1:3] if lstm else a[1]
    weights = a[3:] if lstm else a[2:]
    flags = (op.get("bias", True), op["num_layers"], 0.0, False, op.get("bidirectional", False),
             op.get("batch_first", False))
    res = torch.lstm(a[0], states, weights, *flags) if lstm else \
        torch.gru(a[0], states, weights, *flags)
    return res[("output", "h_n", "c_n").index(op.get("result", "output"))]


def run_op(op, a):
    k = op["op"]
    ax = op.get("axis", -1)
    if k == "matmul":
        x, y = a
        if op.get("transpose_a"):
            x = x.transpose(-1, -2)
        if op.get("transpose_b"):
            y = y.transpose(-1, -2)
        return torch.matmul(x, y)
    if k == "linear":
        return F.linear(a[0], a[1], a[2] if len(a) > 2 else None)
    if k in ("conv1d", "conv2d", "conv3d"):
        groups = op.get("groups", 1)
        if isinstance(groups, str):  # a dim (a depthwise conv's channels): C / (C / groups)
            groups = a[0].shape[1] // a[1].shape[1]
        return getattr(F, k)(a[0], a[1], a[2] if len(a) > 2 else None, op.get("stride", 1),
                             op.get("padding", 0), op.get("dilation", 1), groups)
    if k in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        return getattr(F, k)(a[0], a[1], a[2] if len(a) > 2 else None, op.get("stride", 1),
                             op.get("padding", 0), op.get("output_padding", 0),
                             op.get("groups", 1), op.get("dilation", 1))
    if k in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool"):
        return pool(op, a[0])
    if k in ("lstm", "gru"):
        return rnn(op, a)
    if k in ("add", "sub", "mul", "div", "maximum", "minimum"):
        return getattr(torch, k)(a[0], a[1])
    if k in UNARY:
        return UNARY[k](a[0])
    v = op.get("value", 0.0)
    if k == "scale":
        return a[0] * v
    if k == "add_scalar":
        return a[0] + v
    if k == "min_scalar":
        return torch.clamp(a[0], max=v)
    if k == "max_scalar":
        return torch.clamp(a[0], min=v)
    if k == "leaky_relu":
        return F.leaky_relu(a[0], op.get("negative_slope", 0.01))
    if k == "gelu":
        return F.gelu(a[0], approximate=op.get("approximate", "none"))
    if k == "hardtanh":
        return F.hardtanh(a[0], op.get("min", -1.0), op.get("max", 1.0))
    if k == "clamp":
        return torch.clamp(a[0], op.get("min"), op.get("max"))
    if k == "softplus":
        return F.softplus(a[0], op.get("beta", 1.0), op.get("threshold", 20.0))
    if k == "dropout":
        return a[0]  # eval mode
    kd = op.get("keepdim", False)
    if k == "sum":
        return a[0].sum(ax, keepdim=kd)
    if k == "mean":
        return a[0].mean(ax, keepdim=kd)
    if k == "max":
        return a[0].amax(ax, keepdim=kd)
    if k == "min":
        return a[0].amin(ax, keepdim=kd)
    if k == "prod":
        return a[0].prod(ax, keepdim=kd)
    if k == "softmax":
        return torch.softmax(a[0], ax)
    if k == "log_softmax":
        return torch.log_softmax(a[0], ax)
    if k == "logsumexp":
        return torch.logsumexp(a[0], ax, keepdim=kd)
    if k in ("cumsum", "cumprod"):
        x = a[0].flip(ax) if op.get("reverse") else a[0]
        y = torch.cumsum(x, ax) if k == "cumsum" else torch.cumprod(x, ax)
        if op.get("exclusive"):
            first = torch.zeros_like(y.narrow(ax, 0, 1)) + (1 if k == "cumprod" else 0)
            y = torch.cat([first, y.narrow(ax, 0, y.shape[ax] - 1)], ax)
        return y.flip(ax) if op.get("reverse") else y
    if k in ("l1_normalize", "l2_normalize"):
        return F.normalize(a[0], p=1.0 if k == "l1_normalize" else 2.0, dim=ax,
                           eps=op.get("eps", 0.0))
    eps = op.get("eps", 1e-5)
    if k in ("layer_norm", "rms_norm"):
        n = len(op.get("normalized_shape") or [0])
        shape = a[0].shape[-n:]
        if k == "rms_norm":
            return F.rms_norm(a[0], shape, a[1] if len(a) > 1 else None, eps)
        return F.layer_norm(a[0], shape, a[1] if len(a) > 1 else None,
                            a[2] if len(a) > 2 else None, eps)
    if k == "group_norm":
        return F.group_norm(a[0], op["num_groups"], a[1] if len(a) > 1 else None,
                            a[2] if len(a) > 2 else None, eps)
    y = fx_index.run_spec_op(torch, op, a)
    if y is not None:
        return y
    raise ValueError(f"op {k} has no PyTorch mapping")


def ordered_graph(spec):
    """The graph in a topological order (the spec allows ops in any order)."""
    known = set(spec["inputs"])
    pending, order = list(spec["graph"]), []
    while pending:
        ready = [op for op in pending if all(i in known for i in op["inputs"])]
        if not ready:
            raise ValueError("the graph has a cycle or an unknown tensor (run kforge check)")
        for op in ready:
            order.append(op)
            known.add(op["output"])
            pending.remove(op)
    return order


def make_forward(spec):
    """forward(**inputs) -> tuple of outputs, in the spec's output order."""
    graph = ordered_graph(spec)
    outputs = list(spec["outputs"])

    def forward(*args):
        env = dict(zip(spec["inputs"], args))
        # the numbers of the dims, and the derived dims as the ops that name them give them (a
        # derived dim's expression once the dims it names are known)
        dims = fx_shape.resolve_dims(spec["dims"])
        for op in graph:
            ins = [env[n] for n in op["inputs"]]
            y = fx_shape.run_spec_op(op, ins, dims) if op["op"] in fx_shape.SHAPE_OPS else \
                run_op(op, ins)
            env[op["output"]] = y
            learn_derived_dims(op, y, dims)
            dims = fx_shape.resolve_dims(dict(spec["dims"], **dims))
        return tuple(env[o] for o in outputs)
    return forward


def learn_derived_dims(op, y, dims):
    """The dims op `op` names for its output `y` (a conv's or pool's "out_dims" for its
    trailing spatial axes, a slice's, cat's or pad's "out_names" per axis) into `dims`: a later
    reshape may name several of them (a nearest upsampling after a pool: [N, C, H_out, 1,
    W_out, 1]), of which PyTorch infers one at most."""
    if not isinstance(y, torch.Tensor):
        return
    named = list(op.get("out_names") or [])
    if op.get("out_dims"):
        named = [""] * (y.dim() - len(op["out_dims"])) + list(op["out_dims"])
    for axis, name in enumerate(named[:y.dim()]):
        if isinstance(name, str) and name.isidentifier():
            dims.setdefault(name, int(y.shape[axis]))


def draw(shape, distribution, g):
    """fp32 values of `shape` drawn as a spec input's "distribution" says (docs/problem-spec.md,
    problem/inputs.h): "normal" torch.randn, "uniform01" torch.rand, "uniform_pm1" uniform on
    [-1, 1), "heavy_tailed" Student-t with 3 degrees of freedom clipped to [-1e4, 1e4] - the
    draws kforge's evaluator times on."""
    if distribution == "normal":
        return torch.randn(shape, generator=g, dtype=torch.float32)
    if distribution == "uniform01":
        return torch.rand(shape, generator=g, dtype=torch.float32)
    if distribution == "uniform_pm1":
        return torch.rand(shape, generator=g, dtype=torch.float32) * 2 - 1
    if distribution == "heavy_tailed":
        z = torch.randn(shape, generator=g, dtype=torch.float32)
        chi2 = torch.randn([3] + list(shape), generator=g, dtype=torch.float32).square().sum(0)
        return (z / (chi2.clamp(min=1e-30) / 3).sqrt()).clamp(-1e4, 1e4)
    raise ValueError(f"unknown distribution {distribution!r} (normal, uniform01, uniform_pm1, "
                     "heavy_tailed)")


def extent(spec, entry):
    """The value of a spec extent: an integer, a dim name, a product of them ("4*H") or a sum of
    such (a derived dim's expression)."""
    return fx_shape.spec_extent(entry, fx_shape.resolve_dims(spec["dims"]))


def draw_scale(spec, name):
    """The factor input `name`'s draw is multiplied by (problem/inputs.h draw_scale): its
    "scale" (default 1) divided by sqrt of its "fan_in" where it has one; neither given, an
    lstm / gru weight or bias 1/sqrt(H) (H: the hidden size, h0's last extent), else 1."""
    t = spec["inputs"][name]
    if "scale" in t or "fan_in" in t:
        s = float(t.get("scale", 1.0))
        return s / math.sqrt(extent(spec, t["fan_in"])) if "fan_in" in t else s
    for op in spec.get("graph", []):
        first = {"lstm": 3, "gru": 2}.get(op["op"])
        if first is None or name not in op["inputs"][first:]:
            continue
        h0 = spec["inputs"].get(op["inputs"][1])
        if h0 is not None and h0["shape"]:
            return 1.0 / math.sqrt(extent(spec, h0["shape"][-1]))
    return 1.0


def with_graph_dims(spec):
    """`spec` with the dims its graph derives (a conv's or pool's out_dims) as numbers, where an
    input's shape names a derived dim of them (a Linear weight after a flatten of pooled
    features, "D25088": "C*H_out*W_out"): the graph run on the meta device up to the first op
    that reads such an input. Else `spec` itself."""
    dims = fx_shape.resolve_dims(spec["dims"])
    if all(fx_shape.spec_extent(e, dims) is not None
           for t in spec["inputs"].values() for e in t["shape"]):
        return spec
    env = {}
    for op in ordered_graph(spec):
        for n in op["inputs"]:
            t = spec["inputs"].get(n)
            if t is not None and n not in env:
                shape = [fx_shape.spec_extent(e, dims) for e in t["shape"]]
                if None in shape:
                    return dict(spec, dims=dict(spec["dims"], **dims))
                env[n] = torch.empty(shape, dtype=DTYPES[t["dtype"]], device="meta")
        ins = [env[n] for n in op["inputs"]]
        y = fx_shape.run_spec_op(op, ins, dims) if op["op"] in fx_shape.SHAPE_OPS else \
            run_op(op, ins)
        env[op["output"]] = y
        learn_derived_dims(op, y, dims)
        dims = fx_shape.resolve_dims(dict(spec["dims"], **dims))
    return dict(spec, dims=dict(spec["dims"], **dims))


def make_inputs(spec, device="cpu", seed=0, dims=None):
    """Inputs drawn as each spec entry's "distribution" says (standard normal by default;
    integers: rounded), drawn in fp32 and cast to each dtype, in the spec's input order."""
    if dims:
        spec = dict(spec, dims=dict(spec["dims"], **dims))
    spec = with_graph_dims(spec)
    g = torch.Generator(device="cpu").manual_seed(seed)
    out = []
    for name, t in spec["inputs"].items():
        x = draw(shape_of(spec, t["shape"]), t.get("distribution", "normal"), g)
        s = draw_scale(spec, name)
        if s != 1.0:
            x = x * s
        dt = DTYPES[t["dtype"]]
        bound = fx_index.index_bound(spec, name)
        if bound is not None:  # class indices in [0, C)
            x = (torch.rand(x.shape, generator=g) * bound).floor().clamp(max=bound - 1)
        if dt == torch.bool:
            x = x > 0  # a mask, about half true
        else:
            x = x.round().to(dt) if not dt.is_floating_point else x.to(dt)
        out.append(x.to(device))
    return out
