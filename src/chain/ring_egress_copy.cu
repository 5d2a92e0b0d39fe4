// The device side of RingEgressCopy (ring_egress_copy.h).
#include "chain/ring_egress_copy.h"

#include <algorithm>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"

namespace gpunfv {

namespace {

constexpr int kWarpsPerBlock = 8;

// One warp per listed packet: its frame, in 16-byte words (slots and rows are 64-byte aligned
// and slot_bytes is a multiple of 64, so a rounded-up length stays inside both).
__global__ void gather_frames_kernel(BatchView b, const uint32_t* packets, uint32_t n, uint8_t* rows) {
  const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32;
  if (warp >= n) return;
  const uint32_t i = packets[warp];
  const uint32_t len = b.len[i] < b.stride ? b.len[i] : b.stride;
  const uint32_t words = (len + 15) / 16;
  const auto* src = reinterpret_cast<const uint4*>(b.data.subspan(slot_offset(b, i), words * 16).framework_data());
  auto* dst = reinterpret_cast<uint4*>(rows + size_t(warp) * b.stride);
  for (uint32_t w = lane; w < words; w += 32) dst[w] = src[w];
}

}  // namespace

struct RingEgressCopy::Impl {
  uint32_t capacity = 0, slot_bytes = 0;
  cudaStream_t stream = nullptr;
  uint8_t* device_rows = nullptr;
  uint32_t* device_list = nullptr;
  uint8_t* host_rows = nullptr;
  uint32_t* host_list = nullptr;

  ~Impl() {
    destroy_stream(stream);
    cudaFree(device_rows);
    cudaFree(device_list);
    cudaFreeHost(host_rows);
    cudaFreeHost(host_list);
  }
};

RingEgressCopy::RingEgressCopy(uint32_t capacity, uint32_t slot_bytes) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.capacity = capacity;
  m.slot_bytes = slot_bytes;
  const size_t rows = size_t(capacity) * slot_bytes;
  m.stream = create_stream();
  GPUNFV_CUDA(cudaMalloc(reinterpret_cast<void**>(&m.device_rows), rows));
  GPUNFV_CUDA(cudaMalloc(reinterpret_cast<void**>(&m.device_list), capacity * sizeof(uint32_t)));
  GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&m.host_rows), rows, cudaHostAllocDefault));
  GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&m.host_list), capacity * sizeof(uint32_t), cudaHostAllocDefault));
  // Loaded now, not at its first launch: a lazily loaded kernel may wait for the running ring
  // kernel (io/gpuring/loops/persistent_kernel.cuh).
  cudaFuncAttributes attr{};
  GPUNFV_CUDA(cudaFuncGetAttributes(&attr, gather_frames_kernel));
}

RingEgressCopy::~RingEgressCopy() = default;

uint8_t* RingEgressCopy::host_rows() const { return impl_->host_rows; }
size_t RingEgressCopy::host_bytes() const { return size_t(impl_->capacity) * impl_->slot_bytes; }

uint64_t RingEgressCopy::fetch(const BatchView& dv, const std::vector<uint32_t>& packets,
                               const uint16_t* host_len) {
  Impl& m = *impl_;
  const auto n = static_cast<uint32_t>(std::min<size_t>(packets.size(), m.capacity));
  if (n == 0) return 0;
  uint32_t widest = 0;
  for (uint32_t j = 0; j < n; ++j) {
    m.host_list[j] = packets[j];
    widest = std::max<uint32_t>(widest, host_len[packets[j]]);
  }
  widest = std::min(m.slot_bytes, (widest + 15) / 16 * 16);
  GPUNFV_CUDA(cudaMemcpyAsync(m.device_list, m.host_list, n * sizeof(uint32_t), cudaMemcpyHostToDevice, m.stream));
  const int threads = 32 * kWarpsPerBlock;
  const int blocks = int((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  gather_frames_kernel<<<blocks, threads, 0, m.stream>>>(dv, m.device_list, n, m.device_rows);
  GPUNFV_CUDA(cudaGetLastError());
  if (widest > 0)
    GPUNFV_CUDA(cudaMemcpy2DAsync(m.host_rows, m.slot_bytes, m.device_rows, m.slot_bytes, widest, n,
                                  cudaMemcpyDeviceToHost, m.stream));
  GPUNFV_CUDA(cudaStreamSynchronize(m.stream));
  return uint64_t(widest) * n;
}

void RingEgressCopy::upload(void* device_dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  GPUNFV_CUDA(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, impl_->stream));
  GPUNFV_CUDA(cudaStreamSynchronize(impl_->stream));
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(gather_frames_kernel);

}  // namespace gpunfv
