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

#include <algorithm>

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
    return RemoteResult<StoredValue>::done(interpretGetReply(*R.Reply));
  }

  RemoteResult<bool> setIfAbsent(std::string_view Key, std::string_view Value,
                                 std::chrono::milliseconds TTL) override {
    std::string PX = std::to_string(TTL.count());
    CommandResult R = Client.run({"SET", Key, Value, "NX", "PX", PX});
    if (!R.Reply)
      return notDone<bool>(R);
    return RemoteResult<bool>::done(R.Reply->type != REDIS_REPLY_NIL);
  }

  RemoteResult<bool> deleteIfEquals(std::string_view Key, std::string_view Value) override {
    CommandResult R = Client.run({"EVAL", DeleteIfSameScript, "1", Key, Value});
    if (!R.Reply)
      return notDone<bool>(R);
    return RemoteResult<bool>::done(R.Reply->type == REDIS_REPLY_INTEGER && R.Reply->integer == 1);
  }

  RemoteResult<bool> exists(std::string_view Key) override {
    CommandResult R = Client.run({"EXISTS", Key});
    if (!R.Reply)
      return notDone<bool>(R);
    if (R.Reply->type != REDIS_REPLY_INTEGER)
      return RemoteResult<bool>::failed(RemoteStatus::Failed, "EXISTS: not an integer reply");
    return RemoteResult<bool>::done(R.Reply->integer != 0);
  }

private:
  RedisClient Client;
};

} // namespace

StoredValue redis::interpretGetReply(const redisReply &R) {
  StoredValue V;
  if (R.type == REDIS_REPLY_INTEGER) {
    V.Kind = StoredValue::Oversize;
    V.Size = uint64_t(std::max<long long>(R.integer, 0));
  } else if (R.type == REDIS_REPLY_STRING) {
    V.Kind = StoredValue::Found;
    V.Bytes.assign(R.str, R.len);
  }
  return V;
}

llvm::Expected<std::unique_ptr<RemoteCache>> RemoteCache::create(RemoteCacheOptions Opts) {
  auto URL = parseRemoteCacheURL(Opts.URL);
  if (!URL)
    return URL.takeError();
  ClientOptions CO;
  CO.URL = std::move(*URL);
  CO.ConnectTimeout = Opts.ConnectTimeout;
  CO.OperationTimeout = Opts.OperationTimeout;
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
