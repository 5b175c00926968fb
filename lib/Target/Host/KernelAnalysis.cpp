//===- KernelAnalysis.cpp - Synchronisation, uniformity and storage -------===//
//
// Part of gridjit. See KernelAnalysis.h.
//
//===----------------------------------------------------------------------===//

#include "KernelAnalysis.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

// The classifications are columns of Builtins.def.
bool host::isWarpOp(BuiltinFunc F) {
  return F != BuiltinFunc::None && getBuiltinFuncInfo(F).isWarpCollective();
}

bool host::isSyncBuiltin(BuiltinFunc F) {
  return F != BuiltinFunc::None && getBuiltinFuncInfo(F).synchronises();
}

bool host::isBarrierBuiltin(BuiltinFunc F) {
  return F != BuiltinFunc::None && getBuiltinFuncInfo(F).isBarrier();
}

bool host::isPureBuiltin(BuiltinFunc F) {
  return F != BuiltinFunc::None && getBuiltinFuncInfo(F).isPure();
}

//===----------------------------------------------------------------------===//
// Walking the tree
//===----------------------------------------------------------------------===//

namespace {

bool anyExpr(const Expr &E, llvm::function_ref<bool(const Expr &)> P) {
  if (P(E))
    return true;
  bool Found = false;
  forEachChild(E, [&](const Expr &C) { Found = Found || anyExpr(C, P); });
  return Found;
}

bool anyInStmt(const Stmt &S, llvm::function_ref<bool(const Expr &)> P) {
  bool Found = false;
  forEachPart(
      S, [&](const Expr &E) { Found = Found || anyExpr(E, P); },
      [&](const Stmt &C) { Found = Found || anyInStmt(C, P); });
  return Found;
}

bool leaves(const Stmt &S, bool CountReturns, unsigned LoopDepth) {
  switch (S.getKind()) {
  case Stmt::Break:
  case Stmt::Continue:
    return LoopDepth == 0;
  case Stmt::Return:
    return CountReturns;
  case Stmt::While:
  case Stmt::For:
    ++LoopDepth;
    break;
  default:
    break;
  }
  bool Found = false;
  forEachPart(
      S, [](const Expr &) {},
      [&](const Stmt &C) { Found = Found || leaves(C, CountReturns, LoopDepth); });
  return Found;
}

/// Calls \p Settle on \p F and on every function it calls, directly or not,
/// callees before their callers, each once; \p Enter marks a function as
/// met and says whether it was new (so a cycle, which only a module with
/// errors has, is cut). A chain of calls is as long as the module, so the
/// depth-first search keeps its own stack instead of a C++ frame per call.
void settleCalleesFirst(const FunctionDecl &F, llvm::function_ref<bool(const FunctionDecl &)> Enter,
                        llvm::function_ref<void(const FunctionDecl &)> Settle) {
  struct Frame {
    const FunctionDecl *Fn;
    std::vector<const FunctionDecl *> Callees;
    size_t Next = 0;
  };
  std::vector<Frame> Stack;
  auto Push = [&](const FunctionDecl &G) {
    if (!Enter(G))
      return;
    Frame Fr{&G, {}};
    if (G.Body)
      anyInStmt(*G.Body, [&](const Expr &E) {
        if (const auto *C = dyn_cast<CallExpr>(&E); C && C->Fn)
          Fr.Callees.push_back(C->Fn);
        return false;
      });
    Stack.push_back(std::move(Fr));
  };
  Push(F);
  while (!Stack.empty()) {
    Frame &Top = Stack.back();
    if (Top.Next < Top.Callees.size()) {
      Push(*Top.Callees[Top.Next++]);
      continue;
    }
    const FunctionDecl *G = Top.Fn;
    Stack.pop_back();
    Settle(*G);
  }
}

/// Calls \p F on every call of a device function in \p E with its depth in
/// the tree (\p E is at \p Depth).
void forEachCallAt(const Expr &E, unsigned Depth,
                   llvm::function_ref<void(const CallExpr &, unsigned)> F) {
  if (const auto *C = dyn_cast<CallExpr>(&E); C && C->Fn)
    F(*C, Depth);
  forEachChild(E, [&](const Expr &X) { forEachCallAt(X, Depth + 1, F); });
}

void forEachCallAt(const Stmt &S, unsigned Depth,
                   llvm::function_ref<void(const CallExpr &, unsigned)> F) {
  forEachPart(
      S, [&](const Expr &E) { forEachCallAt(E, Depth + 1, F); },
      [&](const Stmt &C) { forEachCallAt(C, Depth + 1, F); });
}

} // namespace

