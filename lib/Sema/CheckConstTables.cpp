//===- CheckConstTables.cpp - Constant tables and constant memory ---------===//
//
// Part of gridjit. The module-level arrays that kernels only read: a
// constant table (`const W: [f32; 5] = [...];`, its elements folded here)
// and constant memory (`constant FILTER: [f32; 17];`, which the host sets
// before a launch). Both live in AddrSpace::Constant (LangRef, "Constant
// tables and constant memory").
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "gridjit/Support/Limits.h"

using namespace gridjit;
using namespace gridjit::sema;

namespace {
/// "const table 'W'" or "constant memory 'FILTER'", for messages.
std::string describe(const ConstDecl &C) {
  return (C.isConstantMemory() ? "constant memory " : "table ") + quote(C.Var.Name);
}
} // namespace

// The array's type: sized in every dimension, folded, moved to
// AddrSpace::Constant, and within the bytes a GPU's constant bank holds.
void Checker::checkTableType(ConstDecl &C) {
  VarDecl &V = C.Var;
  SourceLoc Loc = V.Loc.isValid() ? V.Loc : C.getLoc();
  bool Bad = false;
  if (V.Ty.getAggregate()) {
    // The runtime, the cache and every API that sets constant memory
    // describe its elements as scalars (ConstantInfo).
    error(Loc, describe(C) + " must hold scalars, found " + quote(V.Ty) +
                   "; structs and vector types are not allowed in tables and constant memory "
                   "(keep each field in an array of its own)");
    Bad = true;
  } else if (!V.Ty.isArray()) {
    // Only constant memory gets here with a scalar type.
    error(Loc, "constant memory " + quote(V.Name) + " must be an array, found " + quote(V.Ty) +
                   "; one value is a one-element array, '[" + V.Ty.str() + "; 1]'");
    Bad = true;
  } else if (!V.ArraySize && V.Ty.getArrayCount() == 0) {
    error(Loc, describe(C) + " must have a size, as in '[" +
                   std::string(scalarName(V.Ty.getScalarKind())) + "; 16]'");
    Bad = true;
  } else if (!foldArrayDims(V)) {
    Bad = true;
  } else if (V.Ty.getSizeInBytes() > limits::MaxConstantBytes) {
    error(Loc, describe(C) + " of type " + quote(V.Ty) + " takes " +
                   std::to_string(V.Ty.getSizeInBytes()) + " bytes; the limit is " +
                   std::to_string(limits::MaxConstantBytes) +
                   " for all of a module's tables and constant memory together (a GPU's "
                   "constant bank)");
    Bad = true;
  }
  if (Bad) {
    BadDecls.insert(&V);
    return;
  }
  V.Ty = V.Ty.withArrayAddrSpace(AddrSpace::Constant);
}

// A table's initializer: one list per row, each as long as its dimension,
// each element a constant expression of the element type, folded.
void Checker::checkTable(ConstDecl &C) {
  SourceLoc NameLoc = C.Var.Loc.isValid() ? C.Var.Loc : C.getLoc();
  if (C.isConstantMemory())
    return; // nothing to fold: the host sets it
  if (!C.Table) {
    if (C.Init)
      error(startLoc(C.Init), "table " + quote(C.Var.Name) +
                                  " is initialized with the list of its elements, as in "
                                  "'[1.0, 2.0]'");
    else
      error(NameLoc, "const " + quote(C.Var.Name) + " needs an initializer");
    return;
  }
  if (BadDecls.contains(&C.Var))
    return;
  const Type &Ty = C.Var.Ty;
  Type ElemTy = Type::getScalar(Ty.getScalarKind());
  unsigned Rank = Ty.getArrayRank();
  std::vector<ConstValue> Values;
  Values.reserve(Ty.getArrayElementCount());
  bool Bad = false;
  auto Walk = [&](auto &Self, ArrayInit &List, unsigned Dim) -> void {
    bool WantRows = Dim + 1 < Rank;
    size_t Count = WantRows ? List.Rows.size() : List.Elems.size();
    if ((WantRows ? !List.Elems.empty() : !List.Rows.empty()) || Count != Ty.getArrayDim(Dim)) {
      std::string What =
          Dim == 0 ? "table " + quote(C.Var.Name) : "a row of table " + quote(C.Var.Name);
      std::string Want = std::to_string(Ty.getArrayDim(Dim)) + (WantRows ? " rows" : " elements");
      if (WantRows && !List.Elems.empty())
        error(List.Loc, What + " needs " + Want + " (lists of " +
                            std::to_string(Ty.getArrayDim(Dim + 1)) + "), found elements");
      else if (!WantRows && !List.Rows.empty())
        error(List.Loc, What + " needs " + Want + ", found a list");
      else
        error(List.Loc, What + " of type " + quote(Ty) + " needs " + Want + ", found " +
                            std::to_string(Count));
      Bad = true;
      return;
    }
    for (ArrayInit &Row : List.Rows)
      Self(Self, Row, Dim + 1);
    for (ExprPtr &E : List.Elems) {
      if (const Expr *NonConst = findNonConstantNode(E.get())) {
        error(startLoc(NonConst),
              notConstantMessage("element of table " + quote(C.Var.Name), *NonConst));
        Bad = true;
        continue;
      }
      Type T = checkValue(E.get(), List.Loc, ElemTy);
      if (!T.isValid()) {
        Bad = true;
        continue;
      }
      if (T != ElemTy) {
        error(startLoc(E), "an element of table " + quote(C.Var.Name) + " must be " +
                               quote(ElemTy) + ", found " + quote(T));
        Bad = true;
        continue;
      }
      ConstValue V;
      const Expr *Culprit = nullptr;
      FoldStatus S = fold(*E, V, Culprit, /*Required=*/true);
      if (S != FoldStatus::Constant) {
        if (S == FoldStatus::NotConstant)
          error(startLoc(Culprit),
                notConstantMessage("element of table " + quote(C.Var.Name), *Culprit));
        Bad = true;
        continue;
      }
      Values.push_back(V);
    }
  };
  Walk(Walk, *C.Table, 0);
  if (Bad)
    BadDecls.insert(&C.Var);
  else
    C.TableValues = std::move(Values);
}

// All of a module's tables and constant memory share the GPU's constant
// bank: checked once every const is.
void Checker::checkConstantBytes() {
  uint64_t Total = 0;
  for (auto &D : M.Decls) {
    auto *C = dyn_cast_or_null<ConstDecl>(D.get());
    if (!C || !C->Var.Ty.isArray() || BadDecls.contains(&C->Var))
      continue;
    Total += C->Var.Ty.getSizeInBytes();
    if (Total > limits::MaxConstantBytes) {
      error(C->Var.Loc.isValid() ? C->Var.Loc : C->getLoc(),
            "the module's tables and constant memory take more than " +
                std::to_string(limits::MaxConstantBytes) + " bytes with " + describe(*C) +
                " (a GPU's constant bank)");
      return;
    }
  }
}

bool Checker::checkWritable(const IndexExpr &I, llvm::StringRef Action) {
  const NameExpr *Root = indexedName(I);
  const VarDecl *V = Root ? Root->Decl : nullptr;
  if (!V || (V->Storage != StorageKind::Const && V->Storage != StorageKind::Constant))
    return true;
  if (V->Storage == StorageKind::Const)
    error(startLoc(&I),
          "cannot " + Action + " an element of table " + quote(V->Name) + ": a table is read-only");
  else
    error(startLoc(&I), "cannot " + Action + " an element of constant memory " + quote(V->Name) +
                            ": kernels only read it; the host sets it before a launch");
  return false;
}
