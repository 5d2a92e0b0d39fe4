// Cases of bench/gpuring_bench: one run of the GPU ring port, of the host-staged path, and of
// the NIC emulator's copy engine alone, each measured into a Result row. Ring rows split each
// frame's latency into the NIC's rx DMA, the GPU side and the NIC's tx DMA
// (NicLatencyBreakdown), so a reader sees whose share is whose.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/ring/gpu_latency.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "io/gpuring/ring/ring_params.h"
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
  ::gpunfv::gpuring::NicDma dma = ::gpunfv::gpuring::NicDma::batch;  // the emulator's DMA (ring rows)
  bool host = false;  // the loops on CPU threads, memcpy as the DMA (Env::host; set by the run)
  const char* dma_name() const { return host ? "memcpy" : ::gpunfv::gpuring::nic_dma_name(dma); }
};

// Percentiles of one latency component (ns).
struct Spread {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  nlohmann::json json() const;
};
Spread spread_of(std::vector<uint32_t> samples);

struct Result {
  Case c;
  uint64_t offered = 0, sent = 0, lost = 0, reordered = 0, reordered_in_ring = 0;
  double mpps = 0, lat_mean_ns = 0, lat_std_ns = 0, lat_p99_ns = 0, lat_max_ns = 0;
  double lat_p50_ns = 0;
  Spread rx_dma, gpu_side, tx_dma;  // the latency breakdown (ring rows)
  // The GPU side measured on the GPU (rx taking a packet -> the tail write announcing it).
  ::gpunfv::gpuring::GpuLatencySummary on_gpu;
  double rx_blocked = 0;       // fraction of the run the emulator's rx thread waited for its copy engine
  double tx_blocked = 0;       // ... its tx side had every step in flight with descriptors waiting
  double frames_per_copy = 0;  // rx frames per copy-engine data operation (coalescing)
  // Unpaced rows: what held the rate (limit_of); "-" for paced rows.
  std::string limit = "-";
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
  // The emulator's settings (burst, inflight, coalesce); rate, samples and timing set per case.
  ::gpunfv::gpuring::NicEmulatorConfig nic;
};

// What limits an unpaced ring row: the NIC's rx copy engine when its rx thread spent at least
// half the run waiting for it; its tx side when posted descriptors waited for a free tx step
// at least half the run (the ring then fills behind it); else the GPU side when frames found
// the rx ring full (dropped, or held by flow control) for more than 0.1% of them; else the
// emulator's own CPU work (taking frames from the source, RSS, staging).
std::string limit_of(double rx_blocked, double tx_blocked, uint64_t offered, uint64_t ring_full, uint64_t pauses);

Result run_ring_case(const Case& c, const Env& env);
Result run_staged_case(const Case& c, const Env& env);
// Packets per second the emulator moves for frames of `size` bytes with no GPU side: its copy
// engine used the way the emulator now uses it, with the emulator's own per-frame work. An rx
// thread (frames taken from a generator, RSS, staged; then into adjacent slots in one pitched
// copy per burst when `coalesce`, one copy each otherwise, then the descriptor write-backs)
// and a tx thread (descriptor fetch, then the frames out and the DD write-backs), each on its
// own engine with `inflight` bursts in flight. Both move `packets` frames; the rate is over the
// slower. The ring rows' offered load is a fraction of this. `dma`: the engine on the GPU.
double copy_engine_pps(uint32_t size, uint32_t burst, uint64_t packets, bool host = false, uint32_t inflight = 4,
                       bool coalesce = true,
                       ::gpunfv::gpuring::NicDma dma = ::gpunfv::gpuring::NicDma::batch);
// The same DMA work as the emulator once did it: one thread, one copy per frame, each step
// waiting for its copies before the next (the "before" of the emulator's rework).
double copy_engine_pps_stepwise(uint32_t size, uint32_t burst, uint64_t packets, bool host = false);

// Latency statistics of samples (ns).
void latency_stats(std::vector<uint32_t>& samples, Result& r);
double process_cpu_seconds();

}  // namespace gpunfv::bench::gpuring
