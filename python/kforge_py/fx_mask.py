"""Structured masks: a masked_fill whose bool mask is a constant of the model (a buffer such as
MinGPT's `self.bias[:, :, :T, :T] == 0`, or a tensor forward() makes from literals such as
Mamba-2's `~torch.tril(torch.ones(T, T, dtype=bool))`) that is a triangle of the last two dims
becomes the spec's structured form {"op": "masked_fill", "inputs": [X], "mask": "tril" |
"triu", "diagonal": d} (docs/problem-spec.md): kernels compute it from the indices, no mask
tensor is read, and an attention kernel skips the fully masked tiles.

The triangle is recognised from the constant's values (at the sizes the model was loaded at),
so tril / triu of ones, a registered buffer and an arange comparison all qualify: every slice
over the leading dims equal, and the plane exactly {j - i <= d} (tril) or {j - i >= d} (triu).
A mask that is not such a triangle stays a bool param input. A diagonal that moves with the
sizes is caught by the import's check at reduced sizes (the rebuilt spec differs)."""
import torch

from kforge_py.fx_types import Unsupported

NEGATED = "_negated_mask"  # a masked_fill entry whose mask is ~M (torch.where(M, x, scalar))


def triangle(value):
    """("tril" | "triu", diagonal) where bool tensor `value` [.., R, C] is a triangle of its
    last two dims, the same for every leading index; None otherwise."""
    if not isinstance(value, torch.Tensor) or value.is_meta or value.dim() < 2 or \
            value.dtype != torch.bool:
        return None
    r, c = value.shape[-2], value.shape[-1]
    planes = value.reshape(-1, r, c)
    plane = planes[0]
    if not bool((planes == plane).all()) or not bool(plane.any()):
        return None
    diff = torch.arange(c).reshape(1, c) - torch.arange(r).reshape(r, 1)  # j - i
    d = int(diff[plane].max())
    if bool((plane == (diff <= d)).all()):
        return "tril", d
    d = int(diff[plane].min())
    if bool((plane == (diff >= d)).all()):
        return "triu", d
    return None


def structure_masks(conv, value_of, ops, spec_inputs):
    """`ops` (the spec's graph entries, named after conv's tensors) with each masked_fill whose
    mask is a constant triangle in the structured form, the mask inputs no op reads any more
    dropped from conv and from `spec_inputs` (the spec's inputs: run after the dims are named,
    so the mask's axes still named them - a chunk length only the mask spans). value_of(name)
    is the value of the constant input `name` (or None where it has none). A masked_fill marked
    NEGATED (the importer's torch.where(M, x, scalar)) whose ~M is not a triangle raises
    Unsupported."""
    def shape_of(n):
        return tuple(conv.shapes[n]) if n in conv.shapes else tuple(conv.inputs[n].shape)

    out, replaced = [], set()
    for op in ops:
        op = dict(op)
        negated = op.pop(NEGATED, False)
        if op["op"] != "masked_fill" or len(op["inputs"]) != 2:
            out.append(op)
            continue
        x, m = op["inputs"]
        tri = None
        if m in conv.params:
            v = value_of(m)
            if isinstance(v, torch.Tensor) and not v.is_meta and negated:
                v = ~v.bool()
            tri = triangle(v)
        if tri is not None and shape_of(op["output"]) == shape_of(x):
            op = dict(op, inputs=[x], mask=tri[0])
            if tri[1] != 0:
                op["diagonal"] = tri[1]
            replaced.add(m)
        elif negated:
            raise Unsupported("torch.where(c, x, scalar) is supported only where c is a constant "
                              "triangle (a causal mask); write it as x.masked_fill(~c, scalar) "
                              "with the mask negated in get_inputs, or torch.where(c, scalar, x)")
        out.append(op)
    read = {t for op in out for t in op["inputs"]}
    for name in replaced - read:
        del conv.params[name]
        del conv.inputs[name]
        spec_inputs.pop(name, None)
        getattr(conv, "folded", {}).pop(name, None)
    return out

