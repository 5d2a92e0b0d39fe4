// CUDA error checks: a failed CUDA call throws GpuError naming the call and the place.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gpunfv {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw GpuError(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                   cudaGetErrorString(e));
}

}  // namespace gpunfv

#define GPUNFV_CUDA(call) ::gpunfv::cuda_check((call), #call, __FILE__, __LINE__)
