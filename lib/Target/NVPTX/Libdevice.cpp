//===- Libdevice.cpp - libdevice and the math builtins on NVPTX -----------===//
//
// Part of gridjit. Transcendental math calls libdevice (`__nv_sinf`,
// `__nv_sin`, ...), which meets CUDA's documented accuracy because it is
// CUDA's implementation; the target links in the functions a module calls.
// Without libdevice, the f32 forms of rsqrt exp exp2 exp10 log log2 log10
// sin cos tan tanh pow fall back to the GPU's approximate instructions
// (ex2.approx, lg2.approx, sin.approx, cos.approx, rsqrt.approx);
// docs/Targets.md gives their accuracy, which is below CUDA's bounds for
// the same functions. Every other libdevice function, and every f64 one,
// is then a located error naming the builtin. The math that is exact on
// every target (copysign, rint, fdim, modf, isnan, ...) is not here but in
// lib/Lower/CommonLowerings.cpp, and needs no libdevice.
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "gridjit/Support/Environment.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <vector>

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;
using llvm::Value;

//===----------------------------------------------------------------------===//
// Finding and linking libdevice
//===----------------------------------------------------------------------===//

Expected<std::pair<std::string, std::string>>
gridjit::nvptx::findLibdevice(const std::string &Path) {
  std::vector<std::string> Candidates;
  if (!Path.empty()) {
    Candidates.push_back(Path);
  } else {
    if (std::optional<std::string> Home = getEnv(EnvVar::CudaHome))
      Candidates.push_back(*Home + "/nvvm/libdevice/libdevice.10.bc");
    Candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  }
  for (const std::string &C : Candidates) {
    auto Buf = llvm::MemoryBuffer::getFile(C);
    if (Buf)
      return std::make_pair(C, (*Buf)->getBuffer().str());
    if (!Path.empty())
      return llvm::createStringError(Buf.getError(), "cannot read libdevice '%s': %s", C.c_str(),
                                     Buf.getError().message().c_str());
  }
  return std::make_pair(std::string(), std::string());
}

llvm::Error gridjit::nvptx::linkLibdevice(llvm::Module &IR, llvm::StringRef Libdevice,
                                          llvm::StringRef Path) {
  bool NeedsLibdevice = false;
  for (const llvm::Function &F : IR)
    if (F.isDeclaration() && F.getName().starts_with("__nv_"))
      NeedsLibdevice = true;
  if (!NeedsLibdevice)
    return llvm::Error::success();
  // Lazy loading materialises only the functions the linker pulls in,
  // which is far cheaper than parsing all of libdevice for every compile.
  auto Lib = llvm::getLazyBitcodeModule(llvm::MemoryBufferRef(Libdevice, Path), IR.getContext());
  if (!Lib)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot read libdevice '%s': %s",
                                   Path.str().c_str(), llvm::toString(Lib.takeError()).c_str());
  (*Lib)->setTargetTriple(IR.getTargetTriple());
  (*Lib)->setDataLayout(IR.getDataLayout());
  if (llvm::Linker::linkModules(IR, std::move(*Lib), llvm::Linker::LinkOnlyNeeded))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot link libdevice '%s'",
                                   Path.str().c_str());
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The math builtins
//===----------------------------------------------------------------------===//

