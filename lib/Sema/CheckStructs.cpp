//===- CheckStructs.cpp - Structs and vector types ------------------------===//
//
// Part of gridjit. The verifier's rules for struct declarations, struct
// literals and constructors, and fields of structs and lanes of vectors
// (docs/LangRef.md, "Structs" and "Vector types").
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/ADT/StringSet.h"

using namespace gridjit;
using namespace gridjit::sema;

// A field is a scalar other than bool (whose size C leaves open, and which
// is a register's i1 here), a vector, or a struct declared before; never
// the struct itself, a pointer or an array.
void Checker::checkStructDecls() {
  for (auto &D : M.Decls) {
    auto *S = dyn_cast_or_null<StructDecl>(D.get());
    if (!S)
      continue;
    Aggregate &A = S->Agg;
    SourceLoc NameLoc = S->NameLoc.isValid() ? S->NameLoc : S->getLoc();
    if (scalarFromName(A.Name) || lookupVectorType(A.Name) || A.Name == "ptr")
      error(NameLoc, "cannot declare struct " + quote(A.Name) + ": it is a type's name");
    if (A.Fields.empty())
      error(NameLoc, "struct " + quote(A.Name) + " has no fields");
    llvm::StringSet<> Seen;
    for (size_t I = 0; I < A.Fields.size(); ++I) {
      AggregateField &F = A.Fields[I];
      SourceLoc L = I < S->FieldLocs.size() ? S->FieldLocs[I] : NameLoc;
      if (!Seen.insert(F.Name).second)
        error(L, "duplicate field " + quote(F.Name) + " in struct " + quote(A.Name));
      if (F.Ty.getAggregate() == &A) {
        error(L, "struct " + quote(A.Name) + " cannot contain itself (field " + quote(F.Name) +
                     "); a field is a scalar, a vector or a struct declared before");
        F.Ty = Type::getScalar(ScalarKind::U8); // keeps the layout finite
      } else if (!(F.Ty.isScalar() && !F.Ty.isBool()) && !F.Ty.isStruct()) {
        error(L, "field " + quote(F.Name) + " of struct " + quote(A.Name) + " cannot have type " +
                     quote(F.Ty) + "; a field is a scalar other than bool, a vector or a struct");
        F.Ty = Type::getScalar(ScalarKind::U8);
      }
    }
    A.layOut();
  }
}

const Aggregate *Checker::aggregateNamed(llvm::StringRef Name) const {
  if (auto *S = dyn_cast_or_null<StructDecl>(ModuleNames.lookup(Name)))
    return &S->Agg;
  return lookupVectorType(std::string_view(Name.data(), Name.size()));
}

SourceLoc Checker::fieldNameLoc(const MemberExpr &Mem) {
  SourceLoc L = Mem.getLoc();
  if (L.isValid())
    ++L.Col;
  return L;
}

bool Checker::isFieldAccess(MemberExpr &Mem) {
  if (auto *N = dyn_cast_or_null<NameExpr>(Mem.Base.get())) {
    Resolved R = resolveName(N->Ident);
    if (!R.Var)
      return false; // a builtin (`thread_idx.x`), or an error checkMember reports
    return R.Var->Ty.isStruct() || Mem.Field > 2;
  }
  // Any other base is an expression: a field unless the name is one a
  // builtin could have, where checkMember's message says more.
  return Mem.Base && (Mem.Field > 2 || !isa<NameExpr>(*Mem.Base));
}

Type Checker::checkField(MemberExpr &Mem) {
  Type BaseTy;
  if (auto *N = dyn_cast_or_null<NameExpr>(Mem.Base.get()))
    BaseTy = checkName(*N, /*AllowArray=*/false);
  else
    BaseTy = checkValue(Mem.Base.get(), Mem.getLoc());
  if (!BaseTy.isValid())
    return Type();
  std::string Name =
      Mem.FieldName.empty() && Mem.Field < 4 ? std::string(1, "xyzw"[Mem.Field]) : Mem.FieldName;
  if (!BaseTy.isStruct()) {
    error(fieldNameLoc(Mem),
          "'." + Name + "' needs a struct or vector value before it, found " + quote(BaseTy));
    return Type();
  }
  const Aggregate &A = *BaseTy.getAggregate();
  std::optional<unsigned> I = A.fieldIndex(Name);
  if (!I) {
    error(fieldNameLoc(Mem), quote(BaseTy) + " has no field " + quote(Name));
    return Type();
  }
  Mem.Field = *I;
  Mem.IsField = true;
  return A.Fields[*I].Ty;
}

