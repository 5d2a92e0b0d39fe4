// One row of forward_bench's table: a forwarder at one frame size, its median round.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpunfv::bench {

struct Row {
  std::string what;
  uint32_t size = 0;
  uint32_t descriptor_batch = 0;
  double mpps = 0, gbps = 0, cores = 0, copied_per_pkt = 0;
  uint64_t packets = 0;  // gpunfv: frames forwarded over the whole run, warm-up included
  uint64_t timed = 0;    // gpunfv: of those, frames whose latency was taken
  uint32_t latency_sample = 0;  // gpunfv: one rx burst in this many timed
  std::string byte_counts;      // gpunfv: "frame lengths", "port counters" or "off"
  uint64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  bool latency = false;
  std::vector<std::pair<double, uint64_t>> cdf;  // (quantile, ns): the latency CDF's points
  std::vector<double> round_mpps;  // every round's rate, in round order (the row is the median's)
  double mpps_min = 0, mpps_max = 0;  // over the rounds
  std::string note;
};

inline double cpu_seconds(const rusage& r) {
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

}  // namespace gpunfv::bench
