#include "core/host_memory.h"

#include "gpu/device.h"
#include "gpu/persistent_kernel_guard.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv {

void* host_alloc_pinned(size_t bytes) {
#if GPUNFV_HAVE_CUDA
  note_cuda_setup("cudaHostAlloc");
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess) return p;
  cudaGetLastError();  // clear the sticky error of a machine without a device
#endif
  (void)bytes;
  return nullptr;
}

bool host_register_pinned(void* p, size_t bytes) {
#if GPUNFV_HAVE_CUDA
  if (!cuda_device_available()) return false;
  note_cuda_setup("cudaHostRegister");
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped) == cudaSuccess)
    return true;
  cudaGetLastError();
#endif
  (void)p;
  (void)bytes;
  return false;
}

void host_free_pinned(void* p) {
#if GPUNFV_HAVE_CUDA
  if (!p) return;
  note_cuda_setup("cudaFreeHost");
  cudaFreeHost(p);
#else
  (void)p;
#endif
}

}  // namespace gpunfv
