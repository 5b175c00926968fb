//===- Verifier.cpp - KIR verifier: module-level rules --------------------===//
//
// Part of gridjit. The entry point (verifyModule) and the
// module-level rules: unique and well-formed names, consts (checked in
// dependency order, cycles rejected, values folded), function signatures,
// and the call graph (no recursion, UsesGridSync).
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "gridjit/Sema/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <tuple>

using namespace gridjit;
using namespace gridjit::sema;

//===----------------------------------------------------------------------===//
// Helpers shared by lib/Sema
//===----------------------------------------------------------------------===//

std::string sema::quote(Type T) { return "'" + T.str() + "'"; }
std::string sema::quote(llvm::StringRef Name) { return ("'" + Name + "'").str(); }

llvm::StringRef sema::binaryOpSpelling(BinaryOp Op) {
  std::string_view S = spelling(Op);
  return llvm::StringRef(S.data(), S.size());
}

void Checker::error(SourceLoc L, const llvm::Twine &Msg) { Diags.push_back({L, Msg.str()}); }

//===----------------------------------------------------------------------===//
// Resetting the semantic fields (verification is idempotent)
//===----------------------------------------------------------------------===//

static void resetExpr(Expr *E);
static void resetStmt(Stmt *S);

static void resetVar(VarDecl &V) {
  resetExpr(V.ArraySize.get());
  // A size written as a const name is filled in by the verifier.
  if (V.Ty.isArray() && V.ArraySize && isa<NameExpr>(*V.ArraySize))
    V.Ty = Type::getArray(V.Ty.getScalarKind(), 0);
}

static void resetExpr(Expr *E) {
  if (!E)
    return;
  E->Ty = Type();
  switch (E->getKind()) {
  case Expr::IntLit:
  case Expr::FloatLit:
  case Expr::BoolLit:
    return;
  case Expr::Name: {
    auto *N = cast<NameExpr>(E);
    N->Decl = nullptr;
    N->Builtin = BuiltinValue::None;
    return;
  }
  case Expr::Unary:
    return resetExpr(cast<UnaryExpr>(E)->Operand.get());
  case Expr::Binary:
    resetExpr(cast<BinaryExpr>(E)->LHS.get());
    return resetExpr(cast<BinaryExpr>(E)->RHS.get());
  case Expr::Cast:
    return resetExpr(cast<CastExpr>(E)->Operand.get());
  case Expr::Call: {
    auto *C = cast<CallExpr>(E);
    C->Fn = nullptr;
    C->Builtin = BuiltinFunc::None;
    for (ExprPtr &A : C->Args)
      resetExpr(A.get());
    return;
  }
  case Expr::Index:
    resetExpr(cast<IndexExpr>(E)->Base.get());
    return resetExpr(cast<IndexExpr>(E)->Idx.get());
  case Expr::Member:
    return resetExpr(cast<MemberExpr>(E)->Base.get());
  }
}

static void resetStmt(Stmt *S) {
  if (!S)
    return;
  switch (S->getKind()) {
  case Stmt::Decl: {
    auto *D = cast<DeclStmt>(S);
    resetVar(D->Var);
    return resetExpr(D->Init.get());
  }
  case Stmt::Assign:
    resetExpr(cast<AssignStmt>(S)->Target.get());
    return resetExpr(cast<AssignStmt>(S)->Value.get());
  case Stmt::If: {
    auto *I = cast<IfStmt>(S);
    resetExpr(I->Cond.get());
    resetStmt(I->Then.get());
    return resetStmt(I->Else.get());
  }
  case Stmt::While:
    resetExpr(cast<WhileStmt>(S)->Cond.get());
    return resetStmt(cast<WhileStmt>(S)->Body.get());
  case Stmt::For: {
    auto *F = cast<ForStmt>(S);
    F->Index.Ty = Type();
    resetExpr(F->Begin.get());
    resetExpr(F->End.get());
    resetExpr(F->Step.get());
    return resetStmt(F->Body.get());
  }
  case Stmt::Break:
  case Stmt::Continue:
    return;
  case Stmt::Return:
    return resetExpr(cast<ReturnStmt>(S)->Value.get());
  case Stmt::ExprS:
    return resetExpr(cast<ExprStmt>(S)->E.get());
  case Stmt::Block:
    for (StmtPtr &Child : cast<BlockStmt>(S)->Body)
      resetStmt(Child.get());
    return;
  }
}