bool host::anyExprIn(const Stmt &S, llvm::function_ref<bool(const Expr &)> P) {
  return anyInStmt(S, P);
}

void host::forEachBlockLevelBranch(const IfStmt &I, SyncInfo &Sync,
                                   llvm::function_ref<void(const BlockStmt &)> F) {
  const IfStmt *Cur = &I;
  while (Cur) {
    F(*Cur->Then);
    const Stmt *E = Cur->Else.get();
    Cur = nullptr;
    if (const auto *EB = dyn_cast_or_null<BlockStmt>(E))
      F(*EB);
    else if (E && Sync.runsAtBlockLevel(*E))
      Cur = cast<IfStmt>(E);
  }
}

bool host::leavesStmt(const Stmt &S, bool CountReturns) {
  // A loop's own break/continue target the loop itself.
  return leaves(S, CountReturns, 0);
}

static bool continues(const Stmt &S, unsigned LoopDepth) {
  if (isa<ContinueStmt>(S))
    return LoopDepth == 0;
  if (isa<WhileStmt>(S) || isa<ForStmt>(S))
    ++LoopDepth;
  bool Found = false;
  forEachPart(
      S, [](const Expr &) {}, [&](const Stmt &C) { Found = Found || continues(C, LoopDepth); });
  return Found;
}

bool host::continuesStmt(const Stmt &S) { return continues(S, 0); }

/// The variable whose memory `&E` points into (`&x`, `&x.f`, `&a[i][j]`),
/// or null (`&p[i]` of a pointer parameter points elsewhere, but a
/// parameter is never stepped, so it does not matter here).
static const VarDecl *addressRoot(const Expr &E) {
  const Expr *X = &E;
  while (true) {
    if (const auto *M = dyn_cast<MemberExpr>(X); M && M->IsField)
      X = M->Base.get();
    else if (const auto *Ix = dyn_cast<IndexExpr>(X))
      X = Ix->Base.get();
    else
      break;
  }
  const auto *N = dyn_cast<NameExpr>(X);
  return N ? N->Decl : nullptr;
}

bool host::mayChange(const Stmt &S, const VarDecl *V) {
  if (const auto *A = dyn_cast<AssignStmt>(&S))
    if (const NameExpr *N = assignedVariable(*A->Target); N && N->Decl == V)
      return true;
  bool Found = false;
  forEachPart(
      S,
      [&](const Expr &E) {
        Found = Found || anyExpr(E, [&](const Expr &X) {
                  if (const auto *U = dyn_cast<UnaryExpr>(&X))
                    return U->Op == UnaryOp::AddrOf && addressRoot(*U->Operand) == V;
                  const auto *C = dyn_cast<CallExpr>(&X);
                  if (!C || !C->hasOutArgs())
                    return false;
                  for (size_t I = 0; I < C->Args.size(); ++I)
                    if (C->argMode(I) != ParamMode::In && mentions(*C->Args[I], V))
                      return true;
                  return false;
                });
      },
      [&](const Stmt &C) { Found = Found || mayChange(C, V); });
  return Found;
}

bool host::containsReturn(const Stmt &S) {
  if (isa<ReturnStmt>(S))
    return true;
  bool Found = false;
  forEachPart(S, [](const Expr &) {}, [&](const Stmt &C) { Found = Found || containsReturn(C); });
  return Found;
}

bool host::mentions(const Expr &E, const VarDecl *V) {
  return anyExpr(E, [&](const Expr &X) {
    const auto *N = dyn_cast<NameExpr>(&X);
    return N && N->Decl == V;
  });
}

bool host::mentions(const Stmt &S, const VarDecl *V) {
  return anyInStmt(S, [&](const Expr &X) {
    const auto *N = dyn_cast<NameExpr>(&X);
    return N && N->Decl == V;
  });
}

//===----------------------------------------------------------------------===//
// SyncInfo
//===----------------------------------------------------------------------===//

