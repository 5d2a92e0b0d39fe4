// GpuRingBatchRunner: the batch-mode loops (ring_batch_loops.h) as one persistent kernel over a
// RingSet and RingBatches in device memory: blocks [0, rings) run tx, [rings, 2 rings) rx, one
// warp each (a WarpTeam: team.h), loaded before launch and checked to fit at once (as GpuRingRunner, for the
// reasons given in gpu_ring_kernels.cu). The host serves the ready batches through
// RingBatches::take_ready / hand_done while it runs.
//
// Errors: GpuError when the launch fails or the kernel faults; std::runtime_error in a build
// without CUDA or when the blocks cannot all be resident; std::invalid_argument for rings not
// in device memory.
#pragma once

#include <cstdint>
#include <memory>

#include "io/gpuring/ring_batches.h"
#include "io/gpuring/ring_set.h"

namespace gpunfv::gpuring {

class GpuRingBatchRunner {
 public:
  virtual ~GpuRingBatchRunner() = default;
  // Waits until every block has exited; false on timeout (the kernel is then still running).
  virtual bool wait(double timeout_s) = 0;
};

std::unique_ptr<GpuRingBatchRunner> launch_gpu_ring_batch_runner(RingSet& rings, RingBatches& batches,
                                                                 uint16_t port_id);

}  // namespace gpunfv::gpuring
