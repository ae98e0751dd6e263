#include "common/hash.h"

#include <openssl/evp.h>

#include <array>
#include <cassert>

namespace kforge {

std::string sha256_hex(std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int len = 0;
    [[maybe_unused]] int ok = EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr);
    assert(ok == 1);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        out.push_back(kHex[digest[i] >> 4]);
        out.push_back(kHex[digest[i] & 15]);
    }
    return out;
}

}  // namespace kforge
