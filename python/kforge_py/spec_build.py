"""A loaded KernelBench model -> spec JSON (dict), with named dims.

An axis of an input or parameter (of size other than 1) belongs to one dim with every axis an op
makes the same (spec_dims.py: the contracted axes of a matmul, broadcast axes, a norm's weight
and the normalized axes, ...). Each dim is named after a module-level integer that holds its
size (`batch_size`, `in_features`), a second dim of the same size after the next such integer
or with a suffix (`N_1`), else `D<value>`. So the spec follows the file's own size variables,
and a smaller instance of the file gives the same spec with other dim values. A conv2d's
x [N, C, H, W] and weight [K, C/groups, R, S] take the integers whose names say their role
(`batch_size`, `in_channels`, `height`, `width`, `out_channels`), its kernel extents R, S are
written as numbers, and its output's spatial dims are derived (the op's out_dims)."""
import inspect
import re

import torch
import torch.fx

from kforge_py import fx_fold, fx_init, fx_mask, fx_trace, kernelbench
from kforge_py.fx_conv import CONV_OPS
from kforge_py.fx_pool import pool_out_dims
from kforge_py.fx_rnn import name_rnn_weights
from kforge_py.fx_import import Converter, Unsupported, fold_normalize, fold_rms_norm, fold_swish
from kforge_py.fx_shape import SHAPE_OPS, drop_dead, name_merged_axes, name_shape_attrs
from kforge_py.spec_derive import derive_extents, name_split_pieces
from kforge_py.spec_dims import (classify, conv2d_keeps_size, conv_kernel_axes, conv_roles,
                                 name_apart, name_dims, rename_operands)

DEFAULT_TOL = {"fp32_strict": 1e-4, "tf32": 5e-3, "bf16": 2e-2, "fp16": 1e-2}


def problem_name(stem):
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", stem)
    return name if re.match(r"[A-Za-z_]", name) else "kb_" + name


def default_policy(dtypes):
    if "bf16" in dtypes:
        return "bf16"
    if "f16" in dtypes:
        return "fp16"
    return "fp32_strict"


