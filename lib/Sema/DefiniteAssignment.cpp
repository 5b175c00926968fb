//===- DefiniteAssignment.cpp - KIR verifier: reads before assignment -----===//
//
// Part of gridjit. A `let` or `var` declared without an initializer
// (`var x: f32;`) must be assigned on every path before it is read, and a
// `let` so declared is assigned once (docs/LangRef.md, "Definite
// assignment"). This pass follows Java's definite (un)assignment rules on
// the structured tree, in one forward walk per function body:
//
//  * the state is, per such variable, "assigned on every path to here"
//    (Assigned) and "assigned on some path to here" (Maybe); after a
//    `break`, `continue` or `return` the state is unreachable, which
//    counts every variable as assigned and none as maybe-assigned;
//  * `if`/`else` joins its arms (Assigned on both, Maybe on either); an
//    `if` without `else` joins the then-arm with the state before it;
//  * a loop's body may not run: after `while c` or `for` the variables
//    assigned are those assigned before the loop. The one exception is a
//    `while true` (the literal), which ends only through a `break`: after
//    it, what is assigned at every `break` (and nothing when it has none:
//    the code after it is unreachable);
//  * expressions assign nothing in KIR, so `&&`, `||` and `?:` need no
//    rule of their own: every read in them is checked against the state
//    before the expression;
//  * a `let` may be assigned only where no path has assigned it yet, and
//    not inside a loop that does not also contain its declaration (a loop
//    may repeat the assignment), which keeps the walk to one pass over
//    each loop body.
//
// A read that fails is reported once per path: the variable then counts
// as assigned, so its later reads do not repeat the error.
//
// `out` parameters (LangRef, "Out and inout parameters") are tracked as
// variables declared without an initializer at the function's start, and
// must be assigned at every `return` and at a reachable end of the body.
// A call with `out`/`inout` arguments assigns its `out` and `inout`
// variables after the call; such a call must be a statement's whole
// expression (an expression statement, the initializer of a declaration,
// the value of a `return`), so that every other expression still assigns
// nothing. Not an assignment's value: `t[i] = f(out i)` would depend on
// whether the target's index is read before or after the call.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <initializer_list>
#include <iterator>

using namespace gridjit;
using namespace gridjit::sema;

namespace {

/// What the walk knows at one point of the body.
struct State {
  bool Unreachable = false;
  llvm::BitVector Assigned; ///< assigned on every path to here
  llvm::BitVector Maybe;    ///< assigned on some path to here
};

/// The control-flow merge of two states.
State join(const State &A, const State &B) {
  if (A.Unreachable)
    return B;
  if (B.Unreachable)
    return A;
  State R = A;
  R.Assigned &= B.Assigned;
  R.Maybe |= B.Maybe;
  return R;
}

State unreachable(size_t N) {
  State S;
  S.Unreachable = true;
  S.Assigned.resize(N, true);
  S.Maybe.resize(N, false);
  return S;
}

class DefiniteAssignment {
public:
  explicit DefiniteAssignment(Checker &C) : C(C) {}

  void run(const FunctionDecl &F) {
    for (const auto &P : F.Params)
      if (P && P->Mode == ParamMode::Out && !F.IsKernel) { // a kernel's is an error
        Index.try_emplace(P.get(), Vars.size());
        Vars.push_back(P.get());
        DeclLoopDepth.push_back(0);
        OutParams.push_back(P.get());
      }
    fit(Cur);
    walkBlock(*F.Body);
    fit(Cur);
    if (Cur.Unreachable)
      return;
    for (const VarDecl *P : OutParams) {
      unsigned I = Index.lookup(P);
      if (!Cur.Assigned.test(I))
        C.error(P->Loc, "'out' parameter " + quote(P->Name) + " of " + quote(F.Name) + " is " +
                            (Cur.Maybe.test(I) ? "not assigned on every path"
                                               : "not assigned on any path") +
                            " to the end of the function");
    }
  }

private:
  /// A loop being walked: the join of the states at its `break`s, and the
  /// union of what any path through its body may assign.
  struct Loop {
    State Breaks;
    llvm::BitVector Maybe;
  };

  /// The index of a tracked variable, or -1.
  int indexOf(const VarDecl *V) const {
    auto It = Index.find(V);
    return It == Index.end() ? -1 : static_cast<int>(It->second);
  }

