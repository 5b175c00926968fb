//===- TimeSource.cpp - Steady time and sleeping -------------------------------===//
//
// Part of gridjit. See TimeSource.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/TimeSource.h"

#include <thread>

using namespace gridjit;

TimeSource::~TimeSource() = default;

namespace {
class SteadyTime final : public TimeSource {
public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  void sleepFor(std::chrono::nanoseconds D) override { std::this_thread::sleep_for(D); }
};
} // namespace

TimeSource &gridjit::steadyTime() {
  // Immutable (no state at all): not mutable global state.
  static SteadyTime C;
  return C;
}