// The functions F reaches are settled first, callees before callers: hasSync
// of a body then meets only settled functions instead of recursing into
// each callee (one C++ frame per call of a chain).
bool SyncInfo::hasSync(const FunctionDecl &F) {
  if (auto It = Fns.find(&F); It != Fns.end())
    return It->second;
  settleCalleesFirst(
      F,
      [&](const FunctionDecl &G) {
        // false while on the search's path: recursion is rejected by the
        // verifier; this only guards.
        return Fns.try_emplace(&G, false).second;
      },
      [&](const FunctionDecl &G) { Fns[&G] = G.Body && hasSync(*G.Body); });
  return Fns.lookup(&F);
}

SyncInfo::InlinedNesting SyncInfo::inlinedNesting(const FunctionDecl &F) {
  if (auto It = Nesting.find(&F); It != Nesting.end())
    return It->second;
  settleCalleesFirst(
      F, [&](const FunctionDecl &G) { return Nesting.try_emplace(&G).second; },
      [&](const FunctionDecl &G) {
        InlinedNesting N;
        if (G.Body)
          forEachCallAt(*G.Body, 1, [&](const CallExpr &C, unsigned Depth) {
            if (!hasSync(*C.Fn))
              return;
            uint64_t Levels = Depth + uint64_t(Nesting.lookup(C.Fn).Levels);
            if (Levels > N.Levels)
              N = {static_cast<unsigned>(std::min<uint64_t>(Levels, UINT32_MAX)), &C};
          });
        Nesting[&G] = N;
      });
  return Nesting.lookup(&F);
}

bool SyncInfo::hasSync(const Expr &E) {
  auto It = Exprs.find(&E);
  if (It != Exprs.end())
    return It->second;
  bool R = false;
  if (const auto *C = dyn_cast<CallExpr>(&E))
    R = isSyncBuiltin(C->Builtin) || (C->Fn && hasSync(*C->Fn));
  if (!R)
    forEachChild(E, [&](const Expr &C) { R = R || hasSync(C); });
  Exprs[&E] = R;
  return R;
}

bool SyncInfo::hasSync(const Stmt &S) {
  auto It = Stmts.find(&S);
  if (It != Stmts.end())
    return It->second;
  bool R = false;
  forEachPart(
      S, [&](const Expr &E) { R = R || hasSync(E); }, [&](const Stmt &C) { R = R || hasSync(C); });
  Stmts[&S] = R;
  return R;
}

bool SyncInfo::runsAtBlockLevel(const Stmt &S) {
  if (auto It = BlockLevel.find(&S); It != BlockLevel.end())
    return It->second;
  bool R = hasSync(S) || IterationMajor.contains(&S);
  if (!R && (isa<IfStmt>(S) || isa<BlockStmt>(S)))
    forEachPart(S, [](const Expr &) {}, [&](const Stmt &C) { R = R || runsAtBlockLevel(C); });
  BlockLevel[&S] = R;
  return R;
}

static bool isLockBuiltin(const Expr &E) {
  const auto *C = dyn_cast<CallExpr>(&E);
  return C && (C->Builtin == BuiltinFunc::AtomicCas || C->Builtin == BuiltinFunc::AtomicExch);
}

bool SyncInfo::mayTakeLock(const FunctionDecl &F) {
  if (auto It = LockFns.find(&F); It != LockFns.end())
    return It->second;
  settleCalleesFirst(
      F, [&](const FunctionDecl &G) { return LockFns.try_emplace(&G, false).second; },
      [&](const FunctionDecl &G) { LockFns[&G] = G.Body && mayTakeLock(*G.Body); });
  return LockFns.lookup(&F);
}

bool SyncInfo::mayTakeLock(const Stmt &S) {
  return anyInStmt(S, [&](const Expr &E) {
    const auto *C = dyn_cast<CallExpr>(&E);
    return isLockBuiltin(E) || (C && C->Fn && mayTakeLock(*C->Fn));
  });
}

/// True when evaluating \p E may read memory or call a function: a
/// condition that could be waiting for another thread's store.
static bool mayReadMemory(const Expr &E) {
  return anyExpr(E, [](const Expr &X) {
    if (isa<IndexExpr>(X))
      return true;
    const auto *C = dyn_cast<CallExpr>(&X);
    return C && !C->Construct && (C->Fn || !isPureBuiltin(C->Builtin));
  });
}

/// True when \p E is a compile-time constant: literals and `const`s only.
static bool isConstantExpr(const Expr &E) {
  return !anyExpr(E, [](const Expr &X) {
    switch (X.getKind()) {
    case Expr::Name: {
      const VarDecl *D = cast<NameExpr>(X).Decl;
      return !D || D->Storage != StorageKind::Const;
    }
    case Expr::Call:
    case Expr::Index:
    case Expr::Member:
      return true;
    default:
      return false;
    }
  });
}

