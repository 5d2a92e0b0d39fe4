#include "nf/device_packet_count.h"

#include <algorithm>

#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"

namespace gpunfv {

namespace {

// Packets at `position` that the NF is about to process (alive, sent to it).
__global__ void count_at_node_kernel(BatchView b, uint8_t position, unsigned long long* out) {
  uint32_t n = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x)
    n += b.verdict[i] == static_cast<uint8_t>(DropReason::none) && b.next_nf[i] == position;
  for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_down_sync(0xFFFFFFFFu, n, offset);
  if ((threadIdx.x & 31u) == 0 && n) atomicAdd(out, (unsigned long long)n);
}

}  // namespace

void DevicePacketCount::allocate() {
  if (counter_.size()) return;
  counter_.allocate(1);
  const unsigned long long zero = 0;  // a copy: no memset kernel of CUDA's own
  gpu::copy_to_device(counter_.data(), &zero, sizeof zero);
}

void DevicePacketCount::count(const BatchView& device_batch, uint8_t position,
                              const GpuStream& stream, std::atomic<uint64_t>* version_packets) const {
  if (stream.packets != 0 || device_batch.count == 0) return;
  if (stream.count_landed) {
    *stream.count_landed = [version_packets](uint32_t n) {
      version_packets->fetch_add(n, std::memory_order_relaxed);
    };
    return;
  }
  if (!counter_.size()) return;
  const uint32_t blocks = std::min<uint32_t>((device_batch.count + 255) / 256, 64);
  gpu::launch(count_at_node_kernel, dim3(blocks), dim3(256), 0, stream.stream, device_batch, position,
              counter_.data());
}

void DevicePacketCount::take(std::atomic<uint64_t>* to) const {
  if (!counter_.size()) return;
  unsigned long long n = 0;
  gpu::copy_to_host(&n, counter_.data(), sizeof n);
  const unsigned long long zero = 0;
  gpu::copy_to_device(counter_.data(), &zero, sizeof zero);
  if (n) to->fetch_add(n, std::memory_order_relaxed);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(count_at_node_kernel);

}  // namespace gpunfv