namespace {

using llvm::IRBuilder;
using namespace llvm::Intrinsic;

constexpr double Log2E = 1.4426950408889634, Ln2 = 0.6931471805599453,
                 Log10Of2 = 0.30102999566398120, Log2Of10 = 3.3219280948873623;

Value *approx(IRBuilder<> &B, llvm::Intrinsic::ID ID, Value *V) {
  return B.CreateIntrinsic(ID, {}, {V});
}
Value *f32(IRBuilder<> &B, double D) { return llvm::ConstantFP::get(B.getFloatTy(), D); }

// The approximate f32 form of each function, from the GPU's approximate
// instructions. X is the operand (Ops[0]); pow's exponent is Ops[1].
Value *approxRsqrt(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_rsqrt_approx_f, Ops[0]);
}
Value *approxExp(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_ex2_approx_f, B.CreateFMul(Ops[0], f32(B, Log2E)));
}
Value *approxExp2(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_ex2_approx_f, Ops[0]);
}
Value *approxLog(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return B.CreateFMul(approx(B, nvvm_lg2_approx_f, Ops[0]), f32(B, Ln2));
}
Value *approxLog2(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_lg2_approx_f, Ops[0]);
}
Value *approxLog10(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return B.CreateFMul(approx(B, nvvm_lg2_approx_f, Ops[0]), f32(B, Log10Of2));
}
Value *approxSin(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_sin_approx_f, Ops[0]);
}
Value *approxCos(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_cos_approx_f, Ops[0]);
}
Value *approxTan(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return B.CreateFDiv(approx(B, nvvm_sin_approx_f, Ops[0]), approx(B, nvvm_cos_approx_f, Ops[0]));
}
Value *approxTanh(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  // tanh|x| = (1 - e) / (1 + e) with e = 2^(-2 log2(e) |x|), sign restored.
  Value *X = Ops[0];
  Value *AbsX = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, X);
  Value *E = approx(B, nvvm_ex2_approx_f, B.CreateFMul(AbsX, f32(B, -2 * Log2E)));
  Value *T = B.CreateFDiv(B.CreateFSub(f32(B, 1), E), B.CreateFAdd(f32(B, 1), E));
  return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, T, X);
}
Value *approxPow(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  // x^y = 2^(y * log2 x): NaN for x < 0, as powf is for non-integer y.
  return approx(B, nvvm_ex2_approx_f, B.CreateFMul(Ops[1], approx(B, nvvm_lg2_approx_f, Ops[0])));
}
Value *approxExp10(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops) {
  return approx(B, nvvm_ex2_approx_f, B.CreateFMul(Ops[0], f32(B, Log2Of10)));
}

// One row per math builtin: its builtin, libdevice's name for it (without
// the `__nv_` prefix and the `f` of the f32 version), and its approximate
// f32 form (nullptr: none, so the builtin needs libdevice on f32 too).
// Operands are passed as they are (ldexp's second is an i32).
// clang-format off
#define GRIDJIT_NVPTX_MATH(X)                                                  \
  X(Rsqrt, "rsqrt", approxRsqrt)                                               \
  X(Exp, "exp", approxExp)                                                     \
  X(Exp2, "exp2", approxExp2)                                                  \
  X(Exp10, "exp10", approxExp10)                                               \
  X(Log, "log", approxLog)                                                     \
  X(Log2, "log2", approxLog2)                                                  \
  X(Log10, "log10", approxLog10)                                               \
  X(Sin, "sin", approxSin)                                                     \
  X(Cos, "cos", approxCos)                                                     \
  X(Tan, "tan", approxTan)                                                     \
  X(Tanh, "tanh", approxTanh)                                                  \
  X(Pow, "pow", approxPow)                                                     \
  X(Asin, "asin", nullptr)                                                     \
  X(Acos, "acos", nullptr)                                                     \
  X(Atan, "atan", nullptr)                                                     \
  X(Atan2, "atan2", nullptr)                                                   \
  X(Sinh, "sinh", nullptr)                                                     \
  X(Cosh, "cosh", nullptr)                                                     \
  X(Asinh, "asinh", nullptr)                                                   \
  X(Acosh, "acosh", nullptr)                                                   \
  X(Atanh, "atanh", nullptr)                                                   \
  X(Erf, "erf", nullptr)                                                       \
  X(Erfc, "erfc", nullptr)                                                     \
  X(Erfinv, "erfinv", nullptr)                                                 \
  X(Lgamma, "lgamma", nullptr)                                                 \
  X(Tgamma, "tgamma", nullptr)                                                 \
  X(Fmod, "fmod", nullptr)                                                     \
  X(Remainder, "remainder", nullptr)                                           \
  X(Hypot, "hypot", nullptr)                                                   \
  X(Cbrt, "cbrt", nullptr)                                                     \
  X(Rcbrt, "rcbrt", nullptr)                                                   \
  X(Log1p, "log1p", nullptr)                                                   \
  X(Expm1, "expm1", nullptr)                                                   \
  X(Ldexp, "ldexp", nullptr)
// clang-format on

struct MathFunction {
  BuiltinFunc Builtin;
  llvm::StringLiteral Libdevice;
  Value *(*ApproxF32)(IRBuilder<> &B, llvm::ArrayRef<Value *> Ops);
};

constexpr MathFunction MathFunctions[] = {
#define GRIDJIT_X(Id, Name, Approx) {BuiltinFunc::Id, Name, Approx},
    GRIDJIT_NVPTX_MATH(GRIDJIT_X)
#undef GRIDJIT_X
};

