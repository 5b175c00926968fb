//===- RedisClient.h - A small Redis client: pool, deadlines, no SIGPIPE -*- C++ -*-===//
//
// Part of gridjit (internal to lib/Cache/Redis, the gridjitCacheRedis
// library: the only code that links hiredis). Runs one command at a time
// per connection, on connections kept in a small pool:
//
// * Deadlines. A connection is made with a connect deadline (hiredis
//   connects non-blocking and polls), and the AUTH/SELECT handshake runs
//   under it too; then every read or write of a command has the operation
//   deadline (SO_RCVTIMEO/SO_SNDTIMEO through redisSetTimeout).
// * No stale replies. A connection on which anything failed is closed,
//   never reused, so a late reply can never be read as the answer to a
//   later command. A pooled connection that the server closed meanwhile (a
//   restart, an idle timeout) fails at once: that one failure is retried
//   once on a new connection.
// * No SIGPIPE. hiredis writes with write(2); every command runs with
//   SIGPIPE blocked in the calling thread, and a SIGPIPE it raised is taken
//   back with sigtimedwait before the thread's mask is restored. The
//   process's signal dispositions are never touched.
// * No socket shared over fork(). A child closes the pooled connections it
//   inherited (the parent's sockets: a command of the child's on one would
//   interleave with the parent's) and connects anew. A connection another
//   thread of the parent was using at the fork stays open in the child,
//   never used, until the child exits.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REDIS_REDISCLIENT_H
#define GRIDJIT_LIB_CACHE_REDIS_REDISCLIENT_H

#include "gridjit/Cache/RemoteCacheConfig.h"
#include "gridjit/Cache/RemoteStore.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/ArrayRef.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit::redis {

struct ReplyDeleter {
  void operator()(redisReply *R) const { freeReplyObject(R); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

/// Options of a RedisClient.
struct ClientOptions {
  RemoteCacheURL URL;
  /// Connecting, and each read or write of the handshake.
  std::chrono::milliseconds ConnectTimeout{100};
  /// Each read or write of a command.
  std::chrono::milliseconds OperationTimeout{1000};
  /// Idle connections kept for reuse; more are closed.
  size_t MaxIdle = 16;
};

/// What one command did: OK with the server's reply (never an error
/// reply: that is Failed, with its text in Why), or Failed / TimedOut.
struct CommandResult {
  RemoteStatus Status = RemoteStatus::Failed;
  ReplyPtr Reply;
  std::string Why;
};

/// Connections to one server. Thread-safe; no lock is held during I/O.
class RedisClient {
public:
  explicit RedisClient(ClientOptions Opts) : Opts(std::move(Opts)) {}
  ~RedisClient();
  RedisClient(const RedisClient &) = delete;
  RedisClient &operator=(const RedisClient &) = delete;

  /// Runs the command \p Args (binary-safe) and returns its reply.
  CommandResult run(llvm::ArrayRef<std::string_view> Args);

  /// Idle connections in the pool now (for tests).
  size_t idleConnections();

private:
  /// A pooled connection (\p FromPool set), or a new one connected and
  /// handshaken; null on failure, with \p Failure saying why.
  redisContext *take(bool &FromPool, CommandResult &Failure);
  redisContext *connect(CommandResult &Failure);
  /// AUTH and SELECT as the URL asks, under the connect deadline.
  bool handshake(redisContext *C, CommandResult &Failure);
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
