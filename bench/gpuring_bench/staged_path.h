// StagedPath: the host-staged path the GPU ring port is compared with (G-NET's path, the
// foundation's GPU stage in miniature): frames are received into a pinned host batch, the
// batch is copied to the device in one copy, the same classify + NF hook runs as a kernel over
// it, and the batch is copied back; the host then sends what passed. One worker thread does it
// all, so its CPU time is the path's. Only the comparison benchmark uses it.
//
// Errors: std::runtime_error in a build without CUDA; GpuError on CUDA failures.
#pragma once

#include <cstdint>
#include <memory>

#include "core/batch.h"
#include "chain/ring_nf_runners.h"

namespace gpunfv::gpuring {

class StagedPath {
 public:
  virtual ~StagedPath() = default;
  // Runs classify + the hook's NF over the batch's packets on the device (copy in, kernel, copy
  // out, synchronised). Verdicts and lengths are in the batch afterwards.
  virtual void process(Batch& b) = 0;
};

// Batches up to `capacity` packets of `stride` bytes.
std::unique_ptr<StagedPath> make_staged_path(uint32_t capacity, uint32_t stride, const NfHook& hook);

}  // namespace gpunfv::gpuring
