// The streams that launched work over an NF's device tables, per table copy, so a live update
// waits for that work before it rewrites or frees a copy. A stream is forgotten when its owner
// is about to destroy it (a gnet re-plan moving a stage to a new lane: its work is done by
// then), so a wait never synchronizes a destroyed stream; forget_stream() waits for a wait in
// progress, which may be synchronizing that stream, to end first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "gpu/gpu_calls.h"

namespace gpunfv {

class DeviceUsers {
 public:
  // Packet path: `stream` launches over copy `copy` (a router slot, a table version).
  void note(uint64_t copy, cudaStream_t stream) {
    std::lock_guard<std::mutex> lk(m_);
    uses_[copy].insert(stream);
  }

  // Waits for the work the streams that used `copy` have queued so far, and forgets them.
  void wait(uint64_t copy) {
    std::shared_lock<std::shared_mutex> syncing(syncing_);
    std::set<cudaStream_t> streams;
    {
      std::lock_guard<std::mutex> lk(m_);
      auto it = uses_.find(copy);
      if (it == uses_.end()) return;
      streams.swap(it->second);
      uses_.erase(it);
    }
    for (cudaStream_t s : streams) gpu::synchronize(s);
  }

  void forget_stream(cudaStream_t stream) {
    std::unique_lock<std::shared_mutex> syncing(syncing_);
    std::lock_guard<std::mutex> lk(m_);
    for (auto& [copy, streams] : uses_) streams.erase(stream);
  }

  // The run is over: every launch is complete.
  void clear() {
    std::lock_guard<std::mutex> lk(m_);
    uses_.clear();
  }

  size_t streams(uint64_t copy) const {  // tests
    std::lock_guard<std::mutex> lk(m_);
    auto it = uses_.find(copy);
    return it == uses_.end() ? 0 : it->second.size();
  }

 private:
  mutable std::mutex m_;
  std::map<uint64_t, std::set<cudaStream_t>> uses_;
  std::shared_mutex syncing_;  // shared while wait() synchronizes
};

}  // namespace gpunfv
