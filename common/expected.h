// Value-or-error result type (libstdc++ 12 has no std::expected in C++20).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kforge {

// A user error: something the user can act on (bad spec, bad program, bad flag). `where` names
// the place (a JSON path such as "graph[2].inputs[1]", or "file:line:col"); `message` says what
// is wrong and, where possible, what would be legal. Internal errors are assertions, never this.
struct Error {
    std::string where;
    std::string message;
    std::string detail;  // optional multi-line context (e.g. a source line and a caret)

    std::string to_string() const {
        std::string s = where.empty() ? message : where + ": " + message;
        if (!detail.empty()) s += "\n" + detail;
        return s;
    }
};

template <typename T>
class [[nodiscard]] Expected {
public:
    Expected(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
    Expected(Error error) : v_(std::move(error)) {}       // NOLINT(google-explicit-constructor)

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<0>(v_); }
    const T& value() const& { assert(ok()); return std::get<0>(v_); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

// Expected<void>: success or an error.
struct Ok {};
using Status = Expected<Ok>;

inline Error make_error(std::string where, std::string message, std::string detail = {}) {
    return Error{std::move(where), std::move(message), std::move(detail)};
}

}  // namespace kforge
