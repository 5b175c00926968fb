//===- HMAC.cpp - HMAC-SHA256 and a constant-time comparison --------------===//
//
// Part of gridjit. See HMAC.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/HMAC.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <cstring>

using namespace gridjit;

std::array<uint8_t, 32> gridjit::hmacSHA256(std::string_view Key, std::string_view Data) {
  constexpr size_t Block = 64;
  std::array<uint8_t, Block> K{};
  if (Key.size() > Block) {
    auto H = llvm::SHA256::hash(llvm::arrayRefFromStringRef(llvm::StringRef(Key)));
    std::memcpy(K.data(), H.data(), H.size());
  } else {
    std::memcpy(K.data(), Key.data(), Key.size());
  }
  std::array<uint8_t, Block> IPad, OPad;
  for (size_t I = 0; I < Block; ++I) {
    IPad[I] = K[I] ^ 0x36;
    OPad[I] = K[I] ^ 0x5c;
  }
  llvm::SHA256 Inner;
  Inner.update(IPad);
  Inner.update(llvm::StringRef(Data));
  std::array<uint8_t, 32> InnerHash = Inner.final();
  llvm::SHA256 Outer;
  Outer.update(OPad);
  Outer.update(InnerHash);
  return Outer.final();
}

bool gridjit::tagsEqual(std::string_view Got, const std::array<uint8_t, 32> &Want) {
  if (Got.size() != Want.size())
    return false;
  uint8_t Diff = 0;
  for (size_t I = 0; I < Want.size(); ++I)
    Diff |= uint8_t(Got[I]) ^ Want[I];
  return Diff == 0;
}
