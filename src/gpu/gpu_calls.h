// The calls NF code makes to the GPU: memory, copies, kernel launches, streams and events. In
// the Manager (every process that is not an NF process) they are the CUDA runtime's. In an NF
// process on the GPU backend (nf/nf_process/) a GpuCallSink sends them to the Manager, which
// performs them in its one context (G-NET's API remoting): the NF process has no GPU of its own.
// NF code therefore never calls the CUDA runtime itself; framework code may.
//
// Errors: a failed call throws GpuError (gpu/cuda_check.h), in an NF process with the Manager's
// reason. A launch's kernel must be registered (gpu/kernel_registry.h): an NF process names it
// by its registration, and the Manager launches only registered kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpu/cuda_check.h"

namespace gpunfv {

// One kernel parameter as launched: its bytes and its size.
struct GpuLaunchArg {
  const void* data;
  uint32_t bytes;
};

struct GpuLaunch {
  const void* kernel;  // the kernel's host stub, as cudaLaunchKernel takes it
  dim3 grid, block;
  size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
  const GpuLaunchArg* args = nullptr;
  uint32_t arg_count = 0;
};

// Where an NF process's GPU calls go. Set once, before its NFs prepare.
class GpuCallSink {
 public:
  virtual ~GpuCallSink() = default;
  virtual void* malloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  // stream nullptr: returns once the bytes are on the device; else ordered on `stream`, and
  // `src` may be reused at once.
  virtual void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void launch(const GpuLaunch& l) = 0;
  virtual cudaStream_t create_stream() = 0;
  virtual void destroy_stream(cudaStream_t s) = 0;
  virtual cudaEvent_t create_event(unsigned flags) = 0;
  virtual void destroy_event(cudaEvent_t e) = 0;
  virtual void record_event(cudaEvent_t e, cudaStream_t s) = 0;
  virtual void wait_event(cudaStream_t s, cudaEvent_t e) = 0;
  virtual void synchronize(cudaStream_t s) = 0;
  virtual void synchronize_device() = 0;
  virtual void set_max_dynamic_shared(const void* kernel, int bytes) = 0;
  virtual int max_shared_per_block_optin() = 0;
};

void set_gpu_call_sink(GpuCallSink* sink);
GpuCallSink* gpu_call_sink();  // nullptr: the CUDA runtime

namespace gpu {

void* malloc(size_t bytes);
void free(void* p);
void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream = nullptr);
void copy_to_host(void* dst, const void* src, size_t bytes);
void launch(const GpuLaunch& l);
cudaStream_t create_stream();  // non-blocking (gpu/stream.h)
void destroy_stream(cudaStream_t s);
cudaEvent_t create_event(unsigned flags);
void destroy_event(cudaEvent_t e);
// Recorded into a CUDA graph, both stay event nodes that order the graph's launches after
// work outside it (cudaEventRecordExternal, cudaEventWaitExternal).
void record_event(cudaEvent_t e, cudaStream_t s);
void wait_event(cudaStream_t s, cudaEvent_t e);
void synchronize(cudaStream_t s);
void synchronize_device();  // every stream of every context (SM partitions included)
void set_max_dynamic_shared(const void* kernel, int bytes);
// cudaDevAttrMaxSharedMemoryPerBlockOptin of the current device.
int max_shared_per_block_optin();

// kernel<<<grid, block, shared_bytes, stream>>>(args...), the arguments converted to the
// kernel's parameter types as <<<>>> converts them.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "a kernel launch with the wrong arguments");
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... p) {
        const GpuLaunchArg list[] = {GpuLaunchArg{&p, uint32_t(sizeof p)}..., GpuLaunchArg{nullptr, 0}};
        launch(GpuLaunch{reinterpret_cast<const void*>(kernel), grid, block, shared_bytes, stream,
                         list, uint32_t(sizeof...(Params))});
      },
      params);
}

}  // namespace gpu
}  // namespace gpunfv
