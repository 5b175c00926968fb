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
#include <type_traits>

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
  if (V.TypeInferred)
    V.Ty = Type();
  for (ExprPtr &Size : V.InnerArraySizes)
    resetExpr(Size.get());
  // A size that is not a plain literal is folded by the verifier.
  if (V.Ty.isArray() && V.ArraySize) {
    std::array<uint64_t, MaxArrayRank> Dims{};
    unsigned Rank = V.Ty.getArrayRank();
    for (unsigned I = 0; I < Rank; ++I) {
      const Expr *Size = arraySizeExpr(V, I);
      Dims[I] = Size && !isa<IntLitExpr>(*Size) ? 0 : V.Ty.getArrayDim(I);
    }
    V.Ty = Type::getArray(V.Ty.getPointeeType(), std::span(Dims.data(), Rank));
  }
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
  case Expr::Cond:
    resetExpr(cast<CondExpr>(E)->C.get());
    resetExpr(cast<CondExpr>(E)->T.get());
    return resetExpr(cast<CondExpr>(E)->F.get());
  case Expr::Cast:
    return resetExpr(cast<CastExpr>(E)->Operand.get());
  case Expr::Call: {
    auto *C = cast<CallExpr>(E);
    C->Fn = nullptr;
    C->Builtin = BuiltinFunc::None;
    C->Construct = nullptr;
    for (ExprPtr &A : C->Args)
      resetExpr(A.get());
    return;
  }
  case Expr::Index:
    resetExpr(cast<IndexExpr>(E)->Base.get());
    return resetExpr(cast<IndexExpr>(E)->Idx.get());
  case Expr::Member:
    cast<MemberExpr>(E)->IsField = false;
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
  case Stmt::While: {
    auto *W = cast<WhileStmt>(S);
    resetStmt(W->Init.get());
    resetExpr(W->Cond.get());
    resetStmt(W->Body.get());
    return resetStmt(W->Update.get());
  }
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
      C->TableValues.clear();
      if (C->Var.Ty.isArray()) // verified again from the size expressions
        C->Var.Ty = C->Var.Ty.withArrayAddrSpace(AddrSpace::Local);
      std::vector<ArrayInit *> Lists;
      if (C->Table)
        Lists.push_back(C->Table.get());
      while (!Lists.empty()) {
        ArrayInit *L = Lists.back();
        Lists.pop_back();
        for (ExprPtr &E : L->Elems)
          resetExpr(E.get());
        for (ArrayInit &Row : L->Rows)
          Lists.push_back(&Row);
      }
    } else if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get())) {
      F->UsesGridSync = false;
      F->UsesPrint = false;
      resetStmt(F->Body.get());
    }
  }
}

//===----------------------------------------------------------------------===//
// Depth
//===----------------------------------------------------------------------===//

