"""Constant folding of a model's buffers: what forward() computes from buffers alone is a constant
of the model, fed to the spec as one `param` input.

MinGPT's causal mask is `self.bias[:, :, :T, :T] == 0`, `bias` a buffer of the model's largest
sequence length: a slice whose end is a size of the input, and a comparison, which the spec has
no op for. Folded, the mask is one bool param [1, 1, T, T] with the slice and the comparison
done by the importer when it feeds the inputs (eval_folded, on the loaded model at the sizes it
was loaded at), so T stays a dim that re-binds. Only buffers (tensors that are not nn.Parameter)
and calls on them alone fold: arithmetic on weights is the model's work and stays in the graph.
"""
import torch
import torch.fx

FOLD_PREFIX = "@fold:"


def _attr(root, path):
    v = root
    for part in path.split("."):
        v = getattr(v, part)
    return v


def _source(node, model):
    """Whether get_attr `node` is a buffer of `model` (a tensor, not a Parameter, of rank >= 1,
    reachable on the model itself: not a constant the tracer made)."""
    if node.op != "get_attr" or node.target.startswith("_tensor_constant"):
        return False
    try:
        v = _attr(model, node.target)
    except AttributeError:
        return False
    return isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter) and v.dim() >= 1


def _node_inputs(node):
    out = []
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


def foldable(gm, model):
    """The nodes of gm whose value depends on buffers of `model` alone."""
    out = set()
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            if _source(node, model):
                out.add(node)
        elif node.op in ("call_function", "call_method"):
            ins = _node_inputs(node)
            tm = node.meta.get("tensor_meta")
            if ins and all(i in out for i in ins) and hasattr(tm, "shape"):
                out.add(node)
    return out


def frontier(gm, folded):
    """The folded nodes read by a node that is not folded (or returned): those become inputs;
    the other folded nodes are intermediates of a constant."""
    return {n for n in folded if n.op != "get_attr" and any(u not in folded for u in n.users)}


class FoldedCall:
    """A constant the importer derives from folded nodes (not in the traced graph: the one-hot
    matrix of a constant index, fx_gather.one_hot_of): `target(*args)`, evaluated by eval_folded
    as a call_function node is."""
    op = "call_function"

    def __init__(self, target, args, name):
        self.target, self.args, self.kwargs, self.name = target, tuple(args), {}, name


def eval_folded(node, model, memo=None):
    """The value of folded `node` for `model` (its buffers at the sizes it was loaded at)."""
    memo = {} if memo is None else memo
    if node in memo:
        return memo[node]
    val = lambda a: torch.fx.node.map_arg(a, lambda n: eval_folded(n, model, memo))  # noqa: E731
    if node.op == "get_attr":
        v = _attr(model, node.target)
    elif node.op == "call_function":
        v = node.target(*val(node.args), **val(node.kwargs))
    else:
        args = val(node.args)
        v = getattr(args[0], node.target)(*args[1:], **val(node.kwargs))
    memo[node] = v
    return v
