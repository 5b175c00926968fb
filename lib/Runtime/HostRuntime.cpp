//===- HostRuntime.cpp - Load and launch host kernels ---------------------===//
//
// Part of gridjit. Each LoadedModule owns an ORC LLJIT holding one
// artifact's object file. A launch checks the configuration and the
// arguments against the artifact's metadata, then hands blocks to the
// worker pool in chunks; each participating thread has its own block
// memory (shared memory and frames, mapped apart from the runtime's own
// state between guard pages, GuardedMemory.h) and calls the kernel's entry
// for a range of blocks. A cooperative (grid_sync) launch keeps every block's
// memory and runs the grid in phases: all blocks up to their next
// grid_sync, then all blocks on from it (docs/HostTarget.md).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Runtime/HostRuntime.h"

#include "GuardedMemory.h"
#include "KernelChecker.h"
#include "KernelFaults.h"
#include "PrintBuffer.h"
#include "StackCheck.h"
#include "WorkerPool.h"

#include "gridjit/Runtime/LaunchChecks.h"

#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/HalfFloat.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <sched.h>
#include <thread>
#include <tuple>

using namespace gridjit;
namespace abi = gridjit::hostabi;
using llvm::Error;

namespace {
//===----------------------------------------------------------------------===//
// Half-precision conversion helpers
//===----------------------------------------------------------------------===//

// LLVM lowers f16/bf16 conversions, where the CPU has no instruction for
// them, to calls of these compiler-rt/libgcc routines. A process need not
// have them (libgcc before GCC 13 has no bf16 ones), so kernels get
// gridjit's own (Support/HalfFloat.h), defined in their JITDylib ahead of
// the process's symbols. The signatures are the routines' ABI: _Float16
// and __bf16 travel in SSE registers on x86-64.
template <typename HalfT> HalfT fromBits(uint16_t Bits) {
  HalfT H;
  std::memcpy(&H, &Bits, sizeof H);
  return H;
}
template <typename HalfT> uint16_t toBits(HalfT H) {
  uint16_t Bits;
  std::memcpy(&Bits, &H, sizeof Bits);
  return Bits;
}
float gjExtendHfSf(_Float16 H) { return float(f16ToDouble(toBits(H))); }
double gjExtendHfDf(_Float16 H) { return f16ToDouble(toBits(H)); }
_Float16 gjTruncSfHf(float F) { return fromBits<_Float16>(f16FromDouble(F)); }
_Float16 gjTruncDfHf(double D) { return fromBits<_Float16>(f16FromDouble(D)); }
__bf16 gjTruncSfBf(float F) { return fromBits<__bf16>(bf16FromFloat(F)); }
__bf16 gjTruncDfBf(double D) { return fromBits<__bf16>(bf16FromDouble(D)); }

/// Defines the helpers above in \p JD under the routines' names.
Error defineHalfHelpers(llvm::orc::LLJIT &JIT, llvm::orc::JITDylib &JD) {
  const std::pair<const char *, void *> Helpers[] = {
      {"__extendhfsf2", reinterpret_cast<void *>(&gjExtendHfSf)},
      {"__extendhfdf2", reinterpret_cast<void *>(&gjExtendHfDf)},
      {"__truncsfhf2", reinterpret_cast<void *>(&gjTruncSfHf)},
      {"__truncdfhf2", reinterpret_cast<void *>(&gjTruncDfHf)},
      {"__truncsfbf2", reinterpret_cast<void *>(&gjTruncSfBf)},
      {"__truncdfbf2", reinterpret_cast<void *>(&gjTruncDfBf)},
  };
  llvm::orc::SymbolMap Map;
  for (const auto &[Name, Addr] : Helpers)
    Map[JIT.mangleAndIntern(Name)] = {llvm::orc::ExecutorAddr::fromPtr(Addr),
                                      llvm::JITSymbolFlags::Exported};
  return JD.define(llvm::orc::absoluteSymbols(std::move(Map)));
}

Error fail(ErrorKind K, const llvm::Twine &Msg) { return makeError(K, Msg); }

/// Memory for one block, 64-byte aligned: shared, frame, block frame.
struct BlockLayout {
  uint64_t SharedBytes = 0, FrameBytes = 0, BlockFrameBytes = 0;
  uint64_t total() const { return SharedBytes + FrameBytes + BlockFrameBytes; }
};

/// \p V rounded up to 64, where that fits in 64 bits.
std::optional<uint64_t> alignTo64(std::optional<uint64_t> V) {
  if (!V || *V > UINT64_MAX - 63)
    return std::nullopt;
  return llvm::alignTo(*V, 64);
}

/// \p A + \p B and \p A * \p B, where they fit in 64 bits (the
/// compiler's overflow checks: llvm::checkedAddUnsigned goes through APInt,
/// a tenth of an empty launch).
std::optional<uint64_t> add64(uint64_t A, uint64_t B) {
  uint64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<uint64_t> mul64(uint64_t A, uint64_t B) {
  uint64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

/// The memory of one block of a kernel described by \p D launched with
/// \p C, or std::nullopt when it does not fit in 64 bits (no machine has
/// it: an allocation that cannot succeed, never a size that wrapped).
std::optional<BlockLayout> layoutBlock(const abi::Descriptor &D, const LaunchConfig &C) {
  auto Shared = alignTo64(add64(D.StaticSharedBytes, uint64_t(C.DynamicSharedBytes)));
  auto Frame = alignTo64(mul64(D.FrameBytesPerThread, C.Block.count()));
  auto BlockFrame = alignTo64(D.FrameBytesPerBlock);
  if (!Shared || !Frame || !BlockFrame || !add64(*Shared, *Frame) ||
      !add64(*Shared + *Frame, *BlockFrame))
    return std::nullopt;
  BlockLayout L;
  L.SharedBytes = *Shared;
  L.FrameBytes = *Frame;
  L.BlockFrameBytes = *BlockFrame;
  return L;
}

void bindBlockMemory(abi::BlockContext &C, char *Mem, const BlockLayout &L) {
  C.Shared = Mem;
  C.Frame = Mem + L.SharedBytes;
  C.BlockFrame = Mem + L.SharedBytes + L.FrameBytes;
}

} // namespace

//===----------------------------------------------------------------------===//
// LoadedModule
//===----------------------------------------------------------------------===//

namespace {
/// A host artifact loaded into its own LLJIT, with every kernel's entry
/// and descriptor looked up.
struct HostModule final : LoadedModule {
  struct Kernel {
    const KernelInfo *Info = nullptr;
    abi::EntryFn Entry = nullptr;
    abi::Descriptor Desc{};
  };
  HostModule(std::vector<KernelInfo> Infos, std::vector<ConstantInfo> Consts)
      : LoadedModule(TargetKind::Host, std::move(Infos), std::move(Consts)) {}
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  llvm::StringMap<Kernel> ByName;
  /// Where each constant memory array lives: a global of the JIT-ed code.
  llvm::StringMap<void *> ConstantAddrs;
};
} // namespace

//===----------------------------------------------------------------------===//
// HostRuntime
//===----------------------------------------------------------------------===//

namespace {
/// What stops a launch between blocks: LaunchOptions::TimeoutMilliseconds
/// and LaunchOptions::Cancel. With either, workers run one block per call
/// and check() before each.
struct Watch {
  enum Reason { None, TimedOut, Cancelled };
  uint64_t Milliseconds = 0; ///< 0: no limit
  std::chrono::steady_clock::time_point Deadline;
  const CancelToken *Cancel = nullptr;

  bool active() const { return Milliseconds || Cancel; }
  /// Why the launch must stop now, if it must: a cancel first (one load),
  /// then the clock.
  Reason check() const {
    if (Cancel && Cancel->isCancelled())
      return Cancelled;
    if (Milliseconds && std::chrono::steady_clock::now() >= Deadline)
      return TimedOut;
    return None;
  }
  /// The error of a launch of \p K stopped for \p Why; \p Progress says
  /// how far it got ("after 3 of 10 blocks").
  Error error(Reason Why, const KernelInfo &K, const std::string &Progress) const {
    std::string Tail =
        ": stopped " + Progress + "; memory the kernel wrote until then stays written";
    if (Why == Cancelled)
      return fail(ErrorKind::Cancelled,
                  "kernel '" + K.Name + "' was cancelled (LaunchOptions::Cancel)" + Tail);
    return fail(ErrorKind::Timeout, "kernel '" + K.Name + "' did not finish within " +
                                        std::to_string(Milliseconds) +
                                        " ms (LaunchOptions::TimeoutMilliseconds)" + Tail);
  }
};
} // namespace

struct HostRuntime::Impl {
  Impl(const HostRuntimeOptions &O, std::unique_ptr<WorkerPool> P)
      : Opts(O), PoolPtr(std::move(P)), Pool(*PoolPtr) {}
  ~Impl() {
    if (HoldsHandlers)
      releaseFaultHandlers();
  }
  HostRuntimeOptions Opts;
  std::unique_ptr<WorkerPool> PoolPtr;
  WorkerPool &Pool;
  /// Device buffers, each between guard regions.
  GuardedBufferPool Buffers{bufferGuardBytes(), BufferKeptPages, BufferKeptBytes};
  /// Block memory, kept from one launch to the next (BlockKeptBytes): a
  /// launch takes a region for each worker and gives it back at its end.
  GuardedBufferPool Blocks{pageBytes(), BlockKeptPages, BlockKeptBytes};
  /// This runtime holds the fault handlers (holdFaultHandlers), from its
  /// first launch that catches faults until it is destroyed.
  std::atomic<bool> HoldsHandlers{false};
  std::mutex HoldLock;
  /// fork(): HoldLock is held while the fault handlers' lock is taken, so
  /// these hooks are newer than those (forkSafeFaultHandlers, in create).
  ForkHooks Fork{HoldLock, nullptr};

  Error holdHandlers();

  /// \p Print: the launch's print buffer (null for a kernel that does not print).
  Error runBlocks(const HostModule::Kernel &K, const LaunchConfig &Cfg, void *const *Args,
                  const BlockLayout &L, const Watch &W, bool CatchFaults, LaunchStats &Stats,
                  PrintBuffer *Print);
  Error runCooperative(const HostModule::Kernel &K, const LaunchConfig &Cfg, void *const *Args,
                       const BlockLayout &L, const Watch &W, bool CatchFaults, LaunchStats &Stats,
                       PrintBuffer *Print);
  /// A launch of checked code (Descriptor::Checked): its blocks one at a
  /// time, in order, on the calling thread, with a KernelChecker.
  Error runChecked(const HostModule::Kernel &K, const LaunchConfig &Cfg,
                   llvm::ArrayRef<KernelArg> Args, void *const *ArgPtrs, const BlockLayout &L,
                   const Watch &W, bool CatchFaults, LaunchStats &Stats, PrintBuffer *Print,
                   const LaunchOptions &Opts);

  /// Checked launches' shadow memory, kept from one to the next
  /// (ShadowCache: bounded by its cap). A checked launch borrows it under
  /// ShadowLock (not held while the kernel runs) and gives it back at its
  /// end; a checked launch that runs while another has it borrowed uses a
  /// fresh one of its own, dropped at its end unless the runtime's is gone.
  std::mutex ShadowLock;
  std::unique_ptr<ShadowCache> Shadow;

  /// The live device buffers (address -> bytes), for the extents of a
  /// checked launch's pointer arguments passed without one.
  std::mutex AllocationsLock;
  std::map<uint64_t, uint64_t> Allocations;
};

HostRuntime::HostRuntime(std::unique_ptr<Impl> I) : Runtime(TargetKind::Host), P(std::move(I)) {}
HostRuntime::~HostRuntime() = default;

unsigned HostRuntime::getNumThreads() const { return P->Pool.size(); }
const HostRuntimeOptions &HostRuntime::getOptions() const { return P->Opts; }

unsigned HostRuntime::availableCPUs() {
  // Large enough for any machine this runs on; CPU_ALLOC avoids the
  // 1024-CPU limit of a plain cpu_set_t.
  constexpr int MaxCPUs = 16384;
  cpu_set_t *Set = CPU_ALLOC(MaxCPUs);
  size_t Size = CPU_ALLOC_SIZE(MaxCPUs);
  unsigned N = 0;
  if (Set) {
    CPU_ZERO_S(Size, Set);
    if (sched_getaffinity(0, Size, Set) == 0)
      N = CPU_COUNT_S(Size, Set);
    CPU_FREE(Set);
  }
  if (N == 0)
    N = std::thread::hardware_concurrency();
  return std::max(1u, N);
}

llvm::Expected<std::unique_ptr<HostRuntime>> HostRuntime::create(const HostRuntimeOptions &Opts) {
  if (Opts.MaxCooperativeBlocks == 0)
    return fail(ErrorKind::InvalidArgument,
                "HostRuntimeOptions::MaxCooperativeBlocks must be at least 1");
  if (Opts.NumThreads > limits::MaxThreads)
    return fail(ErrorKind::InvalidArgument, "host runtime: " + std::to_string(Opts.NumThreads) +
                                                " threads is more than the limit of " +
                                                std::to_string(limits::MaxThreads));
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  forkSafeFaultHandlers(); // before the pool's and the runtime's hooks
  // Pool threads get alternate signal stacks only where faults are caught.
  // They spin before they sleep only when each can have a CPU.
  unsigned CPUs = availableCPUs();
  unsigned Threads = Opts.NumThreads ? Opts.NumThreads : CPUs;
  auto Pool = WorkerPool::create(Threads, Opts.CatchFaults,
                                 Threads <= CPUs ? WorkerPool::DefaultSpinMicroseconds : 0);
  if (!Pool)
    return Pool.takeError();
  return std::unique_ptr<HostRuntime>(
      new HostRuntime(std::make_unique<Impl>(Opts, std::move(*Pool))));
}

llvm::Expected<std::unique_ptr<LoadedModule>> HostRuntime::load(const Artifact &A) {
  if (A.Kind != TargetKind::Host)
    return fail(ErrorKind::InvalidArgument,
                "cannot load an artifact for target '" + std::string(getTargetName(A.Kind)) +
                    "' into the host runtime (compile it with the host target)");
  // Linking is LLVM's work too: a fork() waits for it (ForkSafety.h).
  LLVMSection InLLVM;
  auto JIT = llvm::orc::LLJITBuilder().create();
  if (!JIT)
    return JIT.takeError();
  // Kernels call the C library (libm, memset, memcpy) from this process.
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*JIT)->getDataLayout().getGlobalPrefix());
  if (!Gen)
    return Gen.takeError();
  (*JIT)->getMainJITDylib().addGenerator(std::move(*Gen));
  if (Error E = defineHalfHelpers(**JIT, (*JIT)->getMainJITDylib()))
    return std::move(E);
  if (Error E = (*JIT)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(A.Payload, "gridjit-host-module")))
    return std::move(E);

  auto I = std::make_unique<HostModule>(A.Kernels, A.Constants);
  for (const ConstantInfo &C : I->getConstants()) {
    auto Addr = (*JIT)->lookup(C.Symbol);
    if (!Addr)
      return fail(ErrorKind::Failed,
                  "constant memory '" + C.Name +
                      "' has no symbol in the loaded object: " + llvm::toString(Addr.takeError()));
    I->ConstantAddrs[C.Name] = Addr->toPtr<void *>();
  }
  for (const KernelInfo &KI : I->getKernels()) {
    auto Entry = (*JIT)->lookup(abi::EntryPrefix + KI.Name);
    if (!Entry)
      return fail(ErrorKind::Failed,
                  "kernel '" + KI.Name +
                      "' has no entry in the loaded object: " + llvm::toString(Entry.takeError()));
    auto Desc = (*JIT)->lookup(abi::DescriptorPrefix + KI.Name);
    if (!Desc)
      return fail(ErrorKind::Failed, "kernel '" + KI.Name +
                                         "' has no descriptor in the loaded object: " +
                                         llvm::toString(Desc.takeError()));
    HostModule::Kernel K;
    K.Info = &KI;
    K.Entry = Entry->toPtr<abi::EntryFn>();
    std::memcpy(&K.Desc, Desc->toPtr<const void *>(), sizeof(K.Desc));
    if (K.Desc.Version != abi::ABIVersion)
      return fail(ErrorKind::Failed, "kernel '" + KI.Name + "' was compiled for host ABI version " +
                                         std::to_string(K.Desc.Version) +
                                         ", this runtime runs version " +
                                         std::to_string(abi::ABIVersion));
    I->ByName[KI.Name] = K;
  }
  I->JIT = std::move(*JIT);
  return std::unique_ptr<LoadedModule>(std::move(I));
}

