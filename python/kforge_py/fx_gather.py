"""A gather of rows by a constant integer index (fx_shape.index: x[idx] where idx is computed
from the model's buffers alone, Swin's relative-position index into its bias table) written as
the one-hot matrix of the index (a folded constant, fx_fold) that a matmul applies to x."""
from kforge_py.fx_fold import FoldedCall
from kforge_py.fx_types import Unsupported


def one_hot_rows(index, rows, dtype):
    """The one-hot matrix [N, rows] of an integer index [N] (fx_fold evaluates it)."""
    import torch
    return torch.nn.functional.one_hot(index.reshape(-1).long(), rows).to(dtype)


def one_hot_of(conv, node, x, index):
    """The one-hot matrix [N, T] of `index` as a folded param, for x[index] with x [T, ...]
    (exact: each row holds one 1), where the index is a constant of the model's buffers; None
    where it is not such a constant."""
    src = conv.folded.get(index.name)
    if src is None or index.dtype not in ("i32", "i64"):
        return None
    if len(index.shape) != 1:
        raise Unsupported(f"indexing with a constant index of shape {list(index.shape)} is not "
                          "supported (an index of rank 1 is: x[idx.view(-1)])")
    if x.dtype not in ("f32", "f16", "bf16", "f64") or not x.shape:
        raise Unsupported(f"indexing a {x.dtype} tensor of shape {list(x.shape)} with a constant "
                          "index is not supported (floating-point, rank >= 1)")
    rows, n = x.shape[0], index.shape[0]
    if getattr(src, "users", None) is not None and all(u is node for u in src.users):
        # the index is read only here: the one-hot replaces it as the spec's input
        conv.params.pop(index.name)
        del conv.inputs[index.name]
        del conv.folded[index.name]
    hot = FoldedCall(one_hot_rows, (src, rows, conv.torch_dtype(x)), f"{index.name}_one_hot")
    return conv.folded_param(hot, (n, rows), x.dtype)