namespace {
/// A statement or an expression, at its depth in its declaration's tree.
struct TreeNode {
  const Stmt *S;
  const Expr *E;
  unsigned Depth;
};

/// Pushes the children of \p N onto \p Stack.
void pushChildren(const TreeNode &N, std::vector<TreeNode> &Stack) {
  auto Push = [&](const auto &Child) {
    using T = std::remove_cvref_t<decltype(*Child)>;
    if (!Child)
      return;
    if constexpr (std::is_base_of_v<Expr, T>)
      Stack.push_back({nullptr, Child.get(), N.Depth + 1});
    else
      Stack.push_back({Child.get(), nullptr, N.Depth + 1});
  };
  if (const Expr *E = N.E) {
    if (const auto *U = dyn_cast<UnaryExpr>(E))
      Push(U->Operand);
    else if (const auto *B = dyn_cast<BinaryExpr>(E))
      Push(B->LHS), Push(B->RHS);
    else if (const auto *Q = dyn_cast<CondExpr>(E))
      Push(Q->C), Push(Q->T), Push(Q->F);
    else if (const auto *C = dyn_cast<CastExpr>(E))
      Push(C->Operand);
    else if (const auto *Call = dyn_cast<CallExpr>(E))
      llvm::for_each(Call->Args, Push);
    else if (const auto *I = dyn_cast<IndexExpr>(E))
      Push(I->Base), Push(I->Idx);
    else if (const auto *M = dyn_cast<MemberExpr>(E))
      Push(M->Base);
    return;
  }
  const Stmt *S = N.S;
  if (const auto *D = dyn_cast<DeclStmt>(S)) {
    Push(D->Var.ArraySize), Push(D->Init);
    for (const ExprPtr &Size : D->Var.InnerArraySizes)
      Push(Size);
  } else if (const auto *A = dyn_cast<AssignStmt>(S))
    Push(A->Target), Push(A->Value);
  else if (const auto *I = dyn_cast<IfStmt>(S))
    Push(I->Cond), Push(I->Then), Push(I->Else);
  else if (const auto *W = dyn_cast<WhileStmt>(S))
    Push(W->Init), Push(W->Cond), Push(W->Body), Push(W->Update);
  else if (const auto *F = dyn_cast<ForStmt>(S))
    Push(F->Begin), Push(F->End), Push(F->Step), Push(F->Body);
  else if (const auto *R = dyn_cast<ReturnStmt>(S))
    Push(R->Value);
  else if (const auto *X = dyn_cast<ExprStmt>(S))
    Push(X->E);
  else if (const auto *B = dyn_cast<BlockStmt>(S))
    llvm::for_each(B->Body, Push);
}
} // namespace

// The parser bounds the nesting of what it reads (LangRef, section 1),
// which keeps every recursive pass over a tree within a small stack; a
// module made with the builder API is bounded here, before any of them
// runs (resetting the module is the first), by a walk with its own stack.
bool Checker::checkTreeDepth() {
  std::vector<TreeNode> Stack;
  for (const auto &D : M.Decls) {
    std::string What;
    if (const auto *C = dyn_cast_or_null<ConstDecl>(D.get())) {
      Stack.push_back({nullptr, C->Init.get(), 1});
      What = "the initializer of const " + quote(C->Var.Name);
    } else if (const auto *F = dyn_cast_or_null<FunctionDecl>(D.get())) {
      Stack.push_back({F->Body.get(), nullptr, 1});
      What = (F->IsKernel ? "kernel " : "function ") + quote(F->Name);
    }
    while (!Stack.empty()) {
      TreeNode N = Stack.back();
      Stack.pop_back();
      if (!N.S && !N.E)
        continue;
      if (N.Depth > MaxTreeDepth) {
        SourceLoc L = N.S ? N.S->getLoc() : N.E->getLoc();
        error(L.isValid() ? L : D->getLoc(), "malformed module: " + What +
                                                 " nests statements and expressions more than " +
                                                 llvm::Twine(MaxTreeDepth) + " levels deep");
        return false;
      }
      pushChildren(N, Stack);
    }
  }
  return true;
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
bool Checker::checkIdentifier(llvm::StringRef Name, SourceLoc L, bool Local) {
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
  if (!Local && isReservedBuiltinName(Name)) {
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
    } else if (auto *S = dyn_cast<StructDecl>(D)) {
      Name = S->Agg.Name;
      Loc = S->NameLoc.isValid() ? S->NameLoc : Loc;
    } else {
      Name = cast<FunctionDecl>(D)->Name;
      Loc = nameLoc(*cast<FunctionDecl>(D));
    }
    if (!checkIdentifier(Name, Loc, /*Local=*/false))
      continue;
    if (!ModuleNames.try_emplace(Name, D).second)
      error(Loc, "redeclaration of " + quote(Name));
  }
}

//===----------------------------------------------------------------------===//
// Cycles
//===----------------------------------------------------------------------===//

// A cycle can be as long as the module; its message names the first and
// the last few of its members and counts the rest, so that it stays one
// short line.
std::string sema::cyclePath(size_t N, llvm::function_ref<llvm::StringRef(size_t)> Name) {
  constexpr size_t Head = 4, Tail = 3;
  std::string Path;
  for (size_t I = 0; I < N; ++I) {
    if (N > Head + Tail + 1 && I == Head) {
      Path += "... (" + std::to_string(N - Head - Tail) + " more) -> ";
      I = N - Tail - 1;
      continue;
    }
    Path += (Name(I) + " -> ").str();
  }
  return Path + Name(0).str();
}

