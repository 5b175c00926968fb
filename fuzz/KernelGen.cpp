//===- KernelGen.cpp - Random valid KIR kernels from fuzzer bytes ---------===//
//
// Part of gridjit (docs/Fuzzing.md). See KernelGen.h for what a generated
// kernel promises. Every choice reads the fuzzer's bytes; once they run out
// every choice is 0, which always means the smallest option (a literal, no
// more statements), so every input gives a finite kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace gridjit::fuzz;

namespace {

enum Ty { B, I8, U16, I32, U32, I64, U64, F32, F64, NumTys };

const char *tyName(Ty T) {
  static const char *const Names[] = {"bool", "i8",  "u16", "i32", "u32",
                                      "i64",  "u64", "f32", "f64"};
  return Names[T];
}
bool isInt(Ty T) { return T >= I8 && T <= U64; }
bool isFloat(Ty T) { return T == F32 || T == F64; }
bool isSigned(Ty T) { return T == I8 || T == I32 || T == I64; }
unsigned width(Ty T) {
  switch (T) {
  case I8:
    return 8;
  case U16:
    return 16;
  case I32:
  case U32:
    return 32;
  default:
    return 64;
  }
}

struct Var {
  std::string Name;
  Ty T;
  bool Mutable = false;
  bool Array = false; ///< `var NAME: [T; 8];`
};

struct Fn {
  std::string Name;
  std::vector<Ty> Params;
  /// Per parameter: "" (by value), "out" or "inout". A function with
  /// either is called only as a statement, its arguments places.
  std::vector<std::string> Modes;
  Ty Ret;
  bool hasModes() const {
    for (const std::string &M : Modes)
      if (!M.empty())
        return true;
    return false;
  }
};

class Gen {
public:
  explicit Gen(ByteReader &In) : In(In) {}
  GeneratedKernel run();

private:
  ByteReader &In;
  std::string Out;
  std::string Indent;
  std::vector<std::vector<Var>> Scopes;
  std::vector<Fn> Fns;
  bool InKernel = false;
  bool ShReady = false;
  int LoopDepth = 0;
  int Names = 0;
  int StmtBudget = 0;
  int NodeBudget = 0;

  std::string fresh(const char *Prefix) { return Prefix + std::to_string(Names++); }
  void line(const std::string &S) { Out += Indent + S + "\n"; }
  void push() {
    Scopes.emplace_back();
    Indent += "  ";
  }
  void pop() {
    Scopes.pop_back();
    Indent.resize(Indent.size() - 2);
  }
  void declare(Var V) { Scopes.back().push_back(std::move(V)); }

  Ty anyScalar() { return Ty(In.below(NumTys)); }
  Ty anyNumeric() { return Ty(1 + In.below(NumTys - 1)); }
  Ty anyInt() { return Ty(I8 + In.below(U64 - I8 + 1)); }

  std::vector<const Var *> varsOf(Ty T, bool Arrays, bool MutableOnly) {
    std::vector<const Var *> R;
    for (auto &S : Scopes)
      for (auto &V : S)
        if (V.T == T && V.Array == Arrays && (!MutableOnly || V.Mutable))
          R.push_back(&V);
    return R;
  }

