#include "gpuring_bench/staged_path.h"

#include "chain/classify.h"
#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"
#include "chain/ring_nf_hook.h"
#include "nf/run_per_packet.h"

namespace gpunfv::gpuring {

namespace {

template <typename View, typename Fn>
__global__ void staged_kernel(BatchView b, View nf, Fn fn, uint8_t first_drop) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x) {
    classify_packet(b, i);
    step_packet(b, i, 0, nf, fn, first_drop);
  }
}

class CudaStagedPath final : public StagedPath {
 public:
  CudaStagedPath(uint32_t capacity, uint32_t stride, const NfHook& hook)
      : layout_(BatchLayout::make(capacity, stride)), hook_(hook) {
    stream_ = create_stream();
    GPUNFV_CUDA(cudaMalloc(&device_, layout_.bytes));
  }
  ~CudaStagedPath() override {
    cudaFree(device_);
    destroy_stream(stream_);
  }

  void process(Batch& b) override {
    const uint32_t n = b.count();
    if (n == 0) return;
    const size_t bytes = layout_.device_prefix_bytes(n);
    GPUNFV_CUDA(cudaMemcpyAsync(device_, b.base(), bytes, cudaMemcpyHostToDevice, stream_));
    const BatchView dv = layout_.view(device_, n);
    const unsigned blocks = (n + 255) / 256;
    if (hook_.kind == NfHook::Kind::router)
      staged_kernel<<<blocks, 256, 0, stream_>>>(dv, hook_.router, RouterLogic{},
                                                first_drop_code<RouterDrop>());
    else
      staged_kernel<<<blocks, 256, 0, stream_>>>(dv, PassThroughView{}, PassThrough{}, 0);
    GPUNFV_CUDA(cudaGetLastError());
    GPUNFV_CUDA(cudaMemcpyAsync(b.base(), device_, bytes, cudaMemcpyDeviceToHost, stream_));
    GPUNFV_CUDA(cudaStreamSynchronize(stream_));
  }

 private:
  BatchLayout layout_;
  NfHook hook_;
  cudaStream_t stream_ = nullptr;
  uint8_t* device_ = nullptr;
};

}  // namespace

std::unique_ptr<StagedPath> make_staged_path(uint32_t capacity, uint32_t stride, const NfHook& hook) {
  return std::make_unique<CudaStagedPath>(capacity, stride, hook);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(staged_kernel<RouterView, RouterLogic>);
GPUNFV_REGISTER_KERNEL(staged_kernel<PassThroughView, PassThrough>);

}  // namespace gpunfv::gpuring
