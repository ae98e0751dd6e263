#include "dsl/check_expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace kforge::dsl {
namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

bool commutative(const std::string& op) { return op == "add" || op == "mul" || op == "contract"; }

std::string describe(const Expr& e) {
    if (e.op == "leaf") return e.leaf;
    if (e.op == "const") return num(e.params.empty() ? 0.0 : e.params[0]);
    return e.display;
}

std::string verb(const std::string& op) {
    if (op == "add") return "adds";
    if (op == "mul") return "multiplies by";
    return "contracts with";
}

// A node of kind `op` with its origin's display, where and subject.
Expr node(std::string op, const Origin& origin) {
    Expr e;
    e.op = std::move(op);
    e.display = origin.display;
    e.where = origin.where;
    e.subject = origin.subject;
    return e;
}

}  // namespace

int ExprGraph::push(Expr e) {
    std::string key = e.op;
    if (e.op == "leaf") key = "T:" + e.leaf;
    if (e.op == "const") key = "C:" + num(e.params[0]);
    if (e.op != "leaf" && e.op != "const") {
        key += "[";
        for (double p : e.params) key += num(p) + ",";
        key += "]{";
        for (const auto& d : e.over) key += d + ",";
        key += "}(";
        for (int a : e.args) key += at(a).key + ";";
        key += ")";
    }
    e.key = std::move(key);
    nodes_.push_back(std::move(e));
    return static_cast<int>(nodes_.size()) - 1;
}

int ExprGraph::leaf(const std::string& name, std::vector<std::string> dims, const Origin& origin) {
    Expr e = node("leaf", origin);
    e.leaf = name;
    e.dims = std::move(dims);
    e.display = name;
    return push(std::move(e));
}

int ExprGraph::constant(double value, const Origin& origin) {
    Expr e = node("const", origin);
    e.params = {value};
    e.display = num(value);
    return push(std::move(e));
}

int ExprGraph::contract(int a, int b, const std::string& k, const Origin& origin) {
    std::vector<std::string> dims;
    for (const auto& d : at(a).dims)
        if (d != k) dims.push_back(d);
    for (const auto& d : at(b).dims)
        if (d != k && !contains(dims, d)) dims.push_back(d);
    std::vector<int> args{a, b};
    if (at(b).key < at(a).key) std::swap(args[0], args[1]);
    Expr e = node("contract", origin);
    e.over = {k};
    e.args = args;
    e.arg_where = {origin.where, origin.where};
    e.dims = std::move(dims);
    return push(std::move(e));
}

int ExprGraph::flat(const std::string& op, int a, int b, const Origin& origin) {
    const double identity = op == "add" ? 0.0 : 1.0;
    double folded = identity;
    std::vector<std::pair<int, std::string>> terms;
    for (int id : {a, b}) {
        const Expr& e = at(id);
        std::vector<std::pair<int, std::string>> parts;
        if (e.op == op) {
            for (size_t i = 0; i < e.args.size(); ++i) parts.emplace_back(e.args[i], e.arg_where[i]);
        } else {
            parts.emplace_back(id, origin.where);
        }
        for (auto& part : parts) {
            const Expr& p = at(part.first);
            if (p.op == "const") {
                folded = op == "add" ? folded + p.params[0] : folded * p.params[0];
            } else {
                terms.push_back(part);
            }
        }
    }
    if (folded != identity || terms.empty()) terms.emplace_back(constant(folded, origin), origin.where);
    if (terms.size() == 1) return terms[0].first;
    std::vector<std::string> dims;
    for (const auto& t : terms) {
        auto joined = broadcast_dims(dims, at(t.first).dims);
        dims = joined ? *joined : dims;
    }
    std::stable_sort(terms.begin(), terms.end(),
                     [&](const auto& x, const auto& y) { return at(x.first).key < at(y.first).key; });
    Expr e = node(op, origin);
    e.dims = std::move(dims);
    for (auto& t : terms) {
        e.args.push_back(t.first);
        e.arg_where.push_back(t.second);
    }
    return push(std::move(e));
}

