// A table version's packet count kept on the device, for launches whose packets the host does
// not know (gpu_pipeline: fused issues a batch's whole chain at once, GpuStream::packets 0): a
// kernel adds the packets at the NF's node before the NF's kernel runs. Taken back to the
// version's host counter once no launch over the version is left (nf/table_versions.h).
#pragma once

#if GPUNFV_HAVE_CUDA

#include <atomic>
#include <cstdint>

#include "core/batch.h"
#include "gpu/device_buffer.h"
#include "gpu/stream.h"

namespace gpunfv {

class DevicePacketCount {
 public:
  // Allocates and zeroes the counter (once; later calls do nothing).
  void allocate();
  // When the host does not know the batch's packets for this NF (stream.packets 0): where the
  // stream takes a count for when the batch has landed (GpuStream::count_landed), leaves one
  // that adds them to `version_packets` (the version's host counter, kept for the run);
  // otherwise launches the count over the packets alive at `position` on `stream`.
  void count(const BatchView& device_batch, uint8_t position, const GpuStream& stream,
             std::atomic<uint64_t>* version_packets) const;
  // Adds what was counted to `to` and zeroes the counter. The launches must be done.
  void take(std::atomic<uint64_t>* to) const;

 private:
  DeviceBuffer<unsigned long long> counter_;
};

}  // namespace gpunfv

#endif
