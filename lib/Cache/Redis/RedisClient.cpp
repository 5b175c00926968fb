//===- RedisClient.cpp - A small Redis client: pool, deadlines, bounds ----===//
//
// Part of gridjit. See RedisClient.h. hiredis (0.14) makes the connection;
// everything after that is poll(), send() and recv() on its socket.
//
//===----------------------------------------------------------------------===//

#include "RedisClient.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

using namespace gridjit;
using namespace gridjit::redis;

namespace {

using Clock = std::chrono::steady_clock;

CommandResult result(RemoteStatus S, std::string Why) {
  CommandResult R;
  R.Status = S;
  R.Why = std::move(Why);
  return R;
}

/// The time left until \p Deadline, in whole milliseconds rounded up
/// (poll's unit); 0 when it has passed.
int msLeft(Clock::time_point Deadline) {
  auto Left = Deadline - Clock::now();
  if (Left <= Clock::duration::zero())
    return 0;
  auto Ms = std::chrono::ceil<std::chrono::milliseconds>(Left).count();
  return int(std::min<decltype(Ms)>(Ms, 1 << 30));
}

/// Waits until \p FD is ready for \p Events or \p Deadline passes: 1
/// ready, 0 timed out, -1 failed (errno).
int waitFor(int FD, short Events, Clock::time_point Deadline) {
  while (true) {
    int Ms = msLeft(Deadline);
    if (Ms == 0)
      return 0;
    pollfd P{FD, Events, 0};
    int N = ::poll(&P, 1, Ms);
    if (N < 0 && errno == EINTR)
      continue;
    if (N != 0)
      return N < 0 ? -1 : 1;
  }
}

bool isTimeout(const redisContext *C) {
  if (C->err != REDIS_ERR_IO)
    return false;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT ||
         std::strstr(C->errstr, "timed out") || std::strstr(C->errstr, "temporarily unavailable");
}

timeval toTimeval(Clock::duration D) {
  auto Us =
      std::max<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(D).count(), 1000);
  timeval TV;
  TV.tv_sec = Us / 1000000;
  TV.tv_usec = Us % 1000000;
  return TV;
}

/// Writes all of \p Data to \p FD by \p Deadline.
CommandResult writeAll(int FD, std::string_view Data, Clock::time_point Deadline) {
  while (!Data.empty()) {
    // MSG_NOSIGNAL: a closed connection is EPIPE, never SIGPIPE.
    ssize_t N = ::send(FD, Data.data(), Data.size(), MSG_NOSIGNAL);
    if (N > 0) {
      Data.remove_prefix(size_t(N));
      continue;
    }
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return result(RemoteStatus::Failed, std::string("failed: writing: ") + std::strerror(errno));
    int W = waitFor(FD, POLLOUT, Deadline);
    if (W == 0)
      return result(RemoteStatus::TimedOut, "timed out: writing the command");
    if (W < 0)
      return result(RemoteStatus::Failed, std::string("failed: poll: ") + std::strerror(errno));
  }
  return result(RemoteStatus::OK, "");
}