/// The error for math builtin \p F on the operand type of \p A without
/// libdevice.
llvm::Error needsLibdevice(LoweringContext &C, const OpArgs &A, BuiltinFunc F) {
  return C.error(A.Loc, "'" + llvm::Twine(builtinFuncName(F)) + "' on " + A.OperandTy.str() +
                            " on target 'nvptx' needs libdevice from the "
                            "CUDA toolkit, which was not found (set CUDA_HOME)");
}

/// A call of libdevice's `__nv_<Base>` (f64) or `__nv_<Base>f` (f32, by
/// the first operand's type) returning \p RetTy.
Value *callLibdevice(LoweringContext &C, llvm::StringRef Base, llvm::Type *RetTy,
                     llvm::ArrayRef<Value *> Ops) {
  bool F32 = Ops[0]->getType()->isFloatTy();
  std::string Name = ("__nv_" + Base + (F32 ? "f" : "")).str();
  std::vector<llvm::Type *> Params;
  for (Value *V : Ops)
    Params.push_back(V->getType());
  llvm::FunctionCallee Fn =
      C.IR.getOrInsertFunction(Name, llvm::FunctionType::get(RetTy, Params, false));
  return C.B.CreateCall(Fn, Ops);
}

Expected<Value *> lowerMath(LoweringContext &C, const OpArgs &A, const MathFunction &M) {
  const auto &T = static_cast<const NVPTXTarget &>(C.T);
  bool F32 = A.ResultTy.getScalarKind() == ScalarKind::F32;
  if (!T.hasLibdevice()) {
    if (F32 && M.ApproxF32)
      return M.ApproxF32(C.B, A.Operands);
    return needsLibdevice(C, A, M.Builtin);
  }
  return callLibdevice(C, M.Libdevice, A.Operands[0]->getType(), A.Operands);
}

/// frexp: libdevice's `__nv_frexp[f](x, int *e)` returns the mantissa and
/// stores the exponent into a local slot; frexp_mant and frexp_exp each
/// take one of the two (a kernel that asks for both calls it twice with
/// the same operand, which the optimiser merges after inlining).
Expected<std::pair<Value *, Value *>> libdeviceFrexp(LoweringContext &C, const OpArgs &A,
                                                     BuiltinFunc F) {
  const auto &T = static_cast<const NVPTXTarget &>(C.T);
  if (!T.hasLibdevice())
    return needsLibdevice(C, A, F);
  llvm::AllocaInst *Exp = C.createEntryAlloca(C.B.getInt32Ty(), "frexp.exp");
  Value *Mant = callLibdevice(C, "frexp", A.Operands[0]->getType(), {A.Operands[0], Exp});
  return std::make_pair(Mant, C.B.CreateLoad(C.B.getInt32Ty(), Exp));
}
Expected<Value *> lowerFrexpMant(LoweringContext &C, const OpArgs &A) {
  auto R = libdeviceFrexp(C, A, BuiltinFunc::FrexpMant);
  if (!R)
    return R.takeError();
  return R->first;
}
Expected<Value *> lowerFrexpExp(LoweringContext &C, const OpArgs &A) {
  auto R = libdeviceFrexp(C, A, BuiltinFunc::FrexpExp);
  if (!R)
    return R.takeError();
  return R->second;
}

/// The lowering of the math builtin \p F: its row of MathFunctions.
template <BuiltinFunc F> Expected<Value *> lowerMathBuiltin(LoweringContext &C, const OpArgs &A) {
  static constexpr const MathFunction *Row = [] {
    for (const MathFunction &M : MathFunctions)
      if (M.Builtin == F)
        return &M;
    return static_cast<const MathFunction *>(nullptr);
  }();
  static_assert(Row, "a math builtin without a row");
  return lowerMath(C, A, *Row);
}

} // namespace

llvm::Error gridjit::nvptx::registerMathLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit) {
  const LoweringEntry Table[] = {
#define GRIDJIT_X(Id, Name, Approx) {Op::Builtin##Id, lowerMathBuiltin<BuiltinFunc::Id>},
      GRIDJIT_NVPTX_MATH(GRIDJIT_X)
#undef GRIDJIT_X
          {Op::BuiltinFrexpMant, lowerFrexpMant},
      {Op::BuiltinFrexpExp, lowerFrexpExp},
  };
  return R.addAll(Table, Omit);
}
