// The ring pairs and forwarding kernels compiled with the NF hooks (see ring_nf_runners.h).
#include "chain/ring_nf_runners.h"

#include <stdexcept>

#include "chain/ring_nf_hook.h"
#include "gpu/kernel_registry.h"
#include "io/gpuring/loops/gpu_forward_kernels.cuh"
#include "io/gpuring/loops/gpu_ring_kernels.cuh"

namespace gpunfv::gpuring {

using RouterHook = NfPacketHook<RouterView, RouterLogic>;
using PassHook = NfPacketHook<PassThroughView, PassThrough>;

std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet& rings, uint16_t port_id, const NfHook& hook) {
  if (hook.kind == NfHook::Kind::router)
    return launch_ring_pairs(rings, port_id,
                             RouterHook{hook.router, {}, first_drop_code<RouterDrop>(), hook.quarantine});
  return launch_ring_pairs(rings, port_id, PassHook{});
}

std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings& rings, uint16_t port_id,
                                                         const NfHook& hook) {
  if (hook.kind == NfHook::Kind::router && !rings.view().route)
    throw std::invalid_argument("gpuring forward: a router hook on rings built without route");
  if (hook.kind == NfHook::Kind::router)
    return launch_forward_pairs(rings, port_id,
                                RouterHook{hook.router, {}, first_drop_code<RouterDrop>(), hook.quarantine});
  return launch_forward_pairs(rings, port_id, PassHook{});
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(ring_pairs_kernel<RouterHook>);
GPUNFV_REGISTER_KERNEL(ring_pairs_kernel<PassHook>);
GPUNFV_REGISTER_KERNEL(forward_pairs_kernel<RouterHook>);
GPUNFV_REGISTER_KERNEL(forward_pairs_kernel<PassHook>);

}  // namespace gpunfv::gpuring