  std::string literal(Ty T);
  std::string leaf(Ty T, int Depth);
  std::string expr(Ty T, int Depth);
  std::string index(unsigned Mask, int Depth) {
    return "((" + expr(I32, Depth) + ") & " + std::to_string(Mask) + ")";
  }
  std::string call(const Fn &F, int Depth) {
    std::string S = F.Name + "(";
    for (size_t I = 0; I < F.Params.size(); ++I)
      S += (I ? ", " : "") + expr(F.Params[I], Depth);
    return S + ")";
  }
  /// A call of \p F as a statement: an `out`/`inout` argument is an
  /// element of a local array or a mutable scalar not passed already; ""
  /// when no place is left for one.
  std::string callStmt(const Fn &F, int Depth) {
    std::string S = F.Name + "(";
    std::vector<const Var *> Used;
    for (size_t I = 0; I < F.Params.size(); ++I) {
      S += I ? ", " : "";
      if (F.Modes[I].empty()) {
        S += expr(F.Params[I], Depth);
        continue;
      }
      S += F.Modes[I] + " ";
      auto As = varsOf(F.Params[I], true, false);
      if (!As.empty() && In.flag()) {
        S += As[In.below(uint32_t(As.size()))]->Name + "[" + index(7, 1) + "]";
        continue;
      }
      std::vector<const Var *> Vs;
      for (const Var *V : varsOf(F.Params[I], false, true))
        if (std::find(Used.begin(), Used.end(), V) == Used.end())
          Vs.push_back(V);
      if (Vs.empty())
        return "";
      Used.push_back(Vs[In.below(uint32_t(Vs.size()))]);
      S += Used.back()->Name;
    }
    return S + ");";
  }
  void stmts(int Depth);
  void stmt(int Depth);
  /// The statements of a loop body whose scope is open, then its end.
  void loopBodyAndClose(int Depth) {
    ++LoopDepth;
    stmts(Depth + 1);
    --LoopDepth;
    pop();
    line("}");
  }
  void function();
};

std::string Gen::literal(Ty T) {
  if (T == B)
    return In.flag() ? "true" : "false";
  if (isFloat(T)) {
    static const double Nice[] = {0.0,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  2.0,
                                  3.0,
                                  -0.0,
                                  0.1,
                                  1e30,
                                  -1e-30,
                                  1e-40,
                                  1e300,
                                  1e-310,
                                  16777217.0,
                                  65504.0,
                                  1e38,
                                  3.14159265358979,
                                  4.5,
                                  -2.5,
                                  1e-45};
    double V;
    unsigned Pick = In.below(24);
    if (Pick < std::size(Nice)) {
      V = Nice[Pick];
    } else {
      uint64_t Bits = In.u64();
      if (T == F32) {
        uint32_t B32 = uint32_t(Bits);
        float F;
        std::memcpy(&F, &B32, 4);
        V = F;
      } else {
        std::memcpy(&V, &Bits, 8);
      }
    }
    if (T == F32)
      V = double(float(V)); // may overflow to inf: replaced below
    if (!std::isfinite(V))
      V = 1.5;
    bool Neg = std::signbit(V);
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), T == F32 ? "%.9g" : "%.17g", std::fabs(V));
    std::string S = Buf;
    if (S.find_first_of(".e") == std::string::npos)
      S += ".0";
    S += tyName(T);
    return Neg ? "(-" + S + ")" : S;
  }
  static const uint64_t Nice[] = {0,   1,   2,    3,     5,     7,          8,          15,
                                  16,  31,  32,   33,    63,    64,         127,        128,
                                  255, 256, 1000, 65535, 65536, 0x7fffffff, 0x80000000, 0xffffffff};
  uint64_t V;
  unsigned Pick = In.below(32);
  bool Negate = false;
  if (Pick < std::size(Nice)) {
    V = Nice[Pick];
    Negate = isSigned(T) && In.flag();
  } else {
    V = In.u64();
  }
  unsigned W = width(T);
  uint64_t Mask = W == 64 ? ~uint64_t(0) : (uint64_t(1) << W) - 1;
  V &= Mask;
  if (!isSigned(T))
    return std::to_string(V) + tyName(T);
  // Signed: the magnitude of a negative value, written as -N.
  uint64_t SignBit = uint64_t(1) << (W - 1);
  if (V & SignBit) {
    uint64_t Mag = (~V + 1) & Mask; // SignBit for the minimum
    return "(-" + std::to_string(Mag) + tyName(T) + ")";
  }
  if (Negate && V != 0)
    return "(-" + std::to_string(V) + tyName(T) + ")";
  return std::to_string(V) + tyName(T);
}

