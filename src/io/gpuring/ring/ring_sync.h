// The few memory operations the ring protocol needs, for both sides of the descriptor rings:
// on the GPU (device memory, the mapped "BAR" word in host memory) and on the CPU (host memory,
// where threads play the kernel blocks in tests). Release stores publish everything written
// before them; acquire loads order everything read after them. Two scopes on the GPU:
//   - device (load_acquire, store_release): data in device memory, written by other blocks or
//     by the copy engine (DD write-backs, queue indices): a GPU-scope fence suffices;
//   - system (..._sys): words in host memory (the BAR, run flags), and the tail writes that
//     must reach the NIC only after the descriptors they announce: a system-scope fence, which
//     costs a PCIe round trip, so the hot path avoids it.
#pragma once

#include <cstdint>

#include "core/compat.h"

#if !defined(__CUDA_ARCH__)
#include <sched.h>
#include <time.h>
#endif

namespace gpunfv::gpuring {

template <typename T>
GPUNFV_HD GPUNFV_FORCEINLINE T load_acquire(const T* p) {
#if defined(__CUDA_ARCH__)
  T v = *static_cast<const volatile T*>(p);
  __threadfence();  // later reads (packet bytes, descriptor fields) are not hoisted above
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

template <typename T>
GPUNFV_HD GPUNFV_FORCEINLINE void store_release(T* p, T v) {
#if defined(__CUDA_ARCH__)
  __threadfence();
  *static_cast<volatile T*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

template <typename T>
GPUNFV_HD GPUNFV_FORCEINLINE T load_acquire_sys(const T* p) {
#if defined(__CUDA_ARCH__)
  T v = *static_cast<const volatile T*>(p);
  __threadfence_system();
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

template <typename T>
GPUNFV_HD GPUNFV_FORCEINLINE void store_release_sys(T* p, T v) {
#if defined(__CUDA_ARCH__)
  __threadfence_system();  // descriptor writes reach memory the NIC reads before the tail does
  *static_cast<volatile T*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

// A counter or index that only one thread writes: kept in a register and stored on each change,
// never read back, so the hot path pays a store instead of a round trip to memory.
template <typename T>
struct OwnedWord {
  T* at;
  T value;
  GPUNFV_HD explicit OwnedWord(T* p) : at(p), value(*p) {}
  // For a side that never writes this word: nothing is read (the owner may be writing it).
  GPUNFV_HD OwnedWord(T* p, bool owner) : at(p), value(owner ? *p : T(0)) {}
  GPUNFV_HD void add(T n = 1) { set(value + n); }
  GPUNFV_HD void set(T v) {
    value = v;
    *at = v;
  }
};

// A load that the compiler must repeat (polling) but that orders nothing.
template <typename T>
GPUNFV_HD GPUNFV_FORCEINLINE T load_relaxed(const T* p) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const volatile T*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// Nanoseconds for tail-update timeouts: the GPU's global timer, CLOCK_MONOTONIC on the CPU.
// Compared only with readings of the same side.
GPUNFV_HD GPUNFV_FORCEINLINE uint64_t ring_now_ns() {
#if defined(__CUDA_ARCH__)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
#endif
}

// Called by a poller that found nothing to do. On the GPU a short sleep eases the pressure on
// the memory system; on the CPU a yield, because tests run more pollers than cores.
GPUNFV_HD GPUNFV_FORCEINLINE void ring_idle() {
#if defined(__CUDA_ARCH__)
  __nanosleep(64);
#else
  sched_yield();
#endif
}

}  // namespace gpunfv::gpuring
