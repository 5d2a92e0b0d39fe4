// The device side of ring_clock.h: a one-thread probe kernel answering the host's requests with
// its %globaltimer through mapped host memory.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"
#include "io/gpuring/ring/ring_clock.h"
#include "io/gpuring/ring/ring_sync.h"

namespace gpunfv::gpuring {

namespace {

struct ClockProbe {
  uint32_t request, answer;  // round k: the host writes request = k, the kernel answer = k
  uint64_t gpu_ns;           // globaltimer when the kernel saw request k
};

constexpr uint32_t kRounds = 200;
constexpr uint64_t kKernelLimitNs = 2'000'000'000;  // the probe exits on its own after 2 s

__global__ void clock_probe_kernel(ClockProbe* p) {
  const uint64_t start = ring_now_ns();
  for (uint32_t k = 1; k <= kRounds; ++k) {
    while (load_acquire_sys(&p->request) != k)
      if (ring_now_ns() - start > kKernelLimitNs) return;
    p->gpu_ns = ring_now_ns();
    store_release_sys(&p->answer, k);
  }
}

int64_t host_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

RingClockOffsets measure_device_ring_clock() {
  ClockProbe* host = nullptr;
  ClockProbe* dev = nullptr;
  GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(ClockProbe), cudaHostAllocMapped));
  *host = ClockProbe{};
  cudaStream_t st = nullptr;
  RingClockOffsets best;
  int64_t best_rtt = INT64_MAX;
  bool answered = true;
  try {
    GPUNFV_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), host, 0));
    st = create_stream();
    clock_probe_kernel<<<1, 1, 0, st>>>(dev);
    GPUNFV_CUDA(cudaGetLastError());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (uint32_t k = 1; k <= kRounds && answered; ++k) {
      const int64_t t1 = host_ns(CLOCK_MONOTONIC);
      __atomic_store_n(&host->request, k, __ATOMIC_RELEASE);
      while (__atomic_load_n(&host->answer, __ATOMIC_ACQUIRE) != k)
        if (std::chrono::steady_clock::now() > deadline) {
          answered = false;
          break;
        }
      const int64_t t2 = host_ns(CLOCK_MONOTONIC);
      if (!answered) break;
      const auto g = int64_t(__atomic_load_n(&host->gpu_ns, __ATOMIC_ACQUIRE));
      if (t2 - t1 < best_rtt) {
        best_rtt = t2 - t1;
        best.to_monotonic_ns = t1 + (t2 - t1) / 2 - g;
        best.uncertainty_ns = uint64_t((t2 - t1) / 2);
      }
    }
    // The kernel ends after its last round, or on its own limit if the host gave up.
    GPUNFV_CUDA(cudaStreamSynchronize(st));
  } catch (...) {
    destroy_stream(st);
    cudaFreeHost(host);
    throw;
  }
  destroy_stream(st);
  cudaFreeHost(host);
  if (!answered) throw std::runtime_error("gpuring: the GPU clock probe kernel did not answer within 1 s");
  const int64_t a = host_ns(CLOCK_MONOTONIC), r = host_ns(CLOCK_REALTIME), b = host_ns(CLOCK_MONOTONIC);
  best.to_unix_ns = best.to_monotonic_ns + (r - (a + (b - a) / 2));
  return best;
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(clock_probe_kernel);

}  // namespace gpunfv::gpuring
