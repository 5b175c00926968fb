//===- CircuitBreaker.cpp - Stop asking a server that keeps failing -------===//
//
// Part of gridjit. See CircuitBreaker.h.
//
//===----------------------------------------------------------------------===//

#include "CircuitBreaker.h"

#include <algorithm>

using namespace gridjit;

int64_t CircuitBreaker::nowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Time.now().time_since_epoch())
      .count();
}

bool CircuitBreaker::admit() {
  int64_t Until = OpenUntil.load(std::memory_order_relaxed);
  if (Until == 0)
    return true;
  int64_t Now = nowNs();
  if (Now < Until) {
    Skips.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // One probe per cooldown: the request that moves the time forward.
  int64_t Next = std::max<int64_t>(1, Now + Opts.Cooldown.count());
  if (OpenUntil.compare_exchange_strong(Until, Next))
    return true;
  Skips.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool CircuitBreaker::skipIfOpen() {
  if (!isOpen())
    return false;
  Skips.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool CircuitBreaker::isOpen() const {
  int64_t Until = OpenUntil.load(std::memory_order_relaxed);
  return Until != 0 && nowNs() < Until;
}

void CircuitBreaker::recordSuccess() {
  // Read first: in the common case nothing changes, and threads do not
  // fight over the cache line.
  if (Failures.load(std::memory_order_relaxed) != 0)
    Failures.store(0, std::memory_order_relaxed);
  if (OpenUntil.load(std::memory_order_relaxed) != 0)
    OpenUntil.store(0, std::memory_order_relaxed);
}

void CircuitBreaker::recordFailure(bool Timeout) {
  unsigned F = Failures.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!Timeout && F < std::max(1u, Opts.Threshold))
    return;
  int64_t Next = std::max<int64_t>(1, nowNs() + Opts.Cooldown.count());
  if (OpenUntil.exchange(Next, std::memory_order_relaxed) == 0)
    Trips.fetch_add(1, std::memory_order_relaxed);
}
