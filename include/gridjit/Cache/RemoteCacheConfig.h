//===- RemoteCacheConfig.h - What a remote cache is told to be --*- C++ -*-===//
//
// Part of gridjit. The configuration of the remote tier (docs/RemoteCache.md,
// "Turning it on"): its options, the server's URL, the HMAC secret's file,
// and the environment's defaults for all three. Nothing here talks to a
// server; RemoteCache.h is the tier itself.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_REMOTECACHECONFIG_H
#define GRIDJIT_CACHE_REMOTECACHECONFIG_H

#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit {

/// A parsed remote cache URL.
struct RemoteCacheURL {
  bool IsUnix = false;
  std::string Host;       ///< TCP: host name or address
  unsigned Port = 6379;   ///< TCP
  std::string SocketPath; ///< unix: absolute path of the socket
  std::string User;       ///< ACL user; empty: the default user
  std::string Password;   ///< empty: no AUTH
  unsigned Database = 0;  ///< SELECT'ed when not 0
};

/// Parses `redis://[[user]:password@]host[:port][/db]` (IPv6 hosts in
/// brackets, default port 6379) or `redis+unix://[[user]:password@]/path`
/// (optionally `?db=N`). Errors say what is wrong and where.
llvm::Expected<RemoteCacheURL> parseRemoteCacheURL(std::string_view URL);

/// The fewest and the most bytes a secret file may hold.
constexpr uint64_t MinSecretBytes = 16;
constexpr uint64_t MaxSecretFileBytes = 4096;

/// The secret in file \p Path: its whole content, from MinSecretBytes to
/// MaxSecretFileBytes bytes. Only a regular file (or a link to one) is
/// read; it is opened non-blocking, so a FIFO never blocks, and never read
/// past the bound. Errors name the file as "the <What> '<Path>'" (What:
/// "remote cache secret file", "cache secret file"): it cannot be opened
/// or read (IO), it is a FIFO, a directory, a device... (IO), it holds too
/// few or too many bytes (InvalidArgument).
llvm::Expected<std::string> readSecretFile(const std::string &Path, std::string_view What);

/// readSecretFile(\p Path, "remote cache secret file").
llvm::Expected<std::string> readRemoteCacheSecret(const std::string &Path);

/// Options of a RemoteCache.
struct RemoteCacheOptions {
  /// The server (parseRemoteCacheURL). Required.
  std::string URL;
  /// Never write (no stores, no leases, no deletes of bad values).
  bool ReadOnly = false;
  /// The most of an operation's deadline that connecting and the
  /// AUTH/SELECT handshake may take (when no pooled connection is idle).
  std::chrono::milliseconds ConnectTimeout{100};
  /// Deadline of a whole operation, from its start: connecting (within
  /// ConnectTimeout), writing the command, reading the reply to its last
  /// byte. Not per read or write: a server that trickles bytes cannot
  /// renew it.
  std::chrono::milliseconds OperationTimeout{1000};
  /// How long an entry lives on the server.
  std::chrono::milliseconds TTL = std::chrono::hours(24 * 7);
  /// Values larger than this are neither stored nor read; a reply that
  /// announces more (plus 64 KiB for the protocol) is refused when its
  /// header is read, before anything it announces is buffered (BadReplies).
  uint64_t MaxValueBytes = uint64_t(64) << 20;
  /// Consecutive failed operations that open the breaker.
  unsigned BreakerThreshold = 3;
  /// How long an open breaker skips the server before one request probes
  /// it again.
  std::chrono::milliseconds BreakerCooldown{5000};
  /// The cross-machine single-flight lease: its lifetime (what a crashed
  /// holder costs the others), and how often waiters look for the entry.
  /// Zero lease time: no leases.
  std::chrono::milliseconds LeaseTime{10000};
  std::chrono::milliseconds LeasePoll{25};
  /// The HMAC secret; empty: values are written without a tag and read
  /// without checking one. With a secret, a value without a valid tag is
  /// rejected (AuthFailures).
  std::string Secret;
};

/// \p Opts completed with the environment's defaults (docs/RemoteCache.md):
/// \p Opts.URL, else $GRIDJIT_REMOTE_CACHE; $GRIDJIT_REMOTE_CACHE_READ_ONLY=1
/// sets ReadOnly; unless \p Opts.Secret is set, the secret is read from
/// \p SecretFile, else from $GRIDJIT_REMOTE_CACHE_SECRET_FILE. std::nullopt
/// when there is no URL (no remote cache). Errors: a secret file that
/// cannot be read or is too short. The URL is not parsed here.
///
/// This is the one place that reads the remote cache's variables; the
/// Compiler (for its own options), jit-run and the C API (for the CUDA
/// runtime, which reads no environment) call it.
llvm::Expected<std::optional<RemoteCacheOptions>>
resolveRemoteCacheOptions(RemoteCacheOptions Opts, const std::string &SecretFile = {});

} // namespace gridjit

#endif // GRIDJIT_CACHE_REMOTECACHECONFIG_H
