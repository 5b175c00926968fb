//===- FuzzKIRDiff.cpp - libFuzzer target: differential testing of KIR ----===//
//
// Part of gridjit (docs/Fuzzing.md). The bytes drive a generator of valid,
// race-free KIR kernels with one defined result (KernelGen.h). Each kernel
// is checked against three oracles:
//   1. it verifies, and compiles for the host at -O0 and -O3 and for NVPTX;
//   2. the host target's -O0 and -O3 code, run on the same inputs, write
//      the same bytes to every output (floats bit for bit, but any NaN
//      equals any NaN: LLVM folds NaNs with another payload than x86
//      computes, and KIR cannot observe a payload); with more than one
//      block, -O3 on a runtime with two worker threads (blocks in
//      parallel) too;
//   3. the checked host code (HostTargetOptions::Check, docs/Check.md),
//      given every buffer's extent, finds nothing but the divisions and
//      shifts that KIR defines and CUDA does not (the kernels are race-free
//      and in bounds: any other finding is a false positive of the kernel
//      checker) and writes the same bytes;
//   4. ptxas accepts the NVPTX code (where ptxas exists). ptxas is a
//      separate process (~0.1 s), so only one input in
//      $GRIDJIT_FUZZ_PTXAS_EVERY (default 16; 1: every input; 0: never),
//      chosen by a hash of the input, is assembled; $GRIDJIT_FUZZ_PTXAS
//      names ptxas (default /usr/local/cuda/bin/ptxas).
// Any disagreement prints the kernel and aborts, so libFuzzer keeps the
// input. $GRIDJIT_FUZZ_PRINT=1 prints every generated kernel.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "KernelGen.h"

#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

using namespace gridjit;
using fuzz::GeneratedKernel;

namespace {
/// Host: the default (iteration-major loops); HostTM: every loop thread by
/// thread (HostTargetOptions::IterationMajor = false), the -O0 side.
std::unique_ptr<Target> Host, HostTM, NVPTX;
std::shared_ptr<const Target> HostChecked; // Host's checked twin (sm_80's limits)
std::unique_ptr<HostRuntime> RT, RT2;      // one and two worker threads
std::string Ptxas;
unsigned PtxasEvery = 16;
bool Print = false;

struct Results {
  std::vector<int64_t> OI;
  std::vector<double> OF;
  std::vector<uint64_t> Acc;
};

[[noreturn]] void finding(const std::string &What, const GeneratedKernel &K,
                          const std::string &Detail = {}) {
  fuzz::fail(What, "--- kernel (grid " + std::to_string(K.Grid) + ", block " +
                       std::to_string(K.Block) + "):\n" + K.Source + "--- detail:\n" + Detail);
}

Artifact compileHost(const GeneratedKernel &K, const Module &M, unsigned OptLevel,
                     const Target &T = *Host) {
  CompileOptions O;
  O.OptLevel = OptLevel;
  auto A = T.compile(M, O);
  if (!A)
    finding("the host target cannot compile a valid kernel at -O" + std::to_string(OptLevel), K,
            llvm::toString(A.takeError()));
  return std::move(*A);
}

Results runHost(const GeneratedKernel &K, const Artifact &A, unsigned OptLevel, HostRuntime &RT,
                bool Checked = false) {
  auto L = RT.load(A);
  if (!L)
    finding("the host runtime cannot load a kernel", K, llvm::toString(L.takeError()));
  size_t Threads = size_t(K.Grid) * K.Block;
  Results R;
  R.OI.assign(Threads * GeneratedKernel::OutSlots, 0);
  R.OF.assign(Threads * GeneratedKernel::OutSlots, 0);
  R.Acc.assign(GeneratedKernel::AccElems, 0);
  // The kernel reads its inputs only; copies keep K unchanged.
  std::vector<int32_t> IA = K.IA;
  std::vector<int64_t> LA = K.LA;
  std::vector<float> FA = K.FA;
  std::vector<double> DA = K.DA;
  // Every buffer with its extent (what a checked launch needs; unchecked
  // code ignores it).
  auto Buf = [](auto &V) {
    return KernelArg::pointer(V.data()).withExtent(V.size() * sizeof(V[0]));
  };
  KernelArg Args[] = {Buf(IA),
                      Buf(LA),
                      Buf(FA),
                      Buf(DA),
                      Buf(R.OI),
                      Buf(R.OF),
                      Buf(R.Acc),
                      KernelArg::i32(K.S0),
                      KernelArg::u32(K.S1),
                      KernelArg::i64(K.S2),
                      KernelArg::u64(K.S3),
                      KernelArg::f32(K.S4),
                      KernelArg::f64(K.S5)};
  LaunchConfig C;
  C.Grid.X = K.Grid;
  C.Block.X = K.Block;
  LaunchOptions LO;
  LO.TimeoutMilliseconds = 60000;
  // Checked: collect every distinct finding, so that the launch runs to
  // its end; the generator makes divisions by zero, MIN / -1 and shift
  // amounts out of range on purpose (KIR defines them), which the checker
  // reports as what CUDA leaves undefined. Anything else is a false
  // positive.
  LO.CheckMaxFindings = Checked ? 1u << 20 : 1;
  llvm::Error LE = RT.launch(**L, "k", C, Args, LO);
  if (Checked && LE) {
    std::string Unexpected;
    LE = llvm::handleErrors(std::move(LE), [&](const KernelCheckError &CE) {
      for (const CheckFinding &F : CE.getFindings())
        if (F.Kind != CheckFinding::DivisionByZero && F.Kind != CheckFinding::DivisionOverflow &&
            F.Kind != CheckFinding::ShiftAmount)
          Unexpected += F.Text + "\n";
    });
    if (!Unexpected.empty())
      finding("the kernel checker reports a valid kernel (a false positive), -O" +
                  std::to_string(OptLevel),
              K, Unexpected);
  }
  if (llvm::Error E = std::move(LE))
    finding("a valid kernel fails to run at -O" + std::to_string(OptLevel) +
                (Checked ? " (checked)" : ""),
            K, llvm::toString(std::move(E)));
  return R;
}

bool sameFloat(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B);
  return std::memcmp(&A, &B, sizeof(A)) == 0;
}

