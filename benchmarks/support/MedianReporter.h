//===- MedianReporter.h - A console reporter that keeps each run's time ---===//
//
// Part of gridjit's benchmarks. The console table, and each benchmark's
// real time in seconds by run name: the run's own, or with
// --benchmark_repetitions the median. A benchmark program derives from it
// and prints its ratios in Finalize().
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_BENCH_MEDIANREPORTER_H
#define GRIDJIT_BENCH_MEDIANREPORTER_H

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace gridjit::bench {

class MedianReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &Runs) override {
    ConsoleReporter::ReportRuns(Runs);
    for (const Run &R : Runs)
      if (!R.error_occurred && (R.run_type == Run::RT_Iteration ||
                                (R.run_type == Run::RT_Aggregate && R.aggregate_name == "median")))
        Seconds[R.run_name.str()] = R.GetAdjustedRealTime();
  }

protected:
  std::map<std::string, double> Seconds;
};

} // namespace gridjit::bench

#endif // GRIDJIT_BENCH_MEDIANREPORTER_H
