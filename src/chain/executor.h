// The executor runs a loaded configuration: ingress threads fill batches from each chain's
// port (one per rx queue of the port, at most settings.ingress_threads per chain; a flow stays
// on one queue, so its packets stay in order), the processing stage (CPU workers or the GPU
// launcher) runs the chain, and egress (chain/egress.h: settings.egress_threads_per_chain
// threads per group of chains that share an NF) accounts every packet (transmitted, or dropped
// with its reason, per port and per NF) and transmits in ingress order per chain.
//
// Ingress never drops: when the batch pool is empty the source waits (a pcap or generator
// port is paused, not overrun).
#pragma once

#include <atomic>
#include <cstdio>
#include <functional>

#include "chain/runtime_config.h"
#include "nf/network_function.h"
#include "chain/run_stats.h"
#include "chain/metrics_board.h"

namespace gpunfv {

struct RunOptions {
  Backend backend = Backend::cpu;
  double duration_s = 0;          // 0: until every ingress port is exhausted
  // Called once a second on a thread of the run with the counters so far; empty: not called.
  std::function<void(const ProgressSample&)> progress;
  // Once true (the CLI sets it on SIGINT/SIGTERM), the run ends as at its deadline: ports stop,
  // what is in flight drains, and run() returns the full stats.
  const std::atomic<bool>* stop = nullptr;
  // The metrics endpoint's board (settings.metrics): set live while the run goes on, final
  // (the report's figures) before run() returns; never called after run() returns.
  MetricsBoard* metrics = nullptr;
  // Called with the run's counters once packets may flow, and with nullptr before run()
  // returns them (the control socket's `stats` reads the ports' atomics in between).
  std::function<void(const RunStats*)> live_stats = nullptr;
};

RunStats run(RuntimeConfig& rc, const RunOptions& opt);

}  // namespace gpunfv
