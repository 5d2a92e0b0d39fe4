#include "gpu/device_counters.h"

namespace gpunfv {

DeviceCounters::DeviceCounters(size_t slots) { counts_.upload(std::vector<unsigned long long>(slots, 0)); }

std::vector<uint64_t> DeviceCounters::take() {
  std::vector<uint64_t> out(counts_.size());
  if (out.empty()) return out;
  // The NFs' streams live in SM partitions (green contexts): wait for the whole device.
  gpu::synchronize_device();
  static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
  gpu::copy_to_host(out.data(), counts_.data(), out.size() * sizeof(uint64_t));
  const std::vector<unsigned long long> zeros(out.size(), 0);
  gpu::copy_to_device(counts_.data(), zeros.data(), zeros.size() * sizeof(unsigned long long));
  return out;
}

}  // namespace gpunfv
