// The NIC emulator's DMA engine: how it reaches ring memory. On the GPU build it is the GPU's
// copy engine (cudaMemcpyAsync / cudaMemcpyBatchAsync on the emulator's own stream), which is
// what stands in for the NIC's PCIe DMA; in host memory it is memcpy. Copies run in the order
// issued; wait() returns when all have completed.
//
// Errors: GpuError from the CUDA engine when a copy fails; make_cuda_dma_engine throws
// std::runtime_error in a build without CUDA.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace gpunfv::gpuring {

class DmaEngine {
 public:
  virtual ~DmaEngine() = default;
  // dsts[i] <- srcs[i], sizes[i] bytes, for every i (host -> ring memory, or ring -> host).
  virtual void write_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                            std::span<const size_t> sizes) = 0;
  virtual void read_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                           std::span<const size_t> sizes) = 0;
  // `count` 16-byte descriptors into ring memory, each's upper quadword (DD) visible no earlier
  // than its lower one, and after every copy issued before.
  virtual void write_descriptors(void* ring_dst, const void* host_src, size_t count) = 0;
  virtual void read(void* host_dst, const void* ring_src, size_t bytes) = 0;
  virtual void wait() = 0;
  virtual const char* name() const = 0;
  // Staging memory the engine copies from/to fastest (pinned on the GPU build).
  virtual void* alloc_staging(size_t bytes) = 0;
  virtual void free_staging(void* p) = 0;
};

std::unique_ptr<DmaEngine> make_host_dma_engine();
// `batched`: one cudaMemcpyBatchAsync per gather instead of one cudaMemcpyAsync per packet.
std::unique_ptr<DmaEngine> make_cuda_dma_engine(bool batched = true);

}  // namespace gpunfv::gpuring
