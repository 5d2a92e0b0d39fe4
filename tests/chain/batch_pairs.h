// GPU tests that run a whole input through the CPU backend and through the GPU stage with many
// batches in flight at once, then compare them packet by packet.
#pragma once
#if GPUNFV_HAVE_CUDA

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/processing_stage.h"
#include "core/batch.h"
#include "io/port.h"
#include "tests/fixtures/gpu_equals_cpu.h"

namespace gpunfv::testing {

struct BatchPairs {
  std::vector<std::unique_ptr<Batch>> cpu, gpu;  // the same packets: host, and pinned for the GPU
};

// Reads `port` to its end in batches of shape.capacity, numbered as the executor numbers them
// (seq per packet, batch_seq per batch).
inline BatchPairs read_batch_pairs(Port& port, const BatchShape& shape) {
  BatchPairs p;
  uint64_t seq = 0;
  while (!port.rx_done()) {
    auto c = std::make_unique<Batch>(shape.capacity, shape.stride, MemoryKind::host, shape.result_stride);
    while (c->count() < shape.capacity && !port.rx_done()) port.rx_burst(*c, shape.capacity - c->count());
    if (c->count() == 0) break;
    BatchView v = c->view();
    for (uint32_t i = 0; i < v.count; ++i) v.seq[i] = seq++;
    auto g = std::make_unique<Batch>(shape.capacity, shape.stride, MemoryKind::host_pinned,
                                     shape.result_stride);
    std::memcpy(g->base(), c->base(), c->layout().bytes);
    g->set_count(c->count());
    g->batch_seq = c->batch_seq = p.cpu.size();
    p.cpu.push_back(std::move(c));
    p.gpu.push_back(std::move(g));
  }
  return p;
}

// Submits every batch to the started-here stage at once and waits for all of them.
inline void run_all_on_stage(ProcessingStage& stage, std::vector<std::unique_ptr<Batch>>& batches) {
  std::mutex m;
  std::condition_variable cv;
  size_t finished = 0;
  stage.start([&](Batch*) {
    std::lock_guard<std::mutex> lk(m);
    ++finished;
    cv.notify_one();
  });
  for (auto& b : batches) stage.submit(b.get());
  {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return finished == batches.size(); });
  }
  stage.stop();
}

// Every pair equal (fixtures::expect_batches_equal); the packets compared, up to the first
// difference.
inline uint64_t expect_pairs_equal(const BatchPairs& p) {
  uint64_t compared = 0;
  for (size_t k = 0; k < p.cpu.size(); ++k) {
    compared += fixtures::expect_batches_equal(*p.cpu[k], *p.gpu[k], compared);
    if (::testing::Test::HasFailure()) break;
  }
  return compared;
}

}  // namespace gpunfv::testing

#endif  // GPUNFV_HAVE_CUDA
