// nf_bench's timing: every row runs passes over the same packet set until at least
// `min_seconds` of timed work has gone by (one sample), and is sampled `repeats` times; the
// samples of all rows are taken in turns (sample 1 of every row, then sample 2, ...) so that a
// slow phase of the machine hits every row alike. A row reports the median sample with the
// minimum and maximum; ratios are taken between medians of the same run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"

namespace gpunfv::bench {

struct TimingOptions {
  double min_seconds = 1.0;  // of timed work per sample
  unsigned repeats = 5;      // samples per row
};

// One way of processing the packet set (gpunfv's CPU backend, a peer library, the GPU...).
struct TimedPath {
  std::string name;          // row label without the thread count
  std::string scope;         // the work a row includes, e.g. "lookup only"
  bool lookup_only = false;  // counts lookups, not frames (no Gbit/s)
  bool threaded = true;      // rows on 1 and on N threads; false: one row (the GPU)
  bool peer = false;         // a library peer (a ratio baseline)
  bool checked = true;       // check() says something
  std::string note;          // the mismatches column when not checked
  uint64_t units = 0;        // packets (or lookups) per pass
  uint32_t sweeps_on_many = 1;  // rows on more than 1 thread do this many times units a pass
  std::function<void()> before_pass;               // untimed, before every pass
  std::function<double(unsigned threads)> pass;    // one timed pass: its seconds
  std::function<Check()> check;                    // after the first (warm-up) pass
};

struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spread_of(std::vector<double> v);

struct TimedRow {
  std::string path;  // name and thread count
  std::string scope;
  bool lookup_only = false, peer = false, checked = false;
  std::string note;
  unsigned threads = 0;     // 0: not a CPU row
  std::vector<double> mpps;  // one per sample
  uint64_t passes = 0;       // timed passes over all samples
  double seconds = 0;        // timed seconds over all samples
  double warm_seconds = 0;   // the warm-up pass
  Check check{};
  Spread rate() const { return spread_of(mpps); }
  // For an N-thread row: its median over the same path's 1-thread median (0 when none).
  double scaling = 0;
  bool poor_scaling = false;  // scaling below half the thread count
};

// Runs every path's rows (1 and `threads` threads for threaded paths): a warm-up pass each,
// checked, then the samples in turns. `progress` gets a line per row as it is sampled.
std::vector<TimedRow> run_paths(std::vector<TimedPath>& paths, unsigned threads,
                                const TimingOptions& o,
                                const std::function<void(const std::string&)>& progress);

}  // namespace gpunfv::bench

namespace gpunfv::bench {

// nf_bench's markdown table: | size | path | work included | Mpps median [min-max] | Gbit/s |
// ratio | scaling | mismatches |. Gbit/s = median Mpps x mean frame bytes x 8; the ratio is the
// row's median over `base_mpps`.
void print_timed_header();
void print_timed_row(const TimedRow& r, uint32_t size, double mean_frame, double base_mpps);
nlohmann::json timed_row_json(const TimedRow& r, double mean_frame, double base_mpps);

}  // namespace gpunfv::bench
