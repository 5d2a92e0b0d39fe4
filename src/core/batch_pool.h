// BatchPool: every batch a run uses, allocated once at start; batches circulate between
// ingress, processing and egress and come back here. Nothing is allocated per packet or per
// batch while packets flow.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "core/batch.h"
#include "core/blocking_queue.h"

namespace gpunfv {

class BatchPool {
 public:
  BatchPool(uint32_t batches, uint32_t capacity, uint32_t stride, MemoryKind kind,
            uint32_t result_stride = 0);

  // A free batch (count reset to 0), waiting up to `timeout`; nullopt if none came free.
  std::optional<Batch*> acquire(std::chrono::microseconds timeout);
  void release(Batch* b);

  uint32_t size() const { return static_cast<uint32_t>(all_.size()); }
  // Every batch of the pool, free or not (to prepare per-batch resources up front).
  std::vector<Batch*> batches() const {
    std::vector<Batch*> v;
    for (const auto& b : all_) v.push_back(b.get());
    return v;
  }
  uint32_t available() { return static_cast<uint32_t>(free_.size()); }

 private:
  std::vector<std::unique_ptr<Batch>> all_;
  BlockingQueue<Batch*> free_;
};

}  // namespace gpunfv
