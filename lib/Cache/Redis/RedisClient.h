//===- RedisClient.h - A small Redis client: pool, deadlines, bounds -*- C++ -*-===//
//
// Part of gridjit (internal to lib/Cache/Redis, the gridjitCacheRedis
// library: the only code that links hiredis). Runs one command at a time
// per connection, on connections kept in a small pool. hiredis connects
// (TCP or a unix socket, non-blocking with a deadline); the command is
// written and its reply read here, on the non-blocking socket with poll(),
// so that:
//
// * Deadlines. One deadline bounds the whole request, OperationTimeout
//   from its start: connecting (at most ConnectTimeout of it) and the
//   AUTH/SELECT handshake, writing the command, and reading the reply to
//   its last byte. A server that trickles a byte at a time cannot renew it
//   (a deadline per read() could be renewed forever).
// * Bounds. A reply is parsed by RedisReply.h as it arrives, within
//   ClientOptions::Limits: a bulk string or an array larger than the
//   largest value the tier may read, or a line without end, is refused
//   (RemoteStatus::BadReply) when its header is read, before anything it
//   announces is buffered.
// * No stale replies. A connection on which anything failed is closed,
//   never reused, so a late reply can never be read as the answer to a
//   later command. A pooled connection that the server closed meanwhile (a
//   restart, an idle timeout) fails at once: that one failure is retried
//   once on a new connection, within the same deadline.
// * No SIGPIPE. Commands are written with send(MSG_NOSIGNAL): a server
//   that closed the connection makes the write fail with EPIPE, and no
//   signal is raised. The process's signal dispositions and the thread's
//   signal mask are never touched.
// * No socket shared over fork(). A child closes the pooled connections it
//   inherited (the parent's sockets: a command of the child's on one would
//   interleave with the parent's) and connects anew. A connection another
//   thread of the parent was using at the fork stays open in the child,
//   never used, until the child exits.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REDIS_REDISCLIENT_H
#define GRIDJIT_LIB_CACHE_REDIS_REDISCLIENT_H

#include "RedisReply.h"
#include "gridjit/Cache/RemoteCacheConfig.h"
#include "gridjit/Cache/RemoteStore.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/ArrayRef.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace gridjit::redis {

/// Options of a RedisClient.
struct ClientOptions {
  RemoteCacheURL URL;
  /// The most of a request's deadline that connecting and the AUTH/SELECT
  /// handshake may take.
  std::chrono::milliseconds ConnectTimeout{100};
  /// The deadline of a whole request, from its start: connecting (when no
  /// pooled connection is idle), writing, reading the reply to the end.
  std::chrono::milliseconds OperationTimeout{1000};
  /// Idle connections kept for reuse; more are closed.
  size_t MaxIdle = 16;
  /// What a reply may hold (RemoteCache::create sets MaxReplyBytes from
  /// RemoteCacheOptions::MaxValueBytes).
  ReplyLimits Limits;
};

/// What one command did: OK with the server's reply (never an error
/// reply: that is Failed, with its text in Why), or Failed, TimedOut or
/// BadReply, with Why saying what happened.
struct CommandResult {
  RemoteStatus Status = RemoteStatus::Failed;
  std::optional<redis::Reply> Reply;
  std::string Why;
};

/// Connections to one server. Thread-safe; no lock is held during I/O.
class RedisClient {
public:
  explicit RedisClient(ClientOptions Opts) : Opts(std::move(Opts)) {}
  ~RedisClient();
  RedisClient(const RedisClient &) = delete;
  RedisClient &operator=(const RedisClient &) = delete;

  /// Runs the command \p Args (binary-safe) and returns its reply, all
  /// within one OperationTimeout.
  CommandResult run(llvm::ArrayRef<std::string_view> Args);

  /// Idle connections in the pool now (for tests).
  size_t idleConnections();

private:
  using Clock = std::chrono::steady_clock;
  /// A pooled connection (\p FromPool set), or a new one connected and
  /// handshaken by \p Deadline; null on failure, with \p Failure saying why.
  redisContext *take(bool &FromPool, CommandResult &Failure, Clock::time_point Deadline);
  redisContext *connect(CommandResult &Failure, Clock::time_point Deadline);
  /// AUTH and SELECT as the URL asks, by \p Deadline.
  bool handshake(redisContext *C, CommandResult &Failure, Clock::time_point Deadline);
  /// Writes \p Args on \p C and reads the reply, by \p Deadline.
  CommandResult roundTrip(redisContext *C, llvm::ArrayRef<std::string_view> Args,
                          Clock::time_point Deadline);
  void give(redisContext *C);

  /// In a child of fork(), PoolMu held: closes the pooled connections
  /// (their sockets are the parent's too) without a word to the server.
  void dropPoolInChild();

  ClientOptions Opts;
  std::mutex PoolMu;
  std::vector<redisContext *> Idle;
  ForkHooks Fork{PoolMu, [this] { dropPoolInChild(); }}; ///< last: see ForkHooks
};

} // namespace gridjit::redis

#endif // GRIDJIT_LIB_CACHE_REDIS_REDISCLIENT_H
