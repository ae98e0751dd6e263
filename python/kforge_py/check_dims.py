"""The numeric check at reduced input sizes, chosen on the spec rather than the file: the dims that
only the model's inputs carry (batch, spatial, sequence - not the weights' channels or features)
shrink, the model keeps its weights, and the spec traced again at those input shapes must be the
written spec with other dim values. That holds for whole networks whose file writes its sizes
inline (`torch.rand(batch_size, 3, 224, 224)`) or derives its layers from them, where re-binding
the file's size variables (import_check's first choice) gives another network or none.

A dim whose size the traced graph depends on (a loop unrolled over a sequence, a branch on a
size, a literal in a reshape) makes the re-traced spec differ: that plan is not used, and the
reason names the dims that stayed fixed."""
import dataclasses
import re

# weights at full size + reduced inputs. The feed travels as raw float64 files (8 bytes an
# element: 512 MiB at the limit, ~1.5 GiB in the interpreter with its own copy and activations,
# ~0.8 GiB more in the importer for the fp64 model), within the 8 GiB address space each of
# them gets. It holds AlexNet (61M) and ResNet101 (45M); VGG (138M-144M) is bound by MAX_CHECK_S
# anyway.
WEIGHTS_MAX_ELEMENTS = 64 << 20
# the interpreter's work, as torch.utils.flop_counter counts it (matmuls and convolutions, 2 per
# multiply-add), priced at the fp64 interpreter's speed on one core of this shared 2-core machine
# (measured under a load of 3-6: matmul-like ops 1.7 GFLOP/s - a 39 GFLOP token mixer in 23 s;
# convolutions 0.13-0.34 GFLOP/s - ResNet101 at 64x64, 2.6 GFLOP, in 19 s; AlexNet at batch 2,
# 4.5 GFLOP, in 13 s): a check priced above MAX_CHECK_S is not run
INTERPRETER_FLOPS_PER_S = 1.5e9
INTERPRETER_CONV_FLOPS_PER_S = 0.2e9
MAX_CHECK_S = 25
BATCH = 2
CAPS = (32, 48, 64)  # 48: a deep network whose last stage is 1x1 at 32 (ill-conditioned there)


def flops(loaded, inputs=None):
    """(all FLOPs, those of convolutions) of the model on `inputs` (default: its own) as
    torch.utils.flop_counter counts them, on the meta device where the model is there (no
    memory, no arithmetic); None where they cannot be counted."""
    import contextlib
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from kforge_py import kernelbench
    inputs = loaded.inputs if inputs is None else inputs
    try:
        with kernelbench._OnMeta() if loaded.on_meta else contextlib.nullcontext(), \
                FlopCounterMode(display=False) as counter, torch.no_grad():
            loaded.model(*inputs)
    except Exception:
        return None
    by_op = counter.get_flop_counts().get("Global", {})
    conv = sum(n for op, n in by_op.items() if "conv" in str(op))
    return counter.get_total_flops(), conv


def too_much_work(loaded, inputs=None):
    """A reason string where the interpreter's work on `inputs` is priced above MAX_CHECK_S,
    else None."""
    counted = flops(loaded, inputs)
    if counted is None:
        return None
    total, conv = counted
    seconds = (total - conv) / INTERPRETER_FLOPS_PER_S + conv / INTERPRETER_CONV_FLOPS_PER_S
    if seconds <= MAX_CHECK_S:
        return None
    return (f"~{seconds:.0f} s in the fp64 interpreter ({total / 1e9:.1f} GFLOP, "
            f"{conv / 1e9:.1f} of them in convolutions; the check's limit is {MAX_CHECK_S} s)")


def free_dims(spec, conv):
    """(free dims in input order, the batch dims among them): dims of the model's inputs that
    no weight carries (constants folded from buffers do not hold a dim: they follow it)."""
    weights = [n for n in conv.params if n not in conv.folded]
    kept = {e for n in weights for e in spec["inputs"][n]["shape"] if isinstance(e, str)}
    free, batch = [], set()
    for n in conv.placeholders:
        shape = spec["inputs"][n]["shape"]
        for i, e in enumerate(shape):
            if isinstance(e, str) and isinstance(spec["dims"].get(e), int) and e not in kept:
                if e not in free:
                    free.append(e)
                if i == 0:
                    batch.add(e)
    return free, batch


def plans(spec, conv):
    """Dim re-bindings to try, smallest first: every free dim, then the batch alone, then the
    others alone (a graph that depends on one of them keeps it)."""
    free, batch = free_dims(spec, conv)
    dims = spec["dims"]
    out = []

    def add(plan):
        plan = {d: v for d, v in plan.items() if v < dims[d]}
        if plan and plan not in out:
            out.append(plan)

    for cap in CAPS:
        add({d: BATCH if d in batch else min(dims[d], cap) for d in free})
    add({d: BATCH for d in free if d in batch})
    for cap in CAPS:
        add({d: min(dims[d], cap) for d in free if d not in batch})
    for kept in free:  # all but one (a dim a constant follows: attention's 1/sqrt(E))
        add({d: BATCH if d in batch else min(dims[d], CAPS[0]) for d in free if d != kept})
    return out


