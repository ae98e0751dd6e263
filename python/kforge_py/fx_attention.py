"""nn.MultiheadAttention -> spec ops: the input projections (one linear over the packed
in_proj_weight where query, key and value are one tensor, else a slice of the weight each),
heads split by a reshape and a permute, scores q @ k^T times 1/sqrt(head_dim), softmax over the
keys, @ v, the heads merged back and the output projection - what PyTorch's
F.multi_head_attention_forward computes in eval mode (attention dropout off).

Masks, as PyTorch applies them to the scores [N, H, L, S] before the softmax: attn_mask [L, S]
(or [N * H, L, S], split into [N, H, L, S]) and key_padding_mask [N, S] (as [N, 1, 1, S]); a
bool mask fills -inf where it is True (True: not attended, the opposite of SDPA's bool mask),
a float mask is added. A mask may be an input of the model or a constant (a buffer: fx_mask
writes a constant triangle as the structured causal form).

The module returns (output, weights); the weights are not converted: reading them, or
is_causal without a mask, bias_k / bias_v or add_zero_attn, raises Unsupported naming it. TransformerEncoderLayer and the other torch.nn transformer layers are
traced through (fx_trace.TRACED_THROUGH), so their attention comes here too."""
import math

import torch.nn as nn

from kforge_py import fx_mask, fx_shape
from kforge_py.fx_types import Tensor, Unsupported


class NotConverted(str):
    """A part of a module's result the importer does not convert (the attention weights)."""


def is_attention(mod):
    return isinstance(mod, nn.MultiheadAttention)


def _arg(node, conv, i, key, default=None):
    if len(node.args) > i:
        return conv.value(node.args[i])
    return conv.value(node.kwargs[key]) if key in node.kwargs else default


def multi_head_attention(conv, node, mod):
    """The converted (output, weights) pair of an nn.MultiheadAttention call node."""
    q_in = conv.tensor(_arg(node, conv, 0, "query"), "the attention query")
    k_in = conv.tensor(_arg(node, conv, 1, "key"), "the attention key")
    v_in = conv.tensor(_arg(node, conv, 2, "value"), "the attention value")
    kpm, attn_mask = _arg(node, conv, 3, "key_padding_mask"), _arg(node, conv, 5, "attn_mask")
    if _arg(node, conv, 7, "is_causal", False) and attn_mask is None:
        # (PyTorch takes is_causal only as a hint about attn_mask, which it then requires)
        raise Unsupported(f"nn.MultiheadAttention with is_causal and no attn_mask is not "
                          f"supported (module {node.target})")
    if mod.bias_k is not None or mod.add_zero_attn:
        raise Unsupported(f"nn.MultiheadAttention with bias_k/bias_v or add_zero_attn is not "
                          f"supported (module {node.target})")
    if len(q_in.shape) != 3:
        raise Unsupported(f"nn.MultiheadAttention on a rank-{len(q_in.shape)} query (unbatched)"
                          f" is not supported (module {node.target})")
    p, dtype = node.target, q_in.dtype
    E, H = mod.embed_dim, mod.num_heads
    D = E // H
    bf = mod.batch_first  # [N, L, E] else [L, N, E]

    def emit(op, inputs, shape, **attrs):
        return conv.emit(op, inputs, node, tuple(shape), dtype, final=False, **attrs)

    def project(x, which):
        if mod._qkv_same_embed_dim:
            w = conv.param(p + ".in_proj_weight", mod.in_proj_weight)
            w = emit("slice", [w], (E, w.shape[1]), axis=0, start=which * E,
                     end=(which + 1) * E)
        else:
            attr = ("q_proj_weight", "k_proj_weight", "v_proj_weight")[which]
            w = conv.param(f"{p}.{attr}", getattr(mod, attr))
        ins = [x, w]
        if mod.in_proj_bias is not None:
            b = conv.param(p + ".in_proj_bias", mod.in_proj_bias)
            ins.append(emit("slice", [b], (E,), axis=0, start=which * E, end=(which + 1) * E))
        return emit("linear", ins, tuple(x.shape[:-1]) + (E,))

    if q_in.name == k_in.name == v_in.name and mod._qkv_same_embed_dim:
        ins = [q_in, conv.param(p + ".in_proj_weight", mod.in_proj_weight)]
        if mod.in_proj_bias is not None:
            ins.append(conv.param(p + ".in_proj_bias", mod.in_proj_bias))
        qkv = emit("linear", ins, tuple(q_in.shape[:-1]) + (3 * E,))
        q, k, v = (emit("slice", [qkv], tuple(q_in.shape[:-1]) + (E,), axis=2, start=i * E,
                        end=(i + 1) * E) for i in range(3))
    else:
        q, k, v = project(q_in, 0), project(k_in, 1), project(v_in, 2)

    def heads(x):  # [L, N, E] -> [N, H, L, D]  ([N, L, E] when batch_first)
        a, b = x.shape[0], x.shape[1]
        r = fx_shape.reshape_to(conv, node, x, (a, b, H, D), final=False)
        n, l_ = (a, b) if bf else (b, a)
        return emit("permute", [r], (n, H, l_, D), dims=[0, 2, 1, 3] if bf else [1, 2, 0, 3])

    qh, kh, vh = heads(q), heads(k), heads(v)
    n, length, src = qh.shape[0], qh.shape[2], kh.shape[2]
    scores = emit("matmul", [qh, kh], (n, H, length, src), transpose_b=True)
    scores = emit("scale", [scores], scores.shape, value=1.0 / math.sqrt(D))
    pad = None
    if kpm is not None:  # its view first: a chain applying both masks reads it (planner views)
        pad = conv.tensor(kpm, "the key padding mask")
        if tuple(pad.shape) != (n, src):
            raise Unsupported(f"nn.MultiheadAttention key_padding_mask of shape "
                              f"{list(pad.shape)}: PyTorch takes [{n}, {src}] "
                              f"(module {node.target})")
        pad = fx_shape.reshape_to(conv, node, pad, (n, 1, 1, src), final=False)
    if attn_mask is not None:
        m = conv.tensor(attn_mask, "the attention mask")
        if tuple(m.shape) == (n * H, length, src) and len(m.shape) == 3:
            m = fx_shape.reshape_to(conv, node, m, (n, H, length, src), final=False)
        elif tuple(m.shape) != (length, src):
            raise Unsupported(f"nn.MultiheadAttention attn_mask of shape {list(m.shape)}: "
                              f"PyTorch takes [{length}, {src}] or [{n * H}, {length}, {src}] "
                              f"(module {node.target})")
        scores = _apply_mask(emit, scores, m)
    if pad is not None:
        scores = _apply_mask(emit, scores, pad)
    probs = emit("softmax", [scores], scores.shape, axis=-1)
    ctx = emit("matmul", [probs, vh], (n, H, length, D))
    merged = emit("permute", [ctx], (n, length, H, D) if bf else (length, n, H, D),
                  dims=[0, 2, 1, 3] if bf else [2, 0, 1, 3])
    merged = fx_shape.reshape_to(conv, node, merged, tuple(q_in.shape[:-1]) + (E,),
                                 final=False)
    ins = [merged, conv.param(p + ".out_proj.weight", mod.out_proj.weight)]
    if mod.out_proj.bias is not None:
        ins.append(conv.param(p + ".out_proj.bias", mod.out_proj.bias))
    out = conv.emit("linear", ins, node, tuple(q_in.shape[:-1]) + (E,), dtype)
    assert isinstance(out, Tensor)
    return (out, NotConverted(f"the attention weights of {p} (not supported: only the "
                              "output, [0], is)"))