int ExprGraph::add(int a, int b, const Origin& origin) { return flat("add", a, b, origin); }
int ExprGraph::mul(int a, int b, const Origin& origin) { return flat("mul", a, b, origin); }

int ExprGraph::div(int a, int b, const Origin& origin) {
    auto dims = broadcast_dims(at(a).dims, at(b).dims);
    Expr e = node("div", origin);
    e.args = {a, b};
    e.dims = dims ? *dims : at(a).dims;
    return push(std::move(e));
}

int ExprGraph::clamp(int x, double lo, double hi, const Origin& origin) {
    const Expr& e = at(x);
    if (e.op == "clamp" && std::max(lo, e.params[0]) <= std::min(hi, e.params[1])) {
        lo = std::max(lo, e.params[0]);
        hi = std::min(hi, e.params[1]);
        x = e.args[0];
    }
    Expr c = node("clamp", origin);
    c.params = {lo, hi};
    c.args = {x};
    c.dims = at(x).dims;
    return push(std::move(c));
}

int ExprGraph::bound(bool is_max, int a, int b, const Origin& origin) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    for (auto [x, c] : {std::pair{a, b}, std::pair{b, a}}) {
        if (at(c).op == "const") {
            const double v = at(c).params[0];
            return is_max ? clamp(x, v, kInf, origin) : clamp(x, -kInf, v, origin);
        }
    }
    auto dims = broadcast_dims(at(a).dims, at(b).dims);
    Expr e = node(is_max ? "maximum" : "minimum", origin);
    e.args = {a, b};
    if (at(b).key < at(a).key) std::swap(e.args[0], e.args[1]);
    e.dims = dims ? *dims : at(a).dims;
    return push(std::move(e));
}

int ExprGraph::apply(const std::string& op, std::vector<int> args, std::vector<double> params,
                     std::vector<std::string> over, bool drops_over, const Origin& origin) {
    // sum over K of a * b, both with K = contract(a, b over K): a matmul with a vector operand
    // and a rowwise `sum(A[M,K]) pre { mul v[K] }` are the same computation.
    if (op == "reduce_sum" && drops_over && over.size() == 1 && args.size() == 1) {
        const Expr& m = at(args[0]);
        if (m.op == "mul" && m.args.size() == 2 && contains(at(m.args[0]).dims, over[0]) &&
            contains(at(m.args[1]).dims, over[0])) {
            return contract(m.args[0], m.args[1], over[0], origin);
        }
    }
    std::vector<std::string> dims;
    for (const auto& d : at(args.at(0)).dims)
        if (!drops_over || !contains(over, d)) dims.push_back(d);
    Expr e = node(op, origin);
    e.params = std::move(params);
    e.over = std::move(over);
    e.args = std::move(args);
    e.dims = std::move(dims);
    return push(std::move(e));
}

int ExprGraph::conv2d(int x, int w, std::vector<double> params, std::vector<std::string> out_dims,
                      const Origin& origin) {
    Expr e = node("conv2d", origin);
    e.params = std::move(params);
    e.over = out_dims;  // in the key: the output's spatial dims are named by the op
    e.args = {x, w};
    e.dims = std::move(out_dims);
    return push(std::move(e));
}

std::optional<std::vector<std::string>> broadcast_dims(const std::vector<std::string>& a,
                                                       const std::vector<std::string>& b) {
    auto all_in = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
        return std::all_of(x.begin(), x.end(), [&](const std::string& d) { return contains(y, d); });
    };
    if (all_in(b, a)) return a;
    if (all_in(a, b)) return b;
    return std::nullopt;
}

