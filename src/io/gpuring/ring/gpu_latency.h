// The GPU side's own latency, measured where it happens: from the moment the rx loop takes a
// packet off its ring (the descriptor's DD seen, a fresh slot armed) to the tail write that
// hands its tx descriptor to the NIC (TDT), on the side's own clock (ring_now_ns: the GPU's
// global timer, CLOCK_MONOTONIC for CPU threads). That is the share of latency the GPU ring
// port itself adds (rx poll, NF or chain, queue to tx, tx post, tail batching) whatever NIC is
// attached; the NIC emulator's end-to-end figures also hold its copy engine's DMA and its own
// threads' polling, which a real 82599 does in hardware.
// The rx side stamps each packet's slot; the tx side, one writer per ring, adds each announced
// descriptor to its ring's histogram: 250 ns buckets to 128 us (a port's own share), then 16 us
// buckets to 8.3 ms (a chain's batches in between), the last bucket open-ended.
// A slot whose packet another ring set received (GPU ring forwards) is not measured there: the
// forward's views carry no histograms.
#pragma once

#include <cstdint>
#include <vector>

#include "core/compat.h"

namespace gpunfv::gpuring {

inline constexpr uint32_t kLatencyBucketNs = 250;         // fine buckets
inline constexpr uint32_t kLatencyFineBuckets = 512;      // [0, 128 us)
inline constexpr uint32_t kLatencyCoarseBucketNs = 16000;  // then
inline constexpr uint32_t kLatencyBuckets = 1024;
inline constexpr uint64_t kLatencyFineNs = uint64_t(kLatencyBucketNs) * kLatencyFineBuckets;

struct alignas(64) GpuLatencyHistogram {
  uint64_t count, sum_ns, max_ns;
  uint32_t bucket[kLatencyBuckets];

  GPUNFV_HD static uint32_t bucket_of(uint64_t ns) {
    if (ns < kLatencyFineNs) return uint32_t(ns / kLatencyBucketNs);
    const uint64_t b = kLatencyFineBuckets + (ns - kLatencyFineNs) / kLatencyCoarseBucketNs;
    return b < kLatencyBuckets ? uint32_t(b) : kLatencyBuckets - 1;
  }
  // The largest latency bucket b holds (its upper edge, exclusive).
  GPUNFV_HD static uint64_t bucket_end_ns(uint32_t b) {
    return b < kLatencyFineBuckets ? uint64_t(b + 1) * kLatencyBucketNs
                                   : kLatencyFineNs + uint64_t(b + 1 - kLatencyFineBuckets) * kLatencyCoarseBucketNs;
  }
  // Called by several lanes of one team at once: atomics whose results nobody waits for.
  GPUNFV_HD void add(uint64_t ns) {
#if defined(__CUDA_ARCH__)
    atomicAdd(reinterpret_cast<unsigned long long*>(&count), 1ull);
    atomicAdd(reinterpret_cast<unsigned long long*>(&sum_ns), static_cast<unsigned long long>(ns));
    atomicMax(reinterpret_cast<unsigned long long*>(&max_ns), static_cast<unsigned long long>(ns));
    atomicAdd(&bucket[bucket_of(ns)], 1u);
#else
    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sum_ns, ns, __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&max_ns, __ATOMIC_RELAXED);
    while (ns > m && !__atomic_compare_exchange_n(&max_ns, &m, ns, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    __atomic_fetch_add(&bucket[bucket_of(ns)], 1u, __ATOMIC_RELAXED);
#endif
  }
};

// Summary of one or more rings' histograms (merged), in nanoseconds. A percentile is the upper
// edge of the bucket it falls in (so within 250 ns above the true value), the open last bucket
// reported as max.
struct GpuLatencySummary {
  uint64_t count = 0;
  double mean_ns = 0;
  uint64_t p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
};
GpuLatencySummary summarize_gpu_latency(const std::vector<GpuLatencyHistogram>& rings);

}  // namespace gpunfv::gpuring
