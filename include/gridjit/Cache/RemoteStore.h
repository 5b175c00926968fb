//===- RemoteStore.h - The key-value server under the remote tier -*- C++ -*-===//
//
// Part of gridjit. The four operations the remote tier (RemoteCache.h) needs
// from a shared key-value server, and nothing else: a bounded read, a write
// that never replaces, a delete that only removes what the caller saw, and
// an existence check. The Redis client (lib/Cache/Redis, the only code that
// knows hiredis) implements it over a connection pool; the tests implement
// it in memory, so that the entry and lease logic above it, and the breaker,
// are tested without a server.
//
// Every operation reports how it went (RemoteStatus): it did its work, it
// failed (an I/O error, a closed connection, an error reply), it passed its
// deadline, or the server's reply broke the protocol or a bound. An
// implementation applies its own deadline to the whole operation (never
// one per read, which a server trickling bytes would renew forever), never
// blocks without one, bounds what it buffers by the largest value it may
// be asked for before reading it, and never lets a signal from its sockets
// reach the process.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_REMOTESTORE_H
#define GRIDJIT_CACHE_REMOTESTORE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace gridjit {

/// How one operation on the server went.
enum class RemoteStatus {
  OK,       ///< it was done (its answer is in the result)
  Failed,   ///< connect, I/O or server error
  TimedOut, ///< the operation's deadline passed
  BadReply, ///< the reply broke the protocol or a bound (a size over the limit)
};

/// An operation's status and answer; Why says what happened when it was
/// not done.
template <typename T> struct RemoteResult {
  RemoteStatus Status = RemoteStatus::Failed;
  T Value{};
  std::string Why;

  bool ok() const { return Status == RemoteStatus::OK; }
  static RemoteResult done(T V) { return {RemoteStatus::OK, std::move(V), {}}; }
  static RemoteResult failed(RemoteStatus S, std::string Why) { return {S, T{}, std::move(Why)}; }
};

/// The answer to a bounded read.
struct StoredValue {
  enum KindT {
    Missing,  ///< no value under the key
    Found,    ///< Bytes is the value
    Oversize, ///< the value is larger than asked for; Size is its size
  } Kind = Missing;
  std::string Bytes;
  uint64_t Size = 0;
};

/// A shared key-value server. Thread-safe.
class RemoteStore {
public:
  virtual ~RemoteStore();
  /// The value under \p Key, unless it is larger than \p MaxBytes (then
  /// only its size is transferred).
  virtual RemoteResult<StoredValue> get(std::string_view Key, uint64_t MaxBytes) = 0;
  /// Writes \p Value under \p Key, to expire after \p TTL, unless a value
  /// is there: true when written.
  virtual RemoteResult<bool> setIfAbsent(std::string_view Key, std::string_view Value,
                                         std::chrono::milliseconds TTL) = 0;
  /// Deletes \p Key if it still holds exactly \p Value (one atomic step on
  /// the server): true when deleted.
  virtual RemoteResult<bool> deleteIfEquals(std::string_view Key, std::string_view Value) = 0;
  /// Whether \p Key holds a value.
  virtual RemoteResult<bool> exists(std::string_view Key) = 0;
};

} // namespace gridjit

#endif // GRIDJIT_CACHE_REMOTESTORE_H