  /// Makes \p S's bit vectors as long as the variables seen so far (a new
  /// variable is unassigned; in an unreachable state, assigned).
  void fit(State &S) const {
    S.Assigned.resize(Vars.size(), S.Unreachable);
    S.Maybe.resize(Vars.size(), false);
  }

  void declare(const DeclStmt &D) {
    const VarDecl &V = D.Var;
    if (D.Init || D.CopyOf || !(V.Storage == StorageKind::Let || V.Storage == StorageKind::Var) ||
        !(V.Ty.isScalar() || V.Ty.isPointer() || V.Ty.isStruct()))
      return;
    auto [It, New] = Index.try_emplace(&V, Vars.size());
    if (New) {
      Vars.push_back(&V);
      DeclLoopDepth.push_back(Loops.size());
    }
    fit(Cur);
    // Declared again on each pass through a loop body: unassigned there.
    Cur.Assigned.reset(It->second);
    Cur.Maybe.reset(It->second);
  }

  /// " at L:C", or "" for a node made with the builder API.
  static std::string at(SourceLoc L) {
    if (!L.isValid())
      return "";
    return " at " + std::to_string(L.Line) + ":" + std::to_string(L.Col);
  }

  /// " (declared at L:C without an initializer)", or the same without the
  /// place for a module made with the builder API.
  static std::string declNote(const VarDecl &V) {
    if (V.Storage == StorageKind::Param)
      return " (an 'out' parameter, declared" + at(V.Loc) + ")";
    return " (declared" + at(V.Loc) + " without an initializer)";
  }

  void read(const NameExpr &N) {
    int I = indexOf(N.Decl);
    if (I < 0 || Cur.Unreachable)
      return;
    fit(Cur);
    if (Cur.Assigned.test(I))
      return;
    const VarDecl &V = *N.Decl;
    if (Cur.Maybe.test(I))
      C.error(N.getLoc(), quote(V.Name) +
                              " may be used before it is assigned: not every path to "
                              "here assigns it" +
                              declNote(V));
    else
      C.error(N.getLoc(), quote(V.Name) + " is used before it is assigned" + declNote(V));
    Cur.Assigned.set(I); // one report per path
  }

  void assign(const NameExpr &N) {
    int I = indexOf(N.Decl);
    if (I < 0)
      return;
    fit(Cur);
    const VarDecl &V = *N.Decl;
    if (V.Storage == StorageKind::Let) {
      if (Loops.size() > DeclLoopDepth[I])
        C.error(N.getLoc(), "cannot assign to " + quote(V.Name) +
                                " inside a loop: it is declared with 'let' outside the loop, "
                                "which may assign it more than once; declare it with 'var'");
      else if (!Cur.Unreachable && Cur.Maybe.test(I))
        C.error(N.getLoc(), "cannot assign twice to " + quote(V.Name) + ": it is declared with " +
                                "'let' and " + (Cur.Assigned.test(I) ? "is" : "may be") +
                                " assigned already; declare it with 'var'");
    }
    if (Cur.Unreachable)
      return;
    Cur.Assigned.set(I);
    Cur.Maybe.set(I);
  }

  // Reads in an expression tree, left to right (none of them assigns).
  // With a work list, not recursion: an expression may be 256 levels
  // high, below statements nested as deep, and each level's frame counts
  // (test/Sema/deep-trees.test runs in 1 MiB of stack, also under ASan).
  /// When \p AllowOutCall, \p Root may be a call with `out`/`inout`
  /// arguments (it is a statement's whole expression); elsewhere one is an
  /// error.
  void readsIn(const Expr *Root, bool AllowOutCall = false) {
    llvm::SmallVector<const Expr *, 32> Work;
    auto Push = [&](std::initializer_list<const Expr *> Children) {
      // Reversed, so that the leftmost is read first.
      for (auto It = std::rbegin(Children); It != std::rend(Children); ++It)
        if (*It)
          Work.push_back(*It);
    };
    Push({Root});
    while (!Work.empty()) {
      const Expr *E = Work.pop_back_val();
      switch (E->getKind()) {
      case Expr::IntLit:
      case Expr::FloatLit:
      case Expr::BoolLit:
        break;
      case Expr::Name:
        read(*cast<NameExpr>(E));
        break;
      case Expr::Unary:
        Push({cast<UnaryExpr>(E)->Operand.get()});
        break;
      case Expr::Binary:
        Push({cast<BinaryExpr>(E)->LHS.get(), cast<BinaryExpr>(E)->RHS.get()});
        break;
      case Expr::Cond:
        Push({cast<CondExpr>(E)->C.get(), cast<CondExpr>(E)->T.get(), cast<CondExpr>(E)->F.get()});
        break;
      case Expr::Cast:
        Push({cast<CastExpr>(E)->Operand.get()});
        break;
      case Expr::Call: {
        const auto &Call = *cast<CallExpr>(E);
        if ((E != Root || !AllowOutCall) && Call.hasOutArgs())
          C.error(
              Call.getLoc(),
              "a call with 'out' or 'inout' arguments must be a statement of "
              "its own, the initializer of a 'let' or 'var' statement, or the value of a 'return'");
        // An `out` variable is assigned by the call, not read; `out p[i]`
        // reads `p` and `i`.
        for (size_t I = Call.Args.size(); I-- > 0;)
          if (const Expr *A = Call.Args[I].get();
              A && !(modeOf(Call, I) == ParamMode::Out && isa<NameExpr>(A)))
            Work.push_back(A);
        break;
      }
      case Expr::Index:
        Push({cast<IndexExpr>(E)->Base.get(), cast<IndexExpr>(E)->Idx.get()});
        break;
      case Expr::Member:
        Push({cast<MemberExpr>(E)->Base.get()});
        break;
      }
    }
  }

