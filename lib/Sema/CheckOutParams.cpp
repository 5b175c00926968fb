//===- CheckOutParams.cpp - KIR verifier: out and inout arguments ---------===//
//
// Part of gridjit. The call-site rules of `out` and `inout` parameters
// (docs/LangRef.md, "Out and inout parameters"): the mode written before an
// argument matches the parameter's, the argument is a place the caller
// could assign (a `var`, a mutable or out parameter, an element) of exactly
// the parameter's type, and no variable is passed to two such parameters
// of one call. What is assigned when (the callee's out parameters before
// every return, the caller's variables after the call) is the definite
// assignment pass's (DefiniteAssignment.cpp).
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;
using namespace gridjit::sema;

static std::string modeName(ParamMode M) { return "'" + std::string(spelling(M)) + "'"; }

bool Checker::checkModedArg(CallExpr &C, unsigned I, const VarDecl &P) {
  Expr *A = C.Args[I].get();
  ParamMode AM = C.argMode(I);
  std::string Which = "argument " + std::to_string(I + 1) + " of " + quote(C.Callee);
  if (AM != P.Mode) {
    if (AM == ParamMode::In)
      error(startLoc(A), Which + " is an " + modeName(P.Mode) + " parameter (" + quote(P.Name) +
                             "): write " + modeName(P.Mode) + " before it");
    else if (P.Mode == ParamMode::In)
      error(startLoc(A), Which + " cannot be " + modeName(AM) + ": parameter " + quote(P.Name) +
                             " is passed by value");
    else
      error(startLoc(A), Which + " is " + modeName(P.Mode) + ", not " + modeName(AM));
    checkExpr(A, C.getLoc());
    return false;
  }
  if (AM == ParamMode::In)
    return checkArgAs(C, I, P.Ty).isValid();
  if (!A) {
    error(C.getLoc(), "malformed module: missing argument");
    return false;
  }
  // A place: what an assignment could name, but not a `let` (a deferred
  // `let` is assignable once, and the call is not written as that one
  // assignment).
  if (!isa<NameExpr>(A) && !isa<IndexExpr>(A)) {
    if (checkExpr(A, C.getLoc()).isValid())
      error(startLoc(A), "an " + modeName(AM) +
                             " argument must be a place the call can assign: a 'var', an array "
                             "element or 'p[i]'");
    return false;
  }
  if (auto *N = dyn_cast<NameExpr>(A)) {
    Resolved R = resolveName(N->Ident);
    if (R.Var && !R.Const && R.Var->Storage == StorageKind::Let) {
      N->Decl = R.Var;
      N->Ty = R.Var->Ty;
      error(N->getLoc(), "cannot pass " + quote(N->Ident) + " as " + modeName(AM) +
                             ": it is declared with 'let'; declare it with 'var'");
      return false;
    }
  }
  std::string What;
  Type T = checkAssignTarget(*A, What);
  if (!T.isValid())
    return false;
  if (!P.Ty.isValid() || T == P.Ty)
    return true;
  error(startLoc(A), Which + " must have type " + quote(P.Ty) + ", found " + quote(T));
  return false;
}

void Checker::checkOutAliasing(const CallExpr &C) {
  llvm::DenseMap<const VarDecl *, unsigned> First;
  for (unsigned I = 0; I < C.Args.size(); ++I) {
    const auto *N = dyn_cast_or_null<NameExpr>(C.Args[I].get());
    if (C.argMode(I) == ParamMode::In || !N || !N->Decl)
      continue;
    auto [It, New] = First.try_emplace(N->Decl, I);
    if (!New)
      error(N->getLoc(), quote(N->Ident) + " is passed to " + quote(C.Callee) +
                             " twice as 'out' or 'inout' (arguments " +
                             std::to_string(It->second + 1) + " and " + std::to_string(I + 1) +
                             "): the call would assign it twice");
  }
}

void Checker::rejectArgModes(const CallExpr &C) {
  for (unsigned I = 0; I < C.Args.size(); ++I)
    if (C.argMode(I) != ParamMode::In && C.Args[I]) {
      error(startLoc(C.Args[I]), "argument " + std::to_string(I + 1) + " of " + quote(C.Callee) +
                                     " cannot be " + modeName(C.argMode(I)) +
                                     ": only a device function has 'out' and 'inout' parameters");
      return;
    }
}
