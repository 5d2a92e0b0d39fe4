// A base for NFs whose work is one function per packet (as BESS modules that process packets
// one by one): from the NF's view and logic types it supplies the CPU loop, the GPU kernel and
// its launch, and the codes of the NF's own drop reasons. The NF class supplies
//
//   View view(Backend) const;            // what its per-packet function reads, on that backend
//   std::string_view type() const;        std::string describe() const;
//   static std::unique_ptr<Nf> from_config(const ConfigNode&);
//
// and, where its view points at tables, prepare() to build (and on the GPU upload) them. Its
// one source file (a .cu: CUDA where nvcc exists, C++ where it does not) registers it with
//
//   GPUNFV_PER_PACKET_NF("ttl_filter", TtlFilter);
//
// which adds the type to the NF registry and, compiled by nvcc, instantiates and registers the
// NF's kernel (per_packet_kernel<View, Logic>). The Logic type is
// `GPUNFV_HD NfVerdict operator()(const View&, PacketReader) const` (PacketRef for an NF that
// rewrites packets: nf/run_per_packet.h), naming its own drop reasons,
// if it has any, with `using Drops = E;` (nf/nf_drops.h). See src/nf/ttl_filter/.
#pragma once

#include <stdexcept>
#include <string>

#include "nf/network_function.h"
#include "nf/nf_drops.h"
#include "nf/nf_registry.h"
#include "nf/node_exit.h"
#include "nf/run_per_packet.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu/gpu_calls.h"
#include "gpu/stream.h"
#endif
#if defined(__CUDACC__)
#include "gpu/kernel_registry.h"
#include "nf/per_packet_kernel.cuh"
#endif

namespace gpunfv {

// The kernel of one (View, Logic) pair, as its NF's source file instantiated it; null in a
// build without CUDA or where no source file did.
template <class View, class Logic>
struct PerPacketKernel {
  static inline const void* function = nullptr;
};

template <class Derived, class View, class Logic>
class PerPacketNf : public NetworkFunction {
 public:
  using ViewType = View;
  using LogicType = Logic;
  static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
  static_assert(std::is_trivially_copyable_v<Logic>);

  // Throws std::logic_error if one of Logic's drop reasons is named as another type's.
  explicit PerPacketNf(std::string name)
      : NetworkFunction(std::move(name)), first_drop_(first_drop_code_of<Logic>()) {}

  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override {
    run_per_packet_cpu(packets_at<packet_access_of<View, Logic>>(b, position, first_drop_), begin, end,
                       self().view(Backend::cpu), Logic{});
  }
  bool collects() const override { return false; }

#if GPUNFV_HAVE_CUDA
  // per_packet_kernel<View, Logic> (nf/per_packet_kernel.cuh), launched by its address.
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& s) const override {
    const void* kernel = PerPacketKernel<View, Logic>::function;
    if (!kernel)
      throw std::runtime_error(name() + ": no GPU kernel for NF type " + std::string(type()) +
                               " (its source was not compiled by nvcc)");
    if (device_batch.count == 0) return;
    dim3 block;
    const dim3 grid = whole_warp_grid(device_batch.count, s, block);
    const auto packets = packets_at<packet_access_of<View, Logic>>(device_batch, position, first_drop_);
    const View view = self().view(Backend::gpu);
    const Logic logic{};
    const NodeExit exit = take_node_exit(s);
    const GpuLaunchArg args[] = {{&packets, sizeof packets}, {&view, sizeof view}, {&logic, sizeof logic},
                                 {&exit, sizeof exit}};
    gpu::launch(GpuLaunch{kernel, grid, block, 0, s.stream, args, 4});
  }
#endif

 protected:
  uint8_t first_drop() const { return first_drop_; }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  uint8_t first_drop_;
};

}  // namespace gpunfv

#define GPUNFV_PER_PACKET_NF_CONCAT2(a, b) a##b
#define GPUNFV_PER_PACKET_NF_CONCAT(a, b) GPUNFV_PER_PACKET_NF_CONCAT2(a, b)

#if defined(__CUDACC__)
#define GPUNFV_PER_PACKET_NF(type, Class)                                                      \
  GPUNFV_REGISTER_NF(type, Class);                                                             \
  GPUNFV_REGISTER_KERNEL(::gpunfv::per_packet_kernel<Class::ViewType, Class::LogicType>);       \
  [[maybe_unused]] static const bool GPUNFV_PER_PACKET_NF_CONCAT(gpunfv_nf_kernel_, Class) =   \
      (::gpunfv::PerPacketKernel<Class::ViewType, Class::LogicType>::function =                 \
           reinterpret_cast<const void*>(                                                       \
               &::gpunfv::per_packet_kernel<Class::ViewType, Class::LogicType>),                \
       true)
#else
#define GPUNFV_PER_PACKET_NF(type, Class) GPUNFV_REGISTER_NF(type, Class)
#endif
