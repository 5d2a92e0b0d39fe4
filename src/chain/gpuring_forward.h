// GpuRingForwards: the `forward:` entries between two gpuring ports, as `gpunfv run` runs them.
// Each is one ForwardSession (io/gpuring/forward_session.h): port A's rx rings and port B's tx
// rings over one shared slot pool (variant wr, rd or bn), the forwarding loops on CPU threads
// (placement: host, any backend) or as the persistent kernel (placement: device: a CUDA build
// and a GPU), and the NIC emulator fed by A's `source:` and drained into B's `sink:`.
//
// Counting: while it runs, a monitor thread copies A's ring counters (rx, drops) and B's tx
// completions into the run's PortCounters (the progress line); at the end the exact figures
// replace them: A's rx = frames its rings received + frames its NIC dropped (nic_rx_ring_full,
// oversize), = forwarded + drops by reason (the loops' drops: routing, integrity_mismatch; a
// frame the sink refused is port_tx_error); B's tx = frames its NIC sent into the sink. The
// emulator's per-frame latency (A in to B out) goes into the run's histogram and the forward's
// `forwards` report entry (variant, loops, posts, latency percentiles, NIC figures).
//
// Stopping: a finite source ends the forward when its last frame has left; at the run's
// deadline (--duration) the source is cut off (the NIC takes no more frames), then everything
// taken drains, so the accounting stays exact either way.
//
// Errors: the constructor throws ConfigError for a placement: device forward in a build without
// CUDA and std::runtime_error when no GPU is present for one; start() throws GpuError when the
// kernel cannot be launched. Loops that did not drain, counters that do not add up, a slot the
// audit finds lost or twice, or an error of the NIC emulator are collected by finish() and
// thrown by throw_if_failed() as one std::runtime_error (gpunfv run exits 1 with the reason).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "chain/runtime_config.h"
#include "chain/run_stats.h"

namespace gpunfv {

class GpuRingForwards {
 public:
  // Builds a session for every forward whose spec runs on rings (ForwardSpec::on_rings).
  GpuRingForwards(RuntimeConfig& rc, RunStats& stats);
  ~GpuRingForwards();
  GpuRingForwards(const GpuRingForwards&) = delete;
  GpuRingForwards& operator=(const GpuRingForwards&) = delete;

  bool empty() const { return forwards_.empty(); }
  // Starts the loops and the NIC emulators, and the monitor thread.
  void start();
  // Waits until every source has run dry, or `past_deadline()` turns true (sources are then
  // cut off); drains, merges the counters, latency and reports into the stats. What did not
  // add up is kept for throw_if_failed(), so the caller can shut its other threads down first.
  void finish(const std::function<bool()>& past_deadline);
  // std::runtime_error naming every forward whose loops did not drain, whose counters do not
  // add up or whose slot audit failed.
  void throw_if_failed() const;
  // One line per forward for the startup summary.
  std::vector<std::string> describe() const;

 private:
  struct Forward;
  void monitor_loop();

  RuntimeConfig& rc_;
  RunStats& stats_;
  std::vector<std::unique_ptr<Forward>> forwards_;
  std::atomic<bool> monitor_stop_{false};
  std::thread monitor_;
  std::string failures_;
};

}  // namespace gpunfv
