"""Specs of recurrent problems at the sizes KernelBench level 3 runs them (batch 10, 512 steps,
128 input features, hidden 256, 6 layers: its LSTM / GRU files 35-42) and two larger hidden sizes,
written from kforge's own spec format (docs/problem-spec.md: the lstm and gru ops), one per
result and direction form. usage: python3 make_specs.py OUT_DIR"""
import json
import os
import sys

B, T, I, H, L = 10, 512, 128, 256, 6


def spec(name, kind, layers, bidirectional, batch_first, result, hidden=H, bias=True):
    lstm = kind == "lstm"
    d = 2 if bidirectional else 1
    g = 4 if lstm else 3
    x = ["B", "T", "I"] if batch_first else ["T", "B", "I"]
    inputs = {"x": {"shape": x, "dtype": "f32"},
              "h0": {"shape": [layers * d, "B", "H"], "dtype": "f32"}}
    if lstm:
        inputs["c0"] = {"shape": [layers * d, "B", "H"], "dtype": "f32"}
    operands = list(inputs)
    for l in range(layers):
        for r in range(d):
            sfx = f"_l{l}" + ("_reverse" if r else "")
            gates = f"{g}*H"  # a product dim: the correctness shapes re-bind H
            shapes = {"weight_ih": [gates, "I" if l == 0 else ("H" if d == 1 else "2*H")],
                      "weight_hh": [gates, "H"]}
            if bias:
                shapes.update({"bias_ih": [gates], "bias_hh": [gates]})
            for k, s in shapes.items():
                inputs[k + sfx] = {"shape": s, "dtype": "f32", "param": True}
                operands.append(k + sfx)
    op = {"op": kind, "inputs": operands, "output": "y", "num_layers": layers}
    if bidirectional:
        op["bidirectional"] = True
    if batch_first:
        op["batch_first"] = True
    if result != "output":
        op["result"] = result
    return {"name": name, "description": f"nn.{kind.upper()} {result}, {layers} layers, "
                                         f"{d} direction(s), batch {B}, {T} steps, hidden {hidden}",
            "dims": {"B": B, "T": T, "I": I, "H": hidden}, "inputs": inputs, "graph": [op],
            "outputs": ["y"], "precision": {"policy": "fp32_strict"}}


SPECS = [
    spec("rnn_lstm_output", "lstm", L, False, True, "output"),      # KernelBench 35 / 36 form
    spec("rnn_lstm_hn", "lstm", L, False, True, "h_n"),             # 36
    spec("rnn_lstm_cn", "lstm", L, False, True, "c_n"),             # 37
    spec("rnn_lstm_bidir_output", "lstm", L, True, True, "output"),  # 38
    spec("rnn_gru_output", "gru", L, False, False, "output"),       # 39
    spec("rnn_gru_hn", "gru", L, False, False, "h_n"),              # 40
    spec("rnn_gru_bidir_output", "gru", L, True, False, "output"),  # 41
    spec("rnn_gru_bidir_hn", "gru", L, True, False, "h_n"),         # 42
    spec("rnn_lstm_h512", "lstm", 2, False, True, "output", hidden=512),
    spec("rnn_gru_h1024", "gru", 1, False, False, "output", hidden=1024),
]

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = set(os.environ.get("ONLY", "").split()) - {""}
    for s in SPECS:
        if not only or s["name"] in only:
            with open(os.path.join(out, s["name"] + ".json"), "w") as f:
                json.dump(s, f, indent=1)
