// DeviceBuffer<T>: owning device memory (gpu::malloc; in an NF process, the Manager's) with an
// IsoSpan view, in the style of cuCollections' owning object + trivially copyable ref.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/iso_span.h"
#include "gpu/gpu_calls.h"

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
      ptr_ = static_cast<T*>(gpu::malloc(n * sizeof(T)));
    }
    n_ = n;
  }
  // Allocates and copies a host vector (tables are uploaded once).
  void upload(const std::vector<T>& host) {
    allocate(host.size());
    if (n_) gpu::copy_to_device(ptr_, host.data(), n_ * sizeof(T));
  }
  IsoSpan<T> span() const { return IsoSpan<T>(ptr_, n_); }
  T* data() const { return ptr_; }
  size_t size() const { return n_; }

 private:
  void release() {
    gpu::free(ptr_);
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace gpunfv