// A loop that qualifies (the header's rules) is chosen as a whole, and
// nothing inside it is looked at; `if`s, blocks and synchronising loops
// are looked into. Iterative: `if`s may nest as deep as the parser allows.
bool SyncInfo::chooseIterationMajor(const Stmt &S, const BodyPlan &Plan) {
  auto NotUniform = [&](const Expr *E) { return E && (hasSync(*E) || !Plan.isUniform(*E)); };
  bool Chose = false;
  std::vector<const Stmt *> Work = {&S};
  while (!Work.empty()) {
    const Stmt &X = *Work.back();
    Work.pop_back();
    bool Candidate = false;
    switch (X.getKind()) {
    case Stmt::While: {
      const auto &W = cast<WhileStmt>(X);
      if (hasSync(X))
        Work.push_back(W.Body.get());
      else
        Candidate = NotUniform(W.Cond.get()) && !mayReadMemory(*W.Cond) && !mayTakeLock(X);
      break;
    }
    case Stmt::For: {
      const auto &F = cast<ForStmt>(X);
      if (hasSync(X))
        Work.push_back(F.Body.get());
      else
        Candidate =
            (NotUniform(F.Begin.get()) || NotUniform(F.End.get()) || NotUniform(F.Step.get())) &&
            !isConstantExpr(*F.End) && !mayTakeLock(X);
      break;
    }
    case Stmt::If:
    case Stmt::Block:
      forEachPart(X, [](const Expr &) {}, [&](const Stmt &C) { Work.push_back(&C); });
      break;
    default:
      break;
    }
    if (Candidate) {
      IterationMajor.insert(&X);
      Chose = true;
    }
  }
  return Chose;
}

bool SyncInfo::markIterationMajor(const BlockStmt &Body, const BodyPlan &Plan) {
  if (!chooseIterationMajor(Body, Plan))
    return false;
  BlockLevel.clear(); // answers given before may have changed
  return true;
}

//===----------------------------------------------------------------------===//
// BodyPlan
//===----------------------------------------------------------------------===//

BodyPlan::BodyPlan(const BlockStmt &Body, bool IsKernel, SyncInfo &Sync)
    : IsKernel(IsKernel), Sync(Sync) {
  collectCandidates(Body);
  // Dropping a variable can make a condition non-uniform, which can drop
  // others: iterate to the fixpoint (the set only shrinks).
  do {
    Changed = false;
    walkBlock(Body, /*Conv=*/true);
  } while (Changed);
  for (const VarDecl *V : Candidates)
    Plan[V] = Storage::Uniform;
  planLocality(Body);
}

Storage BodyPlan::getStorage(const VarDecl *V) const {
  auto It = Plan.find(V);
  return It == Plan.end() ? Storage::Frame : It->second;
}

// Every scalar declared at block level (directly in a synchronising body,
// or in the blocks of its synchronising if/while/for) starts as a
// candidate for uniform storage, and so does the index of a block-level
// `for`.
void BodyPlan::collectCandidates(const BlockStmt &B) {
  auto AddDecl = [&](const DeclStmt &D) {
    if (!D.Var.Ty.isArray() && D.Init &&
        (D.Var.Storage == StorageKind::Let || D.Var.Storage == StorageKind::Var))
      Candidates.insert(&D.Var);
  };
  for (const StmtPtr &SP : B.Body) {
    const Stmt &S = *SP;
    if (const auto *D = dyn_cast<DeclStmt>(&S)) {
      AddDecl(*D);
      continue;
    }
    if (!Sync.runsAtBlockLevel(S))
      continue;
    if (const auto *I = dyn_cast<IfStmt>(&S)) {
      forEachBlockLevelBranch(*I, Sync, [&](const BlockStmt &Blk) { collectCandidates(Blk); });
    } else if (const auto *W = dyn_cast<WhileStmt>(&S)) {
      // The variable of a general `for` is declared at block level too.
      if (const auto *D = dyn_cast_or_null<DeclStmt>(W->Init.get()))
        AddDecl(*D);
      collectCandidates(*W->Body);
    } else if (const auto *F = dyn_cast<ForStmt>(&S)) {
      Candidates.insert(&F->Index);
      collectCandidates(*F->Body);
    } else if (const auto *Blk = dyn_cast<BlockStmt>(&S)) {
      collectCandidates(*Blk);
    }
  }
}

