// The persistent rx and tx kernels of the GPU ring port (see gpu_ring_runner.h).
#include <chrono>
#include <thread>

#include "gpu/cuda_check.h"
#include "io/gpuring/gpu_ring_runner.h"
#include "io/gpuring/ring_loops.h"

namespace gpunfv::gpuring {

namespace {

template <typename View, typename Fn>
__global__ void rx_rings_kernel(RingSetView v, uint16_t port_id, View nf, Fn fn) {
  if (threadIdx.x == 0) rx_ring_loop(v, blockIdx.x, port_id, nf, fn);
}

__global__ void tx_rings_kernel(RingSetView v) {
  if (threadIdx.x == 0) tx_ring_loop(v, blockIdx.x);
}

class CudaRingRunner final : public GpuRingRunner {
 public:
  CudaRingRunner(RingSet& rings, uint16_t port_id, const NfHook& hook) : rings_(rings) {
    GPUNFV_CUDA(cudaStreamCreateWithFlags(&rx_stream_, cudaStreamNonBlocking));
    GPUNFV_CUDA(cudaStreamCreateWithFlags(&tx_stream_, cudaStreamNonBlocking));
    const RingSetView v = rings.view();
    const unsigned blocks = v.p.rings;
    // tx first: it must be resident before rx can fill the queues it drains.
    tx_rings_kernel<<<blocks, 32, 0, tx_stream_>>>(v);
    GPUNFV_CUDA(cudaGetLastError());
    if (hook.kind == NfHook::Kind::router)
      rx_rings_kernel<<<blocks, 32, 0, rx_stream_>>>(v, port_id, hook.router, RouterLogic{});
    else
      rx_rings_kernel<<<blocks, 32, 0, rx_stream_>>>(v, port_id, PassThroughView{}, PassThrough{});
    GPUNFV_CUDA(cudaGetLastError());
  }
  ~CudaRingRunner() override {
    if (!finished_) {
      rings_.request_stop();
      wait(5.0);
    }
    cudaStreamDestroy(rx_stream_);
    cudaStreamDestroy(tx_stream_);
  }

  void request_stop() override { rings_.request_stop(); }

  bool wait(double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const cudaError_t rx = cudaStreamQuery(rx_stream_), tx = cudaStreamQuery(tx_stream_);
      if (rx != cudaSuccess && rx != cudaErrorNotReady) GPUNFV_CUDA(rx);
      if (tx != cudaSuccess && tx != cudaErrorNotReady) GPUNFV_CUDA(tx);
      if (rx == cudaSuccess && tx == cudaSuccess) {
        finished_ = true;
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  RingSet& rings_;
  cudaStream_t rx_stream_ = nullptr, tx_stream_ = nullptr;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet& rings, uint16_t port_id,
                                                      const NfHook& hook) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring runner needs rings in device memory");
  return std::make_unique<CudaRingRunner>(rings, port_id, hook);
}

}  // namespace gpunfv::gpuring