Type Checker::checkFieldAssignTarget(MemberExpr &Mem, std::string &What) {
  // The root of `a.b.c` / `p[i].b`: a `var` name, or an element.
  Expr *Root = Mem.Base.get();
  while (auto *Inner = dyn_cast_or_null<MemberExpr>(Root))
    Root = Inner->Base.get();
  if (auto *N = dyn_cast_or_null<NameExpr>(Root)) {
    Resolved R = resolveName(N->Ident);
    if (R.Var && R.Var->Storage != StorageKind::Var && R.Var->Storage != StorageKind::Shared) {
      std::string Kind = R.Var->Storage == StorageKind::Let     ? "it is declared with 'let'"
                         : R.Var->Storage == StorageKind::Param ? "it is a parameter"
                                                                : "it is not a 'var'";
      error(startLoc(&Mem), "cannot assign to a field of " + quote(N->Ident) + ": " + Kind);
      checkField(Mem);
      return Type();
    }
  } else if (!llvm::isa_and_nonnull<IndexExpr>(Root)) {
    if (checkField(Mem).isValid())
      error(startLoc(&Mem), "cannot assign to a field of this expression; the target must be "
                            "a field of a 'var' or of an element");
    return Type();
  }
  What = "field " + quote(Mem.FieldName);
  return Mem.Ty = checkField(Mem);
}

Type Checker::checkConstruct(CallExpr &C, const Aggregate &A) {
  C.Construct = &A;
  Type T = Type::getStruct(&A);
  size_t N = A.Fields.size();
  if (C.FieldNames.empty()) {
    // Positional: `f32x4(a, b, c, d)`, `Node(1, 2.0)`.
    if (C.Args.size() != N) {
      error(C.getLoc(), arityMessage(C.Callee, N, C.Args.size()));
      for (ExprPtr &Arg : C.Args)
        checkValue(Arg.get(), C.getLoc());
      return Type();
    }
    bool OK = true;
    for (unsigned I = 0; I < N; ++I)
      OK &= checkArgAs(C, I, A.Fields[I].Ty).isValid();
    return OK ? T : Type();
  }
  // Named: every field exactly once, in any order; the arguments are put
  // in field order once they are right.
  std::vector<int> From(N, -1); // the argument that gives each field
  bool OK = true;
  for (size_t I = 0; I < C.Args.size(); ++I) {
    const std::string &Name = C.FieldNames[I];
    SourceLoc L = I < C.FieldLocs.size() ? C.FieldLocs[I] : C.getLoc();
    std::optional<unsigned> F = A.fieldIndex(Name);
    if (!F || From[*F] >= 0) {
      error(L, F ? "field " + quote(Name) + " is given twice"
                 : "struct " + quote(A.Name) + " has no field " + quote(Name));
      checkValue(C.Args[I].get(), C.getLoc());
      OK = false;
      continue;
    }
    From[*F] = static_cast<int>(I);
    Type FT = A.Fields[*F].Ty;
    Type VT = checkValue(C.Args[I].get(), C.getLoc(), FT);
    if (VT.isValid() && VT != FT)
      error(startLoc(C.Args[I]), "field " + quote(Name) + " of " + quote(A.Name) + " has type " +
                                     quote(FT) + ", found " + quote(VT));
    OK &= VT == FT;
  }
  std::string Missing;
  for (size_t I = 0; I < N; ++I)
    if (From[I] < 0)
      Missing += (Missing.empty() ? "" : ", ") + quote(A.Fields[I].Name);
  if (!Missing.empty()) {
    error(C.getLoc(), "struct literal of " + quote(A.Name) + " misses field" +
                          (Missing.find(',') == std::string::npos ? " " : "s ") + Missing);
    OK = false;
  }
  if (!OK)
    return Type();
  std::vector<ExprPtr> Args(N);
  std::vector<SourceLoc> Locs(N);
  for (size_t I = 0; I < N; ++I) {
    Args[I] = std::move(C.Args[From[I]]);
    Locs[I] = From[I] < static_cast<int>(C.FieldLocs.size()) ? C.FieldLocs[From[I]] : C.getLoc();
    C.FieldNames[I] = A.Fields[I].Name;
  }
  C.Args = std::move(Args);
  C.FieldLocs = std::move(Locs);
  return T;
}

Type Checker::vectorResult(BinaryOp Op, llvm::StringRef OpText, Type L, Type R, SourceLoc OpLoc) {
  Type Vec = L.isVector() ? L : R;
  bool IntLanes = Vec.getAggregate()->Fields[0].Ty.isInteger();
  bool OK =
      Op == BinaryOp::Add || Op == BinaryOp::Sub || Op == BinaryOp::Mul || Op == BinaryOp::Div ||
      (IntLanes &&
       (Op == BinaryOp::Rem || Op == BinaryOp::And || Op == BinaryOp::Or || Op == BinaryOp::Xor));
  if (!OK) {
    error(OpLoc, "operator " + quote(OpText) + " does not take " + quote(Vec) +
                     "; vectors take '+', '-', '*' and '/' lane by lane (and '%', '&', '|', "
                     "'^' on integer lanes)");
    return Type();
  }
  if (L != R) {
    error(OpLoc, "operands of " + quote(OpText) + " must have the same type, found " + quote(L) +
                     " and " + quote(R));
    return Type();
  }
  return L;
}
