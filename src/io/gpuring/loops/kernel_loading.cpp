#include "io/gpuring/loops/kernel_loading.h"

#include <cstdlib>
#include <string>

#if GPUNFV_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

namespace gpunfv::gpuring {

void request_persistent_kernel_environment() {
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(kHardwareQueuesWanted).c_str(), /*overwrite=*/0);
}

bool cuda_loads_kernels_lazily() {
#if GPUNFV_HAVE_CUDA
  if (cudaFree(nullptr) != cudaSuccess) {  // initialises the runtime and the primary context
    cudaGetLastError();
    return false;
  }
  using GetMode = CUresult (*)(CUmoduleLoadingMode*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn) {
    cudaGetLastError();
    return false;
  }
  CUmoduleLoadingMode mode{};
  if (reinterpret_cast<GetMode>(fn)(&mode) != CUDA_SUCCESS) return false;
  return mode == CU_MODULE_LAZY_LOADING;
#else
  return false;
#endif
}

}  // namespace gpunfv::gpuring