bool BodyPlan::isUniform(const Expr &E) const {
  switch (E.getKind()) {
  case Expr::IntLit:
  case Expr::FloatLit:
  case Expr::BoolLit:
    return true;
  case Expr::Name: {
    const auto &N = cast<NameExpr>(E);
    if (!N.Decl)
      return N.Builtin != BuiltinValue::None &&
             getBuiltinValueInfo(N.Builtin).Varies != VariesPer::Thread;
    if (N.Decl->Storage == StorageKind::Const)
      return true;
    if (N.Decl->Storage == StorageKind::Param)
      return IsKernel; // a function's parameters differ per call
    return Candidates.contains(N.Decl);
  }
  case Expr::Member: {
    if (cast<MemberExpr>(E).IsField) // a field of a value, or of an element
      return isUniform(*cast<MemberExpr>(E).Base);
    const auto &N = cast<NameExpr>(*cast<MemberExpr>(E).Base);
    return N.Builtin != BuiltinValue::None &&
           getBuiltinValueInfo(N.Builtin).Varies != VariesPer::Thread;
  }
  case Expr::Unary:
    return cast<UnaryExpr>(E).Op != UnaryOp::AddrOf && isUniform(*cast<UnaryExpr>(E).Operand);
  case Expr::Binary:
    return isUniform(*cast<BinaryExpr>(E).LHS) && isUniform(*cast<BinaryExpr>(E).RHS);
  case Expr::Cond: {
    const auto &Q = cast<CondExpr>(E);
    return isUniform(*Q.C) && isUniform(*Q.T) && isUniform(*Q.F);
  }
  case Expr::Cast:
    return isUniform(*cast<CastExpr>(E).Operand);
  case Expr::Call: {
    const auto &C = cast<CallExpr>(E);
    if (!C.Construct && (C.Fn || !isPureBuiltin(C.Builtin)))
      return false;
    for (const ExprPtr &A : C.Args)
      if (!isUniform(*A))
        return false;
    return true;
  }
  case Expr::Index:
    return false; // memory may differ between the threads' reads
  }
  return false;
}

// Pure: no memory reads, no side effects, no mutable variables. Such an
// initializer can be evaluated again in any later thread loop and give the
// same value (KIR arithmetic never traps).
bool BodyPlan::isPure(const Expr &E) const {
  switch (E.getKind()) {
  case Expr::IntLit:
  case Expr::FloatLit:
  case Expr::BoolLit:
    return true;
  case Expr::Member: // a builtin's component, or a field of what its base is
    return !cast<MemberExpr>(E).IsField || isPure(*cast<MemberExpr>(E).Base);
  case Expr::Name: {
    const auto &N = cast<NameExpr>(E);
    if (!N.Decl)
      return true;
    switch (N.Decl->Storage) {
    case StorageKind::Const:
    case StorageKind::Param:
    case StorageKind::LoopIndex:
      return true;
    case StorageKind::Let: {
      // Values kept only inside one thread loop are gone by the next.
      auto It = Plan.find(N.Decl);
      return It != Plan.end() && It->second != Storage::RegionLocal;
    }
    default:
      return false;
    }
  }
  case Expr::Unary: {
    const auto &U = cast<UnaryExpr>(E);
    if (U.Op != UnaryOp::AddrOf)
      return isPure(*U.Operand);
    // &a[i], &t[y][x]: an address, not a read.
    const auto *Ix = dyn_cast<IndexExpr>(U.Operand.get());
    if (!Ix || !isPure(*Ix->Idx))
      return false;
    const NameExpr *Base = indexedName(*Ix);
    if (Base && Base->Decl && Base->Decl->Ty.isArray()) {
      // Every index of the element, each dimension's.
      for (const auto *Row = dyn_cast<IndexExpr>(Ix->Base.get()); Row;
           Row = dyn_cast<IndexExpr>(Row->Base.get()))
        if (!isPure(*Row->Idx))
          return false;
      auto It = Plan.find(Base->Decl);
      return Base->Decl->Storage == StorageKind::Shared ||
             (It != Plan.end() && It->second == Storage::Frame);
    }
    return isPure(*Ix->Base);
  }
  case Expr::Binary: {
    // `&&` and `||` branch; a recomputation must be straight-line code.
    const auto &Bin = cast<BinaryExpr>(E);
    return Bin.Op != BinaryOp::LAnd && Bin.Op != BinaryOp::LOr && isPure(*Bin.LHS) &&
           isPure(*Bin.RHS);
  }
  case Expr::Cond:
    return false; // it branches, like `&&`
  case Expr::Cast:
    return isPure(*cast<CastExpr>(E).Operand);
  case Expr::Call: {
    const auto &C = cast<CallExpr>(E);
    if (!C.Construct && (C.Fn || !isPureBuiltin(C.Builtin)))
      return false;
    for (const ExprPtr &A : C.Args)
      if (!isPure(*A))
        return false;
    return true;
  }
  case Expr::Index:
    return false;
  }
  return false;
}

