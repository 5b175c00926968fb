//===- WorkerPoolTest.cpp - The host runtime's threads --------------------===//
//
// Part of gridjit. The worker pool (lib/Runtime/WorkerPool.h) hands places
// in a job to its threads; an idle pool thread watches for the next job for
// a while before it sleeps, and a caller watches for the pool threads still
// in its job before it sleeps (docs/HostTarget.md, "Scheduling"). These
// tests check that a pool thread joins a job whether it was spinning or
// asleep, that a spinning thread is not asleep, that a pool without spins
// sleeps, that run() returns only after every participant has, and that a
// pool whose threads spin is destroyed at once. Counted, never timed: each
// wait has a generous bound that only a broken pool reaches.
//
//===----------------------------------------------------------------------===//

#include "Runtime/WorkerPool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

using namespace gridjit;

namespace {

/// Generous: only a pool that never wakes its thread waits this long.
constexpr auto Bound = std::chrono::seconds(20);

/// Polls \p Done (yielding) until it holds or Bound has passed.
template <typename F> bool eventually(F Done) {
  auto End = std::chrono::steady_clock::now() + Bound;
  while (!Done()) {
    if (std::chrono::steady_clock::now() > End)
      return false;
    std::this_thread::yield();
  }
  return true;
}

std::unique_ptr<WorkerPool> pool(unsigned Threads, unsigned SpinMicroseconds) {
  auto P = WorkerPool::create(Threads, /*SignalStacks=*/false, SpinMicroseconds);
  EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
  return P ? std::move(*P) : nullptr;
}

/// Runs a job on 2 places in which the caller waits (up to Bound) for the
/// pool thread to join: true when it did.
bool poolThreadJoins(WorkerPool &P) {
  std::atomic<bool> Joined{false};
  bool Seen = false;
  unsigned Places = P.run(2, [&](unsigned I) {
    if (I == 0)
      Seen = eventually([&] { return Joined.load(); });
    else
      Joined = true;
  });
  return Seen && Places == 2;
}

TEST(WorkerPoolTest, ASleepingPoolThreadIsWokenForAJob) {
  // Without spins the pool thread sleeps as soon as it finds no job.
  auto P = pool(2, 0);
  ASSERT_TRUE(P);
  for (int Round = 0; Round < 3; ++Round) {
    ASSERT_TRUE(eventually([&] { return P->sleepingThreads() == 1; })) << Round;
    EXPECT_TRUE(poolThreadJoins(*P)) << Round;
  }
}

TEST(WorkerPoolTest, ASpinningPoolThreadTakesTheNextJobWithoutSleeping) {
  // With a spin far longer than the test, the pool thread never sleeps:
  // it finds every job by watching for it.
  auto P = pool(2, 60u * 1000 * 1000);
  ASSERT_TRUE(P);
  for (int Round = 0; Round < 20; ++Round) {
    EXPECT_TRUE(poolThreadJoins(*P)) << Round;
    EXPECT_EQ(P->sleepingThreads(), 0u) << Round;
  }
}

TEST(WorkerPoolTest, AnIdlePoolThreadSleepsOnceItsSpinHasPassed) {
  auto P = pool(2, 1000); // 1 ms
  ASSERT_TRUE(P);
  EXPECT_TRUE(poolThreadJoins(*P));
  EXPECT_TRUE(eventually([&] { return P->sleepingThreads() == 1; }));
  EXPECT_TRUE(poolThreadJoins(*P));
}

TEST(WorkerPoolTest, RunReturnsAfterEveryParticipantWhateverTheSpin) {
  for (unsigned Spin : {0u, 50u, 60u * 1000 * 1000}) {
    auto P = pool(4, Spin);
    ASSERT_TRUE(P);
    for (int Round = 0; Round < 50; ++Round) {
      // Participants that join stay in the job a while; each must have
      // returned when run() does, and each gets a distinct place below 4.
      std::atomic<unsigned> Returned{0};
      std::mutex Lock;
      std::multiset<unsigned> Places;
      unsigned Joined = P->run(4, [&](unsigned I) {
        {
          std::lock_guard<std::mutex> G(Lock);
          Places.insert(I);
        }
        if (I != 0)
          for (volatile int K = 0; K < 20000; K = K + 1)
            ;
        Returned.fetch_add(1);
      });
      ASSERT_GE(Joined, 1u);
      ASSERT_LE(Joined, 4u);
      EXPECT_EQ(Returned.load(), Joined) << "spin " << Spin << ", round " << Round;
      EXPECT_EQ(Places.size(), Joined);
      EXPECT_EQ(std::set<unsigned>(Places.begin(), Places.end()).size(), Joined);
      EXPECT_EQ(Places.count(0), 1u);
      EXPECT_LT(*Places.rbegin(), 4u);
    }
  }
}

TEST(WorkerPoolTest, APoolWhoseThreadsSpinIsDestroyedAtOnce) {
  // The threads would spin for a minute: stopping ends their spins.
  auto Start = std::chrono::steady_clock::now();
  {
    auto P = pool(3, 60u * 1000 * 1000);
    ASSERT_TRUE(P);
    EXPECT_TRUE(poolThreadJoins(*P));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - Start, std::chrono::seconds(30));
}

} // namespace
