// gpuring_bench --gpu-forward: forwarding between two GPU ring ports (P2PNIC's Figures 5-7 and
// Table I shape): variants wr, rd, bn x frame sizes, throughput (Mpps, Gbit/s), latency
// (p50/p90/p99 and CDF points in the JSON, and each frame's split into the NIC's rx DMA, the
// forwarding kernel's share and the NIC's tx DMA), CPU cores, bytes through host memory per
// packet, and the emulator's copy engine alone as the peer (the limit) with ratio columns; then
// the latency at half load, the latency cost of tail batching, and where the emulator's time
// goes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunfv::bench::gpuring {

struct ForwardSweep {
  std::vector<std::string> variants{"wr", "rd", "bn"};
  std::vector<uint32_t> sizes{64, 128, 256, 512, 1024, 1518};
  uint64_t packets = 100000;
  uint32_t rings = 1;
  uint32_t tail_batch = 8;
  uint64_t tail_timeout_ns = 2500;
  bool integrity = true;
  bool host = false;            // wr and rd on CPU threads over host memory too (no GPU)
  uint32_t nic_burst = 32;      // frames the emulator takes per rx step
  uint32_t nic_tx_burst = 64;   // descriptors per tx step
  uint32_t nic_inflight = 4;    // NicEmulatorConfig::inflight
  bool coalesce = true;         // NicEmulatorConfig::coalesce
  double case_timeout_s = 20;
  std::string json_path;
};

// Prints the tables; returns 0 when every row's accounting holds, 1 otherwise.
int run_gpu_forward_sweep(const ForwardSweep& sweep);

}  // namespace gpunfv::bench::gpuring