def trace(model, inputs, concrete_args=None):
    """fx_trace.trace of the model at its inputs' shapes: shape code runs on concrete values."""
    try:
        gm = fx_trace.trace(model, inputs, concrete_args)
    except Unsupported:
        raise
    except Exception as e:
        raise Unsupported(f"torch.fx cannot trace Model.forward "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
    # Scalar arguments are baked in as constants; fx guards them with asserts we drop.
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is torch._assert:
            gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm


def scalar_arguments(model, inputs):
    """forward()'s non-tensor arguments (Python numbers from get_inputs()) by parameter name:
    they become constants of the spec."""
    names = list(inspect.signature(model.forward).parameters)
    out = {}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            continue
        if type(x) not in (int, float, bool) or i >= len(names):
            raise Unsupported(f"get_inputs()[{i}] is a {type(x).__name__}, not a tensor or a "
                              "number")
        out[names[i]] = x
    return out


def build(loaded, name, description, policy=None, atol=None, rtol=None):
    """Returns (spec dict, Converter). Raises Unsupported."""
    gm = trace(loaded.model, loaded.inputs, scalar_arguments(loaded.model, loaded.inputs))
    with torch.no_grad():
        conv = Converter(gm, loaded.inputs)
        outputs = conv.run()
    shapes = {n: tuple(t.shape) for n, t in conv.inputs.items()}
    shapes.update(conv.shapes)
    conv.ops = drop_dead(conv.ops, outputs)  # shape code only a constant read (fx_shape)
    conv.ops = fold_swish(conv.ops, outputs)
    conv.ops = fold_rms_norm(conv.ops, outputs, shapes)
    conv.ops = fold_normalize(conv.ops, outputs, shapes)
    if not conv.ops:
        raise Unsupported("the model computes nothing (no ops)")
    classes = classify(shapes, conv.ops)
    conv.ops = rename_operands(classes, conv.ops)  # where an element-wise union was refused
    literal = conv_kernel_axes(classes, conv.ops)
    names, dims = name_dims(classes, list(conv.inputs), loaded.int_globals, loaded.literal_ints,
                            conv_roles(classes, conv.ops), literal)
    out_dims = conv2d_out_dims(conv.ops, shapes, classes, names, dims)
    out_dims.update(pool_out_dims(conv.ops, shapes, classes, names, dims))
    name_apart(classes, names, dims, list(conv.inputs) + [op["output"] for op in conv.ops],
               literal)
    merged = name_merged_axes(conv.ops, shapes, classes, names)
    # the head dim of a split of a dim named by value, as a dim (spec_derive)
    name_split_pieces(conv.ops, shapes, classes, names, dims, loaded.int_globals, merged, literal)

    def axis_name(tensor, axis):
        size = shapes[tensor][axis]
        c = classes.find((tensor, axis % len(shapes[tensor])))
        if c in names:
            return names[c]
        if c in literal:  # a conv2d kernel axis
            return int(size)
        # an axis no input reaches (none in the ops kforge imports): a dim of its size
        return next((k for k, v in dims.items() if v == size), int(size))

    inputs = {}
    for n in conv.placeholders + [k for k in conv.inputs if k not in conv.placeholders]:
        t = conv.inputs[n]
        shape = [axis_name(n, i) if classes.is_dim((n, i)) else 1 for i, s in enumerate(t.shape)]
        entry = {"shape": shape, "dtype": t.dtype}
        if n in conv.params:
            entry["param"] = True
        drawn = conv.placeholder_pos.get(n)  # get_inputs()'s draw, where not torch.randn
        kinds = loaded.input_distributions
        if drawn is not None and drawn < len(kinds) and kinds[drawn] not in (None, "normal"):
            entry["distribution"] = kinds[drawn]
        inputs[n] = entry
    name_rnn_weights(inputs, dims, conv.ops)  # the gate rows as "4*H" (fx_rnn)
    # params drawn at their module's default-init scale, not N(0, 1) (fx_init)
    fx_init.declare_init_draws(loaded.model, conv.params, inputs, dims)
    graph = []
    for op in conv.ops:
        op = dict(op)
        if op["op"] in ("max_pool", "avg_pool") and op["output"] in out_dims:
            op["out_dims"] = out_dims[op["output"]]
        if op["op"] in CONV_OPS and op["output"] in out_dims:
            op["out_dims"] = out_dims[op["output"]]
        if op["op"] in SHAPE_OPS:  # target shapes and changed axes by dim names (fx_shape)
            op = name_shape_attrs(op, shapes, lambda t, i: names.get(
                classes.find((t, i % len(shapes[t]))), merged.get(
                    classes.find((t, i % len(shapes[t]))), int(shapes[t][i]))), conv.ops)
        if "normalized_shape" in op:  # the names of the normalized (trailing) axes of X
            x, k = op["inputs"][0], len(op["normalized_shape"])
            op["normalized_shape"] = [axis_name(x, -k + i) if s != 1 else 1
                                      for i, s in enumerate(op["normalized_shape"])]
        graph.append(op)
    # derived extents as the dims they come from, slice bounds as dim expressions (spec_derive)
    derive_extents(graph, inputs, dims, shapes, lambda t, i: names.get(
        classes.find((t, i % len(shapes[t]))), merged.get(
            classes.find((t, i % len(shapes[t]))), int(shapes[t][i]))), loaded.int_globals)
    # constant triangular masks in the structured form (fx_mask), once the dims are named
    graph = fx_mask.structure_masks(conv, constant_values(loaded, conv), graph, inputs)
    dtypes = {t.dtype for t in conv.inputs.values()}
    policy = policy or default_policy(dtypes)
    precision = {"policy": policy}
    if atol is not None:
        precision["atol"] = atol
    if rtol is not None:
        precision["rtol"] = rtol
    spec = {"name": name, "description": description,
            "dims": dims,
            "inputs": inputs, "graph": graph, "outputs": outputs, "precision": precision}
    return spec, conv


def conv2d_out_dims(ops, shapes, classes, names, dims):
    """conv output -> the names of its spatial dims (the op's "out_dims"), for each conv op
    (CONV_OPS: 1-3 spatial axes, transposed too) whose output does not keep the input's spatial
    sizes (conv2d_keeps_size): an axis that
    keeps its size takes x's name, another x's name + "_out" (digits appended if taken), or the
    name another conv or pool derived, or an input's dim, for that axis (one axis with two
    sizes, equal at every binding or a shape mismatch). The spec derives those dims from x, w
    and the attributes; they are entered in `names` (for the ops that read them) but not in
    `dims`."""
    out, taken = {}, set(dims)
    for op in ops:
        if op["op"] not in CONV_OPS:
            continue
        x, w, y = op["inputs"][0], op["inputs"][1], op["output"]
        rank = CONV_OPS[op["op"]][0]
        letters = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}
        keeps = [conv2d_keeps_size(op, shapes[w][2 + i], i) for i in range(rank)]
        if all(keeps):
            continue  # the spec's default: y [N, K, *] with x's names
        pair = []
        for i in range(rank):
            xc, yc = classes.find((x, 2 + i)), classes.find((y, 2 + i))
            if keeps[i] and xc in names:
                pair.append(names[xc])
                continue
            if yc in names:  # derived by another op too (a residual add of a strided conv
                # and a strided 1x1 shortcut), or a declared dim (a UNet's upsampling joined by
                # a cat to the input's height): one dim, named twice (equal at every binding)
                pair.append(names[yc])
                continue
            base = (names[xc] if xc in names else letters[rank][i]) + "_out"
            name, k = base, 1
            while name in taken:
                name, k = f"{base}{k}", k + 1
            taken.add(name)
            names[yc] = name
            pair.append(name)
        out[y] = pair
    return out