// The variables a call with `out`/`inout` arguments assigns: such a call
// is the whole expression of an expression statement, a declaration or a
// `return` (the verifier's rule), so only those are looked at.
void BodyPlan::dropOutArgs(const Stmt &S) {
  const Expr *E = nullptr;
  if (const auto *X = dyn_cast<ExprStmt>(&S))
    E = X->E.get();
  else if (const auto *D = dyn_cast<DeclStmt>(&S))
    E = D->Init.get();
  else if (const auto *R = dyn_cast<ReturnStmt>(&S))
    E = R->Value.get();
  const auto *C = dyn_cast_or_null<CallExpr>(E);
  if (!C || !C->hasOutArgs())
    return;
  for (size_t I = 0; I < C->Args.size(); ++I)
    if (const auto *N = dyn_cast<NameExpr>(C->Args[I].get());
        N && C->argMode(I) != ParamMode::In && Candidates.erase(N->Decl))
      Changed = true;
}

void BodyPlan::dropAssignedIn(const Stmt &S) {
  dropOutArgs(S);
  if (const auto *A = dyn_cast<AssignStmt>(&S)) {
    // `x = ...` or a field of it, `x.a = ...`.
    if (const NameExpr *N = assignedVariable(*A->Target))
      if (Candidates.erase(N->Decl))
        Changed = true;
    return;
  }
  forEachPart(S, [](const Expr &) {}, [&](const Stmt &C) { dropAssignedIn(C); });
}

// One pass over the block-level statements. Conv ("convergent") is true
// where every thread that is still running the body is active: no thread
// is masked by a divergent condition, a `break`/`continue` or (in an
// inlined function) a `return`. A uniform `var` may only be assigned
// there: a masked thread would otherwise miss the assignment that its
// private copy would not have seen.
bool BodyPlan::walkBlock(const BlockStmt &B, bool Conv) {
  for (const StmtPtr &S : B.Body)
    Conv = walkStmt(*S, Conv);
  return Conv;
}

