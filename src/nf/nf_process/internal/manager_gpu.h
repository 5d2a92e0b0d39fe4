// The Manager's side of one NF process's GPU calls (internal/manager_calls.h): it performs them in
// its own context, on streams and memory the process may use: memory, streams and events it
// asked for, and the streams and events requests handed it (the lane a batch runs on). It
// launches registered kernels only (gpu/kernel_registry.h), with the parameter sizes the kernel
// declares. What it made for the process goes with it (the process was lost, or the run ended).
//
// What it cannot check: device pointers inside a kernel's arguments are the NF's own (isoPointer
// bounds its kernels' accesses to the views it passes).
//
// Errors: a call outside what the process may use, or a CUDA error, throws GpuError.
#pragma once

#if GPUNFV_HAVE_CUDA

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpu/stream.h"
#include "nf/nf_process/internal/manager_calls.h"

namespace gpunfv::nf_process {

class ManagerGpu {
 public:
  ManagerGpu() = default;
  ~ManagerGpu();
  ManagerGpu(const ManagerGpu&) = delete;
  ManagerGpu& operator=(const ManagerGpu&) = delete;

  // A request hands the process the batch's stream (and its lane's aux stream and event).
  void hand(const GpuStream& s);
  // A lane's stream is about to be destroyed: the process may no longer use it.
  void take_back(cudaStream_t s);

  // One GPU call (not drop_reasons) of a message, whose calls are performed in order; its
  // answer (empty for one that is not answered).
  std::string perform_one(const CallHead& h, std::string_view payload);

  size_t allocations() const;  // tests

 private:
  void launch(std::string_view payload);
  const void* kernel(std::string_view name, std::string_view file);
  const std::vector<uint32_t>& parameters(const void* kernel);
  void check_device_range(uint64_t p, uint64_t bytes) const;  // m_ held
  cudaStream_t stream(uint64_t s) const;                       // m_ held
  cudaEvent_t event(uint64_t e) const;                         // m_ held

  mutable std::mutex m_;
  std::map<uint64_t, uint64_t> memory_;  // base -> bytes
  std::set<uint64_t> own_streams_, own_events_;
  std::map<uint64_t, GpuStream> handed_;  // by stream
  std::set<uint64_t> handed_streams_, handed_events_;
  std::unordered_map<std::string, const void*> kernels_;  // name '\n' file
  std::unordered_map<const void*, std::vector<uint32_t>> params_;  // node-based: references stay
};

}  // namespace gpunfv::nf_process

#endif  // GPUNFV_HAVE_CUDA
