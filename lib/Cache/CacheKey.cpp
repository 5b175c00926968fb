//===- CacheKey.cpp - The content hash that names a compiled module -------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/IR/Printer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#ifndef GRIDJIT_VERSION_STRING
#error "lib/CMakeLists.txt defines GRIDJIT_VERSION_STRING (PROJECT_VERSION)"
#endif

using namespace gridjit;

std::string_view gridjit::getGridjitVersion() { return GRIDJIT_VERSION_STRING; }
std::string_view gridjit::getLLVMVersion() { return LLVM_VERSION_STRING; }

namespace {

/// What findBuildId looks for and what it found.
struct BuildIdSearch {
  uintptr_t Base;  ///< load address of the object that contains this code
  std::string Hex; ///< its NT_GNU_BUILD_ID, hex
};

/// dl_iterate_phdr callback: in the object loaded at Search->Base, reads
/// the GNU build-id note of its PT_NOTE segments.
int findBuildId(struct dl_phdr_info *Info, size_t, void *Data) {
  auto *Search = static_cast<BuildIdSearch *>(Data);
  if (Info->dlpi_addr != Search->Base)
    return 0;
  for (unsigned I = 0; I < Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type != PT_NOTE)
      continue;
    const char *Note = reinterpret_cast<const char *>(Info->dlpi_addr + P.p_vaddr);
    const char *End = Note + P.p_memsz;
    while (Note + sizeof(ElfW(Nhdr)) <= End) {
      const auto *N = reinterpret_cast<const ElfW(Nhdr) *>(Note);
      size_t NameSize = (N->n_namesz + 3) & ~size_t(3);
      size_t DescSize = (N->n_descsz + 3) & ~size_t(3);
      const char *Name = Note + sizeof(ElfW(Nhdr));
      const char *Desc = Name + NameSize;
      if (Desc + DescSize > End)
        break;
      if (N->n_type == NT_GNU_BUILD_ID && N->n_namesz == 4 && std::memcmp(Name, "GNU", 4) == 0) {
        Search->Hex = llvm::toHex(
            llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Desc), N->n_descsz),
            /*LowerCase=*/true);
        return 1;
      }
      Note = Desc + DescSize;
    }
  }
  return 1; // the right object, without a build id
}

std::string readOwnBuildId() {
  Dl_info DI;
  if (!dladdr(reinterpret_cast<const void *>(&readOwnBuildId), &DI) || !DI.dli_fbase)
    return "";
  // dlpi_addr is the load bias; dli_fbase the address of the ELF header.
  // For the position-independent objects gridjit is built into, the first
  // PT_LOAD has p_vaddr 0 and the two are equal; for a non-PIE static
  // executable the bias is 0.
  BuildIdSearch S{reinterpret_cast<uintptr_t>(DI.dli_fbase), ""};
  dl_iterate_phdr(findBuildId, &S);
  if (S.Hex.empty()) {
    S.Base = 0;
    dl_iterate_phdr(findBuildId, &S);
  }
  return S.Hex;
}

void addRecord(llvm::BLAKE3 &H, llvm::StringRef Name, llvm::StringRef Value) {
  uint8_t Len[8];
  llvm::support::endian::write64le(Len, Name.size());
  H.update(Len);
  H.update(Name);
  llvm::support::endian::write64le(Len, Value.size());
  H.update(Len);
  H.update(Value);
}

} // namespace

std::string_view gridjit::getGridjitBuildId() {
  // Immutable once initialised (C++ guarantees one thread-safe
  // initialisation); it describes the binary, which cannot change.
  static const std::string Id = readOwnBuildId();
  return Id;
}

std::string CacheKey::hex() const { return llvm::toHex(Bytes, /*LowerCase=*/true); }

bool CacheKey::fromHex(std::string_view Hex, CacheKey &Out) {
  if (Hex.size() != 64)
    return false;
  for (char C : Hex)
    if (!llvm::isDigit(C) && !(C >= 'a' && C <= 'f'))
      return false;
  std::string Bin = llvm::fromHex(llvm::StringRef(Hex));
  std::memcpy(Out.Bytes.data(), Bin.data(), 32);
  return true;
}

std::string gridjit::encodeCompileOptions(const CompileOptions &Opts) {
  // A new field of CompileOptions must be added here (and to docs/Cache.md);
  // this assertion trips when the struct grows so that it cannot be missed.
  static_assert(sizeof(CompileOptions) == sizeof(unsigned),
                "CompileOptions changed: add the new field to encodeCompileOptions");
  return "opt=" + std::to_string(Opts.OptLevel) + ";";
}

std::string gridjit::getSourceIdentity(const Target &T, const Module &M) {
  if (!T.embedsSourcePositions())
    return "";
  llvm::BLAKE3 H;
  addRecord(H, "name", M.Name);
  addRecord(H, "text", M.Source);
  return llvm::toHex(H.final(), /*LowerCase=*/true);
}

CacheKeyInputs gridjit::makeCacheKeyInputs(const Target &T, const CompileOptions &Opts,
                                           const Module &M) {
  CacheKeyInputs In;
  In.GridjitVersion = std::string(getGridjitVersion());
  In.GridjitBuild = std::string(getGridjitBuildId());
  In.LLVMVersion = std::string(getLLVMVersion());
  In.TargetName = std::string(T.getName());
  In.Arch = std::string(T.getArch());
  In.TargetFingerprint = T.getFingerprint();
  In.RegistryFingerprint = T.getRegistryFingerprint();
  In.Options = encodeCompileOptions(Opts);
  In.CanonicalModule = printModule(M);
  In.SourceIdentity = getSourceIdentity(T, M);
  return In;
}

CacheKey gridjit::computeCacheKey(const CacheKeyInputs &In) {
  llvm::BLAKE3 H;
  addRecord(H, "gridjit-cache-key", std::to_string(In.FormatVersion));
  addRecord(H, "gridjit-version", In.GridjitVersion);
  addRecord(H, "gridjit-build", In.GridjitBuild);
  addRecord(H, "llvm-version", In.LLVMVersion);
  addRecord(H, "target", In.TargetName);
  addRecord(H, "arch", In.Arch);
  addRecord(H, "target-fingerprint", In.TargetFingerprint);
  addRecord(H, "registry-fingerprint", In.RegistryFingerprint);
  addRecord(H, "options", In.Options);
  addRecord(H, "module", In.CanonicalModule);
  if (!In.SourceIdentity.empty())
    addRecord(H, "source", In.SourceIdentity);
  CacheKey K;
  K.Bytes = H.final();
  return K;
}
