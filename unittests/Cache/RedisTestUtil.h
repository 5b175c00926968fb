//===- RedisTestUtil.h - A redis-server of the test's own -------*- C++ -*-===//
//
// Part of gridjit. The remote cache tests' server: redis-server on a unix
// socket in a temp directory (no TCP port unless asked, no persistence),
// started by the constructor and killed by the destructor, and a raw
// hiredis connection to look at or damage what it holds; and a scripted
// fake server for what no real server does.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_CACHE_REDISTESTUTIL_H
#define GRIDJIT_UNITTESTS_CACHE_REDISTESTUTIL_H

#include "Cache/CacheTestUtil.h"

#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <hiredis/hiredis.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gridjit::test {

/// The redis-server program, or "" where it is not installed.
inline std::string redisServerPath() {
  auto P = llvm::sys::findProgramByName("redis-server");
  return P ? *P : std::string();
}

/// Skips the test, saying why, where redis-server is not installed.
#define REQUIRE_REDIS()                                                                            \
  if (::gridjit::test::redisServerPath().empty())                                                  \
  GTEST_SKIP() << "redis-server is not installed (utils/setup.sh installs it)"

struct ReplyFree {
  void operator()(redisReply *R) const { freeReplyObject(R); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

class RedisServer {
public:
  explicit RedisServer(std::vector<std::string> Extra = {}) : Extra(std::move(Extra)) {
    Sock = Dir.file("redis.sock");
    start();
  }
  ~RedisServer() { kill(); }
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;

  std::string url() const { return "redis+unix://" + Sock; }
  const std::string &socketPath() const { return Sock; }

  /// Starts it and waits (at most 20 s) until it answers PING.
  void start() {
    std::string Exe = redisServerPath();
    std::vector<std::string> Args = {Exe,        "--port",      "0",      "--unixsocket",
                                     Sock,       "--save",      "",       "--appendonly",
                                     "no",       "--daemonize", "no",     "--dir",
                                     Dir.path(), "--loglevel",  "warning"};
    Args.insert(Args.end(), Extra.begin(), Extra.end());
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(A.data());
    Argv.push_back(nullptr);
    std::string Log = Dir.file("redis.log");
    Pid = fork();
    if (Pid == 0) {
      int FD = ::open(Log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (FD >= 0) {
        dup2(FD, 1);
        dup2(FD, 2);
      }
      execv(Argv[0], Argv.data());
      _exit(127);
    }
    ASSERT_GT(Pid, 0);
    for (int I = 0; I < 2000; ++I) {
      if (redisContext *C = redisConnectUnix(Sock.c_str())) {
        bool Up = false;
        if (!C->err)
          if (Reply R{static_cast<redisReply *>(redisCommand(C, "PING"))})
            Up = true; // PONG, or NOAUTH from a server with a password

        redisFree(C);
        if (Up)
          return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "redis-server did not start; its log:\n" << readFile(Log);
  }
  void signal(int Sig) { ::kill(Pid, Sig); }
  /// Sends \p Sig (SIGTERM: redis-server shuts down cleanly) and waits for
  /// the server to exit; start() starts it again on the same socket.
  void stop(int Sig) {
    if (Pid <= 0)
      return;
    ::kill(Pid, Sig);
    int Status;
    waitpid(Pid, &Status, 0);
    Pid = -1;
  }
  void kill() {
    if (Pid <= 0)
      return;
    ::kill(Pid, SIGCONT);
    ::kill(Pid, SIGKILL);
    int Status;
    waitpid(Pid, &Status, 0);
    Pid = -1;
  }

  /// One command on a fresh connection (binary-safe %b arguments).
  Reply cmd(const std::vector<std::string> &Args) {
    redisContext *C = redisConnectUnix(Sock.c_str());
    EXPECT_TRUE(C && !C->err);
    if (!C || C->err) {
      if (C)
        redisFree(C);
      return nullptr;
    }
    std::vector<const char *> Argv;
    std::vector<size_t> Lens;
    for (const std::string &A : Args) {
      Argv.push_back(A.data());
      Lens.push_back(A.size());
    }
    Reply R{
        static_cast<redisReply *>(redisCommandArgv(C, int(Argv.size()), Argv.data(), Lens.data()))};
    redisFree(C);
    return R;
  }
  std::optional<std::string> get(const std::string &Key) {
    Reply R = cmd({"GET", Key});
    if (!R || R->type != REDIS_REPLY_STRING)
      return std::nullopt;
    return std::string(R->str, R->len);
  }
  void set(const std::string &Key, const std::string &Value) {
    Reply R = cmd({"SET", Key, Value});
    ASSERT_TRUE(R && R->type == REDIS_REPLY_STATUS);
  }

private:
  TempDir Dir;
  std::vector<std::string> Extra;
  std::string Sock;
  pid_t Pid = -1;
};

/// A "server" on a unix socket that runs a script on each connection it
/// accepts, in a thread of its own: what a broken or hostile server does
/// (close at once, trickle a reply, send more than any reply may hold).
/// The script writes with send (MSG_NOSIGNAL) and should stop when Stop
/// is set or a write fails; the connection ends when it returns. stop()
/// (and the destructor) sets Stop and shuts every connection down, so no
/// script is left blocked.
class ScriptedServer {
public:
  using Script = std::function<void(int FD, const std::atomic<bool> &Stop)>;

  ScriptedServer(const std::string &Path, Script S) : Run(std::move(S)) {
    Listen = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un A{};
    A.sun_family = AF_UNIX;
    std::strncpy(A.sun_path, Path.c_str(), sizeof(A.sun_path) - 1);
    EXPECT_EQ(::bind(Listen, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
    EXPECT_EQ(::listen(Listen, 16), 0);
    Acceptor = std::thread([this] {
      while (true) {
        int C = ::accept4(Listen, nullptr, nullptr, SOCK_CLOEXEC);
        if (C < 0 || Stop)
          break;
        std::lock_guard<std::mutex> G(Mu);
        ++Accepted;
        Conns.push_back(C);
        // The script's end ends the connection (closed by stop()).
        Workers.emplace_back([this, C] {
          Run(C, Stop);
          ::shutdown(C, SHUT_RDWR);
        });
      }
    });
  }
  ~ScriptedServer() { stop(); }
  ScriptedServer(const ScriptedServer &) = delete;
  ScriptedServer &operator=(const ScriptedServer &) = delete;

  /// Ends every script and the acceptor (idempotent).
  void stop() {
    if (Stop.exchange(true))
      return;
    ::shutdown(Listen, SHUT_RDWR);
    Acceptor.join();
    ::close(Listen);
    {
      std::lock_guard<std::mutex> G(Mu);
      for (int C : Conns)
        ::shutdown(C, SHUT_RDWR);
    }
    for (std::thread &W : Workers)
      W.join();
    for (int C : Conns)
      ::close(C);
  }
  int accepted() {
    std::lock_guard<std::mutex> G(Mu);
    return Accepted;
  }

  /// Sends all of \p Data; false when the connection failed or Stop is set.
  static bool send(int FD, std::string_view Data, const std::atomic<bool> &Stop) {
    while (!Data.empty() && !Stop) {
      ssize_t N = ::send(FD, Data.data(), Data.size(), MSG_NOSIGNAL);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return false;
      Data.remove_prefix(size_t(N));
    }
    return !Stop;
  }
  /// Reads what the client sent so far (its command), waiting for the
  /// first bytes.
  static void readSome(int FD) {
    char Buf[4096];
    (void)::recv(FD, Buf, sizeof(Buf), 0);
  }

private:
  Script Run;
  int Listen = -1;
  std::atomic<bool> Stop{false};
  std::thread Acceptor;
  std::mutex Mu;
  std::vector<int> Conns;
  std::vector<std::thread> Workers;
  int Accepted = 0;
};

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_CACHE_REDISTESTUTIL_H
