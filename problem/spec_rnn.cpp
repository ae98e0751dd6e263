// The recurrent ops lstm and gru in the spec (problem/rnn.h): their attributes, the operand count
// the attributes imply, shape inference against PyTorch's nn.LSTM / nn.GRU shapes, and the
// attributes written back by problem_to_json.
#include "problem/rnn.h"
#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

std::string shape_text(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i)
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    return s + "]";
}

std::string dims_text(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

}  // namespace

std::vector<std::string> rnn_attribute_names() {
    return {"num_layers", "bidirectional", "batch_first", "bias", "result"};
}

Status read_rnn_attr(const Json& v, const std::string& key, const std::string& path, OpAttrs& a) {
    if (key == "num_layers") {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (*i < 1 || *i > 1024)
            return make_error(path, "num_layers must be an integer in 1..1024, got " + v.dump());
        a.num_layers = *i;
        return Ok{};
    }
    if (key == "result") {
        auto s = read_string(v, path);
        if (!s) return s.error();
        auto r = rnn_result_from_string(*s);
        if (!r) return make_error(path, "result must be \"output\", \"h_n\" or \"c_n\", got " + quote(*s));
        a.rnn_result = *r;
        return Ok{};
    }
    auto b = read_bool(v, path);
    if (!b) return b.error();
    (key == "bidirectional" ? a.bidirectional : key == "batch_first" ? a.batch_first : a.rnn_bias) = *b;
    return Ok{};
}

Status check_rnn_op(const std::string& path, const Op& op) {
    const size_t want = rnn_operand_count(op.kind, op.attrs);
    const bool lstm = op.kind == OpKind::kLstm;
    if (op.inputs.size() != want) {
        return make_error(path + ".inputs",
                          "op " + quote(to_string(op.kind)) + " with num_layers " +
                              std::to_string(op.attrs.num_layers) +
                              (op.attrs.bidirectional ? ", bidirectional" : "") +
                              (op.attrs.rnn_bias ? "" : ", bias false") + " takes " +
                              std::to_string(want) + " inputs (x, h0" + (lstm ? ", c0" : "") +
                              ", then per layer and direction w_ih, w_hh" +
                              (op.attrs.rnn_bias ? ", b_ih, b_hh" : "") + "); got " +
                              std::to_string(op.inputs.size()));
    }
    if (!lstm && op.attrs.rnn_result == RnnResult::kCn)
        return make_error(path + ".result", "result \"c_n\" is lstm's cell state; gru has none");
    return Ok{};
}

Expected<Tensor> infer_rnn(Op& op, const std::vector<const Tensor*>& in,
                           std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const std::string name(to_string(op.kind));
    const Tensor& x = *in[0];
    for (size_t i = 1; i < in.size(); ++i) {
        if (in[i]->dtype != x.dtype) {
            return make_error(op.json_path + ".inputs[" + std::to_string(i) + "]",
                              "bad dtype: " + quote(in[i]->name) + " is " +
                                  std::string(to_string(in[i]->dtype)) + " but x " +
                                  quote(x.name) + " is " + std::string(to_string(x.dtype)) +
                                  " (" + name + " takes one dtype)");
        }
    }
    if (x.shape.size() != 3) {
        return make_error(op.json_path + ".inputs[0]",
                          "shape mismatch: " + name + " takes x [" +
                              (op.attrs.batch_first ? "B, T, I" : "T, B, I") + "]; " +
                              shape_text(x) + " has rank " + std::to_string(x.shape.size()));
    }
    const Tensor& h0 = *in[1];
    if (h0.shape.size() != 3) {
        return make_error(op.json_path + ".inputs[1]", "shape mismatch: h0 " + shape_text(h0) +
                                                           " must be [num_layers * directions, "
                                                           "B, H] (rank 3)");
    }
    RnnGeometry g = rnn_geometry(op, x.shape, h0.shape);
    const int64_t gh = g.gates * g.hidden;
    auto expect = [&](size_t i, const std::vector<int64_t>& want,
                      const std::string& what) -> Status {
        if (in[i]->shape == want) return Ok{};
        return make_error(op.json_path + ".inputs[" + std::to_string(i) + "]",
                          "shape mismatch: " + what + " " + shape_text(*in[i]) + " must be " +
                              dims_text(want) + " (PyTorch's " + name + " with hidden size H = " +
                              std::to_string(g.hidden) + ", " + std::to_string(g.layers) +
                              " layer(s), " + std::to_string(g.dirs) + " direction(s), batch B = " +
                              std::to_string(g.batch) + ")");
    };
    const std::vector<int64_t> state{g.layers * g.dirs, g.batch, g.hidden};
    if (auto s = expect(1, state, "h0"); !s) return s.error();
    if (g.lstm)
        if (auto s = expect(2, state, "c0"); !s) return s.error();
    for (int64_t l = 0; l < g.layers; ++l) {
        for (int64_t d = 0; d < g.dirs; ++d) {
            auto at = [&](int w) { return rnn_weight_index(op.kind, op.attrs, l, d, w); };
            if (auto s = expect(at(0), {gh, g.layer_input(l)}, rnn_weight_name(l, d, 0)); !s)
                return s.error();
            if (auto s = expect(at(1), {gh, g.hidden}, rnn_weight_name(l, d, 1)); !s)
                return s.error();
            if (!g.bias) continue;
            for (int w : {2, 3})
                if (auto s = expect(at(w), {gh}, rnn_weight_name(l, d, w)); !s) return s.error();
        }
    }
    Tensor out;
    if (op.attrs.rnn_result != RnnResult::kOutput) {
        out.shape = h0.shape;
        out.dim_names = h0.dim_names;
        return out;
    }
    // output [T, B, D*H] ([B, T, D*H]): x's first two axes, then h0's H (D = 1) or, both
    // directions, the derived dim <H>x2 (recomputed on a re-bind; a literal where H is one)
    out.shape = {x.shape[0], x.shape[1], g.dirs * g.hidden};
    std::string last = h0.dim_names[2];
    if (g.dirs == 2 && !last.empty()) {
        last += "x2";
        auto it = dims.find(last);
        if (it != dims.end() && (derived.count(last) == 0 || it->second != 2 * g.hidden)) {
            last = "";  // the name means something else here
        } else {
            dims[last] = 2 * g.hidden;
            derived.insert(last);
        }
    } else if (g.dirs == 2) {
        last = "";
    }
    out.dim_names = {x.dim_names[0], x.dim_names[1], last};
    return out;
}

void write_rnn_attrs(const Op& op, Json& j) {
    const OpAttrs& a = op.attrs;
    j["num_layers"] = a.num_layers;
    if (a.bidirectional) j["bidirectional"] = true;
    if (a.batch_first) j["batch_first"] = true;
    if (!a.rnn_bias) j["bias"] = false;
    if (a.rnn_result != RnnResult::kOutput) j["result"] = std::string(to_string(a.rnn_result));
}

}  // namespace kforge::spec
