// Cases of bench/gpuring_bench: one run of the GPU ring port, of the host-staged path, and of
// the NIC emulator's copy engine alone, each measured into a Result row.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "io/gpuring/gpu_ring_runner.h"
#include "io/gpuring/ring_params.h"
#include "io/port_factory.h"

namespace gpunfv::bench::gpuring {

struct Case {
  std::string path = "gpuring";  // gpuring | staged | copy-engine
  ::gpunfv::gpuring::RingParams rings;
  uint32_t size = 64;
  double rate_pps = 0;  // 0: unpaced
  double load = 0;      // rate as a fraction of the copy engine's (0: unpaced)
  double copy_engine_pps = 0;  // the emulator's copy engine alone, for this size (the peer)
  uint64_t packets = 100000;
  uint32_t staged_batch = 256;
  uint64_t staged_timeout_ns = 50000;
};

struct Result {
  Case c;
  uint64_t offered = 0, sent = 0, lost = 0, reordered = 0, reordered_in_ring = 0;
  double mpps = 0, lat_mean_ns = 0, lat_std_ns = 0, lat_p99_ns = 0, lat_max_ns = 0;
  double cpu_cores = 0, driver_cores = 0;
  std::string accounting;  // empty when every packet and slot is accounted for
  bool drained = true;     // false: the loops did not drain within Env::case_timeout_s (aborted)
  nlohmann::json json() const;
};

struct Env {
  // Host placement: the same loops on CPU threads over host memory (pass-through NF), the
  // emulator's copies by memcpy. For checking the benchmark without a GPU; no staged path.
  bool host = false;
  ::gpunfv::gpuring::NfHook hook;
  PortContext ctx;               // for the generator's dst_from
  std::string generator_extra;   // e.g. "dst_from: r1"
  double case_timeout_s = 20;    // a ring case's drain limit (then aborted; the watchdog ends a hang)
};

Result run_ring_case(const Case& c, const Env& env);
Result run_staged_case(const Case& c, const Env& env);
// Packets per second the emulator's copy engine moves for frames of `size` bytes (rx copy in,
// descriptor write-back, tx descriptor read, copy out, DD write-back), with no GPU side.
double copy_engine_pps(uint32_t size, uint32_t burst, uint64_t packets, bool host = false);

// Latency statistics of samples (ns).
void latency_stats(std::vector<uint32_t>& samples, Result& r);
double process_cpu_seconds();

}  // namespace gpunfv::bench::gpuring
