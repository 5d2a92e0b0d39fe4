// What must not happen while a persistent kernel spins (the GPU ring port's loops): CUDA may
// make a set-up call wait for the device to go idle (allocating device or pinned memory,
// creating streams and events, growing local memory, loading a module), and with a kernel that
// never exits that wait never ends; everything queued behind it stops too. So every such
// resource is made before the ring kernel starts (gpu/device_preflight.h, the GPU
// stage's prepare_for_persistent_kernels), and the places that make them call
// note_cuda_setup(): while a PersistentKernelScope is held, a call is counted and warned about
// once per kind on stderr, so a GPU run names the late call instead of only hanging. The count
// goes into the gpuring feed's summary line (tests expect none).
//
// Streams: the device has CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 unless the process
// asks for more before CUDA starts); streams beyond that share queues, and work queued behind
// the ring kernel in a shared queue waits for it for ever. note_stream_created() and
// note_stream_destroyed() count the library's live streams so the feed can say whether they fit.
//
// Thread-safe; no CUDA call (usable in any build). Errors: none.
#pragma once

#include <cstdint>
#include <string>

namespace gpunfv {

// A persistent kernel runs from construction until release() or destruction.
class PersistentKernelScope {
 public:
  PersistentKernelScope();
  ~PersistentKernelScope() { release(); }
  PersistentKernelScope(const PersistentKernelScope&) = delete;
  PersistentKernelScope& operator=(const PersistentKernelScope&) = delete;
  void release();

 private:
  bool held_ = true;
};

bool persistent_kernel_running();

// Before a CUDA call that sets something up; `what` names it ("cudaMalloc", "cudaEventCreate"...).
void note_cuda_setup(const char* what);

struct LateCudaSetup {
  uint64_t calls = 0;  // set-up calls made while a persistent kernel ran, since the process began
  std::string first;   // what the first of them was
};
LateCudaSetup late_cuda_setup();

void note_stream_created();
void note_stream_destroyed();
uint64_t live_streams();  // made and not yet destroyed

// The hardware queues this process asked for (CUDA_DEVICE_MAX_CONNECTIONS, read when CUDA
// starts; 8 when unset or unreadable).
int cuda_hardware_queues();

}  // namespace gpunfv
