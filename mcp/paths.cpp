#include "mcp/paths.h"

namespace kforge::mcp {

namespace fs = std::filesystem;

namespace {

// Whether `p` (canonical) is `root` or lies under it.
bool inside(const fs::path& root, const fs::path& p) {
    auto r = root.begin();
    auto q = p.begin();
    for (; r != root.end(); ++r, ++q)
        if (q == p.end() || *r != *q) return false;
    return true;
}

}  // namespace

Expected<Root> Root::open(const std::string& dir) {
    std::error_code ec;
    if (dir.empty()) return make_error("--root", "give the working folder the tools may use");
    fs::path canonical = fs::canonical(dir, ec);
    if (ec) return make_error("--root", dir + ": " + ec.message());
    if (!fs::is_directory(canonical, ec)) return make_error("--root", dir + ": not a folder");
    return Root(canonical);
}

Expected<fs::path> Root::resolve(std::string_view field, std::string_view text,
                                 Access access) const {
    const std::string where(field);
    if (text.empty()) return make_error(where, "an empty path");
    if (text.find('\0') != std::string_view::npos)
        return make_error(where, "a path with a NUL byte");
    fs::path given(text);
    fs::path joined = given.is_absolute() ? given : dir_ / given;
    fs::path lexical = joined.lexically_normal();
    if (!inside(dir_, lexical))
        return make_error(where, "\"" + std::string(text) + "\" is outside the working folder " +
                                     "(kforge mcp --root); give a path inside it");
    std::error_code ec;
    // Resolves every symbolic link of the part that exists; the rest stays lexical.
    fs::path real = fs::weakly_canonical(lexical, ec);
    if (ec) return make_error(where, "\"" + std::string(text) + "\": " + ec.message());
    if (!inside(dir_, real))
        return make_error(where, "\"" + std::string(text) +
                                     "\" leads outside the working folder through a symbolic "
                                     "link; give a path inside it");
    // A link that does not resolve (dangling, or a loop) is kept lexical above: its target is
    // checked here, so that a write through it cannot land outside.
    fs::path prefix;
    for (const fs::path& part : lexical) {
        prefix /= part;
        if (!fs::is_symlink(fs::symlink_status(prefix, ec))) continue;
        fs::path target = fs::read_symlink(prefix, ec);
        if (ec) return make_error(where, "\"" + std::string(text) + "\": " + ec.message());
        if (target.is_relative()) target = prefix.parent_path() / target;
        fs::path resolved = fs::weakly_canonical(target.lexically_normal(), ec);
        if (ec || !inside(dir_, resolved))
            return make_error(where, "\"" + std::string(text) +
                                         "\" leads outside the working folder through a "
                                         "symbolic link; give a path inside it");
    }
    if (access == Access::kRead && !fs::exists(real, ec))
        return make_error(where, "\"" + std::string(text) + "\" does not exist in the working folder");
    return real;
}

Status Root::check_tree(std::string_view field, const fs::path& dir) const {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return Ok{};
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (!it->is_symlink(ec)) continue;
        fs::path target = fs::read_symlink(it->path(), ec);
        if (target.is_relative()) target = it->path().parent_path() / target;
        fs::path real = fs::weakly_canonical(target.lexically_normal(), ec);
        if (ec || !inside(dir_, real))
            return make_error(std::string(field), relative(it->path()) +
                                                      " is a symbolic link leading outside the "
                                                      "working folder; remove it or write elsewhere");
    }
    if (ec) return make_error(std::string(field), relative(dir) + ": " + ec.message());
    return Ok{};
}

Status Root::check_beside(std::string_view field, const fs::path& spec) const {
    fs::path kf = spec;
    kf.replace_extension(".kf");
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(kf, ec))) return Ok{};
    auto r = resolve(field, kf.string(), Access::kRead);
    if (!r) return r.error();
    return Ok{};
}

std::string Root::relative(const fs::path& path) const {
    fs::path r = path.lexically_relative(dir_);
    return r.empty() ? path.string() : r.string();
}

}  // namespace kforge::mcp