std::string Gen::leaf(Ty T, int Depth) {
  // Choice 0 is always a literal.
  switch (In.below(6)) {
  case 0:
    return literal(T);
  case 1:
  case 2: {
    auto Vs = varsOf(T, false, false);
    if (!Vs.empty())
      return Vs[In.below(uint32_t(Vs.size()))]->Name;
    return literal(T);
  }
  case 3: {
    if (!InKernel)
      break;
    switch (T) {
    case I32:
      return In.flag() ? "t" : "g";
    case U32:
      return "s1";
    case I64:
      return "s2";
    case U64:
      return "s3";
    case F32:
      return "s4";
    case F64:
      return "s5";
    default:
      break;
    }
    break;
  }
  case 4: {
    if (!InKernel || Depth <= 0)
      break;
    switch (T) {
    case I32:
      if (In.flag())
        return "s0";
      if (In.flag()) // pointer arithmetic: at most 31 + 31 < 64
        return "(ia + " + index(31, Depth - 1) + ")[" + index(31, Depth - 1) + "]";
      return "ia[" + index(63, Depth - 1) + "]";
    case I64:
      if (ShReady && In.flag())
        return "sh[(t + (" + expr(I32, Depth - 1) + " & 63)) % block_dim.x]";
      return "la[" + index(63, Depth - 1) + "]";
    case F32:
      return "fa[" + index(63, Depth - 1) + "]";
    case F64:
      return "da[" + index(63, Depth - 1) + "]";
    default:
      break;
    }
    break;
  }
  default: {
    if (Depth <= 0)
      break;
    auto As = varsOf(T, true, false);
    if (!As.empty()) {
      const std::string &A = As[In.below(uint32_t(As.size()))]->Name;
      if (In.flag()) // through a ptr<T, local>
        return "(&" + A + "[0] + " + index(7, Depth - 1) + ")[0]";
      return A + "[" + index(7, Depth - 1) + "]";
    }
    break;
  }
  }
  return literal(T);
}

