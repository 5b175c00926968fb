//===- LoweringRegistry.cpp - Per-target table of op lowerings ------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Lower/LoweringRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Casting.h"

using namespace gridjit;

namespace {
struct OpRow {
  Op O;
  std::string_view Name;
};
constexpr OpRow OpNames[] = {
#define GRIDJIT_X(Id, Name) {Op::Id, Name},
    GRIDJIT_CORE_OPS(GRIDJIT_X)
#undef GRIDJIT_X
#define GRIDJIT_BUILTIN_VALUE(Id, Spelling, Dims, Varies) {Op::Id, Spelling},
#define GRIDJIT_BUILTIN_FUNC(Id, Spelling, Shape, Types, Effect) {Op::Builtin##Id, Spelling},
#include "gridjit/IR/Builtins.def"
};
static_assert(std::size(OpNames) == NumOps, "every op needs a name");
constexpr bool namesInOpOrder() {
  for (unsigned I = 0; I < std::size(OpNames); ++I)
    if (static_cast<unsigned>(OpNames[I].O) != I)
      return false;
  return true;
}
static_assert(namesInOpOrder(), "OpNames[i] must name Op i");
} // namespace

std::string_view gridjit::opName(Op O) { return OpNames[static_cast<unsigned>(O)].Name; }

Op gridjit::opFor(BinaryOp B) {
  switch (B) {
  case BinaryOp::Add:
    return Op::Add;
  case BinaryOp::Sub:
    return Op::Sub;
  case BinaryOp::Mul:
    return Op::Mul;
  case BinaryOp::Div:
    return Op::Div;
  case BinaryOp::Rem:
    return Op::Rem;
  case BinaryOp::Shl:
    return Op::Shl;
  case BinaryOp::Shr:
    return Op::Shr;
  case BinaryOp::And:
    return Op::And;
  case BinaryOp::Or:
    return Op::Or;
  case BinaryOp::Xor:
    return Op::Xor;
  case BinaryOp::Eq:
    return Op::Eq;
  case BinaryOp::Ne:
    return Op::Ne;
  case BinaryOp::Lt:
    return Op::Lt;
  case BinaryOp::Le:
    return Op::Le;
  case BinaryOp::Gt:
    return Op::Gt;
  case BinaryOp::Ge:
    return Op::Ge;
  case BinaryOp::LAnd:
  case BinaryOp::LOr:
    break;
  }
  llvm_unreachable("short-circuit operators are control flow, not ops");
}

Op gridjit::opFor(UnaryOp U) {
  switch (U) {
  case UnaryOp::Neg:
    return Op::Neg;
  case UnaryOp::Not:
    return Op::Not;
  case UnaryOp::BitNot:
    return Op::BitNot;
  case UnaryOp::AddrOf:
    return Op::ElementAddr;
  }
  llvm_unreachable("unknown unary operator");
}

Op gridjit::opFor(BuiltinValue V) {
  switch (V) {
#define GRIDJIT_BUILTIN_VALUE(Id, Spelling, Dims, Varies)                                          \
  case BuiltinValue::Id:                                                                           \
    return Op::Id;
#include "gridjit/IR/Builtins.def"
  case BuiltinValue::None:
    break;
  }
  llvm_unreachable("not a builtin value");
}

Op gridjit::opFor(BuiltinFunc F) {
  switch (F) {
#define GRIDJIT_BUILTIN_FUNC(Id, Spelling, Shape, Types, Effect)                                   \
  case BuiltinFunc::Id:                                                                            \
    return Op::Builtin##Id;
#include "gridjit/IR/Builtins.def"
  case BuiltinFunc::None:
    break;
  }
  llvm_unreachable("not a builtin function");
}

llvm::Error LoweringRegistry::add(Op O, LowerFn Fn, unsigned Version) {
  if (isFrozen())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "lowering registry of target '%s' is frozen: cannot "
                                   "register a lowering for '%s' after construction",
                                   TargetName.c_str(), std::string(opName(O)).c_str());
  Entry &E = Entries[static_cast<unsigned>(O)];
  if (E.Fn)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "target '%s' registers two lowerings for '%s'",
                                   TargetName.c_str(), std::string(opName(O)).c_str());
  E.Fn = Fn;
  E.Version = Version;
  return llvm::Error::success();
}

llvm::Error LoweringRegistry::addAll(llvm::ArrayRef<LoweringEntry> Table, llvm::ArrayRef<Op> Omit) {
  for (const LoweringEntry &E : Table) {
    if (llvm::is_contained(Omit, E.O))
      continue;
    if (llvm::Error Err = add(E.O, E.Fn, E.Version))
      return Err;
  }
  return llvm::Error::success();
}

std::vector<Op> LoweringRegistry::missing() const {
  std::vector<Op> Ops;
  for (unsigned I = 0; I < NumOps; ++I)
    if (!Entries[I].Fn)
      Ops.push_back(static_cast<Op>(I));
  return Ops;
}

std::string LoweringRegistry::fingerprint() const {
  llvm::BLAKE3 Hasher;
  auto AddText = [&](std::string_view S) {
    Hasher.update(llvm::StringRef(S.data(), S.size()));
    Hasher.update(llvm::StringRef("\0", 1));
  };
  AddText(TargetName);
  for (unsigned I = 0; I < NumOps; ++I) {
    AddText(OpNames[I].Name);
    AddText(Entries[I].Fn ? std::to_string(Entries[I].Version) : "absent");
  }
  auto Digest = Hasher.final();
  return llvm::toHex(Digest, /*LowerCase=*/true);
}

MemoryRef gridjit::memoryOf(const VarDecl &V) {
  MemoryRef R;
  R.Space = V.Ty.isArray() || V.Ty.isPointer() ? V.Ty.getAddrSpace()
            : V.Storage == StorageKind::Shared ? AddrSpace::Shared // a shared scalar
                                               : AddrSpace::Global;
  R.Extent = V.Ty.isArray() ? V.Ty.getArrayElementCount() : 0;
  R.Var = &V;
  return R;
}

MemoryRef gridjit::memoryOf(const Expr &E) {
  // An element is in its base's memory; so is what `&b[i]` and `p + k`
  // point to.
  if (const auto *Ix = llvm::dyn_cast<IndexExpr>(&E))
    return memoryOf(*Ix->Base);
  // A field of an element (`p[i].key`) is in the element's memory.
  if (const auto *M = llvm::dyn_cast<MemberExpr>(&E); M && M->IsField)
    return memoryOf(*M->Base);
  if (const auto *U = llvm::dyn_cast<UnaryExpr>(&E); U && U->Op == UnaryOp::AddrOf)
    return memoryOf(*U->Operand);
  if (const auto *B = llvm::dyn_cast<BinaryExpr>(&E);
      B && (B->Op == BinaryOp::Add || B->Op == BinaryOp::Sub) && B->LHS->Ty.isPointer())
    return memoryOf(*B->LHS);
  if (const auto *N = llvm::dyn_cast<NameExpr>(&E);
      N && N->Decl &&
      (N->Decl->Ty.isArray() || N->Decl->Ty.isPointer() || N->Decl->Storage == StorageKind::Shared))
    return memoryOf(*N->Decl);
  MemoryRef R;
  if (E.Ty.isPointer() || E.Ty.isArray())
    R.Space = E.Ty.getAddrSpace();
  return R;
}
