//===- HMAC.h - HMAC-SHA256 and a constant-time comparison ------*- C++ -*-===//
//
// Part of gridjit. The message authentication the caches use for entries
// that come from places other users can write to (the remote tier today;
// docs/RemoteCache.md, "Authenticity"): HMAC-SHA256 (RFC 2104) over LLVM's
// llvm::SHA256, and a comparison of tags whose time does not depend on
// where they differ.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_HMAC_H
#define GRIDJIT_SUPPORT_HMAC_H

#include <array>
#include <cstdint>
#include <string_view>

namespace gridjit {

/// HMAC-SHA256 (RFC 2104) of \p Data under \p Key. A key longer than the
/// 64-byte block is hashed first, as the RFC says.
std::array<uint8_t, 32> hmacSHA256(std::string_view Key, std::string_view Data);

/// Whether the 32 bytes of \p Got equal \p Want, in a time that does not
/// depend on the bytes (a tag check must not tell an attacker how many
/// leading bytes were right). False when \p Got is not 32 bytes long.
bool tagsEqual(std::string_view Got, const std::array<uint8_t, 32> &Want);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_HMAC_H