//===----------------------------------------------------------------------===//
// Checks before a launch
//===----------------------------------------------------------------------===//

/// The host's own limits, after checkLaunchConfig: shared memory per block
/// and the co-residency of a cooperative grid.
static Error checkHostLimits(const KernelInfo &K, const abi::Descriptor &D, const LaunchConfig &C,
                             const HostRuntimeOptions &Opts) {
  // Made only for an error: a launch that passes pays for no formatting.
  auto Where = [&] { return describeLaunch(K, C); };
  uint64_t Shared = D.StaticSharedBytes + C.DynamicSharedBytes;
  if (Shared > Opts.MaxSharedBytes)
    return fail(ErrorKind::Configuration,
                Where() + ": " + std::to_string(Shared) +
                    " bytes of shared memory per block exceed the limit of " +
                    std::to_string(Opts.MaxSharedBytes) + " bytes");
  if (K.Cooperative && C.Grid.count() > Opts.MaxCooperativeBlocks)
    return fail(
        ErrorKind::Configuration,
        Where() +
            ": the kernel calls grid_sync(), so its whole grid must be resident at "
            "once, but " +
            std::to_string(C.Grid.count()) + " blocks exceed the host's co-residency limit of " +
            std::to_string(Opts.MaxCooperativeBlocks) + " blocks; the largest valid grid has " +
            std::to_string(Opts.MaxCooperativeBlocks) + " blocks");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Errors found while running
//===----------------------------------------------------------------------===//

/// A located error at a synchronisation point, rendered like a compile
/// error (file:line:col, the source line, a caret).
static Error siteError(const abi::SyncSite &S, const std::string &Msg) {
  std::string Source;
  if (S.Line)
    Source = std::string(S.Line - 1, '\n') + S.SourceLine + "\n";
  SourceLoc Loc;
  Loc.Line = S.Line;
  Loc.Col = S.Col;
  return llvm::make_error<DiagnosticError>(S.Module, Source, std::vector<Diagnostic>{{Loc, Msg}},
                                           false, ErrorKind::Divergence);
}

static std::string blockString(uint64_t Id, const Dim3 &Grid) {
  Dim3 B;
  B.X = uint32_t(Id % Grid.X);
  B.Y = uint32_t(Id / Grid.X % Grid.Y);
  B.Z = uint32_t(Id / Grid.X / Grid.Y);
  return formatDim3(B);
}

static Error divergenceError(const abi::BlockContext &C, const Dim3 &Grid) {
  if (!C.ErrSite)
    return fail(ErrorKind::Failed, "internal error: a kernel failed without saying where");
  const abi::SyncSite &S = *C.ErrSite;
  std::string Msg = "divergent " + std::string(S.What) + " in kernel '" + S.Kernel +
                    "': reached by " + std::to_string(C.ErrArrived) + " of the " +
                    std::to_string(C.ErrExpected);
  if (C.ErrWarp == abi::NoWarp)
    Msg += " threads of block " + blockString(C.ErrBlock, Grid) +
           "; every thread of a block must reach it, or none";
  else
    Msg += " lanes of warp " + std::to_string(C.ErrWarp) + " of block " +
           blockString(C.ErrBlock, Grid) + "; every lane of a warp must take part, or none";
  return siteError(S, Msg);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

static Error outOfMemory(const KernelInfo &K, uint64_t Bytes, const char *What);

Error HostRuntime::launch(LoadedModule &M, llvm::StringRef Kernel, const LaunchConfig &Config,
                          llvm::ArrayRef<KernelArg> Args, LaunchStats *Stats) {
  LaunchOptions Opts;
  Opts.Stats = Stats;
  return Runtime::launch(M, Kernel, Config, Args, Opts);
}

// The global is the module's own; Runtime::setConstant holds the module's
// lock, so no launch of it reads the global meanwhile.
Error HostRuntime::writeConstant(LoadedModule &LM, const ConstantInfo &C, const void *Data) {
  auto &M = static_cast<HostModule &>(LM);
  std::memcpy(M.ConstantAddrs.lookup(C.Name), Data, C.Bytes);
  return Error::success();
}

Error HostRuntime::launchKernel(LoadedModule &LM, const KernelInfo &Info,
                                const LaunchConfig &Config, llvm::ArrayRef<KernelArg> Args,
                                const LaunchOptions &Opts) {
  // Runtime::launch checked that LM is a host module and names the kernel.
  auto &M = static_cast<HostModule &>(LM);
  const HostModule::Kernel &K = M.ByName.find(Info.Name)->second;
  if (Opts.Stats) {
    // A launch rejected before it runs reports no blocks, and the pool.
    *Opts.Stats = LaunchStats();
    Opts.Stats->PoolThreads = P->Pool.size();
  }
  if (Opts.Stream)
    return fail(ErrorKind::Configuration,
                "kernel '" + Info.Name +
                    "': the host runtime has no streams (LaunchOptions::Stream must be null; host "
                    "launches run to completion before they return)");
  if (Error E = checkLaunchConfig(Info, Config))
    return E;
  if (Error E = checkHostLimits(Info, K.Desc, Config, P->Opts))
    return E;
  // Pool threads join when there is more than one block for them.
  if (Error E = checkKernelStack(Info, P->Pool.size() > 1 && Config.Grid.count() > 1))
    return E;
  if (Error E = checkArguments(Info, Args))
    return E;
  if (Opts.PrintBufferBytes > LaunchOptions::MaxPrintBufferBytes)
    return fail(ErrorKind::Configuration,
                "kernel '" + Info.Name + "': a print buffer of " +
                    std::to_string(Opts.PrintBufferBytes) + " bytes is more than the " +
                    std::to_string(LaunchOptions::MaxPrintBufferBytes) + " allowed");

  // The argument block: Ptrs[i] points to argument i's value.
  // On the stack for the usual few arguments: no allocation per launch.
  // (Not value-initialised: the loop writes each element; zeroing them was
  // two calls of memset, a twentieth of an empty launch.)
  llvm::SmallVector<uint64_t, 16> Values;
  llvm::SmallVector<void *, 16> Ptrs;
  Values.resize_for_overwrite(Args.size());
  Ptrs.resize_for_overwrite(Args.size());
  for (size_t I = 0; I < Args.size(); ++I) {
    if (Args[I].isPointer()) {
      Values[I] = Args[I].getAddress();
    } else {
      std::memcpy(&Values[I], Args[I].getScalarBytes(), 8);
    }
    Ptrs[I] = &Values[I];
  }

  std::optional<BlockLayout> Layout = layoutBlock(K.Desc, Config);
  if (!Layout)
    return outOfMemory(Info, UINT64_MAX, "a block's shared memory and thread state");
  const BlockLayout &L = *Layout;

  LaunchStats Local;
  // The clock is read only for a launch that reports its time or has a
  // deadline (two reads cost a tenth of an empty launch).
  const bool Timed = Opts.Stats || Opts.TimeoutMilliseconds;
  std::chrono::steady_clock::time_point Start;
  if (Timed)
    Start = std::chrono::steady_clock::now();
  Local.Cooperative = K.Info->Cooperative;
  Watch W;
  // A runtime made without fault catching never catches (nor installs a
  // handler), whatever the launch asks for.
  bool Catch = Opts.CatchFaults && P->Opts.CatchFaults;
  W.Milliseconds = Opts.TimeoutMilliseconds;
  W.Deadline = Start + std::chrono::milliseconds(std::min<uint64_t>(W.Milliseconds, 1ull << 40));
  W.Cancel = Opts.Cancel;
  if (Catch)
    if (Error E = P->holdHandlers())
      return E;
  // The calling thread runs blocks too: it needs an alternate signal stack.
  if (Catch && !ensureThreadSignalStack())
    return fail(ErrorKind::Failed,
                "kernel '" + Info.Name +
                    "': cannot map an alternate signal stack for the launching thread");
  // Only a kernel that prints gets a print buffer (and pays for one).
  std::optional<PrintBuffer> Print;
  if (K.Info->Prints) {
    Print.emplace(Opts.PrintBufferBytes);
    if (!Print->valid())
      return outOfMemory(Info, Print->capacity(), "its print buffer");
  }
  PrintBuffer *PrintPtr = Print ? &*Print : nullptr;
  Error E = K.Desc.Checked
                ? P->runChecked(K, Config, Args, Ptrs.data(), L, W, Catch, Local, PrintPtr, Opts)
            : K.Info->Cooperative
                ? P->runCooperative(K, Config, Ptrs.data(), L, W, Catch, Local, PrintPtr)
                : P->runBlocks(K, Config, Ptrs.data(), L, W, Catch, Local, PrintPtr);
  if (Timed)
    Local.Milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
  // What was printed, also when the launch stopped early (a fault, a
  // timeout, a divergent barrier): the lines before it help find why.
  if (Print)
    Print->flush(Opts.PrintOutput, Info.Name, Local);
  Local.Blocks = Config.Grid.count();
  Local.PoolThreads = P->Pool.size();
  if (Opts.Stats)
    *Opts.Stats = Local;
  return E;
}

Error HostRuntime::synchronize() { return Error::success(); }

//===----------------------------------------------------------------------===//
// Device memory: host memory
//===----------------------------------------------------------------------===//

llvm::Expected<uint64_t> HostRuntime::allocateMemory(uint64_t Bytes) {
  // Like the block memory: zeroed, 64-byte aligned, between guards.
  char *Memory = P->Buffers.allocate(Bytes);
  if (!Memory) {
    std::string Msg = "cannot allocate a device buffer of " + std::to_string(Bytes) + " bytes";
    // A small one fails for the number of mappings more likely than for
    // the memory.
    if (Bytes < (1u << 30))
      Msg += std::string(" (") + std::strerror(errno) +
             "): each buffer is a memory mapping of its own, between guard regions, and Linux "
             "limits a process to vm.max_map_count mappings (65530 by default)";
    return fail(ErrorKind::Failed, Msg);
  }
  uint64_t Addr = uint64_t(reinterpret_cast<uintptr_t>(Memory));
  {
    std::lock_guard<std::mutex> G(P->AllocationsLock);
    P->Allocations[Addr] = Bytes;
  }
  return Addr;
}

Error HostRuntime::freeMemory(uint64_t Addr, uint64_t Bytes) {
  {
    std::lock_guard<std::mutex> G(P->AllocationsLock);
    P->Allocations.erase(Addr);
  }
  P->Buffers.free(reinterpret_cast<char *>(uintptr_t(Addr)), Bytes);
  return Error::success();
}

Error HostRuntime::writeMemory(uint64_t Addr, const void *Src, uint64_t Bytes) {
  std::memcpy(reinterpret_cast<void *>(uintptr_t(Addr)), Src, Bytes);
  return Error::success();
}

Error HostRuntime::readMemory(void *Dst, uint64_t Addr, uint64_t Bytes) {
  std::memcpy(Dst, reinterpret_cast<const void *>(uintptr_t(Addr)), Bytes);
  return Error::success();
}

static abi::BlockContext makeContext(const LaunchConfig &Cfg, PrintBuffer *Print) {
  abi::BlockContext C{};
  if (Print) {
    C.PrintState = Print;
    C.Print = &PrintBuffer::record;
  }
  C.GridDim[0] = Cfg.Grid.X;
  C.GridDim[1] = Cfg.Grid.Y;
  C.GridDim[2] = Cfg.Grid.Z;
  C.BlockDim[0] = Cfg.Block.X;
  C.BlockDim[1] = Cfg.Block.Y;
  C.BlockDim[2] = Cfg.Block.Z;
  return C;
}

/// Runs blocks [First, End) of \p K; false when the kernel faulted (\p F;
/// only with \p Catch).
static bool callEntry(const HostModule::Kernel &K, void *const *Args, abi::BlockContext &C,
                      uint64_t First, uint64_t End, bool Catch, int32_t &Result, KernelFault &F) {
  if (!Catch) {
    Result = K.Entry(Args, &C, First, End);
    return true;
  }
  return runCatchingFaults(K.Entry, Args, &C, First, End, Result, F);
}

Error HostRuntime::Impl::holdHandlers() {
  if (HoldsHandlers.load(std::memory_order_acquire))
    return Error::success();
  std::lock_guard<std::mutex> G(HoldLock);
  if (HoldsHandlers.load(std::memory_order_relaxed))
    return Error::success();
  if (Error E = holdFaultHandlers())
    return E;
  HoldsHandlers.store(true, std::memory_order_release);
  return Error::success();
}

static Error faultError(const KernelInfo &K, const KernelFault &F, uint64_t First, uint64_t End,
                        const Dim3 &Grid) {
  std::string Where = End - First == 1 ? "block " + blockString(First, Grid)
                                       : "one of blocks " + blockString(First, Grid) + " to " +
                                             blockString(End - 1, Grid);
  if (F.StackOverflow)
    return llvm::make_error<KernelFaultError>(
        K.Name, "kernel '" + K.Name + "' overflowed the stack of the thread that ran it (" +
                    describeFault(F) + ", in " + Where +
                    "): its device functions' calls and local arrays need more than the " +
                    std::to_string(hostabi::WorkerStackBytes >> 20) +
                    " MiB of a pool thread's stack, or than the launching thread's stack has "
                    "left. The launch stopped; what the kernel wrote until then stays written");
  return llvm::make_error<KernelFaultError>(
      K.Name, "kernel '" + K.Name + "' accessed memory outside its buffers (" + describeFault(F) +
                  ", in " + Where +
                  "); the kernel has a bug: an index out of range, or an index that overflowed "
                  "its integer type. The launch stopped; what the kernel wrote until then "
                  "stays written");
}

static Error outOfMemory(const KernelInfo &K, uint64_t Bytes, const char *What) {
  return fail(ErrorKind::Failed, "kernel '" + K.Name + "': cannot allocate " +
                                     std::to_string(Bytes) + " bytes for " + What);
}

uint64_t HostRuntime::chunkBlocks(uint64_t NumBlocks, uint64_t BlockThreads, unsigned Workers) {
  // About 16 chunks per worker: big enough that the counter is not
  // contended, small enough to even out blocks of different cost; and
  // at least MinChunkThreads threads, so that a grid of small blocks is not
  // cut into chunks that cost less than handing them to another CPU. A
  // grid of fewer than 32 blocks per worker keeps single blocks, so that a
  // fault there names its block (a chunk's fault names the chunk).
  uint64_t PerWorker = NumBlocks / (uint64_t(std::max(1u, Workers)) * 16);
  if (PerWorker <= 1)
    return 1;
  uint64_t Floor = llvm::divideCeil(MinChunkThreads, std::max<uint64_t>(1, BlockThreads));
  return std::max(PerWorker, Floor);
}

// Independent blocks: workers take chunks of consecutive blocks from a
// shared counter; each worker's block memory is reused from one block to
// the next (CUDA's shared memory starts undefined in every block too).
Error HostRuntime::Impl::runBlocks(const HostModule::Kernel &K, const LaunchConfig &Cfg,
                                   void *const *Args, const BlockLayout &L, const Watch &W,
                                   bool CatchFaults, LaunchStats &Stats, PrintBuffer *Print) {
  uint64_t NumBlocks = Cfg.Grid.count();
  unsigned Workers = unsigned(std::min<uint64_t>(Pool.size(), NumBlocks));
  uint64_t Chunk = chunkBlocks(NumBlocks, Cfg.Block.count(), Workers);
  std::atomic<uint64_t> Next{0};
  std::atomic<bool> Failed{false};
  std::mutex ErrorLock;
  std::optional<abi::BlockContext> FirstFailure;
  std::optional<std::tuple<KernelFault, uint64_t, uint64_t>> Fault;
  bool NoMemory = false;
  std::atomic<int> Stopped{Watch::None}; // why the watch stopped it
  std::atomic<uint64_t> Ran{0};          // counted only when Watching
  const bool Watching = W.active();

  // Every atomic read-modify-write costs an empty launch tens of
  // nanoseconds: the participants are counted by the pool, the blocks run
  // only for a watched launch's message, and a worker whose chunk ended
  // the grid takes no other.
  unsigned Participants = Pool.run(Workers, [&](unsigned) {
    // A thread that joins after the last chunk was taken leaves at once,
    // without taking block memory.
    if (Next.load(std::memory_order_relaxed) >= NumBlocks)
      return;
    BlockMemory Mem(Blocks);
    if (!Mem.allocate(L.total())) {
      std::lock_guard<std::mutex> G(ErrorLock);
      NoMemory = true;
      Failed = true;
      return;
    }
    abi::BlockContext C = makeContext(Cfg, Print);
    bindBlockMemory(C, Mem.get(), L);
    while (!Failed.load(std::memory_order_relaxed)) {
      uint64_t First = Next.fetch_add(Chunk, std::memory_order_relaxed);
      if (First >= NumBlocks)
        break;
      uint64_t End = std::min(NumBlocks, First + Chunk);
      // With a timeout or a cancel token, one block at a time and the
      // watch checked between them.
      uint64_t Step = Watching ? 1 : End - First;
      for (uint64_t B = First; B < End && !Failed.load(std::memory_order_relaxed); B += Step) {
        if (Watching)
          if (Watch::Reason Why = W.check()) {
            Stopped.store(Why, std::memory_order_relaxed);
            Failed = true;
            break;
          }
        uint64_t To = std::min(End, B + Step);
        int32_t Result;
        KernelFault F;
        if (!callEntry(K, Args, C, B, To, CatchFaults, Result, F)) {
          Mem.discard();
          std::lock_guard<std::mutex> G(ErrorLock);
          if (!Fault || B < std::get<1>(*Fault))
            Fault.emplace(F, B, To);
          Failed = true;
          break;
        }
        if (Result != abi::EntryDone) {
          std::lock_guard<std::mutex> G(ErrorLock);
          if (!FirstFailure || C.ErrBlock < FirstFailure->ErrBlock)
            FirstFailure = C;
          Failed = true;
          break;
        }
        if (Watching)
          Ran.fetch_add(To - B, std::memory_order_relaxed);
      }
      if (End == NumBlocks)
        break; // the counter is past the grid: every later take is empty
    }
  });
  Stats.Phases = 1;
  Stats.Workers = Participants;
  if (NoMemory)
    return outOfMemory(*K.Info, L.total(), "a block's shared memory and thread state");
  if (Fault)
    return faultError(*K.Info, std::get<0>(*Fault), std::get<1>(*Fault), std::get<2>(*Fault),
                      Cfg.Grid);
  if (FirstFailure)
    return divergenceError(*FirstFailure, Cfg.Grid);
  if (int Why = Stopped.load())
    return W.error(Watch::Reason(Why), *K.Info,
                   "after " + std::to_string(Ran.load()) + " of " + std::to_string(NumBlocks) +
                       " blocks");
  return Error::success();
}

/// A cooperative grid's state: the memory of every block, in \p Mem, and
/// each block's context bound to its part, in \p Ctxs.
static Error allocateGrid(BlockMemory &Mem, std::vector<abi::BlockContext> &Ctxs,
                          const KernelInfo &K, const LaunchConfig &Cfg, const BlockLayout &L,
                          PrintBuffer *Print) {
  uint64_t NumBlocks = Cfg.Grid.count();
  uint64_t PerBlock = llvm::alignTo(std::max<uint64_t>(L.total(), 64), 64);
  uint64_t Bytes = PerBlock * NumBlocks;
  if (NumBlocks != 0 && Bytes / NumBlocks != PerBlock)
    return outOfMemory(K, UINT64_MAX, "the state of a cooperative grid");
  if (!Mem.allocate(Bytes))
    return outOfMemory(K, Bytes, "the state of a cooperative grid");
  Ctxs.assign(NumBlocks, makeContext(Cfg, Print));
  for (uint64_t B = 0; B < NumBlocks; ++B)
    bindBlockMemory(Ctxs[B], Mem.get() + B * PerBlock, L);
  return Error::success();
}

/// After a phase of a cooperative grid whose blocks returned \p Status:
/// the error of a divergent barrier, or of blocks that did not all stop at
/// the same grid_sync (or all finish).
static Error phaseEndError(const KernelInfo &K, const std::vector<int32_t> &Status,
                           const std::vector<abi::BlockContext> &Ctxs, const Dim3 &Grid) {
  uint64_t NumBlocks = Status.size();
  for (uint64_t B = 0; B < NumBlocks; ++B)
    if (Status[B] == abi::EntryError)
      return divergenceError(Ctxs[B], Grid);
  for (uint64_t B = 1; B < NumBlocks; ++B) {
    if (Status[B] == Status[0])
      continue;
    // Name a block that stopped at a grid_sync and one that did not
    // stop there.
    uint64_t At = Status[0] > 0 ? 0 : B, Other = At == 0 ? B : 0;
    const abi::SyncSite &S = *Ctxs[At].ErrSite;
    std::string OtherDid = Status[Other] > 0 ? "stopped at the grid_sync() on line " +
                                                   std::to_string(Ctxs[Other].ErrSite->Line)
                                             : std::string("finished without reaching it");
    return siteError(S, "divergent grid_sync() in kernel '" + K.Name + "': block " +
                            blockString(At, Grid) + " reached it but block " +
                            blockString(Other, Grid) + " " + OtherDid +
                            "; every thread of the grid must reach the same grid_sync()");
  }
  return Error::success();
}

// A cooperative grid: every block keeps its memory and context; each phase
// runs every block up to its next grid_sync (or its end). All blocks must
// stop at the same grid_sync, or all finish.
Error HostRuntime::Impl::runCooperative(const HostModule::Kernel &K, const LaunchConfig &Cfg,
                                        void *const *Args, const BlockLayout &L, const Watch &W,
                                        bool CatchFaults, LaunchStats &Stats, PrintBuffer *Print) {
  uint64_t NumBlocks = Cfg.Grid.count();
  BlockMemory Mem(Blocks);
  std::vector<abi::BlockContext> Ctxs;
  if (Error E = allocateGrid(Mem, Ctxs, *K.Info, Cfg, L, Print))
    return E;
  std::vector<int32_t> Status(NumBlocks);
  unsigned Workers = unsigned(std::min<uint64_t>(Pool.size(), NumBlocks));
  uint32_t Resume = 0;
  std::atomic<unsigned> Participants{0};
  std::atomic<int> Stopped{Watch::None}; // why the watch stopped it
  std::atomic<bool> Faulted{false};
  std::mutex FaultLock;
  std::optional<std::pair<KernelFault, uint64_t>> Fault;
  std::atomic<uint64_t> Ran{0}; // block runs up to a grid_sync or the end
  for (;;) {
    std::atomic<uint64_t> Next{0};
    Pool.run(Workers, [&](unsigned) {
      Participants.fetch_add(1, std::memory_order_relaxed);
      while (!Stopped.load(std::memory_order_relaxed) && !Faulted.load(std::memory_order_relaxed)) {
        if (Watch::Reason Why = W.check()) {
          Stopped.store(Why, std::memory_order_relaxed);
          break;
        }
        uint64_t B = Next.fetch_add(1, std::memory_order_relaxed);
        if (B >= NumBlocks)
          break;
        Ctxs[B].Resume = Resume;
        KernelFault F;
        if (!callEntry(K, Args, Ctxs[B], B, B + 1, CatchFaults, Status[B], F)) {
          std::lock_guard<std::mutex> G(FaultLock);
          if (!Fault || B < Fault->second)
            Fault.emplace(F, B);
          Faulted = true;
          break;
        }
        Ran.fetch_add(1, std::memory_order_relaxed);
      }
    });
    ++Stats.Phases;
    if (Fault) {
      Mem.discard();
      Stats.Workers = std::min<unsigned>(Participants.load(), Workers);
      return faultError(*K.Info, Fault->first, Fault->second, Fault->second + 1, Cfg.Grid);
    }
    if (int Why = Stopped.load()) {
      Stats.Workers = std::min<unsigned>(Participants.load(), Workers);
      return W.error(Watch::Reason(Why), *K.Info,
                     "in grid-wide phase " + std::to_string(Stats.Phases) + " after " +
                         std::to_string(Ran.load()) + " block runs");
    }
    if (Error E = phaseEndError(*K.Info, Status, Ctxs, Cfg.Grid))
      return E;
    if (Status[0] == abi::EntryDone)
      break;
    Resume = uint32_t(Status[0]);
  }
  Stats.Workers = std::min<unsigned>(Participants.load(), Workers);
  return Error::success();
}

// A checked launch: one block at a time in linear order (a cooperative
// grid: phase by phase), on the calling thread, so that its findings do
// not depend on the workers (docs/Check.md). A fault, a divergent barrier,
// a timeout or a cancel ends it with its own error, followed by what the
// checker found until then.
Error HostRuntime::Impl::runChecked(const HostModule::Kernel &K, const LaunchConfig &Cfg,
                                    llvm::ArrayRef<KernelArg> Args, void *const *ArgPtrs,
                                    const BlockLayout &L, const Watch &W, bool CatchFaults,
                                    LaunchStats &Stats, PrintBuffer *Print,
                                    const LaunchOptions &Opts) {
  std::unique_ptr<ShadowCache> Cache;
  {
    std::lock_guard<std::mutex> G(ShadowLock);
    Cache = Shadow ? std::move(Shadow) : std::make_unique<ShadowCache>();
  }
  auto GiveBack = llvm::make_scope_exit([&] {
    std::lock_guard<std::mutex> G(ShadowLock);
    if (!Shadow)
      Shadow = std::move(Cache);
  });
  KernelChecker Ck(*K.Info, Cfg, K.Desc.StaticSharedBytes, Opts.CheckMaxFindings,
                   Opts.CheckSameValueWrites, Cache.get());
  {
    // A pointer without an extent that points into a buffer of this
    // runtime's reaches to that buffer's end.
    std::lock_guard<std::mutex> G(AllocationsLock);
    for (const auto &[Addr, Bytes] : Allocations)
      Ck.addAllocation(Addr, Bytes);
    for (size_t I = 0; I < Args.size(); ++I) {
      if (!Args[I].isPointer())
        continue;
      uint64_t A = Args[I].getAddress();
      std::optional<uint64_t> Extent;
      if (Args[I].getExtent()) {
        Extent = Args[I].getExtent();
      } else if (auto It = Allocations.upper_bound(A); It != Allocations.begin()) {
        --It;
        if (A - It->first < It->second)
          Extent = It->second - (A - It->first);
      }
      Ck.setPointerArg(unsigned(I), A, Extent);
    }
  }
  Stats.Workers = 1;
  if (Ck.checkGPULimits(K.Desc.CheckArch))
    return Ck.takeError();
  const bool Coop = K.Info->Cooperative;
  uint64_t NumBlocks = Cfg.Grid.count();
  BlockMemory Mem(Blocks);
  std::vector<abi::BlockContext> Ctxs;
  if (Coop) {
    if (Error E = allocateGrid(Mem, Ctxs, *K.Info, Cfg, L, Print))
      return E;
  } else {
    if (!Mem.allocate(L.total()))
      return outOfMemory(*K.Info, L.total(), "a block's shared memory and thread state");
    Ctxs.assign(1, makeContext(Cfg, Print));
    bindBlockMemory(Ctxs[0], Mem.get(), L);
  }
  for (abi::BlockContext &C : Ctxs)
    Ck.bind(C);
  // The launch's own error first (its kind), then the findings.
  auto Stop = [&](Error E) { return llvm::joinErrors(std::move(E), Ck.takeError()); };
  std::vector<int32_t> Status(Ctxs.size());
  uint32_t Resume = 0;
  uint64_t Ran = 0;
  for (bool FirstPhase = true;; FirstPhase = false) {
    Ck.beginPhase();
    ++Stats.Phases;
    for (uint64_t B = 0; B < NumBlocks; ++B) {
      if (W.active())
        if (Watch::Reason Why = W.check())
          return Stop(W.error(Why, *K.Info,
                              "after " + std::to_string(Ran) + " block runs of a checked launch"));
      abi::BlockContext &C = Coop ? Ctxs[B] : Ctxs[0];
      int32_t &Result = Coop ? Status[B] : Status[0];
      C.Resume = Resume;
      Ck.enterBlock(B, C.Shared, FirstPhase);
      bool Returned = false;
      KernelFault F;
      if (!Ck.call(
              [&] { Returned = callEntry(K, ArgPtrs, C, B, B + 1, CatchFaults, Result, F); })) {
        Mem.discard(); // the kernel was left mid-way
        return Ck.takeError();
      }
      if (!Returned) {
        Mem.discard();
        return Stop(faultError(*K.Info, F, B, B + 1, Cfg.Grid));
      }
      ++Ran;
      if (!Coop && Result != abi::EntryDone)
        return Stop(divergenceError(C, Cfg.Grid));
    }
    if (!Coop)
      break;
    if (Error E = phaseEndError(*K.Info, Status, Ctxs, Cfg.Grid))
      return Stop(std::move(E));
    if (Status[0] == abi::EntryDone)
      break;
    Resume = uint32_t(Status[0]);
  }
  return Ck.takeError();
}
