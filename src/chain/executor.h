// The executor runs a loaded configuration: one ingress thread per chain fills batches from
// its port, the processing stage (CPU workers or the GPU launcher) runs the chain, and one
// egress thread restores batch order per chain, transmits, and accounts every packet
// (transmitted, or dropped with its reason, per port and per NF).
//
// Ingress never drops: when the batch pool is empty the source waits (a pcap or generator
// port is paused, not overrun).
#pragma once

#include <cstdio>

#include "chain/runtime_config.h"
#include "nf/network_function.h"
#include "telemetry/run_stats.h"

namespace gpunfv {

struct RunOptions {
  Backend backend = Backend::cpu;
  double duration_s = 0;          // 0: until every ingress port is exhausted
  std::FILE* progress = stderr;   // nullptr: no progress lines
};

RunStats run(RuntimeConfig& rc, const RunOptions& opt);

}  // namespace gpunfv
