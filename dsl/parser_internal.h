// Internal to the parser (dsl/parser.cpp, dsl/parse_chain.cpp, dsl/parse_knobs.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "dsl/chain_ops.h"
#include "dsl/knobs.h"
#include "dsl/lexer.h"

namespace kforge::dsl::detail {

inline constexpr int kMaxDims = 8;
// A whole network's program (KernelBench Level 3: a DenseNet-201 is over a thousand kernels) fits;
// the bound only stops a runaway program text.
inline constexpr int kMaxKernels = 4096;
inline constexpr int kMaxChainOps = 256;

class Parser {
public:
    Parser(std::string_view source, std::string_view file, std::vector<Token> tokens)
        : source_(source), file_(file), tokens_(std::move(tokens)) {}

    Expected<Program> program();

    // parse_knobs.cpp
    Status knobs(Kernel& k);
    // parse_chain.cpp
    Status chain(Kernel& k);
    // `{ stmt; ... }` into `out` (the chain, or a rowwise kernel's `pre` prologue).
    Status chain_into(std::vector<ChainOp>& out, std::string_view what);
    Status chain_args(const ChainOpSpec& spec, ChainOp& op);

    // shared helpers (parser.cpp)
    const Token& peek(size_t ahead = 0) const;
    Token take();
    bool at_punct(char c) const;
    bool at_ident(std::string_view word) const;
    bool at_number() const;
    Error error_at(const Token& t, std::string message) const;
    Error expected(std::string_view what, std::string_view hint = {}) const;  // "expected W, got X"
    Expected<Token> expect_punct(char c, std::string_view context);
    Expected<TensorRef> tensor(std::string_view role);
    Expected<double> number(const Token& t) const;
    Expected<int64_t> integer(const Token& t) const;  // unsigned decimal, fits in int64
    // The source text from the start of `a` to the end of `b` (tokens of this source).
    static std::string_view source_text(const Token& a, const Token& b) {
        return {a.text.data(), static_cast<size_t>(b.text.data() + b.text.size() - a.text.data())};
    }

private:
    Status kernel(Program& p);
    Status head(Kernel& k);
    Expected<KnobValue> knob_value(const KnobSpec& spec, const Token& name);
    Expected<KnobValue> knob_ints(const KnobSpec& spec);

    std::string_view source_;
    std::string_view file_;
    std::vector<Token> tokens_;
    size_t pos_ = 0;
};

// "did you mean 'x'?" suffix ("; did you mean 'tile'?") or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& names);

}  // namespace kforge::dsl::detail