def inputs_at(spec, conv, loaded, dims, meta, seed=1234):
    """The model's forward() arguments at `dims`: the spec's input shapes with `dims` bound, the
    file's own dtypes, values drawn uniform in [0, 1) (seeded; numbers passed as they are).
    None where an input is not floating point (class indices, masks: their values matter)."""
    import torch
    from kforge_py.fx_shape import resolve_dims, spec_extent
    g = torch.Generator().manual_seed(seed)
    out = list(loaded.inputs)
    for n in conv.placeholders:
        src = loaded.inputs[conv.placeholder_pos[n]]
        if not src.is_floating_point():
            return None
        shape = [spec_extent(e, resolve_dims(dims)) for e in spec["inputs"][n]["shape"]]
        if meta:
            out[conv.placeholder_pos[n]] = torch.empty(shape, dtype=src.dtype, device="meta")
        else:
            out[conv.placeholder_pos[n]] = torch.rand(shape, generator=g, dtype=torch.float64
                                                      ).to(src.dtype)
    return out


def element_count(conv, loaded, inputs):
    import torch
    n = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
    for name, (path, shape) in conv.params.items():
        if name not in conv.folded:
            k = 1
            for s in shape:
                k *= s
            n += k
    return n


def dim_renaming(spec, sspec):
    """{dim of spec: dim of sspec} where sspec is spec with its dims renamed (the importer names
    a dim after a size variable of its value, so another size can give another name), else
    None. Tensor names, ops and numbers must be equal; a product entry "C*H" (or a sum, a slice
    bound "2*E+F") maps part by part."""
    tensors = set(spec["inputs"]) | {op["output"] for op in spec["graph"]}
    fwd, back = {}, {}

    def names(a, b):
        pa, pb = re.split(r"[*+]", a), re.split(r"[*+]", b)
        if len(pa) != len(pb):
            return False
        for x, y in zip(pa, pb):
            if x == y and x not in fwd:
                continue
            if x in tensors or fwd.setdefault(x, y) != y or back.setdefault(y, x) != x:
                return False
        return True

    def same(a, b):
        if isinstance(a, dict) and isinstance(b, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, str) and isinstance(b, str):
            return a == b or names(a, b)
        return a == b and type(a) is type(b)

    if len(spec["dims"]) != len(sspec["dims"]):
        return None
    ok = all(same(spec[k], sspec[k]) for k in ("inputs", "graph", "outputs"))
    if not ok or any(d in fwd and fwd[d] not in sspec["dims"] for d in spec["dims"]):
        return None
    return {d: fwd.get(d, d) for d in spec["dims"]}


def try_plans(spec, conv, loaded, name, start=0):
    """(reduced spec, its Converter, the written spec's dims at the plan, the plan's index) for
    the first plan from `start` on whose re-traced spec is the written one up to dim names, or a
    reason string."""
    from kforge_py import spec_build
    from kforge_py.fx_shape import resolve_dims
    reasons = []
    weights = [n for n in conv.params if n not in conv.folded]
    held = {e for n in weights for e in spec["inputs"][n]["shape"] if isinstance(e, str)}
    for index, plan in enumerate(plans(spec, conv)):
        if index < start:
            continue
        dims = dict(spec["dims"], **plan)
        where = ",".join(f"{k}={v}" for k, v in plan.items())
        inputs = inputs_at(spec, conv, loaded, dims, meta=loaded.on_meta)
        if inputs is None:
            return "an input is not floating point (its values matter)"
        try:
            sspec, sconv = spec_build.build(dataclasses.replace(loaded, inputs=inputs), name, "")
        except Exception as e:
            text = (str(e).splitlines() or [""])[0]
            reasons.append(f"at {where} the model gives no spec ({text[:160]})")
            continue
        renamed = dim_renaming(spec, sspec)
        if renamed is None:
            reasons.append(f"at {where} the traced graph changes (shape-dependent code: "
                           f"those sizes are fixed at the file's)")
            continue
        # a dim that neither an input nor a weight holds is the graph's own (a reshape names
        # it: an axis named apart, T_1 beside T): it takes the size the trace gives it
        # (a derived dim, "3*n_embd", keeps its expression: it follows the others; one that the
        # traced spec derives where the written one declares a number is taken by its value)
        values = resolve_dims(sspec["dims"])
        dims.update({d: values.get(renamed[d], sspec["dims"][renamed[d]]) for d in spec["dims"]
                     if d not in plan and d not in held and d not in free_dims(spec, conv)[0]
                     and isinstance(spec["dims"][d], int)})
        if any(values.get(renamed[d]) != v for d, v in dims.items() if isinstance(v, int)):
            reasons.append(f"at {where} the traced graph binds other sizes")
            continue
        n = element_count(sconv, loaded, inputs)
        if n > WEIGHTS_MAX_ELEMENTS:
            reasons.append(f"at {where} its weights and inputs still hold {n:,} elements (the "
                           f"check's limit with full-size weights is {WEIGHTS_MAX_ELEMENTS:,})")
            if element_count(sconv, loaded, []) > WEIGHTS_MAX_ELEMENTS:
                break  # the weights alone: no smaller input helps
            continue
        work = too_much_work(loaded, inputs)
        if work is not None:
            reasons.append(f"at {where} the check takes {work}")
            continue
        return sspec, sconv, dims, index
    return "; ".join(reasons) or "no dim that only the inputs carry"
