// The persistent pipeline's kernel (settings.gpu_pipeline: persistent): per chain, one kernel
// that runs from start() to stop() and serves small batches in pinned host memory, so that a
// batch costs the host a few stores instead of a launch and a copy per step, and the GPU no
// launch latency between steps. It is Host Bypassing's persistent loop fed by the host instead
// of a NIC.
//
// A ring of `slots` slots lies in pinned host memory, one kernel block per slot. The host
// writes a batch's view and its NFs' functions into the next slot round robin and then the
// batch's ticket into one control word; the slot's block polls that word for its ticket, runs the whole chain on every packet
// of the batch in place (chain/chain_packet.h, the fused kernels' steps per packet), writes
// the per-node counts into the batch's node_packets and then the slot's done. The caller keeps
// at most `slots` batches out and takes them back in submission order, so a slot's previous
// batch is always back before the slot is written again.
//
// Only chains that can run per packet (chain/chain_packet.h: chain_runs_per_packet) run here.
//
// Errors: GpuError on CUDA failures, also when the kernel failed or ended while batches were
// out (done() checks the kernel's stream now and then); std::invalid_argument for a chain
// chain_runs_per_packet refuses.
#pragma once

#if GPUNFV_HAVE_CUDA
#include <cstdint>
#include <memory>

#include <cuda_runtime.h>

#include "chain/chain_packet.h"
#include "chain/runtime_config.h"
#include "nf/device_packet_fn.h"

namespace gpunfv {

class PersistentChain {
 public:
  // Allocates the slots and the kernel's stream (before any persistent kernel runs).
  PersistentChain(const RuntimeConfig& rc, const Chain& c, uint32_t slots);
  ~PersistentChain();
  PersistentChain(const PersistentChain&) = delete;
  PersistentChain& operator=(const PersistentChain&) = delete;

  void start();
  // `host_batch` in pinned host memory; `fns[k]` for path node k. Returns the batch's ticket.
  uint64_t submit(const BatchView& host_batch, const DevicePacketFn* fns);
  bool done(uint64_t ticket) const;
  // The kernel returns (every submitted batch must be back); waits for it. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpunfv
#endif