//===----------------------------------------------------------------------===//
// Consts
//===----------------------------------------------------------------------===//

void Checker::requireConst(ConstDecl &C, SourceLoc UseLoc) {
  ConstState &State = ConstStates[&C];
  if (State == ConstState::Done)
    return;
  if (State == ConstState::Unchecked)
    return checkConstChain(C);
  // In progress: this use closes a cycle. Name the consts on it.
  size_t Start = llvm::find(ConstStack, &C) - ConstStack.begin();
  std::string Path = cyclePath(ConstStack.size() - Start, [&](size_t I) -> llvm::StringRef {
    return ConstStack[Start + I]->Var.Name;
  });
  error(UseLoc, "const " + quote(C.Var.Name) + " is defined in terms of itself (" + Path + ")");
}

// The consts a const's initializer names, in the order checking it meets
// them (left to right: every name of a constant expression is checked, and
// an untyped literal part holds none). None when the initializer is
// missing or not a constant expression, as checkConst then checks nothing.
std::vector<ConstDecl *> Checker::constsNamedBy(const ConstDecl &C) const {
  std::vector<ConstDecl *> Named;
  if (!C.Init || findNonConstantNode(C.Init.get()))
    return Named;
  // The walk stays inside one initializer, whose depth the parser bounds
  // (and checkNesting, for a built module).
  auto Walk = [&](auto &Self, const Expr *E) -> void {
    if (!E)
      return;
    if (const auto *N = dyn_cast<NameExpr>(E)) {
      if (ConstDecl *D = resolveName(N->Ident).Const)
        Named.push_back(D);
    } else if (const auto *U = dyn_cast<UnaryExpr>(E)) {
      Self(Self, U->Operand.get());
    } else if (const auto *B = dyn_cast<BinaryExpr>(E)) {
      Self(Self, B->LHS.get());
      Self(Self, B->RHS.get());
    } else if (const auto *Cast = dyn_cast<CastExpr>(E)) {
      Self(Self, Cast->Operand.get());
    }
  };
  Walk(Walk, C.Init.get());
  return Named;
}

// Checks \p Root after every unchecked const it names, and theirs, deepest
// first. A chain of consts each defined by the next is as long as the
// module, far too long for one C++ frame per link, so the depth-first
// search keeps its own stack. It checks the consts in the order that
// checking each one when its name is first met would (and reports each
// cycle there, in requireConst, from ConstStack). A const's initializer
// sees only module-level names, so the function scopes are set aside
// meanwhile (a const may be checked on demand from inside a function).
void Checker::checkConstChain(ConstDecl &Root) {
  auto SavedScopes = std::move(Scopes);
  Scopes.clear();
  FunctionDecl *SavedFn = CurFn;
  CurFn = nullptr;

  struct Frame {
    ConstDecl *C;
    std::vector<ConstDecl *> Named;
    size_t Next = 0;
  };
  std::vector<Frame> Stack;
  auto Enter = [&](ConstDecl &C) {
    ConstStates[&C] = ConstState::InProgress;
    ConstStack.push_back(&C);
    checkConstType(C);
    Stack.push_back({&C, constsNamedBy(C)});
  };
  Enter(Root);
  while (!Stack.empty()) {
    Frame &Top = Stack.back();
    if (Top.Next < Top.Named.size()) {
      ConstDecl *D = Top.Named[Top.Next++];
      if (ConstStates[D] == ConstState::Unchecked)
        Enter(*D);
      continue;
    }
    // Every const it names is now done, or on the stack (a cycle).
    checkConst(*Top.C);
    ConstStack.pop_back();
    ConstStates[Top.C] = ConstState::Done;
    Stack.pop_back();
  }

  CurFn = SavedFn;
  Scopes = std::move(SavedScopes);
}

