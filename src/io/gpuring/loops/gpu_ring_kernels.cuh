// The persistent rx and tx kernel of the GPU ring port (see gpu_ring_runner.h), for .cu files
// that compile it with their per-packet hook (ring_loops.h): the chain layer's NF hooks
// (chain/ring_nf_runners.cu).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>

#include "io/gpuring/loops/persistent_kernel.cuh"
#include "io/gpuring/loops/internal/ring_loops.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

// One grid for both sides: blocks [0, rings) run the tx loops, blocks [rings, 2 rings) the rx
// loops. One kernel on one stream, so the two sides never depend on two kernels running
// concurrently (which CUDA does not promise: two streams may share one of the device's
// CUDA_DEVICE_MAX_CONNECTIONS hardware queues, and then the second kernel waits for the first,
// which spins for ever), and only one kernel has to be loaded before any block spins.
// Each block is one warp, a Team (team.h): lane 0 runs the ring protocol, the lanes share the
// per-packet work (rx: up to 32 packets through the hook at once).
template <typename Hook>
__global__ void ring_pairs_kernel(RingSetView v, uint16_t port_id, Hook hook) {
  const uint32_t rings = v.p.rings;
  if (blockIdx.x < rings)
    tx_ring_loop(v, blockIdx.x, WarpTeam{});
  else
    rx_ring_loop(v, blockIdx.x - rings, port_id, hook, WarpTeam{});
}

// Launches the kernel over `rings` (Placement::device; they must outlive the runner).
template <typename Hook>
std::unique_ptr<GpuRingRunner> launch_ring_pairs(RingSet& rings, uint16_t port_id, const Hook& hook) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring runner needs rings in device memory");
  constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls
  const RingSetView v = rings.view();
  return std::make_unique<PersistentLoops>(rings, [&](cudaStream_t stream) {
    const unsigned blocks = 2 * v.p.rings;
    load_and_check_residency(ring_pairs_kernel<Hook>, blocks, kThreads, "gpuring");
    ring_pairs_kernel<Hook><<<blocks, kThreads, 0, stream>>>(v, port_id, hook);
  });
}

}  // namespace gpunfv::gpuring