  /// The mode of argument \p I: as written, or where the call left it out
  /// (an error of its own), the parameter's, so that no error follows.
  static ParamMode modeOf(const CallExpr &Call, size_t I) {
    if (Call.argMode(I) != ParamMode::In || !Call.Fn || I >= Call.Fn->Params.size() ||
        !Call.Fn->Params[I])
      return Call.argMode(I);
    return Call.Fn->Params[I]->Mode;
  }

  /// The variables a top-level call \p E assigns (its `out` and `inout`
  /// arguments that are names), after its reads.
  void assignsOf(const Expr *E) {
    if (const auto *Call = dyn_cast_or_null<CallExpr>(E))
      for (size_t I = 0; I < Call->Args.size(); ++I)
        if (const auto *N = dyn_cast_or_null<NameExpr>(Call->Args[I].get());
            N && modeOf(*Call, I) != ParamMode::In)
          assign(*N);
  }
  void readsAndAssignsIn(const Expr *E) {
    readsIn(E, /*AllowOutCall=*/true);
    assignsOf(E);
  }

  void walkBlock(const BlockStmt *B) {
    if (B)
      for (const StmtPtr &S : B->Body)
        walk(S.get());
  }
  void walkBlock(const BlockStmt &B) { walkBlock(&B); }

  /// Leaves the current path: the rest of it is unreachable.
  void leave() { Cur = unreachable(Vars.size()); }

  /// Walks a loop body from the current state; returns the state at its
  /// end joined with those at its `continue`s (only Maybe is used), and
  /// the loop's record. A general `for`'s \p Update runs after the body
  /// and its `continue`s: its reads are checked against the state at the
  /// loop's entry (what every iteration has; conservative, like the
  /// body's own first reads), and what it assigns is assigned in the loop.
  Loop walkLoopBody(const BlockStmt *Body, const Stmt *Update = nullptr) {
    State Entry = Cur;
    Loops.push_back({unreachable(Vars.size()), llvm::BitVector(Vars.size())});
    walkBlock(Body);
    fit(Cur);
    if (Update) {
      Loops.back().Maybe.resize(Vars.size());
      Loops.back().Maybe |= Cur.Maybe;
      Cur = std::move(Entry);
      walk(Update);
      fit(Cur);
    }
    Loop L = std::move(Loops.back());
    Loops.pop_back();
    L.Maybe.resize(Vars.size());
    L.Maybe |= Cur.Maybe;
    fit(L.Breaks);
    return L;
  }

  /// After a loop whose body may not run: what was assigned before it,
  /// and what it may have assigned.
  void afterLoop(State Before, const Loop &L) {
    fit(Before);
    if (!Before.Unreachable)
      Before.Maybe |= L.Maybe;
    Cur = std::move(Before);
  }

  // Each statement with states of its own is walked by a function of its
  // own, kept out of walk(): walk() recurses once per level of nesting, and
  // under ASan every State in its frame would take its room (with
  // redzones) at each level; test/Sema/deep-trees.test walks about 500
  // levels in 1 MiB of stack.
  LLVM_ATTRIBUTE_NOINLINE void walkIf(const IfStmt &I) {
    readsIn(I.Cond.get());
    State Before = Cur;
    walkBlock(I.Then.get());
    State Then = std::move(Cur);
    Cur = std::move(Before);
    walk(I.Else.get());
    fit(Then);
    fit(Cur);
    Cur = join(Then, Cur);
  }

