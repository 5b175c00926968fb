//===- RedisStore.cpp - The remote tier's store on a Redis server ---------===//
//
// Part of gridjit. The four RemoteStore operations as Redis commands (two
// of them Lua scripts, which the server runs atomically), over a
// RedisClient; and the factories that make a RemoteCache on Redis.
//
//===----------------------------------------------------------------------===//

#include "RedisClient.h"
#include "RedisReply.h"
#include "gridjit/Cache/RemoteCache.h"

#include <cstdint>

using namespace gridjit;
using namespace gridjit::redis;

namespace {

/// Deletes KEYS[1] only if it still holds ARGV[1].
constexpr const char *DeleteIfSameScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
    "else return 0 end";

template <typename T> RemoteResult<T> notDone(CommandResult &R) {
  return RemoteResult<T>::failed(R.Status, std::move(R.Why));
}

class RedisStore final : public RemoteStore {
public:
  explicit RedisStore(ClientOptions O) : Client(std::move(O)) {}

  RemoteResult<StoredValue> get(std::string_view Key, uint64_t MaxBytes) override {
    std::string Max = std::to_string(MaxBytes);
    CommandResult R = Client.run({"EVAL", BoundedGetScript, "1", Key, Max});
    if (!R.Reply)
      return notDone<StoredValue>(R);
    StoredValue V = interpretGetReply(*R.Reply);
    if (V.Kind == StoredValue::Found && V.Bytes.size() > MaxBytes) {
      // The server sent more than the script lets it: no value of ours.
      V.Kind = StoredValue::Oversize;
      V.Size = V.Bytes.size();
      V.Bytes.clear();
    }
    return RemoteResult<StoredValue>::done(std::move(V));
  }

  RemoteResult<bool> setIfAbsent(std::string_view Key, std::string_view Value,
                                 std::chrono::milliseconds TTL) override {
    std::string PX = std::to_string(TTL.count());
    CommandResult R = Client.run({"SET", Key, Value, "NX", "PX", PX});
    if (!R.Reply)
      return notDone<bool>(R);
    return RemoteResult<bool>::done(R.Reply->Type != Reply::Nil);
  }

  RemoteResult<bool> deleteIfEquals(std::string_view Key, std::string_view Value) override {
    CommandResult R = Client.run({"EVAL", DeleteIfSameScript, "1", Key, Value});
    if (!R.Reply)
      return notDone<bool>(R);
    return RemoteResult<bool>::done(R.Reply->Type == Reply::Integer && R.Reply->Int == 1);
  }

  RemoteResult<bool> exists(std::string_view Key) override {
    CommandResult R = Client.run({"EXISTS", Key});
    if (!R.Reply)
      return notDone<bool>(R);
    if (R.Reply->Type != Reply::Integer)
      return RemoteResult<bool>::failed(RemoteStatus::BadReply, "EXISTS: not an integer reply");
    return RemoteResult<bool>::done(R.Reply->Int != 0);
  }

private:
  RedisClient Client;
};

} // namespace

llvm::Expected<std::unique_ptr<RemoteCache>> RemoteCache::create(RemoteCacheOptions Opts) {
  auto URL = parseRemoteCacheURL(Opts.URL);
  if (!URL)
    return URL.takeError();
  ClientOptions CO;
  CO.URL = std::move(*URL);
  CO.ConnectTimeout = Opts.ConnectTimeout;
  CO.OperationTimeout = Opts.OperationTimeout;
  // The largest reply: the largest value the tier reads, and room for the
  // protocol around it (saturating: MaxValueBytes may be "no limit").
  constexpr uint64_t Room = 64 << 10, Most = uint64_t(SIZE_MAX) / 2;
  CO.Limits.MaxReplyBytes = Opts.MaxValueBytes > Most - Room ? Most : Opts.MaxValueBytes + Room;
  auto Store = std::make_unique<RedisStore>(std::move(CO));
  return std::make_unique<RemoteCache>(std::move(Opts), std::move(Store));
}

llvm::Expected<std::unique_ptr<RemoteCache>>
gridjit::openRemoteCache(RemoteCacheOptions Opts, const std::string &SecretFile) {
  auto Resolved = resolveRemoteCacheOptions(std::move(Opts), SecretFile);
  if (!Resolved)
    return Resolved.takeError();
  if (!*Resolved)
    return nullptr;
  return RemoteCache::create(std::move(**Resolved));
}
