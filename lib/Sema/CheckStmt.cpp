//===- CheckStmt.cpp - KIR verifier: statements and scopes ----------------===//
//
// Part of gridjit. Function bodies: lexical scopes (no shadowing, but a
// local may take a builtin's name), mutable parameters' copies,
// declarations and arrays, assignments, control flow, and the conservative
// "every path returns a value" rule for non-void functions.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "gridjit/Support/Limits.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <climits>

using namespace gridjit;
using namespace gridjit::sema;

//===----------------------------------------------------------------------===//
// Reachability
//===----------------------------------------------------------------------===//

/// True when \p S contains a `break` that leaves the loop \p S is the body
/// of (breaks inside nested loops leave those instead).
static bool containsBreak(const Stmt *S) {
  if (!S)
    return false;
  switch (S->getKind()) {
  case Stmt::Break:
    return true;
  case Stmt::Block:
    for (const StmtPtr &Child : cast<BlockStmt>(S)->Body)
      if (containsBreak(Child.get()))
        return true;
    return false;
  case Stmt::If: {
    const auto *I = cast<IfStmt>(S);
    return containsBreak(I->Then.get()) || containsBreak(I->Else.get());
  }
  default:
    return false;
  }
}

/// The conservative rule for "control cannot reach the end of \p S":
/// `return`; a block with such a statement; an `if` with an `else` whose
/// arms both qualify; `while true` without a `break` of its own. Nothing
/// else (in particular no `for`, and no other constant condition).
static bool alwaysReturns(const Stmt *S) {
  if (!S)
    return false;
  switch (S->getKind()) {
  case Stmt::Return:
    return true;
  case Stmt::Block:
    for (const StmtPtr &Child : cast<BlockStmt>(S)->Body)
      if (alwaysReturns(Child.get()))
        return true;
    return false;
  case Stmt::If: {
    const auto *I = cast<IfStmt>(S);
    return alwaysReturns(I->Then.get()) && alwaysReturns(I->Else.get());
  }
  case Stmt::While: {
    const auto *W = cast<WhileStmt>(S);
    const auto *Lit = dyn_cast_or_null<BoolLitExpr>(W->Cond.get());
    return Lit && Lit->Value && !containsBreak(W->Body.get());
  }
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

void Checker::declareLocal(const VarDecl &V) {
  if (!checkIdentifier(V.Name, V.Loc, /*Local=*/true) || Scopes.empty())
    return;
  auto &Inner = Scopes.back();
  if (Inner.count(V.Name)) {
    error(V.Loc, "redeclaration of " + quote(V.Name));
    return;
  }
  if (lookupLocal(V.Name) || ModuleNames.count(V.Name))
    error(V.Loc, quote(V.Name) + " shadows an earlier declaration");
  Inner[V.Name] = &V;
}

std::string Checker::hiddenBuiltinNote(llvm::StringRef Name, const VarDecl *V) const {
  if (!V || !isReservedBuiltinName(Name))
    return "";
  std::string Where;
  if (V->Loc.isValid())
    Where = " (declared at " + std::to_string(V->Loc.Line) + ":" + std::to_string(V->Loc.Col) + ")";
  return "; the local " + quote(Name) + Where + " hides the builtin";
}

// A mutable parameter is lowered through a `var` copy of it, made here
// (not by the parser, so that a module made with the builder API gets one
// too): the body's uses name the copy, which the targets treat as any
// `var`, so assigning a parameter needs nothing of them.
void Checker::declareParams(FunctionDecl &F) {
  std::vector<StmtPtr> *Body = F.Body ? &F.Body->Body : nullptr;
  if (Body) {
    auto IsCopy = [](const StmtPtr &S) {
      const auto *D = dyn_cast_or_null<DeclStmt>(S.get());
      return D && D->CopyOf;
    };
    Body->erase(Body->begin(), std::find_if_not(Body->begin(), Body->end(), IsCopy));
  }
  std::vector<StmtPtr> Copies;
  for (auto &P : F.Params) {
    if (!P)
      continue;
    if (!P->Mutable || !Body) {
      declareLocal(*P);
      continue;
    }
    auto Copy = std::make_unique<DeclStmt>(P->Loc);
    Copy->CopyOf = P.get();
    Copy->Var.Name = P->Name;
    Copy->Var.Ty = P->Ty;
    Copy->Var.Loc = P->Loc;
    Copy->Var.Storage = StorageKind::Var;
    auto Init = std::make_unique<NameExpr>(P->Loc, P->Name);
    Init->Decl = P.get();
    Init->Ty = P->Ty;
    Copy->Init = std::move(Init);
    if (BadDecls.contains(P.get()))
      BadDecls.insert(&Copy->Var);
    declareLocal(Copy->Var);
    Copies.push_back(std::move(Copy));
  }
  if (Body)
    Body->insert(Body->begin(), std::make_move_iterator(Copies.begin()),
                 std::make_move_iterator(Copies.end()));
}

//===----------------------------------------------------------------------===//
// Functions and blocks
//===----------------------------------------------------------------------===//

void Checker::checkFunctionBody(FunctionDecl &F) {
  CurFn = &F;
  LoopDepth = 0;
  if (F.IsKernel)
    CurReturnTy = F.ReturnTy.isVoid() ? F.ReturnTy : Type();
  else
    CurReturnTy = F.ReturnTy.isVoid() || F.ReturnTy.isScalar() ? F.ReturnTy : Type();

  Scopes.clear();
  pushScope();
  declareParams(F);

  llvm::StringRef What = F.IsKernel ? "kernel " : "function ";
  if (!F.Body) {
    error(F.getLoc(), "malformed module: " + What + quote(F.Name) + " has no body");
  } else {
    checkBlock(F.Body.get(), F.getLoc());
    checkDefiniteAssignment(F);
    if (CurReturnTy.isScalar() && !alwaysReturns(F.Body.get()))
      error(nameLoc(F),
            "function " + quote(F.Name) + " can reach its end without returning a value");
  }
  Scopes.clear();
  CurFn = nullptr;
}

void Checker::checkBlock(BlockStmt *B, SourceLoc ParentLoc) {
  if (!B) {
    error(ParentLoc, "malformed module: missing block");
    return;
  }
  pushScope();
  for (StmtPtr &S : B->Body)
    checkStmt(S.get(), B->getLoc());
  popScope();
}

void Checker::checkStmt(Stmt *S, SourceLoc ParentLoc) {
  if (!S) {
    error(ParentLoc, "malformed module: null statement");
    return;
  }
  switch (S->getKind()) {
  case Stmt::Decl:
    // A parameter's copy was checked and declared with the parameters.
    if (cast<DeclStmt>(S)->CopyOf)
      return;
    return checkDeclStmt(*cast<DeclStmt>(S));
  case Stmt::Assign:
    return checkAssign(*cast<AssignStmt>(S));
  case Stmt::If:
    return checkIf(*cast<IfStmt>(S));
  case Stmt::While:
    return checkWhile(*cast<WhileStmt>(S));
  case Stmt::For:
    return checkFor(*cast<ForStmt>(S));
  case Stmt::Break:
    if (!LoopDepth)
      error(S->getLoc(), "'break' outside of a loop");
    return;
  case Stmt::Continue:
    if (!LoopDepth)
      error(S->getLoc(), "'continue' outside of a loop");
    return;
  case Stmt::Return:
    return checkReturn(*cast<ReturnStmt>(S));
  case Stmt::ExprS:
    return checkExprStmt(*cast<ExprStmt>(S));
  case Stmt::Block:
    return checkBlock(cast<BlockStmt>(S), ParentLoc);
  }
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

static llvm::StringRef storageKeyword(StorageKind K) {
  switch (K) {
  case StorageKind::Let:
    return "let";
  case StorageKind::Var:
    return "var";
  case StorageKind::Shared:
    return "shared";
  default:
    return "?";
  }
}

void Checker::checkDeclStmt(DeclStmt &D) {
  VarDecl &V = D.Var;
  if (V.Storage != StorageKind::Let && V.Storage != StorageKind::Var &&
      V.Storage != StorageKind::Shared) {
    error(D.getLoc(), "malformed module: a declaration statement must be 'let', "
                      "'var' or 'shared'");
    BadDecls.insert(&V);
  }
  // A device function's `shared` declarations are static: one copy per
  // block of each kernel that calls it (lib/Target/SharedLayout.h).

  if (V.Ty.isArray()) {
    checkArrayDecl(D);
  } else if (V.TypeInferred && V.Storage != StorageKind::Shared) {
    checkInferredDecl(D);
  } else {
    Type T = V.Ty;
    if (V.Storage == StorageKind::Shared && !T.isScalar() && !T.isStruct()) {
      error(V.Loc, "shared " + quote(V.Name) +
                       " must be a scalar, a struct, a vector or an array, found " + quote(T));
      BadDecls.insert(&V);
      T = Type();
    } else if (V.Storage == StorageKind::Shared) {
      // A shared scalar is block memory, as a shared array is: no
      // initializer (every thread would run it), not zero-filled.
      if (D.Init && checkValue(D.Init.get(), D.getLoc(), T).isValid())
        error(startLoc(D.Init), "shared " + quote(V.Name) +
                                    " cannot have an initializer; assign it, as in 'if "
                                    "thread_idx.x == 0 { " +
                                    V.Name + " = ...; }' before sync_threads()");
      declareLocal(V);
      return;
    } else if (!T.isScalar() && !T.isPointer() && !T.isStruct()) {
      error(V.Loc, quote(V.Name) + " cannot have type " + quote(T));
      BadDecls.insert(&V);
      T = Type();
    }
    if (!D.Init) {
      // Assigned later: checkDefiniteAssignment checks every read (and
      // that a `let` is assigned once).
      if (V.Storage == StorageKind::Let)
        DeferredLets.insert(&V);
    } else {
      Type IT = checkValue(D.Init.get(), D.getLoc(), T);
      if (T.isValid() && IT.isValid() && T != IT)
        error(startLoc(D.Init), "cannot initialize " + quote(V.Name) + " of type " + quote(T) +
                                    " with a value of type " + quote(IT));
    }
  }
  // Declared after its initializer: `let x: i32 = x;` does not see itself.
  declareLocal(V);
}

// `let x = e;` and `var x = e;`: the type is the initializer's. An
// initializer made only of unsuffixed literals has no type of its own and
// takes the default one (i32, or f32 with a float literal), as a literal
// does wherever nothing gives it a type (docs/LangRef.md, "Literal types").
void Checker::checkInferredDecl(DeclStmt &D) {
  VarDecl &V = D.Var;
  V.Ty = Type();
  if (!D.Init) {
    error(V.Loc,
          "'" + storageKeyword(V.Storage) + " " + V.Name + "' needs a type or an initializer");
    BadDecls.insert(&V);
    return;
  }
  // A value is a scalar or a pointer (checkValue reports arrays and void).
  V.Ty = checkValue(D.Init.get(), D.getLoc());
  if (!V.Ty.isValid())
    BadDecls.insert(&V);
}

/// The largest element count of an array.
static constexpr uint64_t MaxArrayCount = INT32_MAX;

// An array size: a constant expression of any integer type, folded with
// overflow as an error, positive and at most MaxArrayCount. An untyped
// literal expression is folded as an i64, so that `[f32; 3000000000]`
// and `[f32; 65536 * 65536]` are reported as too large, not as literals
// that do not fit an i32.
std::optional<uint64_t> Checker::arraySize(Expr &Size) {
  Type T = checkValue(&Size, Size.getLoc(), Type::getScalar(ScalarKind::I64));
  if (!T.isValid())
    return std::nullopt;
  if (!T.isInteger()) {
    error(startLoc(&Size), "array size must be an integer, found " + quote(T));
    return std::nullopt;
  }
  ConstValue V;
  const Expr *Culprit = nullptr;
  switch (fold(Size, V, Culprit, /*Required=*/true)) {
  case FoldStatus::Failed:
    return std::nullopt;
  case FoldStatus::NotConstant:
    error(startLoc(Culprit), notConstantMessage("array size", *Culprit));
    return std::nullopt;
  case FoldStatus::Constant:
    break;
  }
  bool Negative = T.isSignedInteger() && static_cast<int64_t>(V.Int) < 0;
  std::string Text = Negative ? std::to_string(static_cast<int64_t>(V.Int)) : std::to_string(V.Int);
  if (Negative || V.Int == 0) {
    error(startLoc(&Size), "array size must be positive, found " + Text);
    return std::nullopt;
  }
  if (V.Int > MaxArrayCount) {
    error(startLoc(&Size),
          "array size " + Text + " is too large; the limit is " + std::to_string(MaxArrayCount));
    return std::nullopt;
  }
  return V.Int;
}

// Folds the size expressions of array \p V into its type (each dimension,
// outermost first, or the count in the type where the builder gave none),
// checking each is positive and the whole within MaxArrayCount elements.
// False after reporting an error.
bool Checker::foldArrayDims(VarDecl &V) {
  Type Elem = V.Ty.getPointeeType();
  bool Bad = false;
  // Every dimension, outermost first: its size expression folded, or
  // the count in the type where the builder gave none.
  unsigned Rank = V.Ty.getArrayRank();
  std::array<uint64_t, MaxArrayRank> Dims{};
  uint64_t Total = 1; // saturates above MaxArrayCount
  for (unsigned I = 0; I < Rank; ++I) {
    Dims[I] = V.Ty.getArrayDim(I);
    if (Expr *Size = arraySizeExpr(V, I)) {
      std::optional<uint64_t> Count = arraySize(*Size);
      Bad |= !Count;
      Dims[I] = Count.value_or(1);
    } else if (Dims[I] == 0 || Dims[I] > MaxArrayCount) {
      error(V.Loc, Dims[I] == 0
                       ? "array size must be positive, found 0"
                       : "array size " + std::to_string(Dims[I]) + " is too large; the limit is " +
                             std::to_string(MaxArrayCount));
      Bad = true;
    }
    Total = std::min(Total * std::min<uint64_t>(Dims[I], MaxArrayCount + 1), MaxArrayCount + 1);
  }
  if (!Bad && Total > MaxArrayCount) {
    // The limit is on the whole array, every dimension together.
    error(V.Loc, "array " + quote(V.Name) + " of type " +
                     quote(Type::getArray(Elem, std::span(Dims.data(), Rank))) + " has more than " +
                     std::to_string(MaxArrayCount) + " elements; the limit is " +
                     std::to_string(MaxArrayCount) + " in all");
    Bad = true;
  }
  if (!Bad)
    V.Ty = Type::getArray(Elem, std::span(Dims.data(), Rank));
  return !Bad;
}

// The size is a constant expression (arraySize); without one (the builder
// may leave it out) the count in the type is used, and 0 there is the
// unsized dynamic shared array.
void Checker::checkArrayDecl(DeclStmt &D) {
  VarDecl &V = D.Var;
  bool Bad = false;
  if (V.Storage == StorageKind::Let) {
    error(V.Loc, "'let' cannot declare an array; use 'var'");
    Bad = true;
  }
  if (D.Init)
    error(startLoc(D.Init), "array " + quote(V.Name) + " cannot have an initializer");

  if (V.ArraySize || V.Ty.getArrayCount() != 0) {
    Bad |= !foldArrayDims(V);
  } else if (V.Ty.getArrayCount() == 0) {
    // The dynamic shared array: `shared s: [T];`.
    if (V.Storage != StorageKind::Shared) {
      error(V.Loc, "only a 'shared' array may be unsized");
      Bad = true;
    } else if (V.Ty.getArrayRank() > 1) {
      error(V.Loc, "only a one-dimensional array may be unsized");
      Bad = true;
    }
    // Every dynamic shared array of a kernel names the same memory: the
    // start of the launch's dynamic shared bytes (CUDA's several `extern
    // __shared__` arrays), however many there are.
  }
  if (!Bad && CurFn && !CurFn->IsKernel && V.Storage == StorageKind::Var) {
    // A device function's arrays live on the stack of the thread that runs
    // the kernel, however large; a kernel's larger ones are placed
    // elsewhere by the target.
    uint64_t Bytes = V.Ty.getSizeInBytes();
    if (Bytes > limits::MaxStackArrayBytes) {
      Expr *Size = V.ArraySize.get();
      error(Size ? Size->getLoc() : V.Loc,
            "array " + quote(V.Name) + " of function " + quote(CurFn->Name) + " takes " +
                std::to_string(Bytes) + " bytes; the limit is " +
                std::to_string(limits::MaxStackArrayBytes) +
                " (a device function's arrays live on the stack of the thread that runs the "
                "kernel; a kernel may declare larger ones)");
      Bad = true;
    }
  }
  // The array's type says where it lives.
  if (V.Ty.isArray())
    V.Ty = V.Ty.withArrayAddrSpace(V.Storage == StorageKind::Shared ? AddrSpace::Shared
                                                                    : AddrSpace::Local);
  if (Bad)
    BadDecls.insert(&V);
}

//===----------------------------------------------------------------------===//
// Assignments
//===----------------------------------------------------------------------===//

static BinaryOp compoundOp(AssignOp Op) {
  switch (Op) {
  case AssignOp::Add:
    return BinaryOp::Add;
  case AssignOp::Sub:
    return BinaryOp::Sub;
  case AssignOp::Mul:
    return BinaryOp::Mul;
  case AssignOp::Div:
    return BinaryOp::Div;
  case AssignOp::Rem:
    return BinaryOp::Rem;
  case AssignOp::And:
    return BinaryOp::And;
  case AssignOp::Or:
    return BinaryOp::Or;
  case AssignOp::Xor:
    return BinaryOp::Xor;
  case AssignOp::Shl:
    return BinaryOp::Shl;
  case AssignOp::Shr:
    return BinaryOp::Shr;
  case AssignOp::Assign:
    break;
  }
  return BinaryOp::Add;
}

/// Why a named declaration cannot be assigned, or "" when it can.
static std::string notAssignableReason(const VarDecl &V) {
  if (V.Ty.isArray())
    return "cannot assign to array " + quote(V.Name) + "; assign to its elements";
  switch (V.Storage) {
  case StorageKind::Var:
    return "";
  case StorageKind::Param:
    if (V.Mode != ParamMode::In)
      return ""; // `out` / `inout`
    return "cannot assign to " + quote(V.Name) + ": it is a parameter; declare it 'var " + V.Name +
           ": " + V.Ty.str() + "' to assign to it";
  case StorageKind::Let:
    return "cannot assign to " + quote(V.Name) + ": it is declared with 'let'";
  case StorageKind::LoopIndex:
    return "cannot assign to " + quote(V.Name) +
           ": it is a loop index; a loop that assigns its variable is written 'for var " + V.Name +
           ": " + V.Ty.str() + " = START; CONDITION; UPDATE { }'";
  case StorageKind::Const:
    return "cannot assign to " + quote(V.Name) + ": it is a constant";
  case StorageKind::Shared:
    return ""; // a shared scalar (arrays are refused above)
  case StorageKind::Constant:
    return "cannot assign to " + quote(V.Name) + ": it is constant memory";
  }
  return "";
}

Type Checker::checkAssignTarget(Expr &Target, std::string &What) {
  if (auto *N = dyn_cast<NameExpr>(&Target)) {
    What = quote(N->Ident);
    Resolved R = resolveName(N->Ident);
    if (R.Const) {
      N->Decl = R.Var;
      error(N->getLoc(), "cannot assign to " + quote(N->Ident) + ": it is a constant");
    } else if (R.Var) {
      N->Decl = R.Var;
      N->Ty = R.Var->Ty;
      if (BadDecls.contains(R.Var))
        return Type();
      if (DeferredLets.contains(R.Var))
        return R.Var->Ty; // once: checkDefiniteAssignment
      std::string Reason = notAssignableReason(*R.Var);
      if (Reason.empty())
        return R.Var->Ty;
      error(N->getLoc(), Reason);
    } else if (R.Fn) {
      error(N->getLoc(), "cannot assign to " + quote(N->Ident) + ": it is a function");
    } else if (R.Struct) {
      error(N->getLoc(), "cannot assign to " + quote(N->Ident) + ": it is a struct type");
    } else if (R.Value != BuiltinValue::None || R.Func != BuiltinFunc::None) {
      error(N->getLoc(), "cannot assign to builtin " + quote(N->Ident));
    } else {
      error(N->getLoc(), "use of undeclared name " + quote(N->Ident) + cudaSpellingHint(N->Ident));
    }
    return Type();
  }
  if (auto *I = dyn_cast<IndexExpr>(&Target)) {
    What = "an element";
    I->Ty = checkIndex(*I); // lowering reads the element type from the target
    if (I->Ty.isValid() && !checkWritable(*I, "assign to"))
      return Type();
    return I->Ty;
  }
  auto *Mem = dyn_cast<MemberExpr>(&Target);
  if (Mem && isFieldAccess(*Mem))
    return checkFieldAssignTarget(*Mem, What);
  if (Mem && checkMember(*Mem).isValid()) {
    auto *Base = cast<NameExpr>(Mem->Base.get());
    error(startLoc(&Target), "cannot assign to builtin " + quote(Base->Ident));
    return Type();
  }
  if (!Mem && checkExpr(&Target, startLoc(&Target)).isValid())
    error(startLoc(&Target), "cannot assign to this expression; the target must be "
                             "a 'var', an array element or 'p[i]'");
  return Type();
}

void Checker::checkAssign(AssignStmt &A) {
  std::string What;
  Type T;
  if (!A.Target)
    error(A.getLoc(), "malformed module: missing assignment target");
  else
    T = checkAssignTarget(*A.Target, What);

  if (A.Op == AssignOp::Assign) {
    Type VT = checkValue(A.Value.get(), A.getLoc(), T);
    if (T.isValid() && VT.isValid() && T != VT)
      error(startLoc(A.Value),
            "cannot assign a value of type " + quote(VT) + " to " + What + " of type " + quote(T));
    return;
  }
  // `p += i` offsets a pointer by an integer of any type: no hint then.
  BinaryOp Op = compoundOp(A.Op);
  Type VT = checkValue(A.Value.get(), A.getLoc(), T.isPointer() ? Type() : T);
  if (!A.Value)
    return;
  std::string OpText = (binaryOpSpelling(Op) + "=").str();
  binaryResult(Op, OpText, T, VT, A.Target ? startLoc(A.Target) : A.getLoc(), startLoc(A.Value));
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

void Checker::checkCondition(Expr *Cond, SourceLoc ParentLoc) {
  Type T = checkValue(Cond, ParentLoc);
  if (T.isValid() && !T.isBool())
    error(startLoc(Cond), "condition must be 'bool', found " + quote(T));
}

void Checker::checkIf(IfStmt &S) {
  checkCondition(S.Cond.get(), S.getLoc());
  checkBlock(S.Then.get(), S.getLoc());
  if (!S.Else)
    return;
  if (isa<BlockStmt>(*S.Else) || isa<IfStmt>(*S.Else))
    checkStmt(S.Else.get(), S.getLoc());
  else
    error(S.Else->getLoc(), "malformed module: 'else' must be followed by a block or 'if'");
}

// `while c { }`, and the general `for init; c; update { }`: the loop
// variable is in a scope of the loop's own, which the condition, the body
// and the update see.
void Checker::checkWhile(WhileStmt &S) {
  pushScope();
  if (Stmt *Init = S.Init.get()) {
    auto *D = dyn_cast<DeclStmt>(Init);
    if (!D || (D->Var.Storage != StorageKind::Let && D->Var.Storage != StorageKind::Var)) {
      error(Init->getLoc(), "malformed module: a 'for' initializer must be a 'let' or 'var' "
                            "declaration");
      checkStmt(Init, S.getLoc());
    } else if (D->Var.Ty.isArray() || !D->Init) {
      error(D->Var.Loc, D->Var.Ty.isArray() ? "the variable of a 'for' loop must be a scalar "
                                              "or a pointer, found " +
                                                  quote(D->Var.Ty)
                                            : "the variable " + quote(D->Var.Name) +
                                                  " of a 'for' loop needs an initial value");
      BadDecls.insert(&D->Var);
      declareLocal(D->Var);
    } else {
      checkDeclStmt(*D);
    }
  }
  checkCondition(S.Cond.get(), S.getLoc());
  ++LoopDepth;
  checkBlock(S.Body.get(), S.getLoc());
  --LoopDepth;
  if (Stmt *Update = S.Update.get()) {
    if (isa<AssignStmt>(Update))
      checkAssign(*cast<AssignStmt>(Update));
    else
      error(Update->getLoc(), "malformed module: a 'for' update must be an assignment");
  }
  popScope();
}

// The bounds and step share one integer type. Typed parts are checked
// first; the first of them (in source order) gives the type that untyped
// literals adopt. With only literals the type is i32.
void Checker::checkFor(ForStmt &S) {
  Expr *Parts[3] = {S.Begin.get(), S.End.get(), S.Step.get()};
  bool Present[3] = {true, true, S.Step != nullptr};
  Type Types[3];
  Type Common;
  for (unsigned I = 0; I < 3; ++I)
    if (Present[I] && !isUntypedLiteral(Parts[I])) {
      Types[I] = checkValue(Parts[I], S.getLoc());
      if (!Common.isValid() && Types[I].isInteger())
        Common = Types[I];
    }
  for (unsigned I = 0; I < 3; ++I)
    if (Present[I] && isUntypedLiteral(Parts[I]))
      Types[I] = checkValue(Parts[I], S.getLoc(), Common);

  Type IdxT;
  bool OK = true;
  for (unsigned I = 0; I < 3; ++I) {
    if (!Present[I] || !Types[I].isValid()) {
      OK &= !Present[I];
      continue;
    }
    if (!Types[I].isInteger()) {
      error(startLoc(Parts[I]), llvm::Twine(I == 2 ? "loop step" : "loop range") +
                                    " must have an integer type, found " + quote(Types[I]));
      OK = false;
    } else if (!IdxT.isValid()) {
      IdxT = Types[I];
    } else if (Types[I] != IdxT) {
      error(startLoc(Parts[I]), "loop range and step must have the same type, found " +
                                    quote(IdxT) + " and " + quote(Types[I]));
      OK = false;
    }
  }

  if (OK && S.Step) {
    ConstValue V;
    const Expr *Culprit = nullptr;
    if (fold(*S.Step, V, Culprit) == FoldStatus::Constant) {
      bool Positive = IdxT.isSignedInteger() ? static_cast<int64_t>(V.Int) > 0 : V.Int != 0;
      if (!Positive)
        error(startLoc(S.Step),
              "loop step must be positive, found " +
                  (IdxT.isSignedInteger() ? std::to_string(static_cast<int64_t>(V.Int))
                                          : std::to_string(V.Int)));
    }
  }

  if (S.Index.Storage != StorageKind::LoopIndex)
    error(S.Index.Loc, "malformed module: a loop index must have loop-index storage");
  S.Index.Ty = OK ? IdxT : Type();
  if (!OK)
    BadDecls.insert(&S.Index);
  pushScope();
  declareLocal(S.Index);
  ++LoopDepth;
  checkBlock(S.Body.get(), S.getLoc());
  --LoopDepth;
  popScope();
}

void Checker::checkReturn(ReturnStmt &S) {
  llvm::StringRef Name = CurFn ? llvm::StringRef(CurFn->Name) : "";
  bool IsKernel = CurFn && CurFn->IsKernel;
  if (!S.Value) {
    if (CurReturnTy.isScalar())
      error(S.getLoc(),
            "function " + quote(Name) + " must return a value of type " + quote(CurReturnTy));
    return;
  }
  if (!CurReturnTy.isScalar()) {
    // Still look inside the value for errors of its own.
    Type VT = checkExpr(S.Value.get(), S.getLoc());
    if (CurReturnTy.isVoid() && VT.isValid())
      error(startLoc(S.Value), IsKernel
                                   ? "kernel " + quote(Name) + " cannot return a value"
                                   : "void function " + quote(Name) + " cannot return a value");
    return;
  }
  Type VT = checkValue(S.Value.get(), S.getLoc(), CurReturnTy);
  if (VT.isValid() && VT != CurReturnTy)
    error(startLoc(S.Value), "cannot return a value of type " + quote(VT) + " from function " +
                                 quote(Name) + " returning " + quote(CurReturnTy));
}

void Checker::checkExprStmt(ExprStmt &S) {
  if (S.E && isa<CallExpr>(*S.E)) {
    checkExpr(S.E.get(), S.getLoc());
    return;
  }
  checkValue(S.E.get(), S.getLoc());
  if (S.E)
    error(startLoc(S.E), "only a call can be used as a statement");
}
