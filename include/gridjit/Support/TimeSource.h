//===- TimeSource.h - Steady time and sleeping, replaceable in tests -*- C++ -*-===//
//
// Part of gridjit. Code whose behaviour depends on time (a circuit breaker's
// cooldown, a lease's wait) reads the time and sleeps through a TimeSource, so
// that a test can give it a fake one whose sleeps only advance the fake's
// time: the test then checks every transition exactly, without sleeping and
// without asserting anything about the machine's speed.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_TIMESOURCE_H
#define GRIDJIT_SUPPORT_TIMESOURCE_H

#include <chrono>

namespace gridjit {

/// Steady time and sleeping. Implementations are thread-safe.
class TimeSource {
public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~TimeSource();
  virtual TimePoint now() = 0;
  virtual void sleepFor(std::chrono::nanoseconds D) = 0;
};

/// std::chrono::steady_clock and std::this_thread::sleep_for. Stateless,
/// shared by everyone who needs the real time.
TimeSource &steadyTime();

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_TIMESOURCE_H
