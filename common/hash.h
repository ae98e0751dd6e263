// Content hashing for content-addressed caches and program identity (SHA-256, OpenSSL).
#pragma once

#include <string>
#include <string_view>

namespace kforge {

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace kforge