static void resetModule(Module &M) {
  M.Verified = false;
  for (auto &D : M.Decls) {
    if (auto *C = dyn_cast_or_null<ConstDecl>(D.get())) {
      C->Value.reset();
      resetExpr(C->Init.get());
    } else if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get())) {
      F->UsesGridSync = false;
      resetStmt(F->Body.get());
    }
  }
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static bool isKeyword(llvm::StringRef Name) {
  static constexpr llvm::StringLiteral Keywords[] = {
#define GRIDJIT_KEYWORD(Id, Spelling) Spelling,
#include "gridjit/IR/Keywords.def"
  };
  return llvm::is_contained(Keywords, Name);
}

// The parser only makes valid identifiers; a module made with the builder
// API may hold anything, and must still print as KIR that parses back.
bool Checker::checkIdentifier(llvm::StringRef Name, SourceLoc L) {
  bool Valid = !Name.empty() && (llvm::isAlpha(Name[0]) || Name[0] == '_') &&
               llvm::all_of(Name, [](char C) { return llvm::isAlnum(C) || C == '_'; });
  if (Name.empty()) {
    error(L, "malformed module: missing name");
    return false;
  }
  if (!Valid) {
    error(L, quote(Name) + " is not a valid identifier");
    return false;
  }
  if (isKeyword(Name)) {
    error(L, "cannot declare " + quote(Name) + ": it is a keyword");
    return false;
  }
  if (isReservedBuiltinName(Name)) {
    error(L, "cannot declare " + quote(Name) + ": the name is reserved for a builtin");
    return false;
  }
  // gridjit's own symbols (__gridjit_grid_sync, ...) and those of the
  // libraries targets link (libdevice's __nv_*) must not be taken over by
  // user code, so the whole `__` prefix is reserved, as in C.
  if (Name.starts_with("__")) {
    error(L, "cannot declare " + quote(Name) + ": names beginning with '__' are reserved");
    return false;
  }
  return true;
}

// The AST keeps only the keyword's location for a function, so the name is
// found in the source: after the keyword, whitespace and comments.
std::optional<size_t> Checker::sourceOffset(SourceLoc L) const { return Lines.getOffset(L); }

SourceLoc Checker::nameLoc(const FunctionDecl &F) const {
  SourceLoc L = F.getLoc();
  llvm::StringRef Src = M.Source;
  std::optional<size_t> Start = sourceOffset(L);
  llvm::StringRef Keyword = F.IsKernel ? "kernel" : "fn";
  if (!Start || !Src.drop_front(*Start).starts_with(Keyword))
    return L;
  size_t Pos = *Start + Keyword.size();
  while (Pos < Src.size()) {
    llvm::StringRef Rest = Src.drop_front(Pos);
    size_t Skip = 1;
    if (Rest.starts_with("//"))
      Skip = Rest.find('\n');
    else if (Rest.starts_with("/*"))
      Skip = Rest.find("*/") == llvm::StringRef::npos ? llvm::StringRef::npos : Rest.find("*/") + 2;
    else if (!llvm::isSpace(Rest[0]))
      break;
    if (Skip == llvm::StringRef::npos)
      return L;
    Pos += Skip;
  }
  if (!Src.drop_front(Pos).starts_with(F.Name))
    return L;
  return Lines.getLoc(Pos);
}

void Checker::collectModuleNames() {
  for (auto &DP : M.Decls) {
    Decl *D = DP.get();
    if (!D) {
      error(SourceLoc(), "malformed module: null declaration");
      continue;
    }
    llvm::StringRef Name;
    SourceLoc Loc = D->getLoc();
    if (auto *C = dyn_cast<ConstDecl>(D)) {
      Name = C->Var.Name;
      Loc = C->Var.Loc.isValid() ? C->Var.Loc : Loc;
      ConstOf[&C->Var] = C;
      ConstStates[C] = ConstState::Unchecked;
    } else {
      Name = cast<FunctionDecl>(D)->Name;
      Loc = nameLoc(*cast<FunctionDecl>(D));
    }
    if (!checkIdentifier(Name, Loc))
      continue;
    if (!ModuleNames.try_emplace(Name, D).second)
      error(Loc, "redeclaration of " + quote(Name));
  }
}

