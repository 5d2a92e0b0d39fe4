// The GPU ring loops with an NF compiled in: the standalone ring pairs of a gpuring port and the
// forwarding kernel between two gpuring ports, each with one of the hooks built here
// (ring_nf_hook.h): pass-through or the router. The loops themselves are io's
// (io/gpuring/loops/); only this layer knows NFs.
//
// Errors: as GpuRingRunner (io/gpuring/loops/gpu_ring_runner.h); std::invalid_argument for a
// router hook on forward rings built without `route`.
#pragma once

#include <cstdint>
#include <memory>

#include "io/gpuring/forward_session.h"
#include "io/gpuring/loops/forward_rings.h"
#include "io/gpuring/loops/gpu_ring_runner.h"
#include "io/gpuring/ring/ring_set.h"
#include "io/gpuring/ring_session.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {

// What the kernels run on each packet.
struct NfHook {
  enum class Kind { pass_through, router };
  Kind kind = Kind::pass_through;
  RouterView router{};  // device view, for Kind::router
  IsoSpan<uint32_t> quarantine;  // device word: the router's quarantine (ring_nf_hook.h)
};

std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet& rings, uint16_t port_id, const NfHook& hook);
std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings& rings, uint16_t port_id,
                                                         const NfHook& hook);

// A session's kernels with `hook` (RingSession::start_gpu, ForwardSession::start_gpu).
inline void start_gpu(RingSession& s, uint16_t port_id, const NfHook& hook) {
  s.start_gpu([port_id, hook](RingSet& rings) { return launch_gpu_ring_runner(rings, port_id, hook); });
}
inline void start_gpu(ForwardSession& s, uint16_t port_id, const NfHook& hook) {
  s.start_gpu([port_id, hook](ForwardRings& rings) { return launch_gpu_forward_runner(rings, port_id, hook); });
}

}  // namespace gpunfv::gpuring
