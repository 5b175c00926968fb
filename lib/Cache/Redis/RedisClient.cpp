//===- RedisClient.cpp - A small Redis client: pool, deadlines, no SIGPIPE ===//
//
// Part of gridjit. See RedisClient.h. The client is hiredis (0.14):
// blocking connections with socket deadlines.
//
//===----------------------------------------------------------------------===//

#include "RedisClient.h"

#include <cerrno>
#include <csignal>
#include <cstring>

#include <pthread.h>

using namespace gridjit;
using namespace gridjit::redis;

namespace {

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
    WasPending = pending();
  }
  ~SigPipeBlock() {
    if (!WasPending && pending()) {
      timespec Zero{0, 0};
      while (sigtimedwait(&Pipe, nullptr, &Zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  }

private:
  static bool pending() {
    sigset_t Pending;
    sigemptyset(&Pending);
    sigpending(&Pending);
    return sigismember(&Pending, SIGPIPE) == 1;
  }
  sigset_t Pipe, Old;
  bool WasPending = false;
};

bool isTimeout(const redisContext *C) {
  if (C->err != REDIS_ERR_IO)
    return false;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT ||
         std::strstr(C->errstr, "timed out") || std::strstr(C->errstr, "temporarily unavailable");
}

/// The command \p Args on \p C: its reply, or null (C->err says why).
ReplyPtr command(redisContext *C, llvm::ArrayRef<std::string_view> Args) {
  std::vector<const char *> Argv;
  std::vector<size_t> Lens;
  for (std::string_view A : Args) {
    Argv.push_back(A.data());
    Lens.push_back(A.size());
  }
  errno = 0;
  return ReplyPtr(
      static_cast<redisReply *>(redisCommandArgv(C, int(Argv.size()), Argv.data(), Lens.data())));
}

CommandResult failure(const redisContext *C, const std::string &Prefix) {
  CommandResult R;
  R.Status = C && isTimeout(C) ? RemoteStatus::TimedOut : RemoteStatus::Failed;
  R.Why = Prefix + (C ? C->errstr : "out of memory");
  return R;
}

} // namespace

RedisClient::~RedisClient() {
  for (redisContext *C : Idle)
    redisFree(C);
}

void RedisClient::dropPoolInChild() {
  // redisFree closes the descriptor and frees memory; it sends nothing.
  for (redisContext *C : Idle)
    redisFree(C);
  Idle.clear();
}

size_t RedisClient::idleConnections() {
  std::lock_guard<std::mutex> G(PoolMu);
  return Idle.size();
}

redisContext *RedisClient::connect(CommandResult &Failure) {
  timeval CT = toTimeval(Opts.ConnectTimeout);
  const RemoteCacheURL &U = Opts.URL;
  redisContext *C = U.IsUnix ? redisConnectUnixWithTimeout(U.SocketPath.c_str(), CT)
                             : redisConnectWithTimeout(U.Host.c_str(), int(U.Port), CT);
  if (!C || C->err) {
    Failure = failure(C, "cannot connect: ");
    if (C)
      redisFree(C);
    return nullptr;
  }
  // The handshake runs under the connect deadline.
  redisSetTimeout(C, CT);
  if (!handshake(C, Failure)) {
    redisFree(C);
    return nullptr;
  }
  redisSetTimeout(C, toTimeval(Opts.OperationTimeout));
  return C;
}

bool RedisClient::handshake(redisContext *C, CommandResult &Failure) {
  auto Simple = [&](llvm::ArrayRef<std::string_view> Args) {
    ReplyPtr R = command(C, Args);
    if (!R) {
      Failure = failure(C, "handshake: ");
      return false;
    }
    if (R->type == REDIS_REPLY_ERROR) {
      Failure = {RemoteStatus::Failed, nullptr,
                 std::string(Args[0]) + ": " + std::string(R->str, R->len)};
      return false;
    }
    return true;
  };
  const RemoteCacheURL &U = Opts.URL;
  if (!U.Password.empty() &&
      !(U.User.empty() ? Simple({"AUTH", U.Password}) : Simple({"AUTH", U.User, U.Password})))
    return false;
  std::string DB = std::to_string(U.Database);
  return U.Database == 0 || Simple({"SELECT", DB});
}

redisContext *RedisClient::take(bool &FromPool, CommandResult &Failure) {
  {
    std::lock_guard<std::mutex> G(PoolMu);
    FromPool = !Idle.empty();
    if (FromPool) {
      redisContext *C = Idle.back();
      Idle.pop_back();
      return C;
    }
  }
  return connect(Failure);
}

void RedisClient::give(redisContext *C) {
  std::lock_guard<std::mutex> G(PoolMu);
  if (Idle.size() < Opts.MaxIdle)
    Idle.push_back(C);
  else
    redisFree(C);
}

CommandResult RedisClient::run(llvm::ArrayRef<std::string_view> Args) {
  SigPipeBlock Guard;
  for (int Attempt = 0;; ++Attempt) {
    bool FromPool = false;
    CommandResult R;
    redisContext *C = take(FromPool, R);
    if (!C)
      return R;
    R.Reply = command(C, Args);
    if (!R.Reply) {
      // Dead pooled connection: one retry on a new one (not after a
      // timeout, which would cost a second deadline).
      R = failure(C, "");
      redisFree(C);
      if (FromPool && R.Status == RemoteStatus::Failed && Attempt == 0)
        continue;
      R.Why = (R.Status == RemoteStatus::TimedOut ? "timed out: " : "failed: ") + R.Why;
      return R;
    }
    give(C);
    if (R.Reply->type == REDIS_REPLY_ERROR) {
      R.Why = "server error: " + std::string(R.Reply->str, R.Reply->len);
      R.Reply.reset();
      return R; // Status is Failed
    }
    R.Status = RemoteStatus::OK;
    return R;
  }
}