//===----------------------------------------------------------------------===//
// Consts
//===----------------------------------------------------------------------===//

void Checker::requireConst(ConstDecl &C, SourceLoc UseLoc) {
  ConstState &State = ConstStates[&C];
  if (State == ConstState::Done)
    return;
  if (State == ConstState::Unchecked)
    return checkConst(C);
  // In progress: this use closes a cycle. Name the consts on it.
  std::string Path;
  auto Start = llvm::find(ConstStack, &C);
  for (auto It = Start; It != ConstStack.end(); ++It)
    Path += (*It)->Var.Name + " -> ";
  Path += C.Var.Name;
  error(UseLoc, "const " + quote(C.Var.Name) + " is defined in terms of itself (" + Path + ")");
}

// A const's initializer sees only module-level names, so the function
// scopes are set aside while it is checked (a const may be checked on
// demand from the middle of another one).
void Checker::checkConst(ConstDecl &C) {
  ConstStates[&C] = ConstState::InProgress;
  ConstStack.push_back(&C);
  auto SavedScopes = std::move(Scopes);
  Scopes.clear();
  FunctionDecl *SavedFn = CurFn;
  CurFn = nullptr;

  Type T = C.Var.Ty;
  SourceLoc NameLoc = C.Var.Loc.isValid() ? C.Var.Loc : C.getLoc();
  if (!T.isScalar()) {
    error(NameLoc, "const " + quote(C.Var.Name) + " must have a scalar type, found " + quote(T));
    T = Type();
    BadDecls.insert(&C.Var);
  }
  if (!C.Init) {
    error(NameLoc, "const " + quote(C.Var.Name) + " needs an initializer");
  } else if (const Expr *Bad = findNonConstantNode(C.Init.get())) {
    error(startLoc(Bad),
          "initializer of const " + quote(C.Var.Name) + " is not a constant expression");
  } else {
    Type IT = checkValue(C.Init.get(), C.getLoc(), T);
    if (T.isValid() && IT.isValid() && IT != T) {
      error(startLoc(C.Init), "cannot initialize " + quote(C.Var.Name) + " of type " + quote(T) +
                                  " with a value of type " + quote(IT));
    } else if (T.isValid() && IT.isValid()) {
      ConstValue V;
      const Expr *Culprit = nullptr;
      FoldStatus S = fold(*C.Init, V, Culprit);
      if (S == FoldStatus::Constant)
        C.Value = V;
      else if (S == FoldStatus::NotConstant)
        error(startLoc(Culprit),
              "initializer of const " + quote(C.Var.Name) + " is not a constant expression");
    }
  }

  CurFn = SavedFn;
  Scopes = std::move(SavedScopes);
  ConstStack.pop_back();
  ConstStates[&C] = ConstState::Done;
}

//===----------------------------------------------------------------------===//
// Function signatures
//===----------------------------------------------------------------------===//

void Checker::checkSignature(FunctionDecl &F) {
  llvm::StringRef What = F.IsKernel ? "kernel" : "function";
  for (auto &P : F.Params) {
    if (!P) {
      error(nameLoc(F), "malformed module: null parameter of " + What.str() + " " + quote(F.Name));
      continue;
    }
    Type T = P->Ty;
    bool OK = F.IsKernel ? T.isScalar() || (T.isPointer() && T.getAddrSpace() == AddrSpace::Global)
                         : T.isScalar() || T.isPointer();
    if (!OK) {
      error(P->Loc, What + " parameter " + quote(P->Name) + " cannot have type " + quote(T));
      BadDecls.insert(P.get());
    }
    if (P->Storage != StorageKind::Param)
      error(P->Loc,
            "malformed module: parameter " + quote(P->Name) + " does not have parameter storage");
  }
  if (F.IsKernel && !F.ReturnTy.isVoid())
    error(nameLoc(F), "kernel " + quote(F.Name) + " cannot have a return type");
  else if (!F.IsKernel && !F.ReturnTy.isVoid() && !F.ReturnTy.isScalar())
    error(nameLoc(F), "function " + quote(F.Name) + " cannot return " + quote(F.ReturnTy) +
                          "; a device function returns a scalar or nothing");
}

