// What an IsoSpan access out of bounds does (G-NET's isoPointer, dynamic check).
//
// Inside an NF's per-packet function the access is refused, not made: a read gets a scratch
// value, a write lands in scratch, and the fault is noted for the thread. The framework's
// per-packet driver (nf/run_per_packet.h) takes the note after the function returns, drops the
// packet as nf_isolation_fault, and the framework quarantines the NF (chain/egress_send.cpp).
// The process, its CUDA context and every other chain go on.
//
// On the host the driver opens a fault scope around the function; an access out of bounds
// outside any scope is framework code breaking its own contract, and aborts with a message.
// On the device every access out of bounds is refused and noted (a trap would end the CUDA
// context, and every chain with it); only the drivers take the notes.
//
// A device note is a bit per lane in a word per hardware warp slot (SM, warp slot), in a table
// of the kernel's own module (each .cu file has its table; the driver that takes a note runs
// in the same kernel as the access that made it). A warp keeps its slot unless the GPU preempts
// it mid-packet; a note is then taken by another warp of the same module, so another packet of
// that module's NFs is the one dropped. Nothing is made outside the spans either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/compat.h"

namespace gpunfv {

// Largest element an IsoSpan may hold: a refused access reads or writes this much scratch.
inline constexpr size_t kIsoScratchBytes = 1024;

namespace iso_fault_detail {

struct HostThread {
  int scopes = 0;
  bool fault = false;
  alignas(16) unsigned char scratch[kIsoScratchBytes];
};
inline thread_local HostThread host_thread;

#if defined(__CUDACC__)
inline constexpr uint32_t kWarpSlots = 1u << 14;  // SMs x warp slots per SM, with room
static __device__ uint32_t device_lanes[kWarpSlots];
static __device__ uint32_t device_any;  // 1 once any thread of the module made a note
static __device__ __align__(16) unsigned char device_scratch[kIsoScratchBytes];

__device__ GPUNFV_FORCEINLINE uint32_t warp_slot() {
  uint32_t sm, warps, warp;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(warps));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  return (sm * warps + warp) & (kWarpSlots - 1);
}
__device__ GPUNFV_FORCEINLINE uint32_t lane_bit() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return 1u << lane;
}
#endif

}  // namespace iso_fault_detail

// A framework contract broken on the host (a caller's range past its data, or an access out of
// bounds outside an NF's function): aborts with a message.
[[noreturn]] inline void iso_violation(size_t index, size_t size) {
  std::fprintf(stderr, "gpunfv: IsoSpan access %zu out of bounds (size %zu)\n", index, size);
  std::abort();
}

namespace iso_fault_detail {
GPUNFV_NOINLINE inline void* refuse_on_host(size_t index, size_t size) {
  HostThread& t = host_thread;
  if (t.scopes == 0) iso_violation(index, size);
  t.fault = true;
  return t.scratch;
}
}  // namespace iso_fault_detail

// An access out of bounds at `index` of a span of `size` elements: notes it and returns the
// scratch the access goes to instead (see above). Inline on the device: a call there would
// follow the ABI's register conventions in every kernel that checks.
GPUNFV_HD GPUNFV_FORCEINLINE void* iso_refuse(size_t index, size_t size) {
#if defined(__CUDA_ARCH__)
  using namespace iso_fault_detail;
  atomicOr(&device_lanes[warp_slot()], lane_bit());
  device_any = 1;
  return device_scratch;
#else
  return iso_fault_detail::refuse_on_host(index, size);
#endif
}

// Opened by the per-packet driver around an NF's function; faulted() says whether an access
// was refused since the scope opened (or since faulted() last said so) and clears the note.
class IsoFaultScope {
 public:
#if defined(__CUDA_ARCH__) || !GPUNFV_CHECKED
  GPUNFV_HD IsoFaultScope() {}
#else
  // The outermost scope starts without a note: one left by a scope that closed without taking
  // it belongs to no packet of this one.
  GPUNFV_HD IsoFaultScope() {
    if (iso_fault_detail::host_thread.scopes++ == 0) iso_fault_detail::host_thread.fault = false;
  }
  GPUNFV_HD ~IsoFaultScope() { --iso_fault_detail::host_thread.scopes; }
#endif
  IsoFaultScope(const IsoFaultScope&) = delete;
  IsoFaultScope& operator=(const IsoFaultScope&) = delete;

  GPUNFV_HD GPUNFV_FORCEINLINE bool faulted() const {
#if !GPUNFV_CHECKED
    return false;
#elif defined(__CUDA_ARCH__)
    using namespace iso_fault_detail;
    if (device_any == 0) return false;
    const uint32_t bit = lane_bit();
    uint32_t& word = device_lanes[warp_slot()];
    if ((word & bit) == 0) return false;
    atomicAnd(&word, ~bit);
    return true;
#else
    iso_fault_detail::HostThread& t = iso_fault_detail::host_thread;
    const bool f = t.fault;
    t.fault = false;
    return f;
#endif
  }
};

}  // namespace gpunfv
