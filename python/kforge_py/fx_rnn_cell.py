"""nn.LSTMCell / nn.GRUCell -> the gate arithmetic they compute, as spec ops: one step has no
recurrence of its own (a loop over time steps in forward() is unrolled by the trace), so each
call is two linears (the input's and the state's projections, PyTorch's weight_ih / weight_hh
and biases as params under their own names), the gates as slices of the sum, and the
element-wise update:

  LSTMCell: i, f, g, o = (x W_ih^T + b_ih + h W_hh^T + b_hh).chunk(4)
            c' = sigmoid(f) * c + sigmoid(i) * tanh(g),  h' = sigmoid(o) * tanh(c')
  GRUCell:  r, z, n from x W_ih^T + b_ih and h W_hh^T + b_hh (3 chunks each)
            r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r * h_n)
            h' = n + z * (h - n)

A call without a state gets PyTorch's zeros from the trace (fx_trace.zero_initial_state)."""
import torch.nn as nn

from kforge_py import fx_shape
from kforge_py.fx_types import Unsupported


def is_cell_module(mod):
    return type(mod) in (nn.LSTMCell, nn.GRUCell)


def cell_module(conv, node, mod):
    """The converted result of an nn.LSTMCell call ((h', c')) or nn.GRUCell call (h')."""
    lstm = isinstance(mod, nn.LSTMCell)
    kind, p = type(mod).__name__, node.target
    args = [conv.value(a) for a in node.args]
    x = conv.tensor(args[0] if args else conv.value(node.kwargs.get("input")),
                    f"the nn.{kind} input")
    hx = args[1] if len(args) > 1 else conv.value(node.kwargs.get("hx"))
    if len(x.shape) != 2:
        raise Unsupported(f"nn.{kind} on a rank-{len(x.shape)} input (unbatched) is not "
                          f"supported (module {p})")
    if lstm:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise Unsupported(f"nn.LSTMCell's state must be a pair (h, c) (module {p})")
        h, c = conv.tensor(hx[0], "h"), conv.tensor(hx[1], "c")
    else:
        h = conv.tensor(hx, "h")
    H, dtype = mod.hidden_size, x.dtype
    rows = x.shape[0]

    def gates(t, which):
        ins = [t, conv.param(f"{p}.weight_{which}", getattr(mod, f"weight_{which}"))]
        if mod.bias:
            ins.append(conv.param(f"{p}.bias_{which}", getattr(mod, f"bias_{which}")))
        return conv.emit("linear", ins, node, (rows, ins[1].shape[0]), dtype, False)

    def part(t, k):
        return fx_shape.slice_op(conv, node, t, 1, k * H, (k + 1) * H, 1, final=False)

    def e(op, inputs, final=False, **attrs):
        return conv.emit(op, inputs, node, (rows, H), dtype, final, **attrs)

    gi, gh = gates(x, "ih"), gates(h, "hh")
    if lstm:
        g = conv.emit("add", [gi, gh], node, gi.shape, dtype, False)
        i, f = e("sigmoid", [part(g, 0)]), e("sigmoid", [part(g, 1)])
        cand, o = e("tanh", [part(g, 2)]), e("sigmoid", [part(g, 3)])
        c2 = e("add", [e("mul", [f, c]), e("mul", [i, cand])])
        h2 = e("mul", [o, e("tanh", [c2])])
        return (h2, c2)
    r = e("sigmoid", [e("add", [part(gi, 0), part(gh, 0)])])
    z = e("sigmoid", [e("add", [part(gi, 1), part(gh, 1)])])
    n = e("tanh", [e("add", [part(gi, 2), e("mul", [r, part(gh, 2)])])])
    return e("add", [n, e("mul", [z, e("sub", [h, n])])], final=True)
