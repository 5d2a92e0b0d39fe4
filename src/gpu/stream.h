// A CUDA stream and the launch shape an NF kernel should use on it (its SM share: the number
// of blocks the scheduler allows; later issues size it per NF).
#pragma once

#include <functional>

#include <cuda_runtime.h>

#include "gpu/cuda_check.h"
#include "gpu/gpu_calls.h"

namespace gpunfv {

struct NodeSwitch;  // core/chain_switch.h

// A non-blocking stream (nothing on the legacy stream waits for it, nor it for that), in the
// calling thread's current context, counted and checked against a running persistent kernel
// (gpu/persistent_kernel_guard.h). In an NF process, one the Manager makes for it
// (gpu/gpu_calls.h). Throws GpuError.
inline cudaStream_t create_stream() { return gpu::create_stream(); }

// Destroys a stream made by create_stream (nullptr: nothing).
inline void destroy_stream(cudaStream_t s) { gpu::destroy_stream(s); }

// An event in the current context, checked like create_stream. Throws GpuError.
inline cudaEvent_t create_event(unsigned flags) { return gpu::create_event(flags); }

struct GpuStream {
  cudaStream_t stream = nullptr;
  int max_blocks = 0;          // upper bound on the grid; 0 = as many as the batch needs
  int threads_per_block = 256;
  // Every batch this NF sees comes through this one stream in ingress order (the pipeline's
  // per-NF stage); an NF with ordered state (IPsec) may then run its ordered pass inline.
  bool serial = false;
  // With serial: a second stream on the same SMs (nullptr: none). An NF may run its ordered
  // pass for batch k + 1 there while its per-packet work for batch k runs on `stream`, with an
  // event making `stream` wait for the pass before it uses its result.
  cudaStream_t aux = nullptr;
  cudaEvent_t aux_done = nullptr;  // an event of the lane's context (aux's and stream's)
  // Packets sent to this NF in the batch, as the host knows them (0: not known), for counting
  // them against the table version the launch uses (nf/table_versions.h).
  uint32_t packets = 0;
  // Fused batches (packets 0): where an NF leaves the count of the packets sent to it against
  // its launch's table version, to run once the batch has landed and the host knows them,
  // instead of counting them on the device by a kernel of its own (nullptr: on the device).
  // Never handed to an NF process.
  std::function<void(uint32_t)>* count_landed = nullptr;
  // The switch after the NF's node, offered for its last kernel to run (nf/node_exit.h), and
  // where taking it is noted, so that the pipeline launches no switch kernel after the NF
  // (nullptr: none offered). An NF process gets them by value with its request
  // (nf/nf_process/internal/protocol.h).
  const NodeSwitch* node_switch = nullptr;
  bool* switch_taken = nullptr;
};

// The grid of a kernel whose steps are warp-uniform (warp-wide counts, the switch in an NF's
// kernel): blocks of whole warps of about s.threads_per_block, one thread per packet of `count`,
// at most s.max_blocks blocks.
inline dim3 whole_warp_grid(uint32_t count, const GpuStream& s, dim3& block) {
  const int threads = s.threads_per_block > 32 ? s.threads_per_block / 32 * 32 : 32;
  int blocks = static_cast<int>((count + uint32_t(threads) - 1) / uint32_t(threads));
  if (s.max_blocks > 0 && blocks > s.max_blocks) blocks = s.max_blocks;
  block = dim3(unsigned(threads));
  return dim3(unsigned(blocks));
}

}  // namespace gpunfv
