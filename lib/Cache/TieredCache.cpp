//===- TieredCache.cpp - One lookup protocol over memory, disk and remote -===//
//
// Part of gridjit. See TieredCache.h for the protocol. The one mutex guards
// only the memory tier's maps and the keys in flight; it is never held
// across producing, file or network I/O, or waiting.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/TieredCache.h"
#include "SingleFlight.h"

#include "gridjit/Support/ForkSafety.h"

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

using namespace gridjit;

namespace {

using SteadyClock = std::chrono::steady_clock;

/// Adds the milliseconds since it was made to a field when destroyed.
class AddTime {
public:
  explicit AddTime(double &To) : To(To), Start(SteadyClock::now()) {}
  ~AddTime() {
    To += std::chrono::duration<double, std::milli>(SteadyClock::now() - Start).count();
  }

private:
  double &To;
  SteadyClock::time_point Start;
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

struct TieredCache::Impl {
  TieredCacheOptions Opts;
  DiskCache *Disk;
  RemoteCache *Remote;

  // Guarded by Mu: the memory tier (an LRU list and its index) and the
  // keys in flight.
  std::mutex Mu;
  using LRUList = std::list<std::pair<CacheKey, CachedArtifactRef>>;
  LRUList LRU; // most recently used first
  std::unordered_map<CacheKey, LRUList::iterator> Index;
  std::unordered_map<CacheKey, std::shared_ptr<Flight>> InFlight;

  std::atomic<uint64_t> MemoryHits{0}, MemoryMisses{0}, SharedWaits{0}, DiskHits{0}, DiskMisses{0},
      RemoteHits{0}, RemoteMisses{0}, Produced{0}, ProduceFailures{0}, Evictions{0};

  /// fork(): a key in flight in the parent is led by a thread the child
  /// does not have; the child forgets those flights, so that its own
  /// request for such a key leads instead of waiting forever.
  ForkHooks Fork{Mu, [this] { InFlight.clear(); }};

  explicit Impl(TieredCacheOptions O)
      : Opts(std::move(O)), Disk(Opts.Tiers.Disk.get()), Remote(Opts.Tiers.Remote.get()) {}

  static void count(std::atomic<uint64_t> &C) { C.fetch_add(1, std::memory_order_relaxed); }

  /// The memory tier's artifact for \p K (made most recent), or null. Mu held.
  CachedArtifactRef findLocked(const CacheKey &K);
  void insertLocked(const CacheKey &K, CachedArtifactRef A);

