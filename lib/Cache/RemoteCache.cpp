//===- RemoteCache.cpp - Compiled artifacts shared through Redis ----------===//
//
// Part of gridjit. The client is hiredis (0.14): blocking connections made
// with a connect deadline (hiredis connects non-blocking and polls) and
// given socket send/receive deadlines (redisSetTimeout). A connection that
// fails in any way is closed, never reused, so a late reply can never be
// read as the answer to a later command. hiredis writes with write(2), so
// every operation runs with SIGPIPE blocked in the calling thread; a
// SIGPIPE it raised is taken back with sigtimedwait before the thread's
// mask is restored. The process's dispositions are never touched.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/RemoteCache.h"
#include "RemoteReply.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Support/Environment.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <pthread.h>
#include <unistd.h>

using namespace gridjit;

namespace {

using Clock = std::chrono::steady_clock;

using remote::TagMagic;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

timeval toTimeval(std::chrono::milliseconds Ms) {
  timeval TV;
  TV.tv_sec = Ms.count() / 1000;
  TV.tv_usec = (Ms.count() % 1000) * 1000;
  if (TV.tv_sec == 0 && TV.tv_usec == 0)
    TV.tv_usec = 1000;
  return TV;
}

/// Blocks SIGPIPE in this thread for its lifetime; a SIGPIPE raised
/// meanwhile (and not pending before) is consumed before the old mask is
/// put back, so it is never delivered.
class SigPipeBlock {
public:
  SigPipeBlock() {
    sigemptyset(&Pipe);
    sigaddset(&Pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &Pipe, &Old);
    sigset_t Pending;
    sigemptyset(&Pending);
    sigpending(&Pending);
    WasPending = sigismember(&Pending, SIGPIPE) == 1;
  }
  ~SigPipeBlock() {
    if (!WasPending) {
      sigset_t Pending;
      sigemptyset(&Pending);
      sigpending(&Pending);
      if (sigismember(&Pending, SIGPIPE) == 1) {
        timespec Zero{0, 0};
        while (sigtimedwait(&Pipe, nullptr, &Zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  }

private:
  sigset_t Pipe, Old;
  bool WasPending = false;
};

struct ReplyDeleter {
  void operator()(redisReply *R) const { freeReplyObject(R); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

/// Deletes KEYS[1] only if it still holds ARGV[1].
constexpr const char *DeleteIfSameScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
    "else return 0 end";
/// The value of KEYS[1], or its length when that exceeds ARGV[1].
constexpr const char *BoundedGetScript =
    "local n = redis.call('STRLEN', KEYS[1]) if n > tonumber(ARGV[1]) then return n end "
    "return redis.call('GET', KEYS[1])";

/// A token no other lease holder has: random per process, then a count.
std::string randomToken() {
  static const std::string Base = [] {
    std::random_device RD;
    std::string T;
    for (int I = 0; I < 4; ++I)
      T += llvm::utohexstr(RD(), /*LowerCase=*/true);
    return T + "-" + std::to_string(::getpid()) + "-";
  }();
  static std::atomic<uint64_t> Count{0};
  return Base + std::to_string(Count.fetch_add(1, std::memory_order_relaxed));
}

llvm::Error urlError(std::string_view URL, const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "remote cache URL '" + llvm::Twine(URL) + "': " + What);
}

bool parseUnsigned(std::string_view S, unsigned Max, unsigned &Out) {
  if (S.empty() || S.size() > 10)
    return false;
  uint64_t V = 0;
  for (char C : S) {
    if (C < '0' || C > '9')
      return false;
    V = V * 10 + unsigned(C - '0');
  }
  if (V > Max)
    return false;
  Out = unsigned(V);
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// URL, HMAC, secret
//===----------------------------------------------------------------------===//

llvm::Expected<RemoteCacheURL> gridjit::parseRemoteCacheURL(std::string_view URL) {
  RemoteCacheURL R;
  std::string_view Rest;
  if (URL.starts_with("redis://")) {
    Rest = URL.substr(8);
  } else if (URL.starts_with("redis+unix://")) {
    R.IsUnix = true;
    Rest = URL.substr(13);
  } else {
    return urlError(URL, "expected redis://[user:password@]host[:port][/db] or "
                         "redis+unix://[user:password@]/path");
  }
  // Credentials: everything up to the last '@' (a password may hold '@').
  if (size_t At = Rest.rfind('@'); At != std::string_view::npos) {
    std::string_view Cred = Rest.substr(0, At);
    Rest = Rest.substr(At + 1);
    size_t Colon = Cred.find(':');
    if (Colon == std::string_view::npos) {
      R.Password = std::string(Cred);
    } else {
      R.User = std::string(Cred.substr(0, Colon));
      R.Password = std::string(Cred.substr(Colon + 1));
    }
    if (R.Password.empty())
      return urlError(URL, "empty password before '@'");
  }
  if (R.IsUnix) {
    std::string_view Path = Rest;
    if (size_t Q = Rest.find('?'); Q != std::string_view::npos) {
      Path = Rest.substr(0, Q);
      std::string_view Query = Rest.substr(Q + 1);
      if (!Query.starts_with("db=") || !parseUnsigned(Query.substr(3), 1u << 20, R.Database))
        return urlError(URL, "the only query is ?db=N (N a database number), not '?" +
                                 llvm::Twine(Query) + "'");
    }
    if (Path.empty() || Path[0] != '/')
      return urlError(URL, "the socket path must be absolute (redis+unix:///path/to/socket)");
    R.SocketPath = std::string(Path);
    return R;
  }
  std::string_view HostPort = Rest;
  if (size_t Slash = Rest.find('/'); Slash != std::string_view::npos) {
    HostPort = Rest.substr(0, Slash);
    std::string_view DB = Rest.substr(Slash + 1);
    if (!DB.empty() && !parseUnsigned(DB, 1u << 20, R.Database))
      return urlError(URL, "database '" + llvm::Twine(DB) + "' is not a number");
  }
  std::string_view PortText;
  if (HostPort.starts_with("[")) {
    size_t Close = HostPort.find(']');
    if (Close == std::string_view::npos)
      return urlError(URL, "an IPv6 host needs a closing ']'");
    R.Host = std::string(HostPort.substr(1, Close - 1));
    std::string_view After = HostPort.substr(Close + 1);
    if (!After.empty()) {
      if (After[0] != ':')
        return urlError(URL, "unexpected '" + llvm::Twine(After) + "' after the host");
      PortText = After.substr(1);
      if (PortText.empty())
        return urlError(URL, "empty port after ':'");
    }
  } else {
    size_t Colon = HostPort.find(':');
    R.Host = std::string(HostPort.substr(0, Colon));
    if (Colon != std::string_view::npos) {
      PortText = HostPort.substr(Colon + 1);
      if (PortText.empty())
        return urlError(URL, "empty port after ':'");
    }
  }
  if (R.Host.empty())
    return urlError(URL, "no host");
  if (!PortText.empty() && (!parseUnsigned(PortText, 65535, R.Port) || R.Port == 0))
    return urlError(URL, "port '" + llvm::Twine(PortText) + "' is not a number from 1 to 65535");
  return R;
}

std::array<uint8_t, 32> gridjit::hmacSHA256(std::string_view Key, std::string_view Data) {
  constexpr size_t Block = 64;
  std::array<uint8_t, Block> K{};
  if (Key.size() > Block) {
    auto H = llvm::SHA256::hash(llvm::arrayRefFromStringRef(llvm::StringRef(Key)));
    std::memcpy(K.data(), H.data(), H.size());
  } else {
    std::memcpy(K.data(), Key.data(), Key.size());
  }
  std::array<uint8_t, Block> IPad, OPad;
  for (size_t I = 0; I < Block; ++I) {
    IPad[I] = K[I] ^ 0x36;
    OPad[I] = K[I] ^ 0x5c;
  }
  llvm::SHA256 Inner;
  Inner.update(IPad);
  Inner.update(llvm::StringRef(Data));
  std::array<uint8_t, 32> InnerHash = Inner.final();
  llvm::SHA256 Outer;
  Outer.update(OPad);
  Outer.update(InnerHash);
  return Outer.final();
}

llvm::Expected<std::string> gridjit::readRemoteCacheSecret(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buf)
    return llvm::createStringError(Buf.getError(),
                                   "cannot read the remote cache secret file '%s': %s",
                                   Path.c_str(), Buf.getError().message().c_str());
  std::string S = (*Buf)->getBuffer().str();
  if (S.size() < 16)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the remote cache secret file '%s' holds %zu bytes; a secret "
                                   "needs at least 16",
                                   Path.c_str(), S.size());
  return S;
}

//===----------------------------------------------------------------------===//
// RemoteCache
//===----------------------------------------------------------------------===//

struct RemoteCache::Impl {
  RemoteCacheURL URL;
  const RemoteCacheOptions &Opts;

  std::mutex PoolMu;
  std::vector<redisContext *> Idle;

  // The breaker: consecutive failures and, once open, when the next probe
  // may go (steady clock ns; 0: closed).
  std::atomic<unsigned> Failures{0};
  std::atomic<int64_t> OpenUntil{0};

  std::atomic<uint64_t> Hits{0}, Misses{0}, Errors{0}, Timeouts{0}, BadEntries{0}, AuthFailures{0},
      Oversize{0}, BadDeleted{0}, Stores{0}, StoreExisting{0}, BreakerTrips{0}, BreakerSkips{0},
      LeasesTaken{0}, LeaseWaits{0}, LeaseWaitHits{0}, LeaseExpired{0}, BytesRead{0},
      BytesWritten{0};

  Impl(RemoteCacheURL U, const RemoteCacheOptions &O) : URL(std::move(U)), Opts(O) {}
  ~Impl() {
    for (redisContext *C : Idle)
      redisFree(C);
  }

  /// Whether a request may go to the server now (claims the probe when the
  /// breaker's cooldown is over).
  bool admit() {
    int64_t Until = OpenUntil.load(std::memory_order_relaxed);
    if (Until == 0)
      return true;
    int64_t Now = nowNs();
    if (Now < Until) {
      BreakerSkips.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    // One probe per cooldown: the request that moves the time forward.
    int64_t Next = Now + std::chrono::nanoseconds(Opts.BreakerCooldown).count();
    if (OpenUntil.compare_exchange_strong(Until, Next))
      return true;
    BreakerSkips.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  /// Whether the breaker is open now: the public operations then return
  /// at once (counted as a skip), before encoding or hashing anything.
  bool skipNow() {
    int64_t Until = OpenUntil.load(std::memory_order_relaxed);
    if (Until == 0 || nowNs() >= Until)
      return false;
    BreakerSkips.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void succeeded() {
    // Read first: in the common case nothing changes, and threads do not
    // fight over the cache line.
    if (Failures.load(std::memory_order_relaxed) != 0)
      Failures.store(0, std::memory_order_relaxed);
    if (OpenUntil.load(std::memory_order_relaxed) != 0)
      OpenUntil.store(0, std::memory_order_relaxed);
  }
  void failed(bool Timeout) {
    (Timeout ? Timeouts : Errors).fetch_add(1, std::memory_order_relaxed);
    unsigned F = Failures.fetch_add(1, std::memory_order_relaxed) + 1;
    // A timeout opens the breaker at once: each one costs a whole deadline.
    if (Timeout || F >= std::max(1u, Opts.BreakerThreshold)) {
      int64_t Next = nowNs() + std::chrono::nanoseconds(Opts.BreakerCooldown).count();
      if (OpenUntil.exchange(Next, std::memory_order_relaxed) == 0)
        BreakerTrips.fetch_add(1, std::memory_order_relaxed);
    }
  }

  static bool isTimeout(const redisContext *C) {
    if (C->err != REDIS_ERR_IO)
      return false;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT ||
           std::strstr(C->errstr, "timed out") || std::strstr(C->errstr, "temporarily unavailable");
  }

  /// A connection: an idle one, or a new one (connected and handshaken).
  /// Null on failure, with \p Timeout set when a deadline passed.
  redisContext *take(bool &Timeout, std::string &Why, bool &FromPool) {
    FromPool = false;
    {
      std::lock_guard<std::mutex> G(PoolMu);
      if (!Idle.empty()) {
        redisContext *C = Idle.back();
        Idle.pop_back();
        FromPool = true;
        return C;
      }
    }
    timeval CT = toTimeval(Opts.ConnectTimeout);
    redisContext *C = URL.IsUnix ? redisConnectUnixWithTimeout(URL.SocketPath.c_str(), CT)
                                 : redisConnectWithTimeout(URL.Host.c_str(), int(URL.Port), CT);
    if (!C || C->err) {
      Timeout = C && isTimeout(C);
      Why = C ? std::string("cannot connect: ") + C->errstr : "cannot connect: out of memory";
      if (C)
        redisFree(C);
      return nullptr;
    }
    // The handshake runs under the connect deadline.
    redisSetTimeout(C, CT);
    auto Simple = [&](std::vector<std::string> Args) {
      std::vector<const char *> Argv;
      std::vector<size_t> Lens;
      for (const std::string &A : Args) {
        Argv.push_back(A.data());
        Lens.push_back(A.size());
      }
      ReplyPtr R(static_cast<redisReply *>(
          redisCommandArgv(C, int(Argv.size()), Argv.data(), Lens.data())));
      if (!R) {
        Timeout = isTimeout(C);
        Why = std::string("handshake: ") + C->errstr;
        return false;
      }
      if (R->type == REDIS_REPLY_ERROR) {
        Why = Args[0] + ": " + std::string(R->str, R->len);
        return false;
      }
      return true;
    };
    bool OK = true;
    if (!URL.Password.empty())
      OK = URL.User.empty() ? Simple({"AUTH", URL.Password})
                            : Simple({"AUTH", URL.User, URL.Password});
    if (OK && URL.Database != 0)
      OK = Simple({"SELECT", std::to_string(URL.Database)});
    if (!OK) {
      redisFree(C);
      return nullptr;
    }
    redisSetTimeout(C, toTimeval(Opts.OperationTimeout));
    return C;
  }
  void give(redisContext *C) {
    std::lock_guard<std::mutex> G(PoolMu);
    if (Idle.size() < 16)
      Idle.push_back(C);
    else
      redisFree(C);
  }

  /// Runs one command. Null: skipped (breaker) or failed (counted, and
  /// \p Why says what happened when given).
  ReplyPtr command(std::initializer_list<std::string_view> Args, std::string *Why = nullptr) {
    if (!admit()) {
      if (Why)
        *Why = "skipped: the remote cache's breaker is open";
      return nullptr;
    }
    SigPipeBlock Guard;
    std::vector<const char *> Argv;
    std::vector<size_t> Lens;
    for (std::string_view A : Args) {
      Argv.push_back(A.data());
      Lens.push_back(A.size());
    }
    ReplyPtr R;
    redisContext *C = nullptr;
    // A pooled connection the server has closed since (a restart, an idle
    // timeout) fails at once; such a failure is retried on a new one.
    for (int Attempt = 0;; ++Attempt) {
      bool Timeout = false, FromPool = false;
      std::string Reason;
      C = take(Timeout, Reason, FromPool);
      if (!C) {
        failed(Timeout);
        if (Why)
          *Why = Reason;
        return nullptr;
      }
      errno = 0;
      R.reset(static_cast<redisReply *>(
          redisCommandArgv(C, int(Argv.size()), Argv.data(), Lens.data())));
      if (R)
        break;
      bool TimedOut = isTimeout(C);
      std::string Err = C->errstr;
      redisFree(C);
      if (FromPool && !TimedOut && Attempt == 0)
        continue;
      failed(TimedOut);
      if (Why)
        *Why = (TimedOut ? "timed out: " : "failed: ") + Err;
      return nullptr;
    }
    give(C);
    if (R->type == REDIS_REPLY_ERROR) {
      failed(false);
      if (Why)
        *Why = "server error: " + std::string(R->str, R->len);
      return nullptr;
    }
    succeeded();
    return R;
  }

  /// Validates \p Value as \p K's entry; counts and explains a bad one.
  std::optional<Artifact> validate(const CacheKey &K, std::string_view Value,
                                   std::string &Problem) {
    remote::ValueProblem Why = remote::ValueProblem::None;
    std::optional<Artifact> A = remote::validateRemoteValue(Opts.Secret, K, Value, Problem, Why);
    if (Why == remote::ValueProblem::Auth)
      AuthFailures.fetch_add(1, std::memory_order_relaxed);
    else if (Why == remote::ValueProblem::BadEntry)
      BadEntries.fetch_add(1, std::memory_order_relaxed);
    return A;
  }

  /// GET with the size bound. Sets \p Value, or returns false for no value
  /// (with \p Problem set on failure or an oversize value).
  bool boundedGet(const std::string &Key, std::string &Value, std::string &Problem) {
    std::string Max = std::to_string(Opts.MaxValueBytes);
    ReplyPtr R = command({"EVAL", BoundedGetScript, "1", Key, Max}, &Problem);
    if (!R)
      return false;
    remote::GetReply G = remote::interpretGetReply(*R);
    if (G.Kind == remote::GetReply::Oversize) {
      Oversize.fetch_add(1, std::memory_order_relaxed);
      Problem =
          "the value holds " + std::to_string(G.ValueBytes) + " bytes, over the limit of " + Max;
      return false;
    }
    if (G.Kind == remote::GetReply::Missing)
      return false; // nil: no value
    Value = std::move(G.Value);
    BytesRead.fetch_add(Value.size(), std::memory_order_relaxed);
    return true;
  }
};

remote::GetReply remote::interpretGetReply(const redisReply &R) {
  GetReply G;
  if (R.type == REDIS_REPLY_INTEGER) {
    G.Kind = GetReply::Oversize;
    G.ValueBytes = R.integer;
  } else if (R.type == REDIS_REPLY_STRING) {
    G.Kind = GetReply::Found;
    G.Value.assign(R.str, R.len);
  }
  return G;
}

std::array<uint8_t, 32> remote::valueTag(std::string_view Secret, const CacheKey &K,
                                         std::string_view Entry) {
  std::string Msg = "gridjit-remote-v1";
  Msg.append(reinterpret_cast<const char *>(K.Bytes.data()), K.Bytes.size());
  Msg.append(Entry);
  return hmacSHA256(Secret, Msg);
}

std::optional<Artifact> remote::validateRemoteValue(std::string_view Secret, const CacheKey &K,
                                                    std::string_view Value, std::string &Problem,
                                                    ValueProblem &Why) {
  Why = ValueProblem::None;
  std::string_view Entry = Value;
  bool Tagged = Value.size() >= TagTrailerSize + CacheEntryHeaderSize &&
                Value.substr(Value.size() - TagTrailerSize, 8) == TagMagic;
  if (Tagged)
    Entry = Value.substr(0, Value.size() - TagTrailerSize);
  if (!Secret.empty()) {
    if (!Tagged) {
      Why = ValueProblem::Auth;
      Problem = "the value has no HMAC tag";
      return std::nullopt;
    }
    std::array<uint8_t, 32> Want = valueTag(Secret, K, Entry);
    std::string_view Got = Value.substr(Value.size() - 32);
    uint8_t Diff = 0;
    for (size_t I = 0; I < 32; ++I)
      Diff |= uint8_t(Got[I]) ^ Want[I];
    if (Diff != 0) {
      Why = ValueProblem::Auth;
      Problem = "the value's HMAC tag does not match";
      return std::nullopt;
    }
  }
  llvm::Expected<Artifact> A = decodeCacheEntry(Entry, K);
  if (!A) {
    Why = ValueProblem::BadEntry;
    Problem = llvm::toString(A.takeError());
    return std::nullopt;
  }
  return std::move(*A);
}

RemoteCache::RemoteCache(RemoteCacheOptions O, RemoteCacheURL URL)
    : Opts(std::move(O)), P(std::make_unique<Impl>(std::move(URL), Opts)) {}

RemoteCache::~RemoteCache() = default;

llvm::Expected<std::unique_ptr<RemoteCache>> RemoteCache::create(RemoteCacheOptions Opts) {
  auto URL = parseRemoteCacheURL(Opts.URL);
  if (!URL)
    return URL.takeError();
  return std::unique_ptr<RemoteCache>(new RemoteCache(std::move(Opts), std::move(*URL)));
}

std::string RemoteCache::entryKey(const CacheKey &K) {
  return "gridjit:v" + std::to_string(CacheFormatVersion) + ":" + K.hex();
}

std::string RemoteCache::encodeValue(const CacheKey &K, const Artifact &A) const {
  std::string V = encodeCacheEntry(K, A);
  if (!Opts.Secret.empty()) {
    std::array<uint8_t, 32> Tag = remote::valueTag(Opts.Secret, K, V);
    V.append(TagMagic);
    V.append(reinterpret_cast<const char *>(Tag.data()), Tag.size());
  }
  return V;
}

std::optional<Artifact> RemoteCache::lookup(const CacheKey &K, std::string *ProblemOut) {
  if (P->skipNow()) {
    P->Misses.fetch_add(1, std::memory_order_relaxed);
    if (ProblemOut)
      *ProblemOut = "skipped: the remote cache's breaker is open";
    return std::nullopt;
  }
  std::string Key = entryKey(K), Value, Problem;
  if (!P->boundedGet(Key, Value, Problem)) {
    P->Misses.fetch_add(1, std::memory_order_relaxed);
    if (ProblemOut && !Problem.empty())
      *ProblemOut = Problem;
    return std::nullopt;
  }
  std::optional<Artifact> A = P->validate(K, Value, Problem);
  if (A) {
    P->Hits.fetch_add(1, std::memory_order_relaxed);
    return A;
  }
  P->Misses.fetch_add(1, std::memory_order_relaxed);
  if (ProblemOut)
    *ProblemOut = "remote entry: " + Problem;
  // Delete it so that a good value can be written, but only if nobody has
  // replaced it meanwhile.
  if (!Opts.ReadOnly)
    if (ReplyPtr R = P->command({"EVAL", DeleteIfSameScript, "1", Key, Value}))
      if (R->type == REDIS_REPLY_INTEGER && R->integer == 1)
        P->BadDeleted.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

bool RemoteCache::store(const CacheKey &K, const Artifact &A) {
  if (Opts.ReadOnly || P->skipNow())
    return false;
  std::string V = encodeValue(K, A);
  if (V.size() > Opts.MaxValueBytes) {
    P->Oversize.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::string TTL = std::to_string(std::max<int64_t>(1, Opts.TTL.count()));
  ReplyPtr R = P->command({"SET", entryKey(K), V, "NX", "PX", TTL});
  if (!R)
    return false;
  if (R->type == REDIS_REPLY_NIL) {
    P->StoreExisting.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  P->Stores.fetch_add(1, std::memory_order_relaxed);
  P->BytesWritten.fetch_add(V.size(), std::memory_order_relaxed);
  return true;
}

RemoteCache::Lease::Lease(Lease &&O) noexcept
    : Owner(O.Owner), Key(std::move(O.Key)), Token(std::move(O.Token)) {
  O.Owner = nullptr;
}

RemoteCache::Lease &RemoteCache::Lease::operator=(Lease &&O) noexcept {
  if (this != &O) {
    release();
    Owner = O.Owner;
    Key = std::move(O.Key);
    Token = std::move(O.Token);
    O.Owner = nullptr;
  }
  return *this;
}

void RemoteCache::Lease::release() {
  if (!Owner)
    return;
  Owner->P->command({"EVAL", DeleteIfSameScript, "1", Key, Token});
  Owner = nullptr;
}

RemoteCache::Lease RemoteCache::acquireLease(const CacheKey &K, std::optional<Artifact> &Found) {
  Lease L;
  if (Opts.ReadOnly || Opts.LeaseTime.count() <= 0 || P->skipNow())
    return L;
  std::string LeaseKey = "gridjit:lease:v" + std::to_string(CacheFormatVersion) + ":" + K.hex();
  std::string Token = randomToken();
  std::string PX = std::to_string(Opts.LeaseTime.count());
  auto TryTake = [&]() -> int { // 1 taken, 0 held by another, -1 failed
    ReplyPtr R = P->command({"SET", LeaseKey, Token, "NX", "PX", PX});
    if (!R)
      return -1;
    return R->type == REDIS_REPLY_NIL ? 0 : 1;
  };
  // Taken: but the previous holder may have stored the entry and let go
  // between the caller's lookup (or our last poll) and the take; the
  // store happened before the release, so one more look settles it.
  auto Taken = [&]() {
    P->LeasesTaken.fetch_add(1, std::memory_order_relaxed);
    L.Owner = this;
    L.Key = LeaseKey;
    L.Token = Token;
    ReplyPtr E = P->command({"EXISTS", entryKey(K)});
    if (!E || E->type != REDIS_REPLY_INTEGER || E->integer == 0)
      return;
    L.release();
    std::string Problem, Value;
    if (P->boundedGet(entryKey(K), Value, Problem))
      if (std::optional<Artifact> A = P->validate(K, Value, Problem)) {
        P->Hits.fetch_add(1, std::memory_order_relaxed);
        Found = std::move(A);
      }
  };
  int T = TryTake();
  if (T < 0)
    return L;
  if (T == 1) {
    Taken();
    return L;
  }
  P->LeaseWaits.fetch_add(1, std::memory_order_relaxed);
  auto Deadline = Clock::now() + Opts.LeaseTime;
  while (Clock::now() < Deadline) {
    std::this_thread::sleep_for(std::max(Opts.LeasePoll, std::chrono::milliseconds(1)));
    std::string Problem, Value;
    if (P->boundedGet(entryKey(K), Value, Problem)) {
      if (std::optional<Artifact> A = P->validate(K, Value, Problem)) {
        P->Hits.fetch_add(1, std::memory_order_relaxed);
        P->LeaseWaitHits.fetch_add(1, std::memory_order_relaxed);
        Found = std::move(A);
        return L;
      }
      return L; // a bad value: compile (the first lookup deals with it)
    }
    if (!Problem.empty())
      return L; // the server failed: compile
    // No entry yet. If the holder let go without storing (its compile
    // failed, or its lease expired), take the lease ourselves.
    ReplyPtr E = P->command({"EXISTS", LeaseKey});
    if (!E)
      return L;
    if (E->type == REDIS_REPLY_INTEGER && E->integer == 0) {
      int T2 = TryTake();
      if (T2 < 0)
        return L;
      if (T2 == 1) {
        Taken();
        return L;
      }
    }
  }
  P->LeaseExpired.fetch_add(1, std::memory_order_relaxed);
  return L;
}

bool RemoteCache::isBreakerOpen() const {
  int64_t Until = P->OpenUntil.load(std::memory_order_relaxed);
  return Until != 0 && nowNs() < Until;
}

RemoteCacheStats RemoteCache::getStats() const {
  RemoteCacheStats S;
  S.Hits = P->Hits.load();
  S.Misses = P->Misses.load();
  S.Errors = P->Errors.load();
  S.Timeouts = P->Timeouts.load();
  S.BadEntries = P->BadEntries.load();
  S.AuthFailures = P->AuthFailures.load();
  S.Oversize = P->Oversize.load();
  S.BadDeleted = P->BadDeleted.load();
  S.Stores = P->Stores.load();
  S.StoreExisting = P->StoreExisting.load();
  S.BreakerTrips = P->BreakerTrips.load();
  S.BreakerSkips = P->BreakerSkips.load();
  S.LeasesTaken = P->LeasesTaken.load();
  S.LeaseWaits = P->LeaseWaits.load();
  S.LeaseWaitHits = P->LeaseWaitHits.load();
  S.LeaseExpired = P->LeaseExpired.load();
  S.BytesRead = P->BytesRead.load();
  S.BytesWritten = P->BytesWritten.load();
  return S;
}

llvm::Expected<std::unique_ptr<RemoteCache>>
gridjit::openRemoteCache(RemoteCacheOptions Opts, const std::string &SecretFile) {
  if (Opts.URL.empty())
    Opts.URL = getEnv(EnvVar::GridjitRemoteCache).value_or("");
  if (Opts.URL.empty())
    return nullptr;
  if (getEnv(EnvVar::GridjitRemoteCacheReadOnly).value_or("") == "1")
    Opts.ReadOnly = true;
  if (Opts.Secret.empty()) {
    std::string File = SecretFile;
    if (File.empty())
      File = getEnv(EnvVar::GridjitRemoteCacheSecretFile).value_or("");
    if (!File.empty()) {
      auto Secret = readRemoteCacheSecret(File);
      if (!Secret)
        return Secret.takeError();
      Opts.Secret = std::move(*Secret);
    }
  }
  return RemoteCache::create(std::move(Opts));
}
