//===- Compiler.cpp - The library's front door: compile, cached -----------===//
//
// Part of gridjit. How a request flows (docs/Cache.md, "Guarantees"):
//
//   1. Fast path: a BLAKE3 of the exact source text, the target and the opt
//      level (and the buffer name, for a target whose artifacts embed
//      source positions) finds, in a small memo, the key that text was verified to
//      have; if that key is in the memory cache, the request is done
//      without parsing (microseconds).
//   2. Otherwise parse and verify (no lock held), print canonically and
//      compute the key; look it up in the memory cache.
//   3. On a memory miss the request goes through the Compiler's
//      TieredCache (include/gridjit/Cache/TieredCache.h, the protocol every
//      cached artifact follows): single flight in the process, disk, the
//      key's lock file, disk again, remote, the key's lease, and finally
//      the compile, stored on disk and remotely. A failure is not cached.
//
// The Compiler's own mutexes guard only the text memo and the table of
// checked twins; they are never held across parsing, compiling, making a
// target, file I/O or waiting.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Compiler/Compiler.h"
#include "AsyncPool.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Support/ForkSafety.h"
#include "gridjit/Support/Limits.h"

#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

using namespace gridjit;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - Start).count();
}

/// A target and the parts of its keys that do not change between compiles.
struct TargetEntry {
  std::shared_ptr<const Target> T;
  std::string Name, Arch, Fingerprint, RegistryFingerprint;
  /// The index of the target (of the one it is the checked twin of) in
  /// CompilerOptions::Targets, and the twin's architecture (0: unchecked):
  /// together they tell the entries apart in the text memo's key.
  uint32_t Index = 0;
  uint32_t CheckArch = 0;

  static TargetEntry of(std::shared_ptr<const Target> T, uint32_t Index, uint32_t CheckArch) {
    TargetEntry TE{T, std::string(T->getName()), std::string(T->getArch()), T->getFingerprint(),
                   T->getRegistryFingerprint()};
    TE.Index = Index;
    TE.CheckArch = CheckArch;
    return TE;
  }
};

} // namespace

struct Compiler::Impl {
  CompilerOptions Opts;
  std::vector<TargetEntry> Targets;
  std::unique_ptr<TieredCache> Cache;
  std::string BuildId, Version, LLVMVersion;

  // Guarded by MemoMu: the text memo of the fast path.
  mutable std::mutex MemoMu;
  std::unordered_map<CacheKey, CacheKey> TextMemo;
  /// fork(): no thread is inside the memo when the process is copied.
  ForkHooks Fork{MemoMu, nullptr};

  // Guarded by TwinMu: the checked twins made so far, by (index of the
  // target, architecture). Never erased, so a pointer to an entry stays
  // valid for the Compiler's life (std::map's nodes do not move).
  mutable std::mutex TwinMu;
  mutable std::map<std::pair<uint32_t, uint32_t>, TargetEntry> Twins;
  ForkHooks TwinFork{TwinMu, nullptr};

  std::atomic<uint64_t> Requests{0};

  // Last member: destroyed first, after running every task, which uses
  // the members above.
  std::unique_ptr<AsyncPool> Pool;

  llvm::Expected<std::pair<const TargetEntry *, unsigned>> resolve(const CompileRequest &Req) const;
  llvm::Expected<const TargetEntry *> checkedTwin(const TargetEntry &Base, unsigned Arch) const;
  CacheKey textKey(const TargetEntry &TE, unsigned Opt, std::string_view Source,
                   std::string_view BufferName) const;
  CacheKey moduleKey(const TargetEntry &TE, unsigned Opt, const Module &M) const;
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
};

llvm::Expected<std::pair<const TargetEntry *, unsigned>>
Compiler::Impl::resolve(const CompileRequest &Req) const {
  unsigned Opt = Req.OptLevel.value_or(Opts.OptLevel);
  if (Opt > 3)
    return makeError(ErrorKind::InvalidArgument,
                     "optimisation level " + llvm::Twine(Opt) + ": it must be 0, 1, 2 or 3");
  const TargetEntry *Found = Req.Target.empty() ? &Targets.front() : nullptr;
  if (std::optional<TargetKind> K = parseTargetName(Req.Target); K && !Found)
    for (const TargetEntry &TE : Targets)
      if (TE.T->getKind() == *K)
        Found = &TE;
  if (Found && !Req.Check)
    return std::make_pair(Found, Opt);
  if (Found) {
    auto Twin = checkedTwin(*Found, Req.CheckArch);
    if (!Twin)
      return Twin.takeError();
    return std::make_pair(*Twin, Opt);
  }
  std::string Known;
  for (const TargetEntry &TE : Targets)
    Known += (Known.empty() ? "" : ", ") + TE.Name;
  return makeError(ErrorKind::NotFound,
                   "this compiler has no target '" + Req.Target + "' (it has: " + Known + ")");
}

