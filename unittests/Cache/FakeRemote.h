//===- FakeRemote.h - A fake time and a remote store in memory --*- C++ -*-===//
//
// Part of gridjit's unit tests. What the tests of the remote tier's logic
// (RemoteTierTest, CircuitBreakerTest, TieredCacheTest) put under it
// instead of a clock and a Redis server: a TimeSource whose sleeps only
// advance its own time, and a RemoteStore in memory whose entries expire by
// that time, whose operations can be made to fail or time out, and which
// counts them. Every transition is then checked exactly, without sleeping.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_CACHE_FAKEREMOTE_H
#define GRIDJIT_UNITTESTS_CACHE_FAKEREMOTE_H

#include "gridjit/Cache/RemoteStore.h"
#include "gridjit/Support/TimeSource.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace gridjit::test {

/// Time that moves only when someone sleeps (or the test advances it).
class FakeTime final : public TimeSource {
public:
  TimePoint now() override { return TimePoint(std::chrono::nanoseconds(Ns.load())); }
  void sleepFor(std::chrono::nanoseconds D) override {
    ++Sleeps;
    advance(D);
    if (OnSleep)
      OnSleep();
  }
  void advance(std::chrono::nanoseconds D) { Ns += D.count(); }
  std::atomic<int> Sleeps{0};
  /// Called after every sleep (e.g. another "machine" acting meanwhile).
  std::function<void()> OnSleep;

private:
  std::atomic<int64_t> Ns{int64_t(1) << 40}; // not 0: the breaker's "closed"
};

/// A key-value server in memory.
class MemoryStore final : public RemoteStore {
public:
  explicit MemoryStore(FakeTime &Time) : Time(Time) {}

  /// How the next operations go: OK, or every one fails / times out
  /// until set back to OK.
  std::atomic<RemoteStatus> Mode{RemoteStatus::OK};
  std::atomic<int> Gets{0}, Sets{0}, Deletes{0}, Exists{0};

  RemoteResult<StoredValue> get(std::string_view Key, uint64_t MaxBytes) override {
    ++Gets;
    if (auto F = failure<StoredValue>())
      return *F;
    StoredValue V;
    if (std::optional<std::string> Bytes = value(Key)) {
      V.Kind = Bytes->size() > MaxBytes ? StoredValue::Oversize : StoredValue::Found;
      V.Size = Bytes->size();
      if (V.Kind == StoredValue::Found)
        V.Bytes = std::move(*Bytes);
    }
    return RemoteResult<StoredValue>::done(std::move(V));
  }
  RemoteResult<bool> setIfAbsent(std::string_view Key, std::string_view Value,
                                 std::chrono::milliseconds TTL) override {
    ++Sets;
    if (auto F = failure<bool>())
      return *F;
    std::lock_guard<std::mutex> G(Mu);
    expire(Key);
    if (Data.count(std::string(Key)))
      return RemoteResult<bool>::done(false);
    Data[std::string(Key)] = {std::string(Value), Time.now() + TTL};
    return RemoteResult<bool>::done(true);
  }
  RemoteResult<bool> deleteIfEquals(std::string_view Key, std::string_view Value) override {
    ++Deletes;
    if (auto F = failure<bool>())
      return *F;
    std::lock_guard<std::mutex> G(Mu);
    expire(Key);
    auto It = Data.find(std::string(Key));
    if (It == Data.end() || It->second.Value != Value)
      return RemoteResult<bool>::done(false);
    Data.erase(It);
    return RemoteResult<bool>::done(true);
  }
  RemoteResult<bool> exists(std::string_view Key) override {
    ++Exists;
    if (auto F = failure<bool>())
      return *F;
    return RemoteResult<bool>::done(value(Key).has_value());
  }

  /// What the test puts there or looks at directly (no counting, no
  /// failures).
  void put(const std::string &Key, std::string Value,
           std::chrono::milliseconds TTL = std::chrono::hours(1)) {
    std::lock_guard<std::mutex> G(Mu);
    Data[Key] = {std::move(Value), Time.now() + TTL};
  }
  std::optional<std::string> value(std::string_view Key) {
    std::lock_guard<std::mutex> G(Mu);
    expire(Key);
    auto It = Data.find(std::string(Key));
    if (It == Data.end())
      return std::nullopt;
    return It->second.Value;
  }
  void erase(const std::string &Key) {
    std::lock_guard<std::mutex> G(Mu);
    Data.erase(Key);
  }

private:
  struct Item {
    std::string Value;
    TimeSource::TimePoint Expiry;
  };
  template <typename T> std::optional<RemoteResult<T>> failure() {
    RemoteStatus S = Mode.load();
    if (S == RemoteStatus::OK)
      return std::nullopt;
    return RemoteResult<T>::failed(S, S == RemoteStatus::TimedOut ? "timed out: fake"
                                                                  : "failed: fake");
  }
  void expire(std::string_view Key) { // Mu held
    auto It = Data.find(std::string(Key));
    if (It != Data.end() && Time.now() >= It->second.Expiry)
      Data.erase(It);
  }

  FakeTime &Time;
  std::mutex Mu;
  std::map<std::string, Item> Data;
};

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_CACHE_FAKEREMOTE_H
