//===- CircuitBreakerTest.cpp - The remote tier's breaker, on a fake clock ===//
//
// Part of gridjit. lib/Cache/CircuitBreaker.h: closed, open, half-open
// (one probe) and closed or open again, each transition checked exactly on
// a fake clock: no sleeping, no measured time.
//
//===----------------------------------------------------------------------===//

#include "Cache/CircuitBreaker.h"
#include "Cache/FakeRemote.h"

#include "gtest/gtest.h"

#include <atomic>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using namespace std::chrono_literals;

namespace {

TEST(CircuitBreakerTest, OpensAfterTheThresholdOfConsecutiveFailures) {
  FakeTime T;
  CircuitBreaker B({/*Threshold=*/3, /*Cooldown=*/5s}, T);
  EXPECT_TRUE(B.admit());
  B.recordFailure(false);
  B.recordFailure(false);
  B.recordSuccess(); // consecutive: a success starts the count again
  B.recordFailure(false);
  B.recordFailure(false);
  EXPECT_FALSE(B.isOpen());
  EXPECT_TRUE(B.admit());
  B.recordFailure(false);
  EXPECT_TRUE(B.isOpen());
  EXPECT_EQ(B.trips(), 1u);
  // Open: every caller is refused, and counted.
  EXPECT_FALSE(B.admit());
  EXPECT_TRUE(B.skipIfOpen());
  EXPECT_EQ(B.skips(), 2u);
  T.advance(5s - 1ns);
  EXPECT_FALSE(B.admit());
  EXPECT_EQ(B.skips(), 3u);
}

TEST(CircuitBreakerTest, ATimeoutOpensItAtOnce) {
  FakeTime T;
  CircuitBreaker B({/*Threshold=*/3, /*Cooldown=*/5s}, T);
  B.recordFailure(/*Timeout=*/true);
  EXPECT_TRUE(B.isOpen());
  EXPECT_EQ(B.trips(), 1u);
}

TEST(CircuitBreakerTest, HalfOpenLetsOneProbeThrough) {
  FakeTime T;
  CircuitBreaker B({/*Threshold=*/1, /*Cooldown=*/5s}, T);
  B.recordFailure(false);
  ASSERT_TRUE(B.isOpen());
  T.advance(5s);
  // The cooldown is over: skipIfOpen (a caller that would only skip) does
  // not claim the probe; the first admit does, and the others keep
  // skipping until the probe reports.
  EXPECT_FALSE(B.isOpen());
  EXPECT_FALSE(B.skipIfOpen());
  EXPECT_TRUE(B.admit());
  EXPECT_TRUE(B.isOpen());
  EXPECT_FALSE(B.admit());
  EXPECT_FALSE(B.admit());
  uint64_t Skips = B.skips();
  // The probe fails: open for another cooldown, no new trip.
  B.recordFailure(false);
  EXPECT_TRUE(B.isOpen());
  EXPECT_EQ(B.trips(), 1u);
  T.advance(4s);
  EXPECT_FALSE(B.admit());
  EXPECT_EQ(B.skips(), Skips + 1);
  T.advance(1s);
  // The next probe succeeds: closed, everyone goes again.
  EXPECT_TRUE(B.admit());
  B.recordSuccess();
  EXPECT_FALSE(B.isOpen());
  for (int I = 0; I < 3; ++I)
    EXPECT_TRUE(B.admit());
  // And it takes the whole threshold (here 1) to open it again: a new trip.
  B.recordFailure(false);
  EXPECT_EQ(B.trips(), 2u);
}

TEST(CircuitBreakerTest, ZeroThresholdCountsAsOne) {
  FakeTime T;
  CircuitBreaker B({/*Threshold=*/0, /*Cooldown=*/1s}, T);
  B.recordFailure(false);
  EXPECT_TRUE(B.isOpen());
}

TEST(CircuitBreakerTest, OneProbeAmongManyThreads) {
  FakeTime T;
  CircuitBreaker B({/*Threshold=*/1, /*Cooldown=*/1s}, T);
  B.recordFailure(false);
  T.advance(1s);
  std::atomic<int> Admitted{0};
  std::vector<std::thread> Threads;
  for (int I = 0; I < 8; ++I)
    Threads.emplace_back([&] {
      for (int J = 0; J < 100; ++J)
        Admitted += B.admit();
    });
  for (std::thread &Th : Threads)
    Th.join();
  EXPECT_EQ(Admitted, 1);
  EXPECT_EQ(B.skips(), 799u);
}

} // namespace
