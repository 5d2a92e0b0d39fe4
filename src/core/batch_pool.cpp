#include "core/batch_pool.h"

namespace gpunfv {

BatchPool::BatchPool(uint32_t batches, uint32_t capacity, uint32_t stride, MemoryKind kind,
                     uint32_t result_stride) {
  all_.reserve(batches);
  for (uint32_t i = 0; i < batches; ++i) {
    all_.push_back(std::make_unique<Batch>(capacity, stride, kind, result_stride));
    free_.push(all_.back().get());
  }
}

std::optional<Batch*> BatchPool::acquire(std::chrono::microseconds timeout) {
  auto b = free_.pop_for(timeout);
  if (b) (*b)->set_count(0);
  return b;
}

void BatchPool::release(Batch* b) { free_.push(b); }

}  // namespace gpunfv