void compare(const GeneratedKernel &K, const Results &R0, const Results &R3,
             const char *What = "host -O0 and -O3 disagree", const char *A = "-O0",
             const char *B = "-O3") {
  for (size_t I = 0; I < R0.OI.size(); ++I)
    if (R0.OI[I] != R3.OI[I])
      finding(What, K,
              "oi[" + std::to_string(I) + "] (thread " +
                  std::to_string(I / GeneratedKernel::OutSlots) + ", integer result " +
                  std::to_string(I % GeneratedKernel::OutSlots) + "): " + A + " " +
                  std::to_string(R0.OI[I]) + ", " + B + " " + std::to_string(R3.OI[I]));
  for (size_t I = 0; I < R0.OF.size(); ++I)
    if (!sameFloat(R0.OF[I], R3.OF[I])) {
      char Buf[128];
      std::snprintf(Buf, sizeof(Buf), "%s %a, %s %a", A, R0.OF[I], B, R3.OF[I]);
      finding(What, K,
              "of[" + std::to_string(I) + "] (thread " +
                  std::to_string(I / GeneratedKernel::OutSlots) + ", float result " +
                  std::to_string(I % GeneratedKernel::OutSlots) + "): " + Buf);
    }
  for (size_t I = 0; I < R0.Acc.size(); ++I)
    if (R0.Acc[I] != R3.Acc[I])
      finding(What, K,
              "acc[" + std::to_string(I) + "]: " + A + " " + std::to_string(R0.Acc[I]) + ", " + B +
                  " " + std::to_string(R3.Acc[I]));
}

