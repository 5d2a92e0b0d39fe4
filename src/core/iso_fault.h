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
// A device note is a byte per thread of the block, in shared memory of the kernel that made
// it (a block has at most 1024 threads): the driver that takes it runs in the same thread, and
// a scope clears its thread's byte when it opens, so a note never outlives its block or reaches
// another kernel. Noting is one store, and taking a note one shared-memory read a packet (no
// atomics, no global memory). Scopes do not nest on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/compat.h"

namespace gpunfv {

// Largest element an IsoSpan may hold: a refused access reads or writes this much scratch.
inline constexpr size_t kIsoScratchBytes = 1024;
// Shared memory a block of a checking kernel holds for its threads' notes (see above): a
// kernel that sizes its own shared memory leaves this much.
inline constexpr size_t kIsoNoteBytes = GPUNFV_CHECKED ? 1024 : 0;

namespace iso_fault_detail {

struct HostThread {
  int scopes = 0;
  bool fault = false;
  alignas(16) unsigned char scratch[kIsoScratchBytes];
};
inline thread_local HostThread host_thread;

#if defined(__CUDACC__)
static __device__ __align__(16) unsigned char device_scratch[kIsoScratchBytes];

// This thread's note, in the shared memory of the kernel that uses it.
__device__ GPUNFV_FORCEINLINE unsigned char& device_note() {
  __shared__ unsigned char notes[kIsoNoteBytes > 0 ? kIsoNoteBytes : 1];
  return notes[threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)];
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
  iso_fault_detail::device_note() = 1;
  return iso_fault_detail::device_scratch;
#else
  return iso_fault_detail::refuse_on_host(index, size);
#endif
}

// Opened by the per-packet driver around an NF's function; faulted() says whether an access
// was refused since the scope opened (or since faulted() last said so) and clears the note.
class IsoFaultScope {
 public:
#if !GPUNFV_CHECKED
  GPUNFV_HD IsoFaultScope() {}
#elif defined(__CUDA_ARCH__)
  __device__ IsoFaultScope() { iso_fault_detail::device_note() = 0; }
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
    unsigned char& note = iso_fault_detail::device_note();
    if (note == 0) return false;
    note = 0;
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
