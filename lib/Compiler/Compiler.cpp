//===- Compiler.cpp - The library's front door: compile, cached -----------===//
//
// Part of gridjit. How a request flows (docs/Cache.md, "Guarantees"):
//
//   1. Fast path: a BLAKE3 of the exact source text, the target and the opt
//      level finds, in a small memo, the key that text was verified to
//      have; if that key is in the memory cache, the request is done
//      without parsing (microseconds).
//   2. Otherwise parse and verify (no lock held), print canonically and
//      compute the key; look it up in the memory cache.
//   3. On a memory miss, the first request for the key becomes its
//      "leader": it registers the key as in flight and, with no lock held,
//      looks it up on disk, takes the key's lock file, looks again, then
//      looks in the remote cache (if any) and, missing there, takes the
//      key's remote lease (or waits for another machine's entry), and
//      compiles and stores it (disk and remote; a remote hit is stored on
//      disk). Requests for the same key that arrive
//      meanwhile find it in flight and wait for the leader's outcome,
//      success or failure. A failure is not cached.
//
// The one mutex guards only the memory cache's maps; it is never held
// across parsing, compiling, file I/O or waiting.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Compiler/Compiler.h"
#include "AsyncPool.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Support/Limits.h"

#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <condition_variable>
#include <list>
#include <mutex>
#include <unordered_map>

using namespace gridjit;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - Start).count();
}

/// A DiagnosticError given to a request that waited for another request's
/// failed compile: the same diagnostics, rendered exactly as the original
/// rendered them (it is still a DiagnosticError to handlers).
class SharedDiagnosticError : public llvm::ErrorInfo<SharedDiagnosticError, DiagnosticError> {
public:
  static char ID;
  SharedDiagnosticError(std::string BufferName, std::vector<Diagnostic> Diags, std::string Rendered)
      : ErrorInfo(std::move(BufferName), std::string(), std::move(Diags), false),
        Rendered(std::move(Rendered)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Rendered; }

private:
  std::string Rendered;
};
char SharedDiagnosticError::ID = 0;

/// A failed compile, kept so that every waiting request gets an equal error.
class Failure {
public:
  /// Consumes \p E.
  explicit Failure(llvm::Error E) {
    llvm::handleAllErrors(
        std::move(E),
        [&](const DiagnosticError &D) {
          std::string Text;
          llvm::raw_string_ostream OS(Text);
          D.log(OS);
          Items.push_back({true, D.getBufferName(), D.getDiagnostics(), std::move(Text), {}});
        },
        [&](const llvm::ErrorInfoBase &EI) {
          // A target's failure to compile a verified module is a compile
          // error unless it says otherwise (libdevice that cannot be read).
          ErrorKind K = getErrorKind(EI);
          Items.push_back(
              {false, "", {}, EI.message(), K == ErrorKind::Failed ? ErrorKind::Compile : K});
        });
  }
  llvm::Error make() const {
    llvm::Error All = llvm::Error::success();
    for (const Item &I : Items) {
      llvm::Error E = I.IsDiagnostic
                          ? llvm::make_error<SharedDiagnosticError>(I.BufferName, I.Diags, I.Text)
                          : makeError(I.Kind, I.Text);
      All = llvm::joinErrors(std::move(All), std::move(E));
    }
    return All;
  }

private:
  struct Item {
    bool IsDiagnostic;
    std::string BufferName;
    std::vector<Diagnostic> Diags;
    std::string Text;
    ErrorKind Kind;
  };
  std::vector<Item> Items;
};

/// What a leader hands to the requests waiting for its key.
struct FlightResult {
  CompiledModuleRef Module;
  std::shared_ptr<const Failure> Fail;
};

/// One key being compiled (or loaded) by its leader. Waiters block on its
/// own mutex and condition variable, never on the Compiler's. (Not a
/// std::shared_future: libstdc++ completes those inside the uninstrumented
/// shared library, which ThreadSanitizer cannot see, so every waiter's
/// read would be reported as a race.)
struct Flight {
  std::mutex M;
  std::condition_variable Done;
  bool Finished = false;
  FlightResult Result;

  void finish(FlightResult R) {
    {
      std::lock_guard<std::mutex> G(M);
      Result = std::move(R);
      Finished = true;
    }
    Done.notify_all();
  }
  FlightResult wait() {
    std::unique_lock<std::mutex> L(M);
    Done.wait(L, [this] { return Finished; });
    return Result;
  }
};

