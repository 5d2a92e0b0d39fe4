// A MetricsSnapshot of a running pipeline, read without stopping it: the ports' atomic
// counters, what the egress threads counted (Egress::live), the stage queues (ChainFlow's
// metrics, under the lock each queue already takes once per batch) and the GPU sharing plan.
// Drops by reason that only the end of the run attributes (a forward's, a gpuring NIC's) are
// in the ports' dropped totals meanwhile.
#pragma once

#include <cstdint>

#include "chain/egress.h"
#include "chain/processing_stage.h"
#include "chain/runtime_config.h"
#include "nf/network_function.h"
#include "chain/metrics_snapshot.h"

namespace gpunfv {

struct LiveParts {
  const RuntimeConfig& rc;
  const RunStats& stats;
  const Egress& egress;
  const ProcessingStage& stage;
  Backend backend;
  uint64_t t0_ns;
};

MetricsSnapshot live_metrics(const LiveParts& p);

}  // namespace gpunfv