/// Made outside the lock (making a target builds its lowering registry), so
/// two first requests at once may both make one; the first inserted is
/// kept, and every request of the Compiler's life uses it.
llvm::Expected<const TargetEntry *> Compiler::Impl::checkedTwin(const TargetEntry &Base,
                                                                unsigned Arch) const {
  std::pair<uint32_t, uint32_t> Id{Base.Index, Arch};
  {
    std::lock_guard<std::mutex> G(TwinMu);
    if (auto It = Twins.find(Id); It != Twins.end())
      return &It->second;
  }
  auto T = Base.T->makeChecked(Arch);
  if (!T)
    return T.takeError();
  TargetEntry TE = TargetEntry::of(std::move(*T), Base.Index, Arch);
  std::lock_guard<std::mutex> G(TwinMu);
  return &Twins.try_emplace(Id, std::move(TE)).first->second;
}

CacheKey Compiler::Impl::textKey(const TargetEntry &TE, unsigned Opt, std::string_view Source,
                                 std::string_view BufferName) const {
  // Within one Compiler the same text, target and opt level always verify
  // to the same canonical module, so this can stand in for the key. Where
  // the target's artifacts embed source positions the key also covers the
  // buffer name (getSourceIdentity), so the memo must too: the same text
  // under another name has another key.
  llvm::BLAKE3 H;
  uint8_t Head[20];
  if (!TE.T->embedsSourcePositions())
    BufferName = {};
  llvm::support::endian::write32le(Head, TE.Index);
  llvm::support::endian::write32le(Head + 4, Opt);
  llvm::support::endian::write32le(Head + 8, TE.CheckArch);
  llvm::support::endian::write64le(Head + 12, BufferName.size());
  H.update(Head);
  H.update(llvm::StringRef(BufferName));
  H.update(llvm::StringRef(Source));
  CacheKey K;
  K.Bytes = H.final();
  return K;
}

CacheKey Compiler::Impl::moduleKey(const TargetEntry &TE, unsigned Opt, const Module &M) const {
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
  In.CanonicalModule = printModule(M);
  In.SourceIdentity = getSourceIdentity(*TE.T, M);
  return computeCacheKey(In);
}

