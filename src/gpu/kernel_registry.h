// KernelRegistry: every __global__ kernel of the library, registered by the .cu file that
// defines or instantiates it (GPUNFV_REGISTER_KERNEL next to the kernel). Work that must not
// set anything up once a persistent kernel spins (gpu/device_preflight.h) loads them all
// beforehand and sizes local memory for the largest; tests/gpu/kernel_registry_test.cpp checks,
// on the host, that no kernel in src/ was left out, so a new kernel cannot silently be loaded
// for the first time beside the ring kernel.
//
// Registration runs at static initialisation and makes no CUDA call (it holds the kernel's
// host stub address), so the registry is complete in a build with CUDA even where no device is
// present. Errors: none.
#pragma once

#include <string>
#include <vector>

namespace gpunfv {

struct KernelEntry {
  std::string name;      // as written at registration, e.g. "per_packet_kernel<RouterView, RouterLogic>"
  const void* function;  // the kernel, as cudaFuncGetAttributes / cudaLaunchKernel take it
  std::string file;      // the registering source file, from "src/" on (e.g. "src/nf/router/router.cu")
};

void register_kernel(const char* name, const void* function, const char* file);
// A copy of the registry, in registration order.
std::vector<KernelEntry> registered_kernels();

}  // namespace gpunfv

#define GPUNFV_KERNEL_REG_CONCAT2(a, b) a##b
#define GPUNFV_KERNEL_REG_CONCAT(a, b) GPUNFV_KERNEL_REG_CONCAT2(a, b)
// GPUNFV_REGISTER_KERNEL(kernel) or GPUNFV_REGISTER_KERNEL(kernel<A, B>), at namespace scope in
// the .cu file that defines or instantiates the kernel.
#define GPUNFV_REGISTER_KERNEL(...)                                                        \
  static const bool GPUNFV_KERNEL_REG_CONCAT(gpunfv_kernel_registered_, __COUNTER__) =    \
      (::gpunfv::register_kernel(#__VA_ARGS__, reinterpret_cast<const void*>(&__VA_ARGS__), \
                                 __FILE__),                                                \
       true)
