#include "gpu/device.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv {

bool cuda_device_available() {
#if GPUNFV_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
#else
  return false;
#endif
}

}  // namespace gpunfv