std::string Gen::expr(Ty T, int Depth) {
  if (Depth <= 0 || NodeBudget <= 0 || In.below(3) == 0)
    return leaf(T, Depth);
  --NodeBudget;
  int D = Depth - 1;
  unsigned Kind = In.below(8);
  // Calls, casts and select work for every type.
  if (Kind == 7) {
    std::vector<const Fn *> Cands;
    for (const Fn &F : Fns)
      if (F.Ret == T && !F.hasModes())
        Cands.push_back(&F);
    if (!Cands.empty())
      return call(*Cands[In.below(uint32_t(Cands.size()))], D);
    Kind = 6;
  }
  if (Kind == 6) {
    // select evaluates both sides, `c ? a : b` only the chosen one; they
    // are lowered differently (a select; branches and a phi, hoisted at
    // block level on the host when a side synchronises).
    std::string C = expr(B, D), A = expr(T, D), E = expr(T, D);
    if (In.flag())
      return "(" + C + " ? " + A + " : " + E + ")";
    return "select(" + C + ", " + A + ", " + E + ")";
  }
  if (Kind == 5 && T != B) {
    Ty From = anyScalar();
    return "(" + expr(From, D) + " as " + tyName(T) + ")";
  }
  if (T == B) {
    switch (In.below(4)) {
    case 0: {
      static const char *const Ops[] = {"==", "!=", "<", "<=", ">", ">="};
      Ty U = anyNumeric();
      return "(" + expr(U, D) + " " + Ops[In.below(6)] + " " + expr(U, D) + ")";
    }
    case 1: {
      static const char *const Ops[] = {"&&", "||", "&", "|", "^", "==", "!="};
      return "(" + expr(B, D) + " " + Ops[In.below(7)] + " " + expr(B, D) + ")";
    }
    case 2:
      return "!" + expr(B, D);
    default:
      return leaf(B, D);
    }
  }
  if (isInt(T)) {
    switch (In.below(6)) {
    case 0:
    case 1: {
      static const char *const Ops[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"};
      return "(" + expr(T, D) + " " + Ops[In.below(10)] + " " + expr(T, D) + ")";
    }
    case 2:
      if (isSigned(T))
        return In.flag() ? "(-" + expr(T, D) + ")" : "abs(" + expr(T, D) + ")";
      return "(~" + expr(T, D) + ")";
    case 3:
      return std::string(In.flag() ? "min(" : "max(") + expr(T, D) + ", " + expr(T, D) + ")";
    case 4: {
      if (T == I32) {
        static const Ty Args[] = {I32, U32, I64, U64};
        return std::string(In.flag() ? "clz(" : "popc(") + expr(Args[In.below(4)], D) + ")";
      }
      if (width(T) >= 32)
        return "brev(" + expr(T, D) + ")";
      return "(~" + expr(T, D) + ")";
    }
    default:
      return leaf(T, D);
    }
  }
  // Floats.
  switch (In.below(6)) {
  case 0:
  case 1: {
    static const char *const Ops[] = {"+", "-", "*", "/"};
    return "(" + expr(T, D) + " " + Ops[In.below(4)] + " " + expr(T, D) + ")";
  }
  case 2: {
    static const char *const Fns1[] = {"abs", "floor", "ceil", "trunc", "round", "sqrt"};
    return std::string(Fns1[In.below(6)]) + "(" + expr(T, D) + ")";
  }
  case 3:
    return "(-" + expr(T, D) + ")";
  case 4:
    return "fma(" + expr(T, D) + ", " + expr(T, D) + ", " + expr(T, D) + ")";
  default:
    return leaf(T, D);
  }
}

void Gen::stmts(int Depth) {
  unsigned N = In.below(Depth == 0 ? 8 : 4);
  for (unsigned I = 0; I < N && StmtBudget > 0; ++I)
    stmt(Depth);
}

void Gen::stmt(int Depth) {
  --StmtBudget;
  constexpr int ED = 4; // expression depth
  // Case 11 came last (the general loop): stored inputs keep their
  // kernels where they pick the same cases (the empty input picks 0).
  switch (In.below(12)) {
  case 0:
  case 1: { // let / var
    Ty T = anyScalar();
    bool Mut = In.flag();
    std::string N = fresh("v");
    line(std::string(Mut ? "var " : "let ") + N + ": " + tyName(T) + " = " + expr(T, ED) + ";");
    declare({N, T, Mut});
    return;
  }
  case 2: { // assignment
    Ty T = anyScalar();
    auto Vs = varsOf(T, false, true);
    if (Vs.empty())
      return;
    const Var &V = *Vs[In.below(uint32_t(Vs.size()))];
    std::string Op = "=";
    if (In.flag()) {
      if (isInt(T)) {
        static const char *const Ops[] = {
            "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
        Op = Ops[In.below(10)];
      } else if (isFloat(T)) {
        static const char *const Ops[] = {"+=", "-=", "*=", "/="};
        Op = Ops[In.below(4)];
      } else {
        static const char *const Ops[] = {"&=", "|=", "^="};
        Op = Ops[In.below(3)];
      }
    }
    line(V.Name + " " + Op + " " + expr(T, ED) + ";");
    return;
  }
  case 3: { // if / else
    if (Depth >= 3)
      return;
    line("if " + expr(B, ED) + " {");
    push();
    stmts(Depth + 1);
    pop();
    if (In.flag()) {
      line("} else {");
      push();
      stmts(Depth + 1);
      pop();
    }
    line("}");
    return;
  }
  case 4: { // for
    if (Depth >= 2)
      return;
    std::string N = fresh("i");
    std::string Range;
    if (In.flag()) {
      int A = int(In.below(4)), E = A + int(In.below(7));
      Range = std::to_string(A) + "i32.." + std::to_string(E) + "i32 step " +
              std::to_string(1 + In.below(3)) + "i32";
    } else {
      Range = "0i32.." + index(7, 2);
    }
    line("for " + N + " in " + Range + " {");
    push();
    declare({N, I32, false});
    loopBodyAndClose(Depth);
    return;
  }
  case 5: { // while with a counter the body cannot assign
    if (Depth >= 2)
      return;
    std::string W = fresh("w");
    line("var " + W + ": i32 = 0;");
    declare({W, I32, false});
    line("while " + W + " < " + std::to_string(1 + In.below(6)) + " {");
    push();
    line(W + " += 1;");
    loopBodyAndClose(Depth);
    return;
  }
  case 6: { // local array
    Ty T = anyNumeric();
    std::string N = fresh("a");
    line("var " + N + ": [" + tyName(T) + "; 8];");
    declare({N, T, true, true});
    return;
  }
  case 7: { // array element store
    Ty T = anyNumeric();
    auto As = varsOf(T, true, false);
    if (As.empty())
      return;
    line(As[In.below(uint32_t(As.size()))]->Name + "[" + index(7, 2) + "] = " + expr(T, ED) + ";");
    return;
  }
  case 8: { // atomics (kernel only): global u64 or shared u32
    if (!InKernel)
      return;
    // Each element takes one operation (element k: Ops[k]), so that its
    // total does not depend on the order of the threads: `add` and `or` on
    // one element do not commute (iteration-major and thread-major order
    // gave two totals). The element byte is still read, so that inputs
    // keep their meaning elsewhere.
    static const char *const Ops[] = {"add", "sub", "min", "max", "and", "or", "xor"};
    unsigned K = In.below(7);
    std::string Op = Ops[K], Slot = std::to_string(K);
    bool Global = In.flag();
    (void)In.below(8);
    if (Global)
      line("atomic_" + Op + "(&acc[" + Slot + "], " + expr(U64, ED) + ");");
    else
      line("atomic_" + Op + "(&sa[" + Slot + "], " + expr(U32, ED) + ");");
    return;
  }
  case 11: { // the general loop: halving, counting down, doubling
    if (Depth >= 2)
      return;
    std::string N = fresh("g");
    std::string K = std::to_string(1 + In.below(40));
    std::string Head = "for var " + N + ": i32 = ";
    switch (In.below(3)) {
    case 0:
      Head += K + "; " + N + " > 0; " + N + " >>= 1 {";
      break;
    case 1:
      Head += K + "; " + N + " >= 0; " + N + " -= " + std::to_string(1 + In.below(3)) + " {";
      break;
    default:
      Head += "1; " + N + " < " + K + "; " + N + " *= 2 {";
      break;
    }
    line(Head);
    push();
    declare({N, I32, false}); // the body cannot assign it: the loop ends
    loopBodyAndClose(Depth);
    return;
  }
  case 9: { // break / continue
    if (LoopDepth == 0)
      return;
    line("if " + expr(B, 2) + " {");
    line(std::string("  ") + (In.flag() ? "break;" : "continue;"));
    line("}");
    return;
  }
  default: { // a block, or a call as a statement
    if (!Fns.empty() && In.flag()) {
      const Fn &F = Fns[In.below(uint32_t(Fns.size()))];
      if (std::string S = F.hasModes() ? callStmt(F, 2) : call(F, 2) + ";"; !S.empty())
        line(S);
      return;
    }
    if (Depth >= 3)
      return;
    line("{");
    push();
    stmts(Depth + 1);
    pop();
    line("}");
    return;
  }
  }
}

void Gen::function() {
  Fn F;
  F.Name = fresh("f");
  F.Ret = anyNumeric();
  unsigned NP = 1 + In.below(3);
  std::string Sig = "fn " + F.Name + "(";
  Scopes.emplace_back();
  for (unsigned I = 0; I < NP; ++I) {
    Ty T = anyScalar();
    std::string N = fresh("p");
    F.Params.push_back(T);
    F.Modes.emplace_back();
    Sig += (I ? ", " : "") + N + ": " + tyName(T);
    declare({N, T, false});
  }
  // Maybe an `inout` parameter (assignable in the body like a `var`) and
  // an `out` one (assigned last, so nothing reads it unassigned).
  std::string OutName;
  Ty OutTy = B;
  switch (In.below(4)) {
  case 1:
  case 3: {
    Ty T = anyNumeric();
    std::string N = fresh("io");
    F.Params.push_back(T);
    F.Modes.push_back("inout");
    Sig += ", inout " + N + ": " + tyName(T);
    declare({N, T, true});
    if (In.flag())
      break;
    [[fallthrough]];
  }
  case 2:
    OutTy = anyNumeric();
    OutName = fresh("o");
    F.Params.push_back(OutTy);
    F.Modes.push_back("out");
    Sig += ", out " + OutName + ": " + tyName(OutTy);
    break;
  default:
    break;
  }
  line(Sig + ") -> " + tyName(F.Ret) + " {");
  Indent = "  ";
  StmtBudget = 8;
  stmts(1);
  if (!OutName.empty())
    line(OutName + " = " + expr(OutTy, 4) + ";");
  line("return " + expr(F.Ret, 4) + ";");
  Indent.clear();
  line("}");
  Scopes.pop_back();
  Fns.push_back(std::move(F));
}

GeneratedKernel Gen::run() {
  GeneratedKernel K;
  K.Grid = 1 + In.below(GeneratedKernel::MaxGrid);
  K.Block = 1 + In.below(GeneratedKernel::MaxBlock);
  NodeBudget = 300;
  unsigned NF = In.below(4);
  for (unsigned I = 0; I < NF; ++I) {
    function();
    line("");
  }
  InKernel = true;
  line("kernel k(ia: ptr<i32>, la: ptr<i64>, fa: ptr<f32>, da: ptr<f64>, oi: ptr<i64>, "
       "of: ptr<f64>, acc: ptr<u64>, s0: i32, s1: u32, s2: i64, s3: u64, s4: f32, s5: f64) {");
  Indent = "  ";
  Scopes.emplace_back();
  line("shared sh: [i64; 64];");
  line("shared sa: [u32; 8];");
  line("let t: i32 = thread_idx.x;");
  line("let g: i32 = block_idx.x * block_dim.x + thread_idx.x;");
  line("if t == 0 {");
  line("  for j in 0..8 {");
  line("    sa[j] = 0u32;");
  line("  }");
  line("}");
  line("sync_threads();");
  StmtBudget = 24;
  stmts(0);
  line("sh[t] = " + expr(I64, 4) + ";");
  line("sync_threads();");
  ShReady = true;
  StmtBudget = 24;
  stmts(0);
  line("sync_threads();");
  line("if t == 0 {");
  line("  for j in 0..8 {");
  line("    atomic_add(&acc[8 + j], sa[j] as u64);");
  line("  }");
  line("}");
  // Every scalar of the kernel's outermost scope is a result.
  unsigned NI = 0, NFl = 0;
  for (const Var &V : Scopes.back()) {
    if (V.Array)
      continue;
    if (isFloat(V.T) && NFl < GeneratedKernel::OutSlots)
      line("of[g * " + std::to_string(GeneratedKernel::OutSlots) + " + " + std::to_string(NFl++) +
           "] = " + V.Name + " as f64;");
    else if (!isFloat(V.T) && NI < GeneratedKernel::OutSlots)
      line("oi[g * " + std::to_string(GeneratedKernel::OutSlots) + " + " + std::to_string(NI++) +
           "] = " + V.Name + " as i64;");
  }
  Scopes.pop_back();
  Indent.clear();
  line("}");
  K.Source = std::move(Out);

  // The inputs: a few special values, the rest from a seeded generator.
  uint64_t Seed = In.u64();
  auto Next = [&Seed] {
    uint64_t Z = (Seed += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  };
  static const double Special[] = {0.0,
                                   -0.0,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::max(),
                                   1.0,
                                   -1.5,
                                   0.5};
  for (unsigned I = 0; I < GeneratedKernel::InputElems; ++I) {
    uint64_t R = Next();
    K.IA.push_back(int32_t(uint32_t(R)));
    K.LA.push_back(int64_t(Next()));
    if (I < std::size(Special)) {
      K.FA.push_back(float(Special[I]));
      K.DA.push_back(Special[I]);
    } else {
      K.FA.push_back(float(int64_t(R % 2001) - 1000) / 8.0f);
      K.DA.push_back(double(int64_t(Next() % 200001) - 100000) / 64.0);
    }
  }
  K.S0 = int32_t(Next());
  K.S1 = uint32_t(Next());
  K.S2 = int64_t(Next());
  K.S3 = Next();
  K.S4 = float(int32_t(Next() % 1000)) / 4.0f;
  K.S5 = double(int64_t(Next() % 100000)) / 16.0;
  return K;
}

} // namespace

GeneratedKernel gridjit::fuzz::generateKernel(ByteReader &In) { return Gen(In).run(); }
