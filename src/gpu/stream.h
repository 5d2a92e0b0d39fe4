// A CUDA stream and the launch shape an NF kernel should use on it (its SM share: the number
// of blocks the scheduler allows; later issues size it per NF).
#pragma once

#include <cuda_runtime.h>

namespace gpunfv {

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
  cudaEvent_t aux_done = nullptr;  // an event of aux's context, for `stream` to wait on
};

}  // namespace gpunfv