void checkPtx(const GeneratedKernel &K, const std::string &Ptx) {
  llvm::SmallString<128> In, Out, Err;
  if (llvm::sys::fs::createTemporaryFile("gridjit-fuzz", "ptx", In) ||
      llvm::sys::fs::createTemporaryFile("gridjit-fuzz", "cubin", Out) ||
      llvm::sys::fs::createTemporaryFile("gridjit-fuzz", "txt", Err))
    return; // no temporary files: skip this oracle for this input
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(In, EC);
    OS << Ptx;
  }
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Err),
                                                llvm::StringRef(Err)};
  llvm::StringRef Argv[] = {Ptxas, "-arch=sm_80", In, "-o", Out};
  int RC = llvm::sys::ExecuteAndWait(Ptxas, Argv, std::nullopt, Redirects);
  std::string Msg;
  if (RC != 0) {
    if (auto B = llvm::MemoryBuffer::getFile(Err))
      Msg = (*B)->getBuffer().str();
  }
  llvm::sys::fs::remove(In);
  llvm::sys::fs::remove(Out);
  llvm::sys::fs::remove(Err);
  if (RC != 0)
    finding("ptxas rejects the NVPTX code (exit " + std::to_string(RC) + ")", K,
            Msg + "\n--- ptx:\n" + Ptx);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  Host = fuzz::exitOnError(createHostTarget(), "host target");
  HostTargetOptions TM;
  TM.IterationMajor = false;
  HostTM = fuzz::exitOnError(createHostTarget(TM), "host target (thread-major)");
  HostChecked = fuzz::exitOnError(Host->makeChecked(80), "host target (checked)");
  NVPTXTargetOptions O;
  O.UseLibdevice = false; // the generator uses no libdevice functions
  NVPTX = fuzz::exitOnError(createNVPTXTarget(O), "nvptx target");
  HostRuntimeOptions RO;
  RO.NumThreads = 1;
  RT = fuzz::exitOnError(HostRuntime::create(RO), "host runtime");
  RO.NumThreads = 2;
  RT2 = fuzz::exitOnError(HostRuntime::create(RO), "host runtime (2 threads)");
  const char *P = std::getenv("GRIDJIT_FUZZ_PTXAS");
  Ptxas = P ? P : "/usr/local/cuda/bin/ptxas";
  if (!llvm::sys::fs::can_execute(Ptxas))
    Ptxas.clear();
  if (const char *E = std::getenv("GRIDJIT_FUZZ_PTXAS_EVERY"))
    PtxasEvery = unsigned(std::strtoul(E, nullptr, 10));
  Print = std::getenv("GRIDJIT_FUZZ_PRINT") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size > 2048)
    return -1;
  fuzz::ByteReader In(Data, Size);
  GeneratedKernel K = fuzz::generateKernel(In);
  if (Print)
    std::fprintf(stderr, "--- grid %u block %u\n%s", K.Grid, K.Block, K.Source.c_str());
  auto M = parseModule(K.Source, "gen.kir");
  if (!M)
    finding("a generated kernel does not parse", K, llvm::toString(M.takeError()));
  if (llvm::Error E = verifyModule(**M))
    finding("a generated kernel does not verify", K, llvm::toString(std::move(E)));
  CompileOptions O;
  O.OptLevel = 3;
  auto A = NVPTX->compile(**M, O);
  if (!A)
    finding("the NVPTX target cannot compile a valid kernel", K, llvm::toString(A.takeError()));
  if (!Ptxas.empty() && PtxasEvery &&
      llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Data, Size)) % PtxasEvery == 0)
    checkPtx(K, A->Payload);
  // -O0 with every loop run thread by thread, -O3 with divergent loops
  // iteration-major: the two orders CUDA allows must agree on a race-free
  // kernel, and so must the optimiser.
  Results R0 = runHost(K, compileHost(K, **M, 0, *HostTM), 0, *RT);
  Artifact A3 = compileHost(K, **M, 3);
  Results R3 = runHost(K, A3, 3, *RT);
  compare(K, R0, R3, "host -O0 (thread-major) and -O3 (iteration-major) disagree");
  if (Print) {
    auto NonZero = [](const auto &V) {
      size_t N = 0;
      for (auto X : V)
        N += X != 0;
      return N;
    };
    std::fprintf(stderr, "--- non-zero results: %zu integer, %zu float, %zu atomic\n",
                 NonZero(R3.OI), NonZero(R3.OF), NonZero(R3.Acc));
  }
  // Blocks on two worker threads: the kernel is race-free, so the same.
  if (K.Grid > 1) {
    Results R3P = runHost(K, A3, 3, *RT2);
    compare(K, R3, R3P, "one and two host worker threads disagree", "1 thread", "2 threads");
  }
  // Checked code (at -O1: cheaper to compile, and the checks do not depend
  // on the level) finds nothing in a race-free, in-bounds kernel, and
  // computes what unchecked code does.
  Results RC = runHost(K, compileHost(K, **M, 1, *HostChecked), 1, *RT2, /*Checked=*/true);
  compare(K, R3, RC, "unchecked and checked host code disagree", "unchecked", "checked");
  return 0;
}