def _apply_mask(emit, scores, m):
    """The scores under an nn.MultiheadAttention mask: a bool one fills -inf where True, a
    float one is added."""
    if m.dtype == "bool":
        return emit("masked_fill", [scores, m], scores.shape, value="-inf")
    return emit("add", [scores, m], scores.shape)


def scaled_dot_product_attention(conv, node, args, kw):
    """F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p=0, is_causal, scale):
    softmax(q @ k^T * scale [masked]) @ v, scale 1/sqrt(q's last dim) unless given (PyTorch's
    definition). is_causal is the structured mask triu 1 (key j > query i filled with -inf,
    PyTorch's top-left alignment); a float attn_mask is added to the scores; a bool attn_mask
    (True: attend) fills -inf where it is False - a constant one (a buffer, a tensor forward()
    makes) through fx_mask, which writes a triangle in the structured form."""
    def get(i, key, default=None):
        return args[i] if len(args) > i else kw.get(key, default)

    q, k, v = (conv.tensor(get(i, key), f"the attention {key}")
               for i, key in enumerate(("query", "key", "value")))
    mask, causal = get(3, "attn_mask"), get(5, "is_causal", False)
    if get(4, "dropout_p", 0.0):
        raise Unsupported("scaled_dot_product_attention with dropout_p > 0 is not supported "
                          "(its output is random)")
    if kw.get("enable_gqa"):
        raise Unsupported("scaled_dot_product_attention with enable_gqa is not supported")
    if mask is not None and causal:
        raise Unsupported("scaled_dot_product_attention with both attn_mask and is_causal "
                          "(PyTorch refuses it too)")
    scale = kw.get("scale")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    shape, dtype = conv.meta(node)
    scores_shape = tuple(shape[:-1]) + (k.shape[-2],)
    s = conv.emit("matmul", [q, k], node, scores_shape, dtype, final=False, transpose_b=True)
    s = conv.emit("scale", [s], node, scores_shape, dtype, final=False, value=scale)
    if causal:
        s = conv.emit("masked_fill", [s], node, scores_shape, dtype, final=False, mask="triu",
                      diagonal=1, value="-inf")
    elif mask is not None:
        m = conv.tensor(mask, "the attention mask")
        if m.dtype == "bool":
            if m.name not in conv.params:
                raise Unsupported("scaled_dot_product_attention with a bool attn_mask input is "
                                  "not supported (True attends; a spec's masked_fill fills where "
                                  "its mask is true): pass the negated mask to masked_fill, or a "
                                  "float mask (0 / -inf)")
            s = conv.emit("masked_fill", [s, m], node, scores_shape, dtype, final=False,
                          value="-inf", **{fx_mask.NEGATED: True})
        else:
            s = conv.emit("add", [s, m], node, scores_shape, dtype, final=False)
    p = conv.emit("softmax", [s], node, scores_shape, dtype, final=False, axis=-1)
    return conv.emit("matmul", [p, v], node, tuple(shape), dtype)
