"""nn.LSTM / nn.GRU -> the spec's lstm / gru op (docs/problem-spec.md): one op per result that
the model reads, with the module's weights as params under PyTorch's own names
(`<module>.weight_ih_l0`, `<module>.bias_hh_l1_reverse`, ...) so that an exported ModelNew keeps
the state_dict.

The module returns (output, h_n) (gru) or (output, (h_n, c_n)) (lstm); the converter hands back
a tuple whose items are emitted when read (`out, (h, c) = self.lstm(x, (h0, c0))`, then
`return h`: one lstm op with result h_n, nothing for the parts the model drops). A model reading
two results gets two ops (each computes the whole layer stack). A call without an initial state
arrives with PyTorch's zeros, which the trace passes (fx_trace.zero_initial_state). Refused by
name: dropout between layers, proj_size, an unbatched input, nn.RNN."""
from kforge_py.fx_types import Tensor, Unsupported

import torch.nn as nn

RESULTS = ("output", "h_n", "c_n")


def is_rnn_module(mod):
    return type(mod) in (nn.LSTM, nn.GRU)


def weight_names(mod):
    """The module's per-layer, per-direction parameter names in the op's operand order."""
    names = []
    for l in range(mod.num_layers):
        for d in range(2 if mod.bidirectional else 1):
            suffix = f"_l{l}" + ("_reverse" if d else "")
            kinds = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if mod.bias else ())
            names += [k + suffix for k in kinds]
    return names


class LazyResults(tuple):
    """(output, h_n) or (output, (h_n, c_n)): an item becomes a spec op when it is read."""

    def __new__(cls, make, slots):
        self = super().__new__(cls, slots)
        self._make = make
        return self

    def __getitem__(self, i):
        item = tuple.__getitem__(self, i)
        if isinstance(item, str):
            return self._make(item)
        return item


def rnn_module(conv, node, mod):
    """The converted results of an nn.LSTM / nn.GRU call node."""
    lstm = isinstance(mod, nn.LSTM)
    kind, p = ("lstm" if lstm else "gru"), node.target
    if getattr(mod, "proj_size", 0):
        raise Unsupported(f"nn.LSTM with proj_size is not supported (module {p})")
    if mod.dropout and mod.training and mod.num_layers > 1:
        raise Unsupported(f"nn.{type(mod).__name__} with dropout {mod.dropout} between layers "
                          f"in training mode is random: not reproducible (module {p})")
    args = [conv.value(a) for a in node.args] + [None, None]
    x = conv.tensor(args[0] if node.args else conv.value(node.kwargs.get("input")),
                    f"the nn.{type(mod).__name__} input")
    hx = args[1] if len(node.args) > 1 else conv.value(node.kwargs.get("hx"))
    if len(x.shape) != 3:
        raise Unsupported(f"nn.{type(mod).__name__} on a rank-{len(x.shape)} input (unbatched) "
                          f"is not supported (module {p})")
    if hx is None:
        raise Unsupported(f"nn.{type(mod).__name__} without an initial state is not supported "
                          f"(module {p}): pass h0{' and c0' if lstm else ''}")
    if lstm:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise Unsupported(f"nn.LSTM's state must be a pair (h0, c0) (module {p})")
        states = [conv.tensor(hx[0], "h0"), conv.tensor(hx[1], "c0")]
    else:
        states = [conv.tensor(hx, "h0")]
    weights = [conv.param(f"{p}.{n}", getattr(mod, n)) for n in weight_names(mod)]
    dirs = 2 if mod.bidirectional else 1
    H = mod.hidden_size
    state_shape = (mod.num_layers * dirs, x.shape[0 if mod.batch_first else 1], H)
    for s in states:
        if tuple(s.shape) != state_shape:
            raise Unsupported(f"nn.{type(mod).__name__} state {s.name} has shape "
                              f"{list(s.shape)}; PyTorch needs {list(state_shape)} "
                              f"(num_layers * directions, batch, hidden) (module {p})")
    made = {}

    def make(result):
        if result not in made:
            shape = (x.shape[0], x.shape[1], dirs * H) if result == "output" else state_shape
            attrs = dict(num_layers=mod.num_layers)
            if mod.bidirectional:
                attrs["bidirectional"] = True
            if mod.batch_first:
                attrs["batch_first"] = True
            if not mod.bias:
                attrs["bias"] = False
            if result != "output":
                attrs["result"] = result
            out = conv.emit(kind, [x] + states + weights, node, shape, x.dtype, final=False,
                            **attrs)
            assert isinstance(out, Tensor)
            made[result] = out
        return made[result]

    return LazyResults(make, ("output", LazyResults(make, ("h_n", "c_n")) if lstm else "h_n"))


def dim_rules(classes, op):
    """spec_dims: which axes of an lstm / gru op's operands and result are one dim."""
    ins, out = op["inputs"], op["output"]
    shapes = classes.shapes
    bf = bool(op.get("batch_first"))
    x, h0 = ins[0], ins[1]
    lstm = op["op"] == "lstm"
    first = 3 if lstm else 2
    per = 4 if op.get("bias", True) else 2
    dirs = 2 if op.get("bidirectional") else 1
    classes.union((x, 0 if bf else 1), (h0, 1))
    if lstm:
        for i in range(3):
            classes.union((h0, i), (ins[2], i))
    for w in range(first, len(ins), per):
        layer = (w - first) // (per * dirs)
        if layer == 0:
            classes.union((x, 2), (ins[w], 1))  # I
        else:  # D*H, one size for every layer above the first
            classes.union((ins[first + per * dirs], 1), (ins[w], 1))
            if dirs == 1:
                classes.union((h0, 2), (ins[w], 1))
        classes.union((h0, 2), (ins[w + 1], 1))  # H
        for j in range(per):  # the gate rows G*H: one size for every weight
            classes.union((ins[first], 0), (ins[w + j], 0))
    if op.get("result", "output") == "output":
        classes.union((out, 0), (x, 0))
        classes.union((out, 1), (x, 1))
        if dirs == 1:
            classes.union((out, 2), (h0, 2))
    else:
        for i in range(3):
            classes.union((out, i), (h0, i))
    del shapes


def name_rnn_weights(inputs, dims, ops):
    """spec_build: an lstm / gru op's gate rows written as the product "4*H" ("3*H") of the
    hidden size's dim, and a bidirectional layer's input features as "2*H", so that they follow
    H when the dims are re-bound (the import check and the correctness shapes shrink H with the
    weights); the dims that only those axes used leave `dims`. Where H is a literal, nothing."""
    replaced = set()
    for op in ops:
        if op["op"] not in ("lstm", "gru"):
            continue
        ins = op["inputs"]
        hidden = inputs[ins[1]]["shape"][2] if ins[1] in inputs else None
        if not isinstance(hidden, str):
            continue
        first = 3 if op["op"] == "lstm" else 2
        per = 4 if op.get("bias", True) else 2
        dirs = 2 if op.get("bidirectional") else 1
        gates = f"{4 if op['op'] == 'lstm' else 3}*{hidden}"
        for i, w in enumerate(ins[first:]):
            shape = inputs[w]["shape"]
            replaced.add(shape[0])
            shape[0] = gates
            layer = i // (per * dirs)
            if i % per == 0 and layer > 0:  # w_ih above the first layer: D*H features
                replaced.add(shape[1])
                shape[1] = hidden if dirs == 1 else f"2*{hidden}"
    used = {e for t in inputs.values() for e in t["shape"] if isinstance(e, str)}
    for d in replaced:
        if isinstance(d, str) and d not in used and d in dims:
            del dims[d]
