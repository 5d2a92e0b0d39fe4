// Portability macros: one NF source compiles for the CPU (g++) and the GPU (nvcc).
#pragma once

#if defined(__CUDACC__)
#define GPUNFV_HD __host__ __device__
#define GPUNFV_FORCEINLINE __forceinline__
#define GPUNFV_NOINLINE __noinline__
#else
#define GPUNFV_HD
#define GPUNFV_FORCEINLINE inline __attribute__((always_inline))
#define GPUNFV_NOINLINE __attribute__((noinline))
#endif

// Bounds checks of IsoSpan are on unless GPUNFV_UNCHECKED is defined (measurement builds).
#if defined(GPUNFV_UNCHECKED)
#define GPUNFV_CHECKED 0
#else
#define GPUNFV_CHECKED 1
#endif