/// Reads one reply from \p FD by \p Deadline, within \p L.
CommandResult readReply(int FD, const ReplyLimits &L, Clock::time_point Deadline) {
  std::string Buf;
  size_t Need = 1; // bytes the reply needs at least, as far as it is known
  while (true) {
    if (Buf.size() >= Need) {
      Reply R;
      std::string Why;
      ParseStatus S = parseReply(Buf, L, R, Need, Why);
      if (S == ParseStatus::Bad)
        return result(RemoteStatus::BadReply, "bad reply: " + Why);
      if (S == ParseStatus::Complete) {
        // One command, one reply: anything after it is not the protocol.
        if (Need != Buf.size())
          return result(RemoteStatus::BadReply, "bad reply: " + std::to_string(Buf.size() - Need) +
                                                    " bytes after the reply");
        CommandResult C = result(RemoteStatus::OK, "");
        C.Reply = std::move(R);
        return C;
      }
    }
    // Read what is there, but never so much that the buffer passes the
    // limit by more than the one byte that shows a reply is over it.
    Buf.reserve(Need);
    char Chunk[32 << 10];
    size_t Room = size_t(L.MaxReplyBytes) + 1 - Buf.size();
    ssize_t N = ::recv(FD, Chunk, std::min(sizeof(Chunk), Room), 0);
    if (N > 0)
      Buf.append(Chunk, size_t(N));
    if (N > 0)
      continue;
    if (N == 0)
      return result(RemoteStatus::Failed, "failed: the server closed the connection");
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return result(RemoteStatus::Failed, std::string("failed: reading: ") + std::strerror(errno));
    int W = waitFor(FD, POLLIN, Deadline);
    if (W == 0)
      return result(RemoteStatus::TimedOut,
                    "timed out: reading the reply (" + std::to_string(Buf.size()) + " bytes came)");
    if (W < 0)
      return result(RemoteStatus::Failed, std::string("failed: poll: ") + std::strerror(errno));
  }
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

redisContext *RedisClient::connect(CommandResult &Failure, Clock::time_point Deadline) {
  Deadline = std::min(Deadline, Clock::now() + Opts.ConnectTimeout);
  if (msLeft(Deadline) == 0) {
    Failure = result(RemoteStatus::TimedOut, "timed out: no time left to connect");
    return nullptr;
  }
  timeval CT = toTimeval(Deadline - Clock::now());
  const RemoteCacheURL &U = Opts.URL;
  errno = 0;
  redisContext *C = U.IsUnix ? redisConnectUnixWithTimeout(U.SocketPath.c_str(), CT)
                             : redisConnectWithTimeout(U.Host.c_str(), int(U.Port), CT);
  if (!C || C->err) {
    bool Timeout = C && isTimeout(C);
    Failure = result(Timeout ? RemoteStatus::TimedOut : RemoteStatus::Failed,
                     (Timeout ? "timed out: cannot connect: " : "cannot connect: ") +
                         std::string(C ? C->errstr : "out of memory"));
    if (C)
      redisFree(C);
    return nullptr;
  }
  // From here on, every wait is poll() with what is left of the deadline.
  int Flags = ::fcntl(C->fd, F_GETFL);
  if (Flags < 0 || ::fcntl(C->fd, F_SETFL, Flags | O_NONBLOCK) != 0) {
    Failure = result(RemoteStatus::Failed, std::string("cannot connect: ") + std::strerror(errno));
    redisFree(C);
    return nullptr;
  }
  if (!handshake(C, Failure, Deadline)) {
    redisFree(C);
    return nullptr;
  }
  return C;
}

bool RedisClient::handshake(redisContext *C, CommandResult &Failure, Clock::time_point Deadline) {
  auto Simple = [&](llvm::ArrayRef<std::string_view> Args) {
    CommandResult R = roundTrip(C, Args, Deadline);
    if (R.Status != RemoteStatus::OK) {
      Failure = std::move(R);
      Failure.Why = "handshake: " + Failure.Why;
      return false;
    }
    if (R.Reply->Type == Reply::Error) {
      Failure = result(RemoteStatus::Failed, std::string(Args[0]) + ": " + R.Reply->Str);
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

redisContext *RedisClient::take(bool &FromPool, CommandResult &Failure,
                                Clock::time_point Deadline) {
  {
    std::lock_guard<std::mutex> G(PoolMu);
    FromPool = !Idle.empty();
    if (FromPool) {
      redisContext *C = Idle.back();
      Idle.pop_back();
      return C;
    }
  }
  return connect(Failure, Deadline);
}

void RedisClient::give(redisContext *C) {
  std::lock_guard<std::mutex> G(PoolMu);
  if (Idle.size() < Opts.MaxIdle)
    Idle.push_back(C);
  else
    redisFree(C);
}

CommandResult RedisClient::roundTrip(redisContext *C, llvm::ArrayRef<std::string_view> Args,
                                     Clock::time_point Deadline) {
  std::vector<const char *> Argv;
  std::vector<size_t> Lens;
  for (std::string_view A : Args) {
    Argv.push_back(A.data());
    Lens.push_back(A.size());
  }
  char *Cmd = nullptr;
  int Len = redisFormatCommandArgv(&Cmd, int(Argv.size()), Argv.data(), Lens.data());
  if (Len < 0 || !Cmd)
    return result(RemoteStatus::Failed, "failed: cannot format the command");
  CommandResult R = writeAll(C->fd, std::string_view(Cmd, size_t(Len)), Deadline);
  redisFreeCommand(Cmd);
  if (R.Status != RemoteStatus::OK)
    return R;
  return readReply(C->fd, Opts.Limits, Deadline);
}

CommandResult RedisClient::run(llvm::ArrayRef<std::string_view> Args) {
  Clock::time_point Deadline = Clock::now() + Opts.OperationTimeout;
  for (int Attempt = 0;; ++Attempt) {
    bool FromPool = false;
    CommandResult R;
    redisContext *C = take(FromPool, R, Deadline);
    if (!C)
      return R;
    R = roundTrip(C, Args, Deadline);
    if (R.Status != RemoteStatus::OK) {
      // Never reused: a late reply must not answer a later command.
      redisFree(C);
      // Dead pooled connection: one retry on a new one (not after a
      // timeout or a bad reply, which a new connection would not cure).
      if (FromPool && R.Status == RemoteStatus::Failed && Attempt == 0)
        continue;
      return R;
    }
    give(C);
    if (R.Reply->Type == Reply::Error) {
      R.Status = RemoteStatus::Failed;
      R.Why = "server error: " + R.Reply->Str;
      R.Reply.reset();
    }
    return R;
  }
}