bool BodyPlan::walkStmt(const Stmt &S, bool Conv) {
  auto Drop = [&](const VarDecl *V) {
    if (Candidates.erase(V))
      Changed = true;
  };
  auto SyncFree = [&](const Expr *E) { return !E || !Sync.hasSync(*E); };
  auto Uniform = [&](const Expr *E) { return !E || (SyncFree(E) && isUniform(*E)); };
  // A variable passed `out` takes a value per thread: never uniform.
  dropOutArgs(S);

  if (!Sync.runsAtBlockLevel(S)) {
    // A statement that runs inside a thread loop; only a direct
    // declaration or assignment may keep a variable uniform.
    if (const auto *D = dyn_cast<DeclStmt>(&S)) {
      if (Candidates.contains(&D->Var) &&
          (!Uniform(D->Init.get()) || (D->Var.Storage == StorageKind::Var && !Conv)))
        Drop(&D->Var);
    } else if (const auto *A = dyn_cast<AssignStmt>(&S);
               A && isa<NameExpr>(*A->Target) &&
               Candidates.contains(cast<NameExpr>(*A->Target).Decl)) {
      if (!Conv || !Uniform(A->Value.get()))
        Drop(cast<NameExpr>(*A->Target).Decl);
    } else {
      dropAssignedIn(S);
    }
    return Conv && !leavesStmt(S, /*CountReturns=*/!IsKernel);
  }

  switch (S.getKind()) {
  case Stmt::Decl:
    Drop(&cast<DeclStmt>(S).Var);
    return Conv;
  case Stmt::Assign:
    dropAssignedIn(S);
    return Conv;
  case Stmt::Block:
    return walkBlock(cast<BlockStmt>(S), Conv);
  case Stmt::If: {
    const auto &I = cast<IfStmt>(S);
    bool U = Uniform(I.Cond.get());
    walkBlock(*I.Then, Conv && U);
    if (const auto *EB = dyn_cast_or_null<BlockStmt>(I.Else.get()))
      walkBlock(*EB, Conv && U);
    else if (I.Else)
      walkStmt(*I.Else, Conv && U);
    return Conv && !leavesStmt(S, !IsKernel);
  }
  case Stmt::While: {
    // A general `for`'s init runs once, before the loop; its update at the
    // end of every iteration, where the body's threads are active again
    // unless it can leave (break, or return when inlined).
    const auto &W = cast<WhileStmt>(S);
    if (W.Init)
      walkStmt(*W.Init, Conv);
    bool U = Uniform(W.Cond.get());
    bool BodyConv = Conv && U && !leavesStmt(*W.Body, !IsKernel);
    walkBlock(*W.Body, BodyConv);
    if (W.Update)
      walkStmt(*W.Update, BodyConv);
    return Conv && !leavesStmt(S, !IsKernel);
  }
  case Stmt::For: {
    const auto &F = cast<ForStmt>(S);
    bool U = Uniform(F.Begin.get()) && Uniform(F.End.get()) && Uniform(F.Step.get());
    if (!U)
      Drop(&F.Index);
    walkBlock(*F.Body, Conv && U && !leavesStmt(*F.Body, !IsKernel));
    return Conv && !leavesStmt(S, !IsKernel);
  }
  default:
    return Conv;
  }
}

// Non-uniform block-level declarations: a variable that no statement
// after the next thread-loop boundary mentions lives in one thread loop;
// an immutable one with a pure initializer is recomputed where needed;
// the rest go to the frame.
void BodyPlan::planLocality(const BlockStmt &B) {
  auto IsBoundary = [&](const Stmt &S) {
    if (Sync.runsAtBlockLevel(S))
      return true;
    // A uniform assignment runs once per block, between thread loops.
    const auto *A = dyn_cast<AssignStmt>(&S);
    if (!A)
      return false;
    const auto *N = dyn_cast<NameExpr>(A->Target.get());
    return N && getStorage(N->Decl) == Storage::Uniform && Plan.count(N->Decl);
  };
  for (size_t I = 0; I < B.Body.size(); ++I) {
    const Stmt &S = *B.Body[I];
    if (const auto *D = dyn_cast<DeclStmt>(&S)) {
      const VarDecl *V = &D->Var;
      if (V->Storage != StorageKind::Let && V->Storage != StorageKind::Var)
        continue;
      if (Plan.count(V))
        continue; // uniform
      size_t J = I + 1;
      while (J < B.Body.size() && !IsBoundary(*B.Body[J]))
        ++J;
      bool UsedLater = false;
      for (size_t K = J; K < B.Body.size() && !UsedLater; ++K)
        UsedLater = mentions(*B.Body[K], V);
      if (!UsedLater)
        Plan[V] = Storage::RegionLocal;
      else if (V->Storage == StorageKind::Let && D->Init && !Sync.hasSync(*D->Init) &&
               isPure(*D->Init))
        Plan[V] = Storage::Remat;
      else
        Plan[V] = Storage::Frame;
      continue;
    }
    if (!Sync.runsAtBlockLevel(S))
      continue;
    if (const auto *I = dyn_cast<IfStmt>(&S)) {
      forEachBlockLevelBranch(*I, Sync, [&](const BlockStmt &Blk) { planLocality(Blk); });
    } else if (const auto *W = dyn_cast<WhileStmt>(&S)) {
      // A general `for`'s variable that is not uniform lives in the frame,
      // as a block-level `for` index does.
      if (const auto *D = dyn_cast_or_null<DeclStmt>(W->Init.get()); D && !Plan.count(&D->Var))
        Plan[&D->Var] = Storage::Frame;
      planLocality(*W->Body);
    } else if (const auto *F = dyn_cast<ForStmt>(&S)) {
      if (!Plan.count(&F->Index))
        Plan[&F->Index] = Storage::Frame;
      planLocality(*F->Body);
    } else if (const auto *Blk = dyn_cast<BlockStmt>(&S)) {
      planLocality(*Blk);
    }
  }
}