  /// Steps 1 and 2 of the protocol (TieredCache.h): \p K's artifact from
  /// the memory tier; else null, with \p Theirs set to the flight of
  /// another request for \p K, or \p Mine to the new flight of this one
  /// (which must then lead).
  CachedArtifactRef enter(const CacheKey &K, std::shared_ptr<Flight> &Mine,
                          std::shared_ptr<Flight> &Theirs, TieredRequestInfo &Info);
  /// Waits for another request's flight.
  FlightResult follow(Flight &Theirs, TieredRequestInfo &Info);
  /// Steps 3 to 5 for this request's flight \p Mine, then its outcome to
  /// the memory tier and to the requests that follow it.
  FlightResult lead(const CacheKey &K, Flight &Mine, const ArtifactMatch &Want, Producer Produce,
                    TieredRequestInfo &Info);
  /// Steps 3 to 5 of the protocol (TieredCache.h) for the one request of
  /// this process that is producing \p K.
  FlightResult loadOrProduce(const CacheKey &K, const ArtifactMatch &Want, Producer Produce,
                             TieredRequestInfo &Info, Mode M);
  /// \p A, counted in \p Hits when there is one. The tiers decide
  /// whether an artifact is usable (ArtifactMatch: an artifact for another
  /// target or architecture is a bad entry of the tier, not a miss here).
  static std::optional<Artifact> hit(std::optional<Artifact> A, std::atomic<uint64_t> &Hits) {
    if (A)
      count(Hits);
    return A;
  }
  /// Step 3: disk, the key's lock (kept in \p Lock), disk again.
  std::optional<Artifact> fromDisk(const CacheKey &K, const ArtifactMatch &Want,
                                   TieredRequestInfo &Info, DiskCache::KeyLock &Lock);
  /// Step 4: remote, else the key's lease (kept in \p Lease) or the entry
  /// another machine stored while we waited for its lease.
  std::optional<Artifact> fromRemote(const CacheKey &K, const ArtifactMatch &Want,
                                     TieredRequestInfo &Info, RemoteCache::Lease &Lease);
  /// Step 5: produce and store.
  FlightResult produce(const CacheKey &K, Producer Produce, TieredRequestInfo &Info);
  /// Writes \p A under \p K to the disk and (\p AlsoRemote) remote tiers;
  /// a tier that cannot store is no error.
  void store(const CacheKey &K, const Artifact &A, bool AlsoRemote, TieredRequestInfo &Info);
};

CachedArtifactRef TieredCache::Impl::findLocked(const CacheKey &K) {
  auto It = Index.find(K);
  if (It == Index.end())
    return nullptr;
  LRU.splice(LRU.begin(), LRU, It->second);
  return It->second->second;
}

void TieredCache::Impl::insertLocked(const CacheKey &K, CachedArtifactRef A) {
  if (Opts.MemoryCapacity == 0)
    return;
  if (auto It = Index.find(K); It != Index.end()) {
    It->second->second = std::move(A);
    LRU.splice(LRU.begin(), LRU, It->second);
    return;
  }
  LRU.emplace_front(K, std::move(A));
  Index.emplace(K, LRU.begin());
  while (LRU.size() > Opts.MemoryCapacity) {
    Index.erase(LRU.back().first);
    LRU.pop_back();
    count(Evictions);
  }
}

//===----------------------------------------------------------------------===//
// The tiers
//===----------------------------------------------------------------------===//

std::optional<Artifact> TieredCache::Impl::fromDisk(const CacheKey &K, const ArtifactMatch &Want,
                                                    TieredRequestInfo &Info,
                                                    DiskCache::KeyLock &Lock) {
  std::optional<Artifact> A;
  {
    AddTime T(Info.LookupMs);
    A = Disk->lookup(K, &Info.BadEntry, &Want);
  }
  if (std::optional<Artifact> Hit = hit(std::move(A), DiskHits))
    return Hit;
  count(DiskMisses);
  // Another process may be producing this key: wait for it, then look
  // again (it has stored the entry by the time it lets go).
  {
    AddTime T(Info.WaitMs);
    Lock = Disk->lockKey(K);
  }
  if (!Lock.held() && !Lock.waited())
    return std::nullopt;
  {
    AddTime T(Info.LookupMs);
    A = Disk->lookupAgain(K, &Want);
  }
  return hit(std::move(A), DiskHits);
}

std::optional<Artifact> TieredCache::Impl::fromRemote(const CacheKey &K, const ArtifactMatch &Want,
                                                      TieredRequestInfo &Info,
                                                      RemoteCache::Lease &Lease) {
  std::optional<Artifact> A;
  {
    AddTime T(Info.LookupMs);
    A = Remote->lookup(K, &Info.RemoteProblem, &Want);
  }
  if (!A) {
    AddTime T(Info.WaitMs);
    Lease = Remote->acquireLease(K, A, &Want);
  }
  std::optional<Artifact> Hit = hit(std::move(A), RemoteHits);
  if (!Hit)
    count(RemoteMisses);
  return Hit;
}

void TieredCache::Impl::store(const CacheKey &K, const Artifact &A, bool AlsoRemote,
                              TieredRequestInfo &Info) {
  AddTime T(Info.StoreMs);
  if (Disk)
    (void)Disk->store(K, A);
  if (Remote && AlsoRemote)
    (void)Remote->store(K, A);
}

FlightResult TieredCache::Impl::produce(const CacheKey &K, Producer Produce,
                                        TieredRequestInfo &Info) {
  count(Produced);
  Info.Outcome = CacheOutcome::Compiled;
  llvm::Expected<Artifact> A = Produce();
  if (!A) {
    count(ProduceFailures);
    return {nullptr, std::make_shared<const Failure>(A.takeError())};
  }
  auto Result = std::make_shared<const CachedArtifact>(CachedArtifact{K, std::move(*A)});
  store(K, Result->Art, /*AlsoRemote=*/true, Info);
  return {std::move(Result), nullptr};
}

FlightResult TieredCache::Impl::loadOrProduce(const CacheKey &K, const ArtifactMatch &Want,
                                              Producer Produce, TieredRequestInfo &Info, Mode M) {
  // Held until the entry is stored (or the request gives up): the lease
  // is released first, then the lock.
  DiskCache::KeyLock Lock;
  RemoteCache::Lease Lease;
  if (M == Mode::Refresh) {
    if (Disk) {
      AddTime T(Info.WaitMs);
      Lock = Disk->lockKey(K);
    }
    return produce(K, Produce, Info);
  }
  auto Hit = [&](CacheOutcome O, Artifact A) {
    Info.Outcome = O;
    return FlightResult{std::make_shared<const CachedArtifact>(CachedArtifact{K, std::move(A)}),
                        nullptr};
  };
  if (Disk)
    if (std::optional<Artifact> A = fromDisk(K, Want, Info, Lock))
      return Hit(CacheOutcome::DiskHit, std::move(*A));
  if (Remote)
    if (std::optional<Artifact> A = fromRemote(K, Want, Info, Lease)) {
      store(K, *A, /*AlsoRemote=*/false, Info);
      return Hit(CacheOutcome::RemoteHit, std::move(*A));
    }
  return produce(K, Produce, Info);
}

//===----------------------------------------------------------------------===//
// TieredCache
//===----------------------------------------------------------------------===//

TieredCache::TieredCache(TieredCacheOptions Opts) : P(std::make_unique<Impl>(std::move(Opts))) {}

TieredCache::~TieredCache() = default;

llvm::Expected<CachedArtifactRef> TieredCache::get(const CacheKey &K, const ArtifactMatch &Want,
                                                   Producer Produce, TieredRequestInfo &Info,
                                                   Mode M) {
  FlightResult R;
  if (M == Mode::Refresh) {
    R = P->loadOrProduce(K, Want, Produce, Info, M);
    std::lock_guard<std::mutex> G(P->Mu);
    if (R.Value)
      P->insertLocked(K, R.Value);
  } else {
    std::shared_ptr<Flight> Mine, Theirs;
    if (CachedArtifactRef Hit = P->enter(K, Mine, Theirs, Info))
      return Hit;
    R = Theirs ? P->follow(*Theirs, Info) : P->lead(K, *Mine, Want, Produce, Info);
  }
  if (R.Fail)
    return R.Fail->make();
  return R.Value;
}

CachedArtifactRef TieredCache::Impl::enter(const CacheKey &K, std::shared_ptr<Flight> &Mine,
                                           std::shared_ptr<Flight> &Theirs,
                                           TieredRequestInfo &Info) {
  std::lock_guard<std::mutex> G(Mu);
  if (CachedArtifactRef Hit = findLocked(K)) {
    count(MemoryHits);
    Info.Outcome = CacheOutcome::MemoryHit;
    return Hit;
  }
  count(MemoryMisses);
  if (auto It = InFlight.find(K); It != InFlight.end()) {
    Theirs = It->second;
  } else {
    Mine = std::make_shared<Flight>();
    InFlight.emplace(K, Mine);
  }
  return nullptr;
}

FlightResult TieredCache::Impl::follow(Flight &Theirs, TieredRequestInfo &Info) {
  FlightResult R;
  {
    AddTime T(Info.WaitMs);
    R = Theirs.wait();
  }
  count(SharedWaits);
  Info.Outcome = CacheOutcome::Shared;
  return R;
}

FlightResult TieredCache::Impl::lead(const CacheKey &K, Flight &Mine, const ArtifactMatch &Want,
                                     Producer Produce, TieredRequestInfo &Info) {
  FlightResult R = loadOrProduce(K, Want, Produce, Info, Mode::Lookup);
  {
    // Into the memory tier and out of flight in one step, so that a new
    // request finds one or the other.
    std::lock_guard<std::mutex> G(Mu);
    if (R.Value)
      insertLocked(K, R.Value);
    InFlight.erase(K);
  }
  Mine.finish(R);
  return R;
}

CachedArtifactRef TieredCache::findInMemory(const CacheKey &K) {
  std::lock_guard<std::mutex> G(P->Mu);
  CachedArtifactRef Hit = P->findLocked(K);
  if (Hit)
    Impl::count(P->MemoryHits);
  return Hit;
}

void TieredCache::clearMemory() {
  std::lock_guard<std::mutex> G(P->Mu);
  P->LRU.clear();
  P->Index.clear();
}

const CacheTiers &TieredCache::getTiers() const { return P->Opts.Tiers; }

TieredCacheStats TieredCache::getStats() const {
  TieredCacheStats S;
  S.MemoryHits = P->MemoryHits.load();
  S.MemoryMisses = P->MemoryMisses.load();
  S.SharedWaits = P->SharedWaits.load();
  S.DiskHits = P->DiskHits.load();
  S.DiskMisses = P->DiskMisses.load();
  S.RemoteHits = P->RemoteHits.load();
  S.RemoteMisses = P->RemoteMisses.load();
  S.Produced = P->Produced.load();
  S.ProduceFailures = P->ProduceFailures.load();
  S.Evictions = P->Evictions.load();
  return S;
}
