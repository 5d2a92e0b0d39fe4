// GpuRingRunner: the persistent rx and tx loops over a RingSet in device memory. One block
// per ring on each side (one thread of it runs the ring's loop, as in the papers' prototype),
// both sides in ONE persistent kernel on one non-blocking stream (blocks [0, rings) tx, then rx),
// loaded before launch and checked to fit on the GPU at once, 1..N rings. The NF hook is
// chosen from the few compiled in (pass-through, router); request_stop() sets the mapped stop
// flag, and the kernels drain and exit (see ring_loops.h).
//
// Errors: GpuError when a launch fails or a kernel faults; std::runtime_error in a build
// without CUDA; wait() returns false if the kernels have not exited within the timeout.
#pragma once

#include <cstdint>
#include <memory>

#include "io/gpuring/ring_set.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {

// What the rx kernel runs on each packet.
struct NfHook {
  enum class Kind { pass_through, router };
  Kind kind = Kind::pass_through;
  RouterView router{};  // device view, for Kind::router
};

class GpuRingRunner {
 public:
  virtual ~GpuRingRunner() = default;
  virtual void request_stop() = 0;
  // Waits until every block has exited; false on timeout (the kernels are then still running).
  virtual bool wait(double timeout_s) = 0;
};

// Launches the kernels (the RingSet must be Placement::device and outlive the runner).
std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet& rings, uint16_t port_id, const NfHook& hook);

}  // namespace gpunfv::gpuring
