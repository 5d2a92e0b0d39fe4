// The device side of device_preflight.h.
#include "gpu/device_preflight.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"

namespace gpunfv {

namespace {

constexpr uint32_t kLocalWords = 64;  // 256 B of local memory per thread
constexpr uint32_t kThreads = 64;
constexpr uint32_t kBlocks = 2;

// Uses what the chain's kernels use and the ring kernel does not: local memory (an array
// indexed at run time), shared memory, printf (behind a flag that is never set: a kernel that
// can print makes CUDA set up its printf buffer) and stores to pinned host memory.
__global__ void preflight_kernel(uint32_t* host_out, uint32_t salt, int print) {
  __shared__ uint32_t shared[kThreads];
  uint32_t local[kLocalWords];
  for (uint32_t i = 0; i < kLocalWords; ++i) local[i] = i * 2654435761u + threadIdx.x + salt;
  shared[threadIdx.x] = local[(threadIdx.x * 7u + salt) % kLocalWords];
  __syncthreads();
  if (print) printf("gpunfv preflight: block %u word %u\n", blockIdx.x, shared[0]);
  if (threadIdx.x == 0) host_out[blockIdx.x] = shared[(salt + 1) % kThreads];
}

}  // namespace

GPUNFV_REGISTER_KERNEL(preflight_kernel);

PreflightReport prepare_device_for_persistent_kernels(cudaStream_t stream) {
  PreflightReport rep;
  for (const KernelEntry& k : registered_kernels()) {
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, k.function);
    if (e != cudaSuccess)
      throw GpuError("device preflight: loading kernel " + k.name + " (" + k.file +
                     ") failed: " + cudaGetErrorString(e));
    rep.max_local_bytes = std::max<size_t>(rep.max_local_bytes, attr.localSizeBytes);
    ++rep.kernels;
  }
  // The stack limit is the primary context's; a green context may not let it be read or set
  // (then stack_limit stays 0 and the sample kernel below still makes its local memory ready).
  size_t stack = 0;
  if (cudaDeviceGetLimit(&stack, cudaLimitStackSize) == cudaSuccess) {
    const size_t need = std::max<size_t>(rep.max_local_bytes, kLocalWords * sizeof(uint32_t));
    if (stack < need && cudaDeviceSetLimit(cudaLimitStackSize, need) != cudaSuccess) (void)cudaGetLastError();
    if (cudaDeviceGetLimit(&rep.stack_limit, cudaLimitStackSize) != cudaSuccess) (void)cudaGetLastError();
  } else {
    (void)cudaGetLastError();
  }

  // Sample work: every kind the chain (gpu_stage.cpp), egress (ring_egress_copy.cu) and the NIC
  // emulator (dma_engine.cpp) issue, once.
  const bool own_stream = stream == nullptr;
  if (own_stream) stream = create_stream();
  constexpr size_t kRow = 256, kRows = 4, kBytes = kRow * kRows;
  uint8_t* dev = nullptr;
  uint8_t* host = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  auto release = [&] {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(dev);
    cudaFreeHost(host);
    if (own_stream) destroy_stream(stream);
  };
  try {
    GPUNFV_CUDA(cudaMalloc(reinterpret_cast<void**>(&dev), kBytes));
    GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host), kBytes, cudaHostAllocDefault));
    start = create_event(cudaEventDefault);
    stop = create_event(cudaEventDefault);
    GPUNFV_CUDA(cudaEventRecord(start, stream));
    GPUNFV_CUDA(cudaMemsetAsync(dev, 0, kBytes, stream));
    GPUNFV_CUDA(cudaMemsetAsync(dev + 4, 0, 128, stream));  // small, unaligned: another path
    GPUNFV_CUDA(cudaMemcpyAsync(dev, host, kBytes, cudaMemcpyHostToDevice, stream));
    GPUNFV_CUDA(cudaMemcpyAsync(host, dev, kBytes, cudaMemcpyDeviceToHost, stream));
    GPUNFV_CUDA(cudaMemcpy2DAsync(dev, kRow, host, kRow, kRow / 2, kRows, cudaMemcpyDefault, stream));
    GPUNFV_CUDA(cudaMemcpy2DAsync(host, kRow, dev, kRow, kRow / 2, kRows, cudaMemcpyDefault, stream));
    preflight_kernel<<<kBlocks, kThreads, 0, stream>>>(reinterpret_cast<uint32_t*>(host), 1, 0);
    GPUNFV_CUDA(cudaGetLastError());
    GPUNFV_CUDA(cudaEventRecord(stop, stream));
    GPUNFV_CUDA(cudaStreamSynchronize(stream));
    float ms = 0;
    GPUNFV_CUDA(cudaEventElapsedTime(&ms, start, stop));
    GPUNFV_CUDA(cudaDeviceSynchronize());
  } catch (...) {
    release();
    throw;
  }
  release();
  return rep;
}

}  // namespace gpunfv