def feeds(loaded, conv, inputs=None):
    """Spec input name -> tensor for `loaded`'s model (params read from the model, reshaped
    to the shape the spec declares) and `inputs` (default: loaded.inputs)."""
    inputs = loaded.inputs if inputs is None else inputs
    out = {}
    for n in conv.placeholders:
        out[n] = inputs[conv.placeholder_pos[n]]
    for n, (path, shape) in conv.params.items():
        if path.startswith(fx_fold.FOLD_PREFIX):  # computed from the model's buffers
            out[n] = fx_fold.eval_folded(conv.folded[n], loaded.model).detach().reshape(shape)
            continue
        if path.startswith("_tensor_constant"):
            out[n] = _made_constant(loaded, conv, path, shape).detach().reshape(shape)
            continue
        attr = loaded.model
        for part in path.split("."):
            attr = getattr(attr, part)
        out[n] = attr.detach().reshape(shape)
    return out


def _made_constant(loaded, conv, path, shape):
    """A tensor forward() made from literals (a causal mask), as tracing `loaded` gives it: the
    traced graph's where it holds values of that shape, else `loaded`'s own trace (`conv` may
    come from a trace on the meta device, or of another load at the same sizes; tracing keeps
    the constants it made on the model)."""
    n = 1
    for s in shape:
        n *= s

    def real(v):
        return isinstance(v, torch.Tensor) and not v.is_meta and v.numel() == n

    for owner in (conv.gm, loaded.model):
        if real(getattr(owner, path, None)):
            return getattr(owner, path)
    trace(loaded.model, loaded.inputs, scalar_arguments(loaded.model, loaded.inputs))
    v = getattr(loaded.model, path, None)
    if not real(v):
        raise Unsupported(f"the constant {path} that forward() makes could not be rebuilt "
                          f"at shape {list(shape)}")
    return v


def constant_values(loaded, conv):
    """value_of(name) for fx_mask.structure_masks: the value of constant input `name` of `conv`
    for `loaded` - a buffer or what forward() computes from buffers (fx_fold), or a tensor
    forward() made from literals - at the sizes it was loaded at; None where it cannot be had.
    Loaded on the meta device, the model is built again on real tensors the first time such a
    value is needed: a buffer's with its inputs left on meta, a constant forward() made on its
    input's device from a trace on real inputs."""
    real = {}
    path_of = loaded.namespace.get("__file__")
    over = {k: loaded.int_globals[k] for k, v in loaded.literal_ints.items()
            if loaded.int_globals.get(k, v) != v} or None

    def model():
        if "model" not in real:
            real["model"] = loaded.model if not loaded.on_meta else \
                kernelbench.load(path_of, overrides=over, meta_inputs=True).model
        return real["model"]

    def traced():
        if "gm" not in real:
            t = kernelbench.load(path_of, overrides=over)
            real["gm"] = trace(t.model, t.inputs, scalar_arguments(t.model, t.inputs))
        return real["gm"]

    def value_of(name):
        path, shape = conv.params[name]
        try:
            with torch.no_grad():
                if path.startswith(fx_fold.FOLD_PREFIX):
                    return fx_fold.eval_folded(conv.folded[name], model()).reshape(shape)
                if path.startswith("_tensor_constant"):
                    v = getattr(conv.gm, path, None)
                    if isinstance(v, torch.Tensor) and v.is_meta and path_of:
                        v = getattr(traced(), path, None)
                    return v.reshape(shape) if isinstance(v, torch.Tensor) else None
                v = model()
                for part in path.split("."):
                    v = getattr(v, part)
                return v.reshape(shape) if isinstance(v, torch.Tensor) else None
        except (kernelbench.KernelBenchError, Unsupported, AttributeError, RuntimeError):
            return None

    return value_of


def tolerance(spec):
    p = spec["precision"]
    d = DEFAULT_TOL[p["policy"]]
    return p.get("atol", d), p.get("rtol", d)


def same_structure(a, b):
    """Whether two specs differ only in their dim values."""
    keys = ("inputs", "graph", "outputs")
    return all(a[k] == b[k] for k in keys) and set(a["dims"]) == set(b["dims"])