// Before the consts it names are checked, so that their uses of it (on a
// cycle) see a bad type as unusable.
void Checker::checkConstType(ConstDecl &C) {
  if (C.Var.Ty.isArray() || C.Table || C.isConstantMemory()) {
    if (C.Table && !C.Var.Ty.isArray()) {
      error(C.Table->Loc, "const " + quote(C.Var.Name) + " of type " + quote(C.Var.Ty) +
                              " cannot have a list initializer; a table has an array type, "
                              "as in '[" +
                              C.Var.Ty.str() + "; " +
                              std::to_string(C.Table->Elems.size() + C.Table->Rows.size()) + "]'");
      BadDecls.insert(&C.Var);
      return;
    }
    return checkTableType(C);
  }
  if (!C.Var.Ty.isScalar()) {
    error(C.Var.Loc.isValid() ? C.Var.Loc : C.getLoc(),
          "const " + quote(C.Var.Name) + " must have a scalar type, found " + quote(C.Var.Ty));
    BadDecls.insert(&C.Var);
  }
}

void Checker::checkConst(ConstDecl &C) {
  if (C.Var.Ty.isArray() || C.Table || C.isConstantMemory())
    return checkTable(C);
  Type T = BadDecls.contains(&C.Var) ? Type() : C.Var.Ty;
  SourceLoc NameLoc = C.Var.Loc.isValid() ? C.Var.Loc : C.getLoc();
  if (!C.Init) {
    error(NameLoc, "const " + quote(C.Var.Name) + " needs an initializer");
  } else if (const Expr *Bad = findNonConstantNode(C.Init.get())) {
    error(startLoc(Bad), notConstantMessage("initializer of const " + quote(C.Var.Name), *Bad));
  } else {
    Type IT = checkValue(C.Init.get(), C.getLoc(), T);
    if (T.isValid() && IT.isValid() && IT != T) {
      error(startLoc(C.Init), "cannot initialize " + quote(C.Var.Name) + " of type " + quote(T) +
                                  " with a value of type " + quote(IT));
    } else if (T.isValid() && IT.isValid()) {
      ConstValue V;
      const Expr *Culprit = nullptr;
      FoldStatus S = fold(*C.Init, V, Culprit, /*Required=*/true);
      if (S == FoldStatus::Constant)
        C.Value = V;
      else if (S == FoldStatus::NotConstant)
        error(startLoc(Culprit),
              notConstantMessage("initializer of const " + quote(C.Var.Name), *Culprit));
    }
  }
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
                         : T.isScalar() || T.isPointer() || T.isStruct();
    if (!OK) {
      error(P->Loc, What + " parameter " + quote(P->Name) + " cannot have type " + quote(T));
      BadDecls.insert(P.get());
    }
    if (P->Storage != StorageKind::Param)
      error(P->Loc,
            "malformed module: parameter " + quote(P->Name) + " does not have parameter storage");
    if (F.IsKernel && P->Mode != ParamMode::In)
      error(P->Loc, "kernel parameter " + quote(P->Name) + " cannot be '" +
                        std::string(spelling(P->Mode)) +
                        "': a kernel has no caller to copy it back to; write results through a "
                        "'ptr<T>' parameter");
    else if (P->Mode != ParamMode::In && P->Mutable)
      error(P->Loc, "malformed module: parameter " + quote(P->Name) + " is both 'var' and '" +
                        std::string(spelling(P->Mode)) + "'");
  }
  if (F.IsKernel && !F.ReturnTy.isVoid())
    error(nameLoc(F), "kernel " + quote(F.Name) + " cannot have a return type");
  else if (!F.IsKernel && !F.ReturnTy.isVoid() && !F.ReturnTy.isScalar() && !F.ReturnTy.isStruct())
    error(nameLoc(F), "function " + quote(F.Name) + " cannot return " + quote(F.ReturnTy) +
                          "; a device function returns a scalar, a struct, a vector or nothing");
}

//===----------------------------------------------------------------------===//
// Call graph
//===----------------------------------------------------------------------===//

