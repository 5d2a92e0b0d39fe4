// isoPointer's compile-time check on an NF's own kernels (G-NET section 4.3): a kernel an NF
// launches may take only what the framework hands it, its NfPackets (nf/nf_packets.h) and the
// switch after its node (nf/node_exit.h), and its own views (core/iso_view.h: plain values, IsoSpans and table refs made of them). A raw
// pointer or a whole BatchView as a parameter is refused when the launch compiles.
//
// NF code launches its kernels with launch_nf_kernel() (the NF sources' check, tests/nf, holds
// NF folders to it); the per-packet base launches through launch_per_packet(), which checks
// the NF's view the same way. Errors: compile time only.
#pragma once

#include <type_traits>

#include "core/iso_view.h"
#include "nf/nf_packets.h"
#include "nf/node_exit.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/gpu_calls.h"
#endif

namespace gpunfv {

template <class T>
inline constexpr bool nf_kernel_param = is_nf_packets<T> || std::is_same_v<T, NodeExit> || iso_view<T>;

template <class F>
inline constexpr bool nf_kernel = false;
template <class... P>
inline constexpr bool nf_kernel<void(P...)> = (nf_kernel_param<std::remove_cv_t<P>> && ...);

#define GPUNFV_NF_KERNEL_MESSAGE                                                               \
  "isoPointer: an NF kernel takes only its NfPackets and its own views (no raw pointer or "   \
  "BatchView): see nf/nf_kernel.h"

template <class... P>
constexpr void check_nf_kernel(void (*)(P...)) {
  static_assert(nf_kernel<void(P...)>, GPUNFV_NF_KERNEL_MESSAGE);
}

#if GPUNFV_HAVE_CUDA
// gpu::launch() of an NF's kernel whose parameters pass the check.
template <typename... Params, typename... Args>
void launch_nf_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                      cudaStream_t stream, Args&&... args) {
  check_nf_kernel(kernel);
  gpu::launch(kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}
#endif

}  // namespace gpunfv