/// A target and the parts of its keys that do not change between compiles.
struct TargetEntry {
  std::shared_ptr<const Target> T;
  std::string Name, Arch, Fingerprint, RegistryFingerprint;
};

} // namespace

std::string_view gridjit::cacheOutcomeName(CacheOutcome O) {
  switch (O) {
  case CacheOutcome::Compiled:
    return "compiled";
  case CacheOutcome::MemoryHit:
    return "memory hit";
  case CacheOutcome::DiskHit:
    return "disk hit";
  case CacheOutcome::RemoteHit:
    return "remote hit";
  case CacheOutcome::Shared:
    return "shared";
  }
  return "?";
}

struct Compiler::Impl {
  CompilerOptions Opts;
  std::vector<TargetEntry> Targets;
  std::unique_ptr<DiskCache> Disk;
  std::unique_ptr<RemoteCache> Remote;
  std::string BuildId, Version, LLVMVersion;

  // Guarded by Mu: the memory cache (an LRU list and its index), the keys
  // in flight, and the text memo of the fast path.
  mutable std::mutex Mu;
  using LRUList = std::list<std::pair<CacheKey, CompiledModuleRef>>;
  LRUList LRU; // most recently used first
  std::unordered_map<CacheKey, LRUList::iterator> Index;
  std::unordered_map<CacheKey, std::shared_ptr<Flight>> InFlight;
  std::unordered_map<CacheKey, CacheKey> TextMemo;

  std::atomic<uint64_t> Requests{0}, MemoryHits{0}, MemoryMisses{0}, SharedWaits{0}, DiskHits{0},
      DiskMisses{0}, Compiles{0}, CompileFailures{0}, Evictions{0}, RemoteHits{0}, RemoteMisses{0};

  // Last member: destroyed first, after running every task, which uses
  // the members above.
  std::unique_ptr<AsyncPool> Pool;

  llvm::Expected<std::pair<const TargetEntry *, unsigned>> resolve(const CompileRequest &Req) const;
  CacheKey textKey(const TargetEntry &TE, unsigned Opt, std::string_view Source) const;
  CacheKey moduleKey(const TargetEntry &TE, unsigned Opt, std::string Canonical) const;
  /// The memory cache's module for \p K (made most recent), or null. Mu held.
  CompiledModuleRef findLocked(const CacheKey &K);
  void insertLocked(const CacheKey &K, CompiledModuleRef M);
  llvm::Expected<CompiledModuleRef> compileVerified(const Module &M, const TargetEntry &TE,
                                                    unsigned Opt, const CacheKey *TextKey,
                                                    CompileInfo &Info);
  /// The bookkeeping of every request: counts it, gives \p Run a fresh
  /// CompileInfo (the caller's \p InfoOut, or a local one) and sets its
  /// TotalMs when \p Run returns.
  llvm::Expected<CompiledModuleRef>
  request(CompileInfo *InfoOut,
          llvm::function_ref<llvm::Expected<CompiledModuleRef>(CompileInfo &)> Run);
  llvm::Expected<CompiledModuleRef> compileText(std::string_view Source,
                                                std::string_view BufferName,
                                                const CompileRequest &Req, CompileInfo &Info);
  llvm::Expected<CompiledModuleRef> compileModule(const Module &M, const CompileRequest &Req,
                                                  CompileInfo &Info);
  FlightResult loadOrCompile(const Module &M, const TargetEntry &TE, unsigned Opt,
                             const CacheKey &K, CompileInfo &Info);
};

llvm::Expected<std::pair<const TargetEntry *, unsigned>>
Compiler::Impl::resolve(const CompileRequest &Req) const {
  unsigned Opt = Req.OptLevel.value_or(Opts.OptLevel);
  if (Opt > 3)
    return makeError(ErrorKind::InvalidArgument,
                     "optimisation level " + llvm::Twine(Opt) + ": it must be 0, 1, 2 or 3");
  if (Req.Target.empty())
    return std::make_pair(&Targets.front(), Opt);
  if (std::optional<TargetKind> K = parseTargetName(Req.Target))
    for (const TargetEntry &TE : Targets)
      if (TE.T->getKind() == *K)
        return std::make_pair(&TE, Opt);
  std::string Known;
  for (const TargetEntry &TE : Targets)
    Known += (Known.empty() ? "" : ", ") + TE.Name;
  return makeError(ErrorKind::NotFound,
                   "this compiler has no target '" + Req.Target + "' (it has: " + Known + ")");
}

