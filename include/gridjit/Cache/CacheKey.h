//===- CacheKey.h - The content hash that names a compiled module -*- C++ -*-===//
//
// Part of gridjit. A cache key is a BLAKE3 digest of everything that can
// change the artifact a compile produces: the canonical print of the
// verified module (so spacing, comments and number spellings do not
// matter; for a target whose artifacts embed source positions, the host
// target, also the module's name and exact text), the target, its
// architecture and features, its lowering registry, the libraries it links
// (libdevice), the compile options, the gridjit and LLVM versions and
// build, and the cache format version. docs/Cache.md lists the components
// and how each is encoded.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_CACHEKEY_H
#define GRIDJIT_CACHE_CACHEKEY_H

#include "gridjit/IR/AST.h"
#include "gridjit/Target/Target.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gridjit {

/// The version of the on-disk entry format *and* of the key's encoding.
/// Bump it whenever either changes: old entries then simply miss.
/// 2: KernelInfo::StackBytes. 3: KernelInfo::Prints (and the host ABI 2)
/// and the module's constant memory.
constexpr uint32_t CacheFormatVersion = 3;

/// gridjit's version (CMake's PROJECT_VERSION, e.g. "0.1.0").
std::string_view getGridjitVersion();
/// LLVM's version gridjit was built with (LLVM_VERSION_STRING, "19.1.7").
std::string_view getLLVMVersion();
/// The GNU build id (hex) of the binary that contains gridjit's code
/// (libgridjit.so, or the executable when gridjit is linked statically):
/// it changes whenever gridjit is rebuilt with any change, so a developer's
/// rebuilt library never reuses artifacts of the old one even when the
/// version number is unchanged. Empty when the binary has none. Computed
/// once per process.
std::string_view getGridjitBuildId();

/// A 256-bit BLAKE3 digest. Compared, hashed and printed by value.
struct CacheKey {
  std::array<uint8_t, 32> Bytes{};

  /// 64 lower-case hex digits.
  std::string hex() const;
  /// Parses hex(); false if \p Hex is not 64 hex digits.
  static bool fromHex(std::string_view Hex, CacheKey &Out);

  friend bool operator==(const CacheKey &A, const CacheKey &B) { return A.Bytes == B.Bytes; }
  friend bool operator!=(const CacheKey &A, const CacheKey &B) { return !(A == B); }
  friend bool operator<(const CacheKey &A, const CacheKey &B) { return A.Bytes < B.Bytes; }
};

/// Every component of a key, as strings. computeCacheKey hashes each as a
/// (name, length, bytes) record in this order, so no two different inputs
/// can run together into the same byte stream.
struct CacheKeyInputs {
  uint32_t FormatVersion = CacheFormatVersion;
  std::string GridjitVersion; ///< getGridjitVersion()
  std::string GridjitBuild;   ///< getGridjitBuildId()
  std::string LLVMVersion;    ///< getLLVMVersion()
  std::string TargetName;     ///< Target::getName()
  std::string Arch;           ///< Target::getArch()
  /// Target::getFingerprint(): registry, architecture and features, linked
  /// libraries (libdevice's content).
  std::string TargetFingerprint;
  /// LoweringRegistry::fingerprint(), also included on its own so that a
  /// target whose fingerprint forgets it still keys correctly.
  std::string RegistryFingerprint;
  /// The compile options, encoded by encodeCompileOptions().
  std::string Options;
  /// printModule() of the verified module.
  std::string CanonicalModule;
  /// getSourceIdentity(): empty for a target whose artifacts do not embed
  /// source positions, and then no record is hashed for it (such keys are
  /// what they were before the record existed).
  std::string SourceIdentity;
};

/// For a target whose artifacts embed source positions
/// (Target::embedsSourcePositions(), the host target): 64 hex digits, a
/// BLAKE3 of \p M's Name and exact Source text, which together fix every
/// position a parsed module's artifact names (file, line, column, source
/// line). Empty for any other target. Positions set by hand in a module
/// built in memory, which its Source does not determine, are not covered.
std::string getSourceIdentity(const Target &T, const Module &M);
/// The inputs for compiling verified \p M for \p T with \p Opts, with this
/// build's versions filled in.
CacheKeyInputs makeCacheKeyInputs(const Target &T, const CompileOptions &Opts, const Module &M);
/// Every field of CompileOptions, as "name=value;" records.
std::string encodeCompileOptions(const CompileOptions &Opts);
/// BLAKE3 over \p In (see CacheKeyInputs).
CacheKey computeCacheKey(const CacheKeyInputs &In);

} // namespace gridjit

template <> struct std::hash<gridjit::CacheKey> {
  size_t operator()(const gridjit::CacheKey &K) const noexcept {
    size_t H;
    static_assert(sizeof(H) <= sizeof(K.Bytes));
    std::memcpy(&H, K.Bytes.data(), sizeof(H));
    return H; // the bytes are a cryptographic hash already
  }
};

#endif // GRIDJIT_CACHE_CACHEKEY_H
