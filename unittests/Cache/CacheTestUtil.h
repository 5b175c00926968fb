//===- CacheTestUtil.h - Helpers for the cache and compiler tests -*- C++ -*-===//
//
// Part of gridjit. The cache and compiler tests' helpers, in the one helper
// namespace of the unit tests (TestSupport.h).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_CACHE_CACHETESTUTIL_H
#define GRIDJIT_UNITTESTS_CACHE_CACHETESTUTIL_H

#include "TestSupport.h"

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>
#include <memory>
#include <string>

namespace gridjit::test {

/// A fresh directory, removed with everything in it at the end of the test.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> P;
    if (std::error_code EC = llvm::sys::fs::createUniqueDirectory("gridjit-cache-test", P))
      ADD_FAILURE() << "cannot create a temp dir: " << EC.message();
    Path = std::string(P);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path, /*IgnoreErrors=*/true); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return Path; }
  std::string file(llvm::StringRef Name) const { return Path + "/" + Name.str(); }

private:
  std::string Path;
};

/// One NVPTX target (sm_80) shared by the tests of a binary (targets are
/// immutable and thread-safe).
inline std::shared_ptr<const Target> nvptxTarget() {
  static std::shared_ptr<const Target> T = [] {
    auto R = createNVPTXTarget();
    if (!R) {
      ADD_FAILURE() << llvm::toString(R.takeError());
      return std::shared_ptr<const Target>();
    }
    return std::shared_ptr<const Target>(std::move(*R));
  }();
  return T;
}

/// The host target for this machine, or null (with the reason in \p Why)
/// when this build cannot make one.
inline std::shared_ptr<const Target> hostTarget(std::string *Why = nullptr) {
  auto R = createHostTarget();
  if (!R) {
    std::string Msg = llvm::toString(R.takeError());
    if (Why)
      *Why = Msg;
    return nullptr;
  }
  return std::shared_ptr<const Target>(std::move(*R));
}

/// A Compiler over \p Targets (default: NVPTX) with its disk cache in \p Dir
/// (empty: no disk cache) and warnings collected in \p Warnings.
inline std::unique_ptr<Compiler>
makeCompiler(const std::string &Dir, std::vector<std::string> *Warnings = nullptr,
             std::vector<std::shared_ptr<const Target>> Targets = {}) {
  CompilerOptions O;
  O.Targets = Targets.empty() ? std::vector<std::shared_ptr<const Target>>{nvptxTarget()}
                              : std::move(Targets);
  O.UseDiskCache = !Dir.empty();
  O.CacheDir = Dir;
  O.Warning = [Warnings](const std::string &W) {
    if (Warnings)
      Warnings->push_back(W);
  };
  auto C = Compiler::create(std::move(O));
  if (!C) {
    ADD_FAILURE() << llvm::toString(C.takeError());
    return nullptr;
  }
  return std::move(*C);
}

/// Kernel number \p I of a family of small, distinct kernels (no libdevice
/// math, so they compile on any machine).
inline std::string makeKernel(unsigned I) {
  std::string N = std::to_string(I);
  return "kernel k" + N +
         "(n: i32, x: ptr<f32>, y: ptr<f32>) {\n"
         "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
         "  if i < n {\n"
         "    y[i] = x[i] * " +
         N + ".5 + " + std::to_string(I % 7) +
         ".0;\n"
         "  }\n"
         "}\n";
}

/// The text of examples/\p Name.
inline std::string readExample(llvm::StringRef Name) {
  auto Buf =
      llvm::MemoryBuffer::getFile(std::string(GRIDJIT_SOURCE_DIR) + "/examples/" + Name.str());
  if (!Buf) {
    ADD_FAILURE() << "cannot read examples/" << Name.str();
    return "";
  }
  return (*Buf)->getBuffer().str();
}

/// A cache key made from \p Tag and \p I (the BLAKE3 digest of both), for
/// tests that store artifacts under keys of their own.
inline CacheKey testKey(llvm::StringRef Tag, unsigned I) {
  auto H = llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(Tag.str() + std::to_string(I)));
  CacheKey K;
  std::memcpy(K.Bytes.data(), H.data(), K.Bytes.size());
  return K;
}

/// Reads a whole file; "" when it cannot.
inline std::string readFile(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

inline void writeFile(const std::string &Path, llvm::StringRef Data) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  ASSERT_FALSE(EC) << Path << ": " << EC.message();
  OS << Data;
}

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_CACHE_CACHETESTUTIL_H
