#include "dsl/check_expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>

#include "common/hash.h"

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

// A count as exact text ("4", "1.8446744073709552e+19").
std::string exact(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// a + b where that sum is exact (TwoSum's error term is 0), else false.
bool add_exact(double a, double b, double& sum) {
    sum = a + b;
    if (!std::isfinite(sum)) return false;
    const double bb = sum - a;
    return (a - (sum - bb)) + (b - bb) == 0.0;
}

// "once", "twice", "8 times".
std::string times(double count) {
    if (count == 1.0) return "once";
    if (count == 2.0) return "twice";
    return exact(count) + " times";
}

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

bool ExprGraph::charge(size_t steps, const Origin& origin) {
    if (!stop_reason_.empty()) return false;
    if (budget_ == nullptr || budget_->spend(static_cast<int64_t>(steps))) return true;
    stop("checking it takes more than " + std::to_string(budget_->limit()) +
             " steps (each operation of the problem or the program, and each operand it "
             "combines, is a step)",
         origin);
    return false;
}

void ExprGraph::stop(std::string reason, const Origin& origin) {
    if (!stop_reason_.empty()) return;
    stop_reason_ = std::move(reason);
    stop_where_ = origin.where;
}

int ExprGraph::push(Expr e) {
    if (charge(1 + e.args.size(), Origin{e.where, e.subject, e.display})) {
        std::string text;
        if (e.op == "leaf") {
            text = "T:" + e.leaf;
        } else if (e.op == "const") {
            text = "C:" + num(e.params[0]);
        } else {
            text = e.op + "[";
            for (double p : e.params) text += num(p) + ",";
            text += "]{";
            for (const auto& d : e.over) text += d + ",";
            text += "}(";
            for (size_t i = 0; i < e.args.size(); ++i) {
                text += at(e.args[i]).key;
                if (i < e.counts.size() && e.counts[i] != 1.0) text += "*" + exact(e.counts[i]);
                text += ";";
            }
            text += ")";
        }
        e.key = sha256_hex(text).substr(0, 32);
    }
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

int ExprGraph::relabel(int id, std::vector<std::string> dims) {
    if (!stop_reason_.empty()) return id;
    Expr e = at(id);
    e.dims = std::move(dims);
    return push(std::move(e));
}

int ExprGraph::contract(int a, int b, const std::string& k, const Origin& origin) {
    // matmul's order: the batch dims (a's, then b's others), then a's last dim (M), b's (N):
    // [M,K] x [B,K,N] -> [B,M,N]
    std::vector<std::string> da, db, dims;
    for (const auto& d : at(a).dims)
        if (d != k) da.push_back(d);
    for (const auto& d : at(b).dims)
        if (d != k) db.push_back(d);
    for (const auto* side : {&da, &db})
        for (size_t i = 0; i + 1 < side->size(); ++i)
            if (!contains(dims, (*side)[i])) dims.push_back((*side)[i]);
    for (const auto* side : {&da, &db})
        if (!side->empty() && !contains(dims, side->back())) dims.push_back(side->back());
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
    if (!stop_reason_.empty()) return a;
    const bool is_add = op == "add";
    const double identity = is_add ? 0.0 : 1.0;
    double folded = identity;
    struct Term {
        int id;
        std::string where;
        double count;
    };
    std::vector<Term> terms;
    for (int id : {a, b}) {
        const Expr& e = at(id);
        std::vector<Term> parts;
        if (e.op == op) {
            if (!charge(e.args.size(), origin)) return a;
            for (size_t i = 0; i < e.args.size(); ++i)
                parts.push_back(Term{e.args[i], e.arg_where[i],
                                     i < e.counts.size() ? e.counts[i] : 1.0});
        } else {
            parts.push_back(Term{id, origin.where, 1.0});
        }
        for (Term& part : parts) {
            const Expr& p = at(part.id);
            if (p.op == "const") {
                const double v = p.params[0];
                if (is_add) folded += part.count == 1.0 ? v : v * part.count;
                else folded *= part.count == 1.0 ? v : std::pow(v, part.count);
            } else {
                terms.push_back(std::move(part));
            }
        }
    }
    if (folded != identity || terms.empty())
        terms.push_back(Term{constant(folded, origin), origin.where, 1.0});
    if (terms.size() == 1 && terms[0].count == 1.0) return terms[0].id;
    std::stable_sort(terms.begin(), terms.end(),
                     [&](const Term& x, const Term& y) { return at(x.id).key < at(y.id).key; });
    // One operand per key, with the count of its occurrences (where: its first).
    std::vector<Term> merged;
    for (Term& t : terms) {
        if (!merged.empty() && at(merged.back().id).key == at(t.id).key) {
            double sum = 0;
            if (!add_exact(merged.back().count, t.count, sum)) {
                stop("its " + op + " of " + describe(at(t.id)) +
                         " occurs more often than the checker counts exactly (a double)",
                     origin);
                return a;
            }
            merged.back().count = sum;
        } else {
            merged.push_back(std::move(t));
        }
    }
    if (merged.size() == 1 && merged[0].count == 1.0) return merged[0].id;
    std::vector<std::string> dims;
    for (const auto& t : merged) {
        auto joined = broadcast_dims(dims, at(t.id).dims);
        dims = joined ? *joined : dims;
    }
    Expr e = node(op, origin);
    e.dims = std::move(dims);
    bool counted = false;
    for (auto& t : merged) {
        e.args.push_back(t.id);
        e.arg_where.push_back(std::move(t.where));
        e.counts.push_back(t.count);
        counted = counted || t.count != 1.0;
    }
    if (!counted) e.counts.clear();
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
    // (a * a, one operand with count 2, is a contraction of a with itself.)
    if (op == "reduce_sum" && drops_over && over.size() == 1 && args.size() == 1) {
        const Expr& m = at(args[0]);
        std::vector<int> factors;
        for (size_t i = 0; m.op == "mul" && i < m.args.size(); ++i) {
            const double count = i < m.counts.size() ? m.counts[i] : 1.0;
            for (double c = 0; c < count && factors.size() <= 2; ++c) factors.push_back(m.args[i]);
        }
        if (factors.size() == 2 && contains(at(factors[0]).dims, over[0]) &&
            contains(at(factors[1]).dims, over[0])) {
            return contract(factors[0], factors[1], over[0], origin);
        }
    }
    // A reduction of a reduction of the same kind over other dims is one reduction over both
    // sets (sum, max, min; mean too, every group being the same size): a problem's chain of
    // single-dim means (BatchNorm's batch statistics) and one kernel over the set are the same
    // computation. The set is kept sorted, so the order of the steps does not matter.
    if (drops_over && args.size() == 1 && params.empty() &&
        (op == "reduce_sum" || op == "reduce_mean" || op == "reduce_max" || op == "reduce_min")) {
        const Expr& inner = at(args[0]);
        if (inner.op == op && inner.args.size() == 1 && inner.params.empty()) {
            std::vector<std::string> both = inner.over;
            for (const auto& d : over)
                if (!contains(both, d)) both.push_back(d);
            std::sort(both.begin(), both.end());
            return apply(op, {inner.args[0]}, {}, std::move(both), true, origin);
        }
        std::sort(over.begin(), over.end());
    }
    std::vector<std::string> dims;
    for (const auto& d : at(args.at(0)).dims)
        if (!drops_over || !contains(over, d)) dims.push_back(d);
    if ((op == "masked_fill" || op == "where") && over.empty()) {
        // a select by a bool mask: the operands' dims broadcast (masked_fill(x[N], M[B,N], c))
        for (size_t i = 1; i < args.size(); ++i)
            if (auto joined = broadcast_dims(dims, at(args[i]).dims)) dims = std::move(*joined);
    }
    Expr e = node(op, origin);
    e.params = std::move(params);
    e.over = std::move(over);
    e.args = std::move(args);
    e.dims = std::move(dims);
    return push(std::move(e));
}

int ExprGraph::conv2d(int x, int w, std::vector<double> params, std::vector<std::string> out_dims,
                      const Origin& origin, const std::string& op) {
    Expr e = node(op, origin);
    e.params = std::move(params);
    e.over = out_dims;  // in the key: the output's spatial dims are named by the op
    e.args = {x, w};
    e.dims = std::move(out_dims);
    return push(std::move(e));
}

int ExprGraph::pool(int x, const std::string& op, std::vector<double> params,
                    std::vector<std::string> out_dims, const Origin& origin) {
    Expr e = node(op, origin);
    e.params = std::move(params);
    e.over = out_dims;  // in the key: the output's spatial dims are named by the op
    e.args = {x};
    e.dims = std::move(out_dims);
    return push(std::move(e));
}

int ExprGraph::gather(std::vector<int> xs, const std::string& op, std::vector<double> params,
                      std::vector<std::string> out_dims, const Origin& origin) {
    // a reshape of a reshape is one reshape of the first one's input (row-major order is kept):
    // the problem's chain of views and the program's one store under the last dims alike
    if (op == "reshape" && xs.size() == 1 && at(xs[0]).op == "reshape" && at(xs[0]).args.size() == 1)
        xs = {at(xs[0]).args[0]};
    Expr e = node(op, origin);
    e.params = std::move(params);
    e.over = out_dims;  // in the key: a reshape or expand is told apart by its output's dims
    e.args = std::move(xs);
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
    const std::string chain = "the program's chain for " + out;
    // Down one pair of differing operands at a time: a loop, as the graphs are as deep as the
    // problem's and the program's chains (thousands of ops).
    for (;;) {
        const Expr& P = pg.at(p);
        const Expr& Q = qg.at(q);
        if (P.key == Q.key) return std::nullopt;

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

        // Commutative operands: match them as multisets (each operand with its count) and explain
        // what is left over.
        if ((commutative(P.op) || commutative(Q.op)) && (P.op == Q.op || P.op == "add" ||
                                                         P.op == "mul" || Q.op == "add" ||
                                                         Q.op == "mul")) {
            const std::string& op = commutative(P.op) ? P.op : Q.op;
            auto operands = [&](const Expr& e, int id) {
                std::vector<std::pair<int, double>> out;
                if (e.op != op) return std::vector<std::pair<int, double>>{{id, 1.0}};
                for (size_t i = 0; i < e.args.size(); ++i)
                    out.emplace_back(e.args[i], i < e.counts.size() ? e.counts[i] : 1.0);
                return out;
            };
            std::vector<std::pair<int, double>> pa = operands(P, p), qa = operands(Q, q);
            const std::vector<std::string> pw =
                P.op == op ? P.arg_where : std::vector<std::string>{P.where};
            const std::vector<std::string> qw =
                Q.op == op ? Q.arg_where : std::vector<std::string>{Q.where};
            std::multimap<std::string, size_t> q_by_key;  // (contract's two operands may be equal)
            for (size_t j = 0; j < qa.size(); ++j) q_by_key.emplace(qg.at(qa[j].first).key, j);
            std::vector<double> q_left_count(qa.size());
            for (size_t j = 0; j < qa.size(); ++j) q_left_count[j] = qa[j].second;
            std::vector<size_t> p_left;
            for (size_t i = 0; i < pa.size(); ++i) {
                double left = pa[i].second;
                auto [first, last] = q_by_key.equal_range(pg.at(pa[i].first).key);
                for (auto it = first; it != last && left > 0; ++it) {
                    const double common = std::min(left, q_left_count[it->second]);
                    left -= common;
                    q_left_count[it->second] -= common;
                }
                if (left > 0) p_left.push_back(i);
            }
            std::vector<size_t> q_left;
            for (size_t j = 0; j < qa.size(); ++j)
                if (q_left_count[j] > 0) q_left.push_back(j);
            auto many = [](const std::vector<std::pair<int, double>>& v) {
                return v.size() > 1 || (v.size() == 1 && v[0].second > 1.0);
            };
            const bool same_op = P.op == Q.op && P.over == Q.over;
            if (!p_left.empty() && !q_left.empty() && (same_op || many(pa) || many(qa))) {
                const Expr& a = pg.at(pa[p_left[0]].first);
                const Expr& b = qg.at(qa[q_left[0]].first);
                if (a.op == "leaf" && b.op == "leaf") {
                    return "the problem's " + P.display + " at " + pw[p_left[0]] + " " +
                           verb(op) + " " + a.leaf + "; " + chain + " " + verb(op) + " " + b.leaf +
                           " at " + b.where;
                }
                p = pa[p_left[0]].first;
                q = qa[q_left[0]].first;
                continue;
            }
            // The other side's count of the operand with key `key` (0: it has none).
            auto count_in = [](const ExprGraph& g, const std::vector<std::pair<int, double>>& v,
                               const std::string& key) {
                for (const auto& [id, count] : v)
                    if (g.at(id).key == key) return count;
                return 0.0;
            };
            if (!p_left.empty() && q_left.empty()) {
                const auto& [id, count] = pa[p_left[0]];
                const double other = count_in(qg, qa, pg.at(id).key);
                return "the problem " + verb(op) + " " + describe(pg.at(id)) + " at " +
                       pw[p_left[0]] + " (" + P.display + ")" +
                       (other > 0 ? " " + times(count) + "; " + chain + " " + times(other)
                                  : "; " + chain + " does not");
            }
            if (p_left.empty() && !q_left.empty()) {
                const auto& [id, count] = qa[q_left[0]];
                const double other = count_in(pg, pa, qg.at(id).key);
                return chain + " " + verb(op) + " " + describe(qg.at(id)) + " at " + qw[q_left[0]] +
                       (other > 0 ? " " + times(count) + "; the problem " + times(other)
                                  : ", which the problem does not");
            }
        }
        if (P.op == Q.op && P.params == Q.params && P.over == Q.over &&
            P.args.size() == Q.args.size()) {
            size_t i = 0;
            while (i < P.args.size() && pg.at(P.args[i]).key == qg.at(Q.args[i]).key) ++i;
            if (i < P.args.size()) {
                p = P.args[i];
                q = Q.args[i];
                continue;
            }
        }
        if (P.op == "leaf") {
            return "the problem uses " + P.leaf + " at " + P.where + "; " + chain + " has " +
                   describe(Q) + " at " + Q.where;
        }
        return "the problem applies " + P.display + " to " + P.subject + " at " + P.where + "; " +
               chain + " has " + describe(Q) + " at " + Q.where;
    }
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