CacheKey Compiler::Impl::textKey(const TargetEntry &TE, unsigned Opt,
                                 std::string_view Source) const {
  // Within one Compiler the same text, target and opt level always verify
  // to the same canonical module, so this can stand in for the key.
  llvm::BLAKE3 H;
  uint8_t Head[8];
  llvm::support::endian::write32le(Head, static_cast<uint32_t>(&TE - Targets.data()));
  llvm::support::endian::write32le(Head + 4, Opt);
  H.update(Head);
  H.update(llvm::StringRef(Source));
  CacheKey K;
  K.Bytes = H.final();
  return K;
}

CacheKey Compiler::Impl::moduleKey(const TargetEntry &TE, unsigned Opt,
                                   std::string Canonical) const {
  CacheKeyInputs In;
  In.GridjitVersion = Version;
  In.GridjitBuild = BuildId;
  In.LLVMVersion = LLVMVersion;
  In.TargetName = TE.Name;
  In.Arch = TE.Arch;
  In.TargetFingerprint = TE.Fingerprint;
  In.RegistryFingerprint = TE.RegistryFingerprint;
  CompileOptions CO;
  CO.OptLevel = Opt;
  In.Options = encodeCompileOptions(CO);
  In.CanonicalModule = std::move(Canonical);
  return computeCacheKey(In);
}

CompiledModuleRef Compiler::Impl::findLocked(const CacheKey &K) {
  auto It = Index.find(K);
  if (It == Index.end())
    return nullptr;
  LRU.splice(LRU.begin(), LRU, It->second);
  return It->second->second;
}

void Compiler::Impl::insertLocked(const CacheKey &K, CompiledModuleRef M) {
  if (Opts.MemoryCacheCapacity == 0)
    return;
  if (auto It = Index.find(K); It != Index.end()) {
    It->second->second = std::move(M);
    LRU.splice(LRU.begin(), LRU, It->second);
    return;
  }
  LRU.emplace_front(K, std::move(M));
  Index.emplace(K, LRU.begin());
  while (LRU.size() > Opts.MemoryCacheCapacity) {
    Index.erase(LRU.back().first);
    LRU.pop_back();
    Evictions.fetch_add(1, std::memory_order_relaxed);
  }
}

FlightResult Compiler::Impl::loadOrCompile(const Module &M, const TargetEntry &TE, unsigned Opt,
                                           const CacheKey &K, CompileInfo &Info) {
  auto Matches = [&](const Artifact &A) { return A.Kind == TE.T->getKind() && A.Arch == TE.Arch; };
  auto FromDisk = [&](Artifact A) {
    DiskHits.fetch_add(1, std::memory_order_relaxed);
    Info.Outcome = CacheOutcome::DiskHit;
    return FlightResult{std::make_shared<const CompiledModule>(CompiledModule{K, std::move(A)}),
                        nullptr};
  };
  DiskCache::KeyLock Lock;
  if (Disk) {
    auto Start = Clock::now();
    std::optional<Artifact> A = Disk->lookup(K, &Info.BadEntry);
    Info.LookupMs += msSince(Start);
    if (A && Matches(*A))
      return FromDisk(std::move(*A));
    if (A)
      Info.BadEntry =
          "the entry is for target '" + std::string(getTargetName(A->Kind)) + "' (" + A->Arch + ")";
    DiskMisses.fetch_add(1, std::memory_order_relaxed);
    // Another process may be compiling this key: wait for it, then look
    // again (it has stored the entry by the time it lets go).
    Start = Clock::now();
    Lock = Disk->lockKey(K);
    Info.WaitMs += msSince(Start);
    if (Lock.held() || Lock.waited()) {
      Start = Clock::now();
      A = Disk->lookupAgain(K);
      Info.LookupMs += msSince(Start);
      if (A && Matches(*A))
        return FromDisk(std::move(*A));
    }
  }

  // The remote tier: another machine may have compiled it, or be
  // compiling it now (its lease: wait for its entry).
  RemoteCache::Lease Lease;
  if (Remote) {
    auto Start = Clock::now();
    std::optional<Artifact> A = Remote->lookup(K, &Info.RemoteProblem);
    Info.LookupMs += msSince(Start);
    if (!A) {
      Start = Clock::now();
      Lease = Remote->acquireLease(K, A);
      Info.WaitMs += msSince(Start);
    }
    if (A && Matches(*A)) {
      RemoteHits.fetch_add(1, std::memory_order_relaxed);
      Info.Outcome = CacheOutcome::RemoteHit;
      auto Result = std::make_shared<const CompiledModule>(CompiledModule{K, std::move(*A)});
      if (Disk) {
        Start = Clock::now();
        Disk->store(K, Result->Art);
        Info.StoreMs += msSince(Start);
      }
      return FlightResult{std::move(Result), nullptr};
    }
    if (A)
      Info.RemoteProblem = "the remote entry is for target '" +
                           std::string(getTargetName(A->Kind)) + "' (" + A->Arch + ")";
    RemoteMisses.fetch_add(1, std::memory_order_relaxed);
  }

  Compiles.fetch_add(1, std::memory_order_relaxed);
  Info.Outcome = CacheOutcome::Compiled;
  CompileOptions CO;
  CO.OptLevel = Opt;
  llvm::Expected<Artifact> A = TE.T->compile(M, CO, &Info.Times);
  if (!A) {
    CompileFailures.fetch_add(1, std::memory_order_relaxed);
    return FlightResult{nullptr, std::make_shared<const Failure>(A.takeError())};
  }
  auto Result = std::make_shared<const CompiledModule>(CompiledModule{K, std::move(*A)});
  if (Disk) {
    auto Start = Clock::now();
    Disk->store(K, Result->Art);
    Info.StoreMs += msSince(Start);
  }
  if (Remote) {
    auto Start = Clock::now();
    Remote->store(K, Result->Art);
    Info.StoreMs += msSince(Start);
  }
  return FlightResult{std::move(Result), nullptr};
}

