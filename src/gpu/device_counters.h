// DeviceCounters: counters an NF adds into on the device (GPU backend), so no host thread reads
// every packet's results to count them. On the H200's 16-core host the NFs' collect() loops took
// 3.5 cores at 140 Mpps on S_d, and skipping them ran the chain 25-30% faster
// (docs/decisions/device-side-counting.md). cuCollections style: DeviceCounters owns the device
// array; DeviceCountersRef is trivially copyable and passed to kernels by value.
//
// DeviceCountersRef's adds are warp-wide: every lane of a full warp calls them together (a
// kernel over whole warps, lanes past the batch passing on = false), and lanes adding to the
// same slot are summed before one atomic, so a batch whose packets all hit one rule costs one
// atomic per warp, not one per packet.
//
// Errors: CUDA failures throw (gpu/cuda_check.h); a slot past the array traps the kernel
// (IsoSpan), as any NF access out of bounds does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/iso_span.h"
#include "gpu/device_buffer.h"

namespace gpunfv {

struct DeviceCountersRef {
  IsoSpan<unsigned long long> counts;

#if defined(__CUDACC__)
  // Adds 1 to `slot` for each lane with `on`. All 32 lanes of the warp call it.
  __device__ void add_one(uint32_t slot, bool on) const {
    const uint32_t key = on ? slot : UINT32_MAX;
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, key);
    const unsigned lane = threadIdx.x & 31u;
    if (on && __ffs(peers) - 1 == int(lane)) atomicAdd(&counts[slot], (unsigned long long)__popc(peers));
  }
  // Adds every lane's `value` (0 for none) to `slot`, one slot for the whole warp. All 32 lanes
  // call it.
  __device__ void add_sum(uint32_t slot, uint32_t value) const {
    const uint32_t sum = __reduce_add_sync(0xFFFFFFFFu, value);
    if ((threadIdx.x & 31u) == 0 && sum != 0) atomicAdd(&counts[slot], (unsigned long long)sum);
  }
#endif
};

class DeviceCounters {
 public:
  // `slots` counters, zeroed.
  explicit DeviceCounters(size_t slots);
  size_t slots() const { return counts_.size(); }
  DeviceCountersRef ref() const { return DeviceCountersRef{counts_.span()}; }
  // Waits for the device, then returns every slot's count and zeroes them on the device (so a
  // count is taken once).
  std::vector<uint64_t> take();

 private:
  DeviceBuffer<unsigned long long> counts_;
};

}  // namespace gpunfv
