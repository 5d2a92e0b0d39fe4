#include "nf_bench/timing.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpunfv::bench {

Spread spread_of(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, v.front(), v.back()};
}

namespace {

struct Job {
  TimedPath* path;
  TimedRow row;
};

// A bound on passes per sample, for a pass that measures (next to) nothing.
constexpr uint64_t kMaxPasses = 1'000'000;

// One sample: passes until min_seconds of timed work.
double sample(Job& j, const TimingOptions& o) {
  double seconds = 0;
  uint64_t passes = 0;
  do {
    if (j.path->before_pass) j.path->before_pass();
    seconds += j.path->pass(j.row.threads);
    ++passes;
  } while (seconds < o.min_seconds && passes < kMaxPasses);
  j.row.passes += passes;
  j.row.seconds += seconds;
  const uint64_t units = j.path->units * (j.row.threads > 1 ? j.path->sweeps_on_many : 1);
  return seconds > 0 ? double(units) * passes / seconds / 1e6 : 0;
}

}  // namespace

std::vector<TimedRow> run_paths(std::vector<TimedPath>& paths, unsigned threads,
                                const TimingOptions& o,
                                const std::function<void(const std::string&)>& progress) {
  std::vector<Job> jobs;
  for (TimedPath& p : paths) {
    std::vector<unsigned> counts = {0};
    if (p.threaded) counts = threads > 1 ? std::vector<unsigned>{1, threads} : std::vector<unsigned>{1};
    for (unsigned t : counts) {
      TimedRow r;
      r.path = t == 0 ? p.name : fmt::format("{}, {} thread{}", p.name, t, t == 1 ? "" : "s");
      r.scope = p.scope, r.lookup_only = p.lookup_only, r.peer = p.peer;
      r.checked = p.checked, r.note = p.note, r.threads = t;
      jobs.push_back({&p, std::move(r)});
    }
  }
  // Warm-up: caches, page faults and lazily built state; the checks read its output.
  for (Job& j : jobs) {
    if (j.path->before_pass) j.path->before_pass();
    j.row.warm_seconds = j.path->pass(j.row.threads);
    if (j.row.checked && j.path->check) j.row.check = j.path->check();
  }
  for (unsigned rep = 0; rep < o.repeats; ++rep)
    for (Job& j : jobs) {
      j.row.mpps.push_back(sample(j, o));
      if (progress)
        progress(fmt::format("{}: sample {} of {}: {:.2f} Mpps", j.row.path, rep + 1, o.repeats,
                             j.row.mpps.back()));
    }
  std::vector<TimedRow> rows;
  for (Job& j : jobs) rows.push_back(std::move(j.row));
  // Scaling of each N-thread row over the same path's 1-thread row.
  for (size_t k = 1; k < rows.size(); ++k)
    if (rows[k].threads > 1 && rows[k - 1].threads == 1 && jobs[k].path == jobs[k - 1].path) {
      const double one = rows[k - 1].rate().median;
      rows[k].scaling = one > 0 ? rows[k].rate().median / one : 0;
      rows[k].poor_scaling = rows[k].scaling < rows[k].threads / 2.0;
    }
  return rows;
}

}  // namespace gpunfv::bench