llvm::Expected<CompiledModuleRef>
Compiler::Impl::compileVerified(const Module &M, const TargetEntry &TE, unsigned Opt,
                                const CacheKey *TextKey, CompileInfo &Info) {
  auto Start = Clock::now();
  CacheKey K = moduleKey(TE, Opt, printModule(M));
  Info.Key = K;
  Info.KeyMs += msSince(Start);

  std::shared_ptr<Flight> Mine, Theirs;
  {
    std::lock_guard<std::mutex> G(Mu);
    if (TextKey) {
      // Bounded: the memo is dropped whole when it outgrows the cache.
      if (TextMemo.size() >= 4 * Opts.MemoryCacheCapacity + 64)
        TextMemo.clear();
      TextMemo[*TextKey] = K;
    }
    if (CompiledModuleRef Hit = findLocked(K)) {
      MemoryHits.fetch_add(1, std::memory_order_relaxed);
      Info.Outcome = CacheOutcome::MemoryHit;
      return Hit;
    }
    MemoryMisses.fetch_add(1, std::memory_order_relaxed);
    if (auto It = InFlight.find(K); It != InFlight.end()) {
      Theirs = It->second;
    } else {
      Mine = std::make_shared<Flight>();
      InFlight.emplace(K, Mine);
    }
  }

  if (Theirs) {
    // Another request is the leader for this key: wait for its outcome.
    auto WaitStart = Clock::now();
    FlightResult R = Theirs->wait();
    Info.WaitMs += msSince(WaitStart);
    SharedWaits.fetch_add(1, std::memory_order_relaxed);
    Info.Outcome = CacheOutcome::Shared;
    if (R.Fail)
      return R.Fail->make();
    return R.Module;
  }

  FlightResult R = loadOrCompile(M, TE, Opt, K, Info);
  {
    // Into the memory cache and out of flight in one step, so that a new
    // request finds one or the other.
    std::lock_guard<std::mutex> G(Mu);
    if (R.Module)
      insertLocked(K, R.Module);
    InFlight.erase(K);
  }
  Mine->finish(R);
  if (R.Fail)
    return R.Fail->make();
  return R.Module;
}

//===----------------------------------------------------------------------===//
// Compiler
//===----------------------------------------------------------------------===//

Compiler::Compiler(std::unique_ptr<Impl> I) : P(std::move(I)) {}

Compiler::~Compiler() {
  if (P && P->Pool)
    P->Pool->wait();
}