std::optional<std::string> diff(const ExprGraph& pg, int p, const ExprGraph& qg, int q,
                                const std::string& out) {
    const Expr& P = pg.at(p);
    const Expr& Q = qg.at(q);
    if (P.key == Q.key) return std::nullopt;
    const std::string chain = "the program's chain for " + out;

    // One side applies an op the other does not (n-ary add/mul are matched term by term below).
    for (int c : P.args) {
        if (P.op != "add" && P.op != "mul" && pg.at(c).key == Q.key) {
            return "the problem applies " + P.display + " to " + P.subject + " at " + P.where +
                   "; " + chain + " skips it";
        }
    }
    for (int c : Q.args) {
        if (Q.op != "add" && Q.op != "mul" && qg.at(c).key == P.key) {
            return chain + " applies " + Q.display + " at " + Q.where +
                   ", which the problem does not";
        }
    }

    // Commutative operands: match them as multisets and explain what is left over.
    if ((commutative(P.op) || commutative(Q.op)) && (P.op == Q.op || P.op == "add" ||
                                                     P.op == "mul" || Q.op == "add" ||
                                                     Q.op == "mul")) {
        const std::string& op = commutative(P.op) ? P.op : Q.op;
        std::vector<int> pa = P.op == op ? P.args : std::vector<int>{p};
        std::vector<int> qa = Q.op == op ? Q.args : std::vector<int>{q};
        std::vector<std::string> pw = P.op == op ? P.arg_where : std::vector<std::string>{P.where};
        std::vector<std::string> qw = Q.op == op ? Q.arg_where : std::vector<std::string>{Q.where};
        std::vector<bool> q_used(qa.size(), false);
        std::vector<size_t> p_left;
        for (size_t i = 0; i < pa.size(); ++i) {
            bool found = false;
            for (size_t j = 0; j < qa.size() && !found; ++j) {
                if (!q_used[j] && pg.at(pa[i]).key == qg.at(qa[j]).key) q_used[j] = found = true;
            }
            if (!found) p_left.push_back(i);
        }
        std::vector<size_t> q_left;
        for (size_t j = 0; j < qa.size(); ++j)
            if (!q_used[j]) q_left.push_back(j);
        const bool same_op = P.op == Q.op && P.over == Q.over;
        if (!p_left.empty() && !q_left.empty() && (same_op || pa.size() > 1 || qa.size() > 1)) {
            const Expr& a = pg.at(pa[p_left[0]]);
            const Expr& b = qg.at(qa[q_left[0]]);
            if (a.op == "leaf" && b.op == "leaf") {
                return "the problem's " + P.display + " at " + pw[p_left[0]] + " " + verb(op) + " " +
                       a.leaf + "; " + chain + " " + verb(op) + " " + b.leaf + " at " + b.where;
            }
            return diff(pg, pa[p_left[0]], qg, qa[q_left[0]], out);
        }
        if (!p_left.empty() && q_left.empty()) {
            return "the problem " + verb(op) + " " + describe(pg.at(pa[p_left[0]])) + " at " +
                   pw[p_left[0]] + " (" + P.display + "); " + chain + " does not";
        }
        if (p_left.empty() && !q_left.empty()) {
            return chain + " " + verb(op) + " " + describe(qg.at(qa[q_left[0]])) + " at " +
                   qw[q_left[0]] + ", which the problem does not";
        }
    }
    if (P.op == Q.op && P.params == Q.params && P.over == Q.over && P.args.size() == Q.args.size()) {
        for (size_t i = 0; i < P.args.size(); ++i) {
            if (auto d = diff(pg, P.args[i], qg, Q.args[i], out)) return d;
        }
    }
    if (P.op == "leaf") {
        return "the problem uses " + P.leaf + " at " + P.where + "; " + chain + " has " +
               describe(Q) + " at " + Q.where;
    }
    return "the problem applies " + P.display + " to " + P.subject + " at " + P.where + "; " +
           chain + " has " + describe(Q) + " at " + Q.where;
}

int normalize_expr(ExprGraph& g, int x, bool l2, double eps, const std::string& over,
                   const Origin& origin) {
    int t = g.apply(l2 ? "square" : "abs", {x}, {}, {}, false, origin);
    t = g.apply("reduce_sum", {t}, {}, {over}, true, origin);
    if (l2) t = g.apply("sqrt", {t}, {}, {}, false, origin);
    if (eps != 0.0) t = g.clamp(t, eps, std::numeric_limits<double>::infinity(), origin);
    return g.div(x, t, origin);
}

std::string scan_display(const std::string& name, const std::string& over, bool reverse,
                         bool exclusive) {
    return name + " over " + over + (reverse ? " reverse" : "") + (exclusive ? " exclusive" : "");
}

}  // namespace kforge::dsl
