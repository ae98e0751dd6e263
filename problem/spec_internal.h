// Pieces of parse_problem() shared by its files (not part of the library's interface).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::spec {

using Json = nlohmann::ordered_json;

// Typed reads of one JSON value; the Error names `path` and says what was expected.
std::string type_name(const Json& v);
Expected<std::string> read_string(const Json& v, const std::string& path);
Expected<double> read_number(const Json& v, const std::string& path);  // finite
Expected<int64_t> read_int(const Json& v, const std::string& path);
Expected<bool> read_bool(const Json& v, const std::string& path);

// `name` matches [A-Za-z_][A-Za-z0-9_]* (and at most 128 characters).
bool is_identifier(std::string_view name);
std::string join(const std::vector<std::string>& names);
std::string quote(std::string_view s);

// Rejects a key of `object` that is not in `known` (path + key as where).
Status check_keys(const Json& object, const std::string& path,
                  const std::vector<std::string>& known);

// One shape entry: a dim name (resolved against `dims`) or a positive integer literal.
struct DimEntry {
    std::string name;  // "" for a literal
    int64_t value = 0;
};
Expected<DimEntry> read_dim_entry(const Json& v, const std::string& path,
                                  const std::map<std::string, int64_t>& dims);

// A dim expression: a sum of products of dim names and positive integers ("3*E", "I+H",
// "C*Ho*Wo") - a derived dim declared under "dims", a slice's bound, a conv's groups.
// check_dim_expr checks its syntax (the Error at `path`), dim_expr_names lists the names it
// reads, eval_dim_expr values it against `dims` (an Error for an unknown name or a value above
// 2^40).
Status check_dim_expr(const std::string& text, const std::string& path);
// The first factor of `text` that is neither a dim name nor a positive integer of at most 13
// digits ("" for an empty one: "M**3"; "0"), or nullopt where check_dim_expr accepts it.
std::optional<std::string> bad_dim_factor(const std::string& text);
std::vector<std::string> dim_expr_names(const std::string& text);
Expected<int64_t> eval_dim_expr(const std::string& text, const std::string& path,
                                const std::map<std::string, int64_t>& dims);
// Enters each of p.dim_exprs whose names are all known into p.dims and p.derived_dims, until
// none is left that can be (one may name another, or a dim the graph derives later).
Status resolve_dim_exprs(Problem& p);
// An input shape entry written as a dim expression ("4*H": an lstm's gate rows; "I+H"): valued
// against p.dims and entered into p.dims and p.derived_dims under its text, so read_dim_entry
// resolves it and a re-bind recomputes it. Its names must be dims known now (given, or derived
// by an expression under "dims" from given ones). An entry that is a name or a number is left
// alone.
Status enter_expr_dim(const Json& v, const std::string& path, Problem& p);
// An input's "fan_in" (Tensor::fan_in: a positive integer or a dim expression, checked when the
// input is read) valued against `dims` once the graph has derived every dim (build_graph):
// Tensor::fan_in_value (spec_parse.cpp).
Status value_fan_in(Tensor& t, const std::map<std::string, int64_t>& dims);

// Parses graph[index] into an Op (kind, inputs, output, attributes; normalized_shape resolved
// against dims). Shapes are not looked at here.
Expected<Op> parse_op(const Json& v, const std::string& path,
                      const std::map<std::string, int64_t>& dims);

// Infers the output tensor of `op` (name, shape, dim names, dtype) from its inputs, checking
// shapes and dtypes, and normalizes op.attrs (axis >= 0, normalized_shape filled in, a conv2d's
// out_dims named). A conv2d enters the dims it derives (its output's spatial sizes) into `dims`
// and `derived`.
Expected<Tensor> infer_op(Op& op, const std::vector<const Tensor*>& inputs,
                          std::map<std::string, int64_t>& dims, std::set<std::string>& derived);

// The index and mask ops (argmax / argmin, masked_fill, where, tril / triu, cross_entropy) and
// add / sub / mul of a float with a bool mask: infer_op() hands them to infer_index_op
// (shape_infer_index.cpp), which checks their dtypes (bool masks, integer targets) and shapes.
bool infers_index_op(const Op& op, const std::vector<const Tensor*>& inputs);
Expected<Tensor> infer_index_op(Op& op, const std::vector<const Tensor*>& inputs);

// The pooling ops (spec_pool.cpp): their attribute names, one attribute read, the required keys,
// shape inference (x [N, C, *] -> y, the derived spatial dims entered into `dims` and `derived`
// like a conv2d's) and the attributes written back by problem_to_json.
std::vector<std::string> pool_attribute_names(OpKind k);
Status read_pool_attr(const Json& v, const std::string& key, const std::string& path, OpAttrs& a);
Status check_pool_op(const Json& v, const std::string& path, const Op& op);
Expected<Tensor> infer_pool(Op& op, const std::vector<const Tensor*>& inputs,
                            std::map<std::string, int64_t>& dims, std::set<std::string>& derived);
void write_pool_attrs(const Op& op, Json& j);

// The recurrent ops lstm / gru (spec_rnn.cpp, problem/rnn.h): attribute names and reads, the
// operand count the attributes imply, shape inference and the attributes written back.
std::vector<std::string> rnn_attribute_names();
Status read_rnn_attr(const Json& v, const std::string& key, const std::string& path, OpAttrs& a);
Status check_rnn_op(const std::string& path, const Op& op);
Expected<Tensor> infer_rnn(Op& op, const std::vector<const Tensor*>& inputs,
                           std::map<std::string, int64_t>& dims, std::set<std::string>& derived);
void write_rnn_attrs(const Op& op, Json& j);

// The convolutions (spec_conv.cpp): x [N, C, *], w, [b] -> y [N, K, *], checking ranks and
// groups; y's spatial dims named (op.attrs.out_dims) and the new ones entered into `dims` and
// `derived`.
Expected<Tensor> infer_conv(Op& op, const std::vector<const Tensor*>& inputs,
                            std::map<std::string, int64_t>& dims, std::set<std::string>& derived);

// Checks `shape` against the rank and size limits; where is `path`.
Status check_shape_limits(const std::vector<int64_t>& shape, const std::string& path);

// Names, stable topological order, shapes, dangling intermediates and outputs of a problem whose
// dims, inputs, ops (in spec order) and outputs are filled in. Appends intermediate tensors.
Status build_graph(Problem& problem);

}  // namespace kforge::spec