llvm::Expected<std::unique_ptr<Compiler>> Compiler::create(CompilerOptions Opts) {
  if (Opts.OptLevel > 3)
    return makeError(ErrorKind::InvalidArgument, "optimisation level " +
                                                     llvm::Twine(Opts.OptLevel) +
                                                     ": it must be 0, 1, 2 or 3");
  if (Opts.Targets.empty()) {
    auto Host = createHostTarget();
    if (!Host)
      return Host.takeError();
    Opts.Targets.push_back(std::move(*Host));
  }
  auto I = std::make_unique<Impl>();
  for (const std::shared_ptr<const Target> &T : Opts.Targets) {
    if (!T)
      return makeError(ErrorKind::InvalidArgument, "a null target");
    for (const TargetEntry &TE : I->Targets)
      if (TE.T->getKind() == T->getKind())
        return makeError(ErrorKind::InvalidArgument, "two targets named '" + TE.Name + "'");
    I->Targets.push_back({T, std::string(T->getName()), std::string(T->getArch()),
                          T->getFingerprint(), T->getRegistryFingerprint()});
  }
  I->BuildId = std::string(getGridjitBuildId());
  I->Version = std::string(getGridjitVersion());
  I->LLVMVersion = std::string(getLLVMVersion());

  if (Opts.UseDiskCache) {
    auto Dir = resolveCacheDirectory(Opts.CacheDir);
    if (Dir) {
      DiskCacheOptions DO;
      DO.Dir = std::move(*Dir);
      DO.MaxBytes = Opts.DiskCacheMaxBytes;
      DO.LockTimeout = Opts.DiskLockTimeout;
      DO.PruneInterval = Opts.DiskPruneInterval;
      DO.Warning = Opts.Warning;
      I->Disk = std::make_unique<DiskCache>(std::move(DO));
    } else {
      std::string Msg = llvm::toString(Dir.takeError()) + "; compiled kernels are cached in "
                                                          "memory only";
      if (Opts.Warning)
        Opts.Warning(Msg);
      else
        llvm::WithColor::warning(llvm::errs(), "gridjit") << Msg << '\n';
    }
  }
  if (Opts.UseRemoteCache) {
    auto R = openRemoteCache(Opts.Remote, Opts.RemoteSecretFile);
    if (!R)
      return R.takeError();
    I->Remote = std::move(*R);
  }
  if (Opts.AsyncThreads > limits::MaxThreads)
    return makeError(ErrorKind::InvalidArgument,
                     "AsyncThreads: " + std::to_string(Opts.AsyncThreads) +
                         " threads is more than the limit of " +
                         std::to_string(limits::MaxThreads));
  I->Pool = std::make_unique<AsyncPool>(
      Opts.AsyncThreads ? Opts.AsyncThreads : llvm::hardware_concurrency().compute_thread_count());
  I->Opts = std::move(Opts);
  return std::unique_ptr<Compiler>(new Compiler(std::move(I)));
}

llvm::Expected<CompiledModuleRef>
Compiler::Impl::request(CompileInfo *InfoOut,
                        llvm::function_ref<llvm::Expected<CompiledModuleRef>(CompileInfo &)> Run) {
  auto Start = Clock::now();
  CompileInfo Local;
  CompileInfo &Info = InfoOut ? *InfoOut : Local;
  Info = CompileInfo();
  Requests.fetch_add(1, std::memory_order_relaxed);
  llvm::Expected<CompiledModuleRef> R = Run(Info);
  Info.TotalMs = msSince(Start);
  return R;
}

llvm::Expected<CompiledModuleRef> Compiler::Impl::compileText(std::string_view Source,
                                                              std::string_view BufferName,
                                                              const CompileRequest &Req,
                                                              CompileInfo &Info) {
  auto TO = resolve(Req);
  if (!TO)
    return TO.takeError();
  auto [TE, Opt] = *TO;

  // The fast path: this exact text was verified before, and its module is
  // in the memory cache.
  auto LookupStart = Clock::now();
  CacheKey TK = textKey(*TE, Opt, Source);
  {
    std::lock_guard<std::mutex> G(Mu);
    if (auto It = TextMemo.find(TK); It != TextMemo.end())
      if (CompiledModuleRef Hit = findLocked(It->second)) {
        MemoryHits.fetch_add(1, std::memory_order_relaxed);
        Info.Outcome = CacheOutcome::MemoryHit;
        Info.Key = It->second;
        Info.LookupMs = msSince(LookupStart);
        return std::move(Hit);
      }
  }
  Info.LookupMs = msSince(LookupStart);

  auto PhaseStart = Clock::now();
  auto M = parseModule(Source, BufferName);
  Info.Times.ParseMs = msSince(PhaseStart);
  if (!M)
    return M.takeError();
  PhaseStart = Clock::now();
  llvm::Error E = verifyModule(**M);
  Info.Times.VerifyMs = msSince(PhaseStart);
  if (E)
    return std::move(E);
  return compileVerified(**M, *TE, Opt, &TK, Info);
}