//===----------------------------------------------------------------------===//
// Call graph
//===----------------------------------------------------------------------===//

namespace {
/// Depth-first search over the call graph that reports each call closing a
/// cycle (a back edge) once.
class RecursionFinder {
public:
  explicit RecursionFinder(Checker &C) : C(C) {}

  void visit(const FunctionDecl *F) {
    if (Color[F] != White)
      return;
    Color[F] = Gray;
    Path.push_back(F);
    for (const auto &[Callee, Loc] : C.Calls.lookup(F)) {
      if (Color[Callee] == Gray)
        report(Callee, Loc);
      else
        visit(Callee);
    }
    Path.pop_back();
    Color[F] = Black;
  }

private:
  enum ColorKind { White, Gray, Black };

  void report(const FunctionDecl *Callee, SourceLoc Loc) {
    std::string Cycle;
    for (auto It = llvm::find(Path, Callee); It != Path.end(); ++It)
      Cycle += (*It)->Name + " -> ";
    Cycle += Callee->Name;
    C.error(Loc, "recursive call to " + quote(Callee->Name) + " (" + Cycle +
                     "); recursion is not allowed");
  }

  Checker &C;
  llvm::DenseMap<const FunctionDecl *, ColorKind> Color;
  std::vector<const FunctionDecl *> Path;
};
} // namespace

void Checker::checkCallGraph() {
  std::vector<FunctionDecl *> Fns;
  for (auto &D : M.Decls)
    if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get()))
      Fns.push_back(F);

  RecursionFinder Finder(*this);
  for (FunctionDecl *F : Fns)
    Finder.visit(F);

  // UsesGridSync: propagate from the direct callers of grid_sync() up the
  // call graph until nothing changes (the graph may have cycles after an
  // error, so no recursion here).
  for (FunctionDecl *F : Fns)
    F->UsesGridSync = CallsGridSync.contains(F);
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (FunctionDecl *F : Fns) {
      if (F->UsesGridSync)
        continue;
      for (const auto &Edge : Calls.lookup(F))
        if (Edge.first->UsesGridSync) {
          F->UsesGridSync = true;
          Changed = true;
          break;
        }
    }
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

llvm::Error Checker::run() {
  resetModule(M);
  collectModuleNames();
  for (auto &D : M.Decls)
    if (auto *C = dyn_cast_or_null<ConstDecl>(D.get()))
      requireConst(*C, C->getLoc());
  for (auto &D : M.Decls)
    if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get()))
      checkSignature(*F);
  for (auto &D : M.Decls)
    if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get()))
      checkFunctionBody(*F);
  checkCallGraph();

  // Report in source order, whatever order the checks ran in (ties keep
  // the order found; std::stable_sort is avoided because libstdc++ 12's
  // warns about get_temporary_buffer under clang 19).
  std::vector<size_t> Order(Diags.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  llvm::sort(Order, [&](size_t A, size_t B) {
    const SourceLoc &LA = Diags[A].Loc, &LB = Diags[B].Loc;
    return std::tie(LA.Line, LA.Col, A) < std::tie(LB.Line, LB.Col, B);
  });
  DiagnosticEngine Engine(M.Name, M.Source);
  const Diagnostic *Prev = nullptr;
  for (size_t I : Order) {
    const Diagnostic &D = Diags[I];
    if (Prev && D.Loc.Line == Prev->Loc.Line && D.Loc.Col == Prev->Loc.Col &&
        D.Message == Prev->Message)
      continue;
    Engine.error(D.Loc, D.Message);
    Prev = &D;
  }
  if (Engine.hasErrors())
    return Engine.takeError();
  M.Verified = true;
  return llvm::Error::success();
}

llvm::Error gridjit::verifyModule(Module &M) { return Checker(M).run(); }
