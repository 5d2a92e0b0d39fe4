// DeviceBuffer<T>: owning device memory (cudaMalloc) with an IsoSpan view, in the style of
// cuCollections' owning object + trivially copyable ref.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/iso_span.h"
#include "gpu/cuda_check.h"
#include "gpu/persistent_kernel_guard.h"

namespace gpunfv {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { allocate(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), n_(o.n_) { o.ptr_ = nullptr; o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) { release(); ptr_ = o.ptr_; n_ = o.n_; o.ptr_ = nullptr; o.n_ = 0; }
    return *this;
  }

  void allocate(size_t n) {
    release();
    if (n) {
      note_cuda_setup("cudaMalloc");
      GPUNFV_CUDA(cudaMalloc(&ptr_, n * sizeof(T)));
    }
    n_ = n;
  }
  // Allocates and copies a host vector (tables are uploaded once).
  void upload(const std::vector<T>& host) {
    allocate(host.size());
    if (n_) GPUNFV_CUDA(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  IsoSpan<T> span() const { return IsoSpan<T>(ptr_, n_); }
  T* data() const { return ptr_; }
  size_t size() const { return n_; }

 private:
  void release() {
    if (ptr_) {
      note_cuda_setup("cudaFree");
      cudaFree(ptr_);
    }
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace gpunfv