llvm::Expected<CompiledModuleRef>
Compiler::Impl::compileModule(const Module &M, const CompileRequest &Req, CompileInfo &Info) {
  if (!M.Verified)
    return makeError(ErrorKind::InvalidArgument,
                     "module '" + M.Name +
                         "' is not verified: call verifyModule before compiling it");
  auto TO = resolve(Req);
  if (!TO)
    return TO.takeError();
  return compileVerified(M, *TO->first, TO->second, nullptr, Info);
}

llvm::Expected<CompiledModuleRef> Compiler::compile(std::string_view Source,
                                                    std::string_view BufferName,
                                                    const CompileRequest &Req,
                                                    CompileInfo *InfoOut) {
  return P->request(
      InfoOut, [&](CompileInfo &Info) { return P->compileText(Source, BufferName, Req, Info); });
}

llvm::Expected<CompiledModuleRef> Compiler::compile(const Module &M, const CompileRequest &Req,
                                                    CompileInfo *InfoOut) {
  return P->request(InfoOut, [&](CompileInfo &Info) { return P->compileModule(M, Req, Info); });
}

std::future<llvm::Expected<CompiledModuleRef>>
Compiler::compileAsync(std::string Source, std::string BufferName, CompileRequest Req) {
  auto Promise = std::make_shared<std::promise<llvm::Expected<CompiledModuleRef>>>();
  auto Future = Promise->get_future();
  P->Pool->submit([this, Promise, Source = std::move(Source), BufferName = std::move(BufferName),
                   Req = std::move(Req)] { Promise->set_value(compile(Source, BufferName, Req)); });
  return Future;
}

void Compiler::waitForAsync() { P->Pool->wait(); }

llvm::Expected<CacheKey> Compiler::computeKey(std::string_view Source, std::string_view BufferName,
                                              const CompileRequest &Req) const {
  auto TO = P->resolve(Req);
  if (!TO)
    return TO.takeError();
  auto M = parseAndVerify(Source, BufferName);
  if (!M)
    return M.takeError();
  return P->moduleKey(*TO->first, TO->second, printModule(**M));
}

const Target *Compiler::getTarget(std::string_view Name) const {
  if (Name.empty())
    return P->Targets.front().T.get();
  std::optional<TargetKind> K = parseTargetName(Name);
  for (const TargetEntry &TE : P->Targets)
    if (K == TE.T->getKind())
      return TE.T.get();
  return nullptr;
}

std::string Compiler::getCacheDirectory() const {
  return P->Disk ? P->Disk->getDirectory() : std::string();
}

CompilerStats Compiler::getStats() const {
  CompilerStats S;
  S.Requests = P->Requests.load();
  S.MemoryHits = P->MemoryHits.load();
  S.MemoryMisses = P->MemoryMisses.load();
  S.SharedWaits = P->SharedWaits.load();
  S.DiskHits = P->DiskHits.load();
  S.DiskMisses = P->DiskMisses.load();
  S.Compiles = P->Compiles.load();
  S.CompileFailures = P->CompileFailures.load();
  S.Evictions = P->Evictions.load();
  if (P->Disk)
    S.Disk = P->Disk->getStats();
  S.RemoteHits = P->RemoteHits.load();
  S.RemoteMisses = P->RemoteMisses.load();
  if (P->Remote)
    S.Remote = P->Remote->getStats();
  return S;
}

std::string Compiler::getRemoteCacheURL() const {
  return P->Remote ? P->Remote->getOptions().URL : std::string();
}

void Compiler::clearMemoryCache() {
  std::lock_guard<std::mutex> G(P->Mu);
  P->LRU.clear();
  P->Index.clear();
  P->TextMemo.clear();
}

llvm::Expected<std::unique_ptr<Module>> gridjit::parseAndVerify(std::string_view Source,
                                                                std::string_view BufferName) {
  auto M = parseModule(Source, BufferName);
  if (!M)
    return M.takeError();
  if (llvm::Error E = verifyModule(**M))
    return std::move(E);
  return M;
}
