// The sampled integrity checksum (sampled_integrity.h) over frames in device memory, one
// thread per frame: what the GPU ring forward (GPU ring port issue) computes at rx and verifies
// at tx without the host. The same __host__ __device__ function as the host forwarder, so
// both sides agree bit for bit (tests/io/forward/sampled_integrity_test.cpp on a GPU).
#pragma once

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstdint>

namespace gpunfv {

// out[i] = sampled_integrity(frames + i * stride, len[i]) for i < n; all pointers in device
// memory. Asynchronous on `stream`.
void sampled_integrity_gpu(const uint8_t* frames, uint32_t stride, const uint16_t* len,
                           uint32_t n, uint32_t* out, cudaStream_t stream);

}  // namespace gpunfv
#endif
