#include "gpu/device_counters.h"

namespace gpunfv {

DeviceCounters::DeviceCounters(size_t slots) : counts_(slots) {
  if (slots) GPUNFV_CUDA(cudaMemset(counts_.data(), 0, slots * sizeof(unsigned long long)));
}

std::vector<uint64_t> DeviceCounters::take() {
  std::vector<uint64_t> out(counts_.size());
  if (out.empty()) return out;
  // The NFs' streams live in SM partitions (green contexts): wait for the whole device.
  GPUNFV_CUDA(cudaDeviceSynchronize());
  static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
  GPUNFV_CUDA(cudaMemcpy(out.data(), counts_.data(), out.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  GPUNFV_CUDA(cudaMemset(counts_.data(), 0, out.size() * sizeof(uint64_t)));
  return out;
}

}  // namespace gpunfv
