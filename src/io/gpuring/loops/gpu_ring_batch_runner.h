// The batch-mode loops (ring_batch_loops.h) as one persistent kernel over a RingSet and
// RingBatches in device memory: blocks [0, rings) run tx, [rings, 2 rings) rx, one warp each (a
// WarpTeam: team.h), run by the shared GPU runner (gpu_ring_runner.h). The host serves the
// ready batches through RingBatches::take_ready / hand_done while it runs.
//
// Errors: as GpuRingRunner (gpu_ring_runner.h).
#pragma once

#include <cstdint>
#include <memory>

#include "io/gpuring/loops/gpu_ring_runner.h"
#include "io/gpuring/loops/ring_batches.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

using GpuRingBatchRunner = GpuRingRunner;

std::unique_ptr<GpuRingRunner> launch_gpu_ring_batch_runner(RingSet& rings, RingBatches& batches,
                                                            uint16_t port_id);

}  // namespace gpunfv::gpuring
