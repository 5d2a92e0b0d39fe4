// The persistent forwarding kernel (forward_loops.h): one block per ring pair, its warp running
// the pair's loop as a team (team.h), nothing on the host in the data path; run by the shared
// GPU runner (gpu_ring_runner.h). For .cu files that compile it with their per-packet hook: the
// chain layer's (chain/ring_nf_runners.cu), pass-through or the router.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>

#include "io/gpuring/loops/forward_rings.h"
#include "io/gpuring/loops/persistent_kernel.cuh"

namespace gpunfv::gpuring {

template <typename Hook>
__global__ void forward_pairs_kernel(ForwardView f, uint16_t port_id, Hook hook) {
  forward_ring_loop(f, blockIdx.x, port_id, hook, NoTamper{}, WarpTeam{});
}

// Launches the kernel over `rings` (device memory; they must outlive the runner).
template <typename Hook>
std::unique_ptr<GpuRingRunner> launch_forward_pairs(ForwardRings& rings, uint16_t port_id, const Hook& hook) {
  if (rings.from().placement() != Placement::device)
    throw std::invalid_argument("gpuring forward: the kernel needs rings in device memory");
  constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls
  const ForwardView f = rings.view();
  return std::make_unique<PersistentLoops>(rings, [&](cudaStream_t stream) {
    const unsigned blocks = f.rx.p.rings;
    load_and_check_residency(forward_pairs_kernel<Hook>, blocks, kThreads, "gpuring forward");
    forward_pairs_kernel<Hook><<<blocks, kThreads, 0, stream>>>(f, port_id, hook);
  });
}

}  // namespace gpunfv::gpuring