llvm::Expected<CompiledModuleRef>
Compiler::Impl::compileVerified(const Module &M, const TargetEntry &TE, unsigned Opt,
                                const CacheKey *TextKey, CompileInfo &Info) {
  auto Start = Clock::now();
  CacheKey K = moduleKey(TE, Opt, M);
  Info.Key = K;
  Info.KeyMs += msSince(Start);
  if (TextKey) {
    std::lock_guard<std::mutex> G(MemoMu);
    // Bounded: the memo is dropped whole when it outgrows the cache.
    if (TextMemo.size() >= 4 * Opts.MemoryCacheCapacity + 64)
      TextMemo.clear();
    TextMemo[*TextKey] = K;
  }
  auto Compile = [&]() -> llvm::Expected<Artifact> {
    CompileOptions CO;
    CO.OptLevel = Opt;
    llvm::Expected<Artifact> A = TE.T->compile(M, CO, &Info.Times);
    if (A)
      return A;
    // A target's failure to compile a verified module is a compile error
    // unless it says otherwise (libdevice that cannot be read).
    llvm::Error E = A.takeError();
    if (peekErrorKind(E) != ErrorKind::Failed)
      return std::move(E);
    return makeError(ErrorKind::Compile, llvm::toString(std::move(E)));
  };
  TieredRequestInfo TI;
  llvm::Expected<CompiledModuleRef> R = Cache->get(K, {TE.T->getKind(), TE.Arch}, Compile, TI);
  Info.Outcome = TI.Outcome;
  Info.LookupMs += TI.LookupMs;
  Info.WaitMs += TI.WaitMs;
  Info.StoreMs += TI.StoreMs;
  Info.BadEntry = std::move(TI.BadEntry);
  Info.RemoteProblem = std::move(TI.RemoteProblem);
  return R;
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
    I->Targets.push_back(TargetEntry::of(T, uint32_t(I->Targets.size()), 0));
  }
  I->BuildId = std::string(getGridjitBuildId());
  I->Version = std::string(getGridjitVersion());
  I->LLVMVersion = std::string(getLLVMVersion());

  if (!Opts.Tiers) {
    auto Tiers = openCacheTiers(Opts);
    if (!Tiers)
      return Tiers.takeError();
    Opts.Tiers = std::move(*Tiers);
  }
  TieredCacheOptions TO;
  TO.Tiers = *Opts.Tiers;
  TO.MemoryCapacity = Opts.MemoryCacheCapacity;
  I->Cache = std::make_unique<TieredCache>(std::move(TO));
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
  CacheKey TK = textKey(*TE, Opt, Source, BufferName);
  std::optional<CacheKey> Known;
  {
    std::lock_guard<std::mutex> G(MemoMu);
    if (auto It = TextMemo.find(TK); It != TextMemo.end())
      Known = It->second;
  }
  if (Known)
    if (CompiledModuleRef Hit = Cache->findInMemory(*Known)) {
      Info.Outcome = CacheOutcome::MemoryHit;
      Info.Key = *Known;
      Info.LookupMs = msSince(LookupStart);
      return std::move(Hit);
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

namespace {
/// The promise of one compileAsync, kept by its task. A task destroyed
/// without having run - dropped in a child of fork(), which has none of
/// the parent's threads to run it (AsyncPool.h) - gives its future an error
/// instead of std::future_error's "broken promise", or, where the waiter
/// cannot see that, a wait that never ends.
class AsyncResult {
public:
  using Result = llvm::Expected<CompiledModuleRef>;
  AsyncResult() = default;
  AsyncResult(const AsyncResult &) = delete;
  AsyncResult &operator=(const AsyncResult &) = delete;
  ~AsyncResult() {
    if (P && !Set)
      P->set_value(makeError(ErrorKind::Failed,
                             "the asynchronous compile was abandoned: the process forked (this is "
                             "the child) before it finished, and only the parent finishes it"));
  }
  std::future<Result> future() { return P->get_future(); }
  void set(Result R) {
    Set = true;
    P->set_value(std::move(R));
  }

private:
  std::unique_ptr<std::promise<Result>> P = std::make_unique<std::promise<Result>>();
  bool Set = false;
};
} // namespace

std::future<llvm::Expected<CompiledModuleRef>>
Compiler::compileAsync(std::string Source, std::string BufferName, CompileRequest Req) {
  // The task is a std::function, which needs a copyable callable: the
  // result is shared, and set once.
  auto Result = std::make_shared<AsyncResult>();
  auto Future = Result->future();
  P->Pool->submit([this, Result, Source = std::move(Source), BufferName = std::move(BufferName),
                   Req = std::move(Req)] { Result->set(compile(Source, BufferName, Req)); });
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
  return P->moduleKey(*TO->first, TO->second, **M);
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

llvm::Expected<const Target *> Compiler::getTargetFor(const CompileRequest &Req) const {
  auto TO = P->resolve(Req);
  if (!TO)
    return TO.takeError();
  return TO->first->T.get();
}

std::string Compiler::getCacheDirectory() const {
  const CacheTiers &T = P->Cache->getTiers();
  return T.Disk ? T.Disk->getDirectory() : std::string();
}

CompilerStats Compiler::getStats() const {
  TieredCacheStats T = P->Cache->getStats();
  const CacheTiers &Tiers = P->Cache->getTiers();
  CompilerStats S;
  S.Requests = P->Requests.load();
  S.MemoryHits = T.MemoryHits;
  S.MemoryMisses = T.MemoryMisses;
  S.SharedWaits = T.SharedWaits;
  S.DiskHits = T.DiskHits;
  S.DiskMisses = T.DiskMisses;
  S.Compiles = T.Produced;
  S.CompileFailures = T.ProduceFailures;
  S.Evictions = T.Evictions;
  if (Tiers.Disk)
    S.Disk = Tiers.Disk->getStats();
  S.RemoteHits = T.RemoteHits;
  S.RemoteMisses = T.RemoteMisses;
  if (Tiers.Remote)
    S.Remote = Tiers.Remote->getStats();
  return S;
}

std::string Compiler::getRemoteCacheURL() const {
  const CacheTiers &T = P->Cache->getTiers();
  return T.Remote ? T.Remote->getOptions().URL : std::string();
}

const CacheTiers &Compiler::getCacheTiers() const { return P->Cache->getTiers(); }

void Compiler::clearMemoryCache() {
  P->Cache->clearMemory();
  std::lock_guard<std::mutex> G(P->MemoMu);
  P->TextMemo.clear();
}

llvm::Expected<CacheTiers> gridjit::openCacheTiers(const CompilerOptions &Opts) {
  CacheTiers T;
  if (Opts.UseRemoteCache) {
    auto R = openRemoteCache(Opts.Remote, Opts.RemoteSecretFile);
    if (!R)
      return R.takeError();
    T.Remote = std::move(*R);
  }
  if (Opts.UseDiskCache) {
    auto Secret = resolveDiskCacheSecret(Opts.CacheSecretFile, T.Remote.get());
    if (!Secret)
      return Secret.takeError();
    auto Dir = resolveCacheDirectory(Opts.CacheDir);
    if (Dir) {
      DiskCacheOptions DO;
      DO.Dir = std::move(*Dir);
      DO.MaxBytes = Opts.DiskCacheMaxBytes;
      DO.LockTimeout = Opts.DiskLockTimeout;
      DO.PruneInterval = Opts.DiskPruneInterval;
      DO.Warning = Opts.Warning;
      DO.Secret = std::move(*Secret);
      T.Disk = std::make_shared<DiskCache>(std::move(DO));
    } else {
      std::string Msg = llvm::toString(Dir.takeError()) + "; compiled kernels are cached in "
                                                          "memory only";
      if (Opts.Warning)
        Opts.Warning(Msg);
      else
        llvm::WithColor::warning(llvm::errs(), "gridjit") << Msg << '\n';
    }
  }
  return T;
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
