#pragma once
// Output files and scratch folders that no other process or user can race (issue 31, item 9).
//
// write_file_atomic: the whole text lands under its name or nothing does. It is written to a
// fresh temporary file in the target's own folder (mkstemp: a name no one can guess or
// pre-create, created with O_EXCL), flushed to disk, and renamed over the target. rename(2)
// replaces whatever entry the name holds: a symlink planted at the target name is replaced
// itself, never followed, so the file it points to is never opened or written. A folder at the
// name is refused. A reader sees the old file or the new one, never a half-written one; a crash
// or a full disk leaves the old file and at worst a `.NAME.tmp-XXXXXX` beside it (removed on any
// error we see). The file gets mode 0644.
//
// make_private_temp_dir: a fresh folder under the system temporary folder (TMPDIR, else /tmp)
// made by mkdtemp: an unpredictable name, mode 0700 (no other user can list, read or plant
// files in it), never one that existed before.
//
// Header-only: kforge_common's source list belongs to the top CMakeLists.txt.

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace kforge {

inline Status write_file_atomic(const std::filesystem::path& path, std::string_view text) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.filename().empty()) return make_error(path.string(), "not a file name");
    if (fs::is_directory(fs::symlink_status(path, ec)))
        return make_error(path.string(), "is a folder, not a file");
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
        return make_error(path.string(), "cannot create a temporary file in " + dir.string() +
                                             ": " + std::strerror(errno));
    }
    const std::string tmp(name.data());
    auto fail = [&](const std::string& what) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return make_error(path.string(), what + ": " + std::strerror(e));
    };
    for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("cannot write");
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0) return fail("cannot set the file mode");
    if (::fsync(fd) != 0) return fail("cannot flush to disk");
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return make_error(path.string(), std::string("cannot close: ") + std::strerror(e));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return make_error(path.string(), std::string("cannot rename into place: ") +
                                             std::strerror(e));
    }
    return Ok{};
}

inline Expected<std::filesystem::path> make_private_temp_dir(std::string_view prefix) {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / (std::string(prefix) + "-XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (!::mkdtemp(name.data())) {
        return make_error(base.string(), "cannot create a private temporary folder: " +
                                             std::string(std::strerror(errno)));
    }
    return std::filesystem::path(name.data());
}

}  // namespace kforge
