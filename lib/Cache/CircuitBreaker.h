//===- CircuitBreaker.h - Stop asking a server that keeps failing -*- C++ -*-===//
//
// Part of gridjit (internal to lib/Cache). The remote tier's breaker
// (docs/RemoteCache.md, "Deadlines and the breaker"):
//
//   closed --Threshold consecutive failures, or one timeout--> open
//   open   --Cooldown passed: one caller is admitted as the probe--> half-open
//   half-open --the probe succeeds--> closed
//   half-open --the probe fails--> open for another Cooldown
//
// While it is open every other caller is refused at once (a skip). The
// state is two atomics; the common path (closed, nothing failing) reads
// them and writes nothing. Time comes from a TimeSource, so the transitions are
// tested with a fake one (unittests/Cache/CircuitBreakerTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_CIRCUITBREAKER_H
#define GRIDJIT_LIB_CACHE_CIRCUITBREAKER_H

#include "gridjit/Support/TimeSource.h"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace gridjit {

class CircuitBreaker {
public:
  struct Options {
    /// Consecutive failures that open it (0 counts as 1).
    unsigned Threshold = 3;
    /// How long it stays open before one probe is let through.
    std::chrono::nanoseconds Cooldown = std::chrono::seconds(5);
  };

  CircuitBreaker(Options O, TimeSource &C) : Opts(O), Time(C) {}

  /// Whether a request may go to the server now: yes while closed; while
  /// open, no (counted as a skip) until the cooldown is over, then yes for
  /// exactly one caller, the probe, which moves the reopening a cooldown
  /// ahead so that the others keep skipping until it reports.
  bool admit();
  /// Whether it is open and its cooldown not yet over (counted as a skip
  /// when it is): for callers that return before doing any work, without
  /// claiming the probe.
  bool skipIfOpen();
  /// Whether it is open and its cooldown not yet over.
  bool isOpen() const;

  /// A request succeeded: closes it.
  void recordSuccess();
  /// A request failed; \p Timeout: it passed a deadline, which opens the
  /// breaker at once (each one cost a whole deadline).
  void recordFailure(bool Timeout);

  uint64_t trips() const { return Trips.load(std::memory_order_relaxed); }
  uint64_t skips() const { return Skips.load(std::memory_order_relaxed); }

private:
  int64_t nowNs() const;

  Options Opts;
  TimeSource &Time;
  std::atomic<unsigned> Failures{0};
  /// 0: closed; else the clock's time (ns) until which it is open.
  std::atomic<int64_t> OpenUntil{0};
  std::atomic<uint64_t> Trips{0}, Skips{0};
};

} // namespace gridjit

#endif // GRIDJIT_LIB_CACHE_CIRCUITBREAKER_H