  LLVM_ATTRIBUTE_NOINLINE void walkWhile(const WhileStmt &W) {
    // A general `for`'s declaration: its variable always has a value (one
    // without is an error of its own, not repeated at every read).
    if (const auto *D = dyn_cast_or_null<DeclStmt>(W.Init.get())) {
      readsIn(D->Init.get());   // a call with `out` arguments is an error here
      assignsOf(D->Init.get()); // (reported once, not again at each read)
    }
    readsIn(W.Cond.get());
    State Before = Cur;
    Loop L = walkLoopBody(W.Body.get(), W.Update.get());
    const auto *Lit = dyn_cast_or_null<BoolLitExpr>(W.Cond.get());
    if (Lit && Lit->Value) {
      // Left only through a `break`: what every `break` has assigned.
      Cur = std::move(L.Breaks);
      return;
    }
    afterLoop(std::move(Before), L);
  }

  LLVM_ATTRIBUTE_NOINLINE void walkFor(const ForStmt &F) {
    readsIn(F.Begin.get());
    readsIn(F.End.get());
    readsIn(F.Step.get());
    State Before = Cur;
    Loop L = walkLoopBody(F.Body.get());
    afterLoop(std::move(Before), L);
  }

  /// `break` or `continue`.
  void walkJump(const Stmt &S) {
    if (!Loops.empty()) {
      Loop &L = Loops.back();
      fit(Cur);
      L.Maybe.resize(Vars.size());
      L.Maybe |= Cur.Maybe;
      if (S.getKind() == Stmt::Break) {
        fit(L.Breaks);
        L.Breaks = join(L.Breaks, Cur);
      }
    }
    leave();
  }

  void walk(const Stmt *S) {
    if (!S)
      return;
    switch (S->getKind()) {
    case Stmt::Decl: {
      const auto &D = *cast<DeclStmt>(S);
      readsAndAssignsIn(D.Init.get());
      return declare(D);
    }
    case Stmt::Assign: {
      const auto &A = *cast<AssignStmt>(S);
      const auto *N = dyn_cast_or_null<NameExpr>(A.Target.get());
      if (!N || A.Op != AssignOp::Assign)
        readsIn(A.Target.get()); // `x += e` reads x; `a[i] = e` reads i
      readsIn(A.Value.get());
      if (N)
        assign(*N);
      return;
    }
    case Stmt::If:
      return walkIf(*cast<IfStmt>(S));
    case Stmt::While:
      return walkWhile(*cast<WhileStmt>(S));
    case Stmt::For:
      return walkFor(*cast<ForStmt>(S));
    case Stmt::Break:
    case Stmt::Continue:
      return walkJump(*S);
    case Stmt::Return:
      readsAndAssignsIn(cast<ReturnStmt>(S)->Value.get());
      checkOutsAt(*S);
      return leave();
    case Stmt::ExprS:
      return readsAndAssignsIn(cast<ExprStmt>(S)->E.get());
    case Stmt::Block:
      return walkBlock(cast<BlockStmt>(S));
    }
  }

  /// Every `out` parameter is assigned at the `return` \p S.
  void checkOutsAt(const Stmt &S) {
    if (Cur.Unreachable)
      return;
    fit(Cur);
    for (const VarDecl *P : OutParams) {
      unsigned I = Index.lookup(P);
      if (!Cur.Assigned.test(I))
        C.error(S.getLoc(),
                "'out' parameter " + quote(P->Name) + " is " +
                    (Cur.Maybe.test(I) ? "not assigned on every path to" : "not assigned before") +
                    " this 'return' (declared" + at(P->Loc) + ")");
    }
  }

  Checker &C;
  /// The function's `out` parameters (also in Vars).
  std::vector<const VarDecl *> OutParams;
  /// The variables declared without an initializer, by index.
  llvm::DenseMap<const VarDecl *, unsigned> Index;
  std::vector<const VarDecl *> Vars;
  /// How many loops enclose each variable's declaration.
  std::vector<size_t> DeclLoopDepth;
  std::vector<Loop> Loops;
  State Cur;
};

} // namespace

void Checker::checkDefiniteAssignment(const FunctionDecl &F) {
  if (F.Body)
    DefiniteAssignment(*this).run(F);
}
