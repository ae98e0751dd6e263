// The working folder the operator names (`kforge mcp --root DIR`): every path a tool takes or
// writes is resolved inside it. A relative path is taken from the root; an absolute one must
// lie inside it; a `..` that leaves it, or a symbolic link (anywhere on the path) that leads
// out of it, is refused with a message naming the argument.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace kforge::mcp {

class Root {
public:
    // The folder must exist; it is made canonical (its own symlinks resolved) once here.
    static Expected<Root> open(const std::string& dir);

    const std::filesystem::path& dir() const { return dir_; }

    enum class Access {
        kRead,   // must exist
        kWrite,  // may not exist yet; what exists of it must stay inside
    };
    // `text` (the tool argument `field`) as a canonical path inside the root, or an Error whose
    // `where` is the field.
    Expected<std::filesystem::path> resolve(std::string_view field, std::string_view text,
                                            Access access) const;
    // For an output folder a tool writes into (resolved with kWrite): every symbolic link that
    // already exists under it must lead inside the root, else the writes could follow it out.
    // (A link made while the tool runs is not seen: the agent's own shell is outside kforge.)
    Status check_tree(std::string_view field, const std::filesystem::path& dir) const;
    // The program beside a spec that a tool reads when none is given (SPEC without .json + .kf):
    // it must resolve inside the root too (its text shows in parse errors).
    Status check_beside(std::string_view field, const std::filesystem::path& spec) const;
    // The path as the client should see it: relative to the root ("." for the root).
    std::string relative(const std::filesystem::path& path) const;

private:
    explicit Root(std::filesystem::path dir) : dir_(std::move(dir)) {}
    std::filesystem::path dir_;
};

}  // namespace kforge::mcp