namespace {
/// Depth-first search over the call graph that reports each call closing a
/// cycle (a back edge) once. A chain of calls is as long as the module, so
/// the search keeps its own stack rather than one C++ frame per call.
class RecursionFinder {
public:
  explicit RecursionFinder(Checker &C) : C(C) {}

  void visit(const FunctionDecl *Root) {
    if (Color[Root] != White)
      return;
    enter(Root);
    while (!Path.empty()) {
      Frame &Top = Path.back();
      if (Top.Next == Top.Calls.size()) {
        Color[Top.F] = Black;
        Path.pop_back();
        continue;
      }
      const auto &[Callee, Loc] = Top.Calls[Top.Next++];
      ColorKind &CalleeColor = Color[Callee];
      if (CalleeColor == Gray)
        report(Callee, Loc);
      else if (CalleeColor == White)
        enter(Callee);
    }
  }

private:
  enum ColorKind { White, Gray, Black };
  /// A function on the current path and the next of its calls to follow.
  struct Frame {
    const FunctionDecl *F;
    llvm::ArrayRef<std::pair<const FunctionDecl *, SourceLoc>> Calls;
    size_t Next = 0;
  };

  void enter(const FunctionDecl *F) {
    Color[F] = Gray;
    Frame Fr{F, {}};
    if (auto It = C.Calls.find(F); It != C.Calls.end())
      Fr.Calls = It->second;
    Path.push_back(Fr);
  }

  void report(const FunctionDecl *Callee, SourceLoc Loc) {
    size_t Start =
        llvm::find_if(Path, [&](const Frame &Fr) { return Fr.F == Callee; }) - Path.begin();
    std::string Cycle = cyclePath(
        Path.size() - Start, [&](size_t I) -> llvm::StringRef { return Path[Start + I].F->Name; });
    C.error(Loc, "recursive call to " + quote(Callee->Name) + " (" + Cycle +
                     "); recursion is not allowed");
  }

  Checker &C;
  llvm::DenseMap<const FunctionDecl *, ColorKind> Color;
  std::vector<Frame> Path;
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

  // UsesGridSync and UsesPrint: from the direct callers of grid_sync() (of
  // print) to their callers, each function once, over the reversed call
  // graph (which may have cycles after an error).
  llvm::DenseMap<const FunctionDecl *, std::vector<FunctionDecl *>> Callers;
  for (FunctionDecl *F : Fns)
    if (auto It = Calls.find(F); It != Calls.end())
      for (const auto &Edge : It->second)
        Callers[Edge.first].push_back(F);
  auto Propagate = [&](bool FunctionDecl::*Flag,
                       const llvm::DenseSet<const FunctionDecl *> &Direct) {
    std::vector<FunctionDecl *> Work;
    for (FunctionDecl *F : Fns) {
      F->*Flag = Direct.contains(F);
      if (F->*Flag)
        Work.push_back(F);
    }
    while (!Work.empty()) {
      const FunctionDecl *F = Work.back();
      Work.pop_back();
      auto It = Callers.find(F);
      if (It == Callers.end())
        continue;
      for (FunctionDecl *Caller : It->second)
        if (!(Caller->*Flag)) {
          Caller->*Flag = true;
          Work.push_back(Caller);
        }
    }
  };
  Propagate(&FunctionDecl::UsesGridSync, CallsGridSync);
  Propagate(&FunctionDecl::UsesPrint, CallsPrint);
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

llvm::Error Checker::run() {
  M.Verified = false;
  if (checkTreeDepth()) {
    resetModule(M);
    collectModuleNames();
    checkStructDecls();
    for (auto &D : M.Decls)
      if (auto *C = dyn_cast_or_null<ConstDecl>(D.get()))
        requireConst(*C, C->getLoc());
    checkConstantBytes();
    for (auto &D : M.Decls)
      if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get()))
        checkSignature(*F);
    for (auto &D : M.Decls)
      if (auto *F = dyn_cast_or_null<FunctionDecl>(D.get()))
        checkFunctionBody(*F);
    checkCallGraph();
  }

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
