//===- StackSizes.cpp - The stack a host kernel's code needs --------------===//
//
// Part of gridjit. See StackSizes.h. The `.stack_sizes` section holds one
// record per function: the function's address (a relocation against its
// symbol, or its section's symbol plus an addend, in a relocatable object)
// and its frame size as ULEB128. llvm-readobj --stack-sizes reads it the
// same way.
//
//===----------------------------------------------------------------------===//

#include "StackSizes.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/LEB128.h"

#include <map>
#include <utility>

using namespace gridjit;
using llvm::Expected;

namespace {

llvm::Error malformed(const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: the host object's stack sizes: " + Why);
}

} // namespace

Expected<llvm::StringMap<uint64_t>> host::readStackSizes(llvm::StringRef Object) {
  namespace obj = llvm::object;
  auto File = obj::ObjectFile::createObjectFile(llvm::MemoryBufferRef(Object, "host-object"));
  if (!File)
    return File.takeError();
  const auto *ELF = llvm::dyn_cast<obj::ELFObjectFileBase>(File->get());
  if (!ELF)
    return malformed("not an ELF object");

  // Every defined function, by its section and its address there.
  std::map<std::pair<uint64_t, uint64_t>, llvm::StringRef> Functions;
  for (const obj::SymbolRef &S : ELF->symbols()) {
    auto Type = S.getType();
    auto Sec = S.getSection();
    auto Addr = S.getAddress();
    auto Name = S.getName();
    if (!Type || !Sec || !Addr || !Name) {
      llvm::consumeError(Type.takeError());
      llvm::consumeError(Sec.takeError());
      llvm::consumeError(Addr.takeError());
      llvm::consumeError(Name.takeError());
      return malformed("a symbol cannot be read");
    }
    if (*Type == obj::SymbolRef::ST_Function && *Sec != ELF->section_end())
      Functions[{(*Sec)->getIndex(), *Addr}] = *Name;
  }

  llvm::StringMap<uint64_t> Sizes;
  const unsigned AddrBytes = ELF->getBytesInAddress();
  for (const obj::SectionRef &Rel : ELF->sections()) {
    auto Target = Rel.getRelocatedSection();
    if (!Target)
      return Target.takeError();
    if (*Target == ELF->section_end())
      continue;
    auto TargetName = (*Target)->getName();
    if (!TargetName)
      return TargetName.takeError();
    if (*TargetName != ".stack_sizes")
      continue;
    auto Contents = (*Target)->getContents();
    if (!Contents)
      return Contents.takeError();
    const auto *Begin = reinterpret_cast<const uint8_t *>(Contents->data());
    const auto *End = Begin + Contents->size();
    for (const obj::RelocationRef &R : Rel.relocations()) {
      uint64_t Offset = R.getOffset();
      if (Offset > Contents->size() || Contents->size() - Offset < AddrBytes)
        return malformed("a record outside the section");
      // The function's address: its symbol's plus the addend (RELA), or the
      // addend kept in the record itself (REL).
      int64_t Addend;
      auto A = obj::ELFRelocationRef(R).getAddend();
      if (A) {
        Addend = *A;
      } else {
        llvm::consumeError(A.takeError());
        Addend = AddrBytes == 8 ? int64_t(llvm::support::endian::read64le(Begin + Offset))
                                : int64_t(llvm::support::endian::read32le(Begin + Offset));
      }
      obj::symbol_iterator Sym = R.getSymbol();
      if (Sym == ELF->symbol_end())
        return malformed("a record without a symbol");
      auto SymSec = Sym->getSection();
      auto SymAddr = Sym->getAddress();
      if (!SymSec || !SymAddr || *SymSec == ELF->section_end()) {
        if (!SymSec)
          llvm::consumeError(SymSec.takeError());
        if (!SymAddr)
          llvm::consumeError(SymAddr.takeError());
        return malformed("a record's symbol cannot be read");
      }
      const char *Error = nullptr;
      unsigned Length = 0;
      uint64_t Size = llvm::decodeULEB128(Begin + Offset + AddrBytes, &Length, End, &Error);
      if (Error)
        return malformed(Error);
      auto It = Functions.find({(*SymSec)->getIndex(), *SymAddr + uint64_t(Addend)});
      if (It == Functions.end())
        return malformed("a record names no function");
      Sizes[It->second] = Size;
    }
  }
  return std::move(Sizes);
}
