// RingEgressCopy: the PCIe traffic of a device-resident ring batch's egress on the GPU backend
// (chain/gpuring_feed.h, chain/ring_batch_transfer.h): copies the frames egress needs on the
// host out of their ring slots (a gather kernel packs them in a device staging area at slot
// pitch; one 2D copy, as wide as the longest of them, brings them into pinned host memory), and
// writes the verdict array back before the batch returns to its ring. One per feed, used by the
// feed's egress thread only, on a stream of its own; every call blocks until its copies are done.
//
// Errors: GpuError on CUDA failures; the constructor throws std::runtime_error in a build
// without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/batch.h"

namespace gpunfv {

class RingEgressCopy {
 public:
  RingEgressCopy(uint32_t capacity, uint32_t slot_bytes);
  ~RingEgressCopy();
  RingEgressCopy(const RingEgressCopy&) = delete;
  RingEgressCopy& operator=(const RingEgressCopy&) = delete;

  // Host staging (capacity rows of slot_bytes): row j holds packet packets[j] of the last fetch.
  uint8_t* host_rows() const;
  size_t host_bytes() const;
  // Copies the frames of `packets` (indices into the device batch `dv`; `host_len` their
  // lengths, as downloaded) into host rows 0, 1, ...; returns the bytes that crossed PCIe.
  uint64_t fetch(const BatchView& dv, const std::vector<uint32_t>& packets, const uint16_t* host_len);
  // bytes from pinned host memory to device memory (the verdict array).
  void upload(void* device_dst, const void* host_src, size_t bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpunfv
