// Batch mode of the GPU ring loops on a GPU: the persistent kernel over device memory, fed by
// the NIC emulator through the copy engine, the test playing the chain from the host (it reads
// each ready batch's slot indices and sequence numbers, writes verdicts, hands it back).
// Every packet and slot accounted for, no reordering within a ring, drops free their slots.
// Skipped where no CUDA device is present (ring_batch_loops_test.cpp runs the same loops on
// CPU threads).
#include <gtest/gtest.h>

#include <chrono>
#include <tuple>
#include <vector>

#include "tests/io/port_test_util.h"
#include "gpu/device.h"
#include "io/discard_port.h"
#include "io/generator_port.h"
#include "io/gpuring/loops/gpu_ring_batch_runner.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "nf/router/router_logic.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv::gpuring {
namespace {

class GpuRingBatchesOnDevice : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t, bool>> {};

TEST_P(GpuRingBatchesOnDevice, EveryPacketAndSlotAccountedFor) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
#if GPUNFV_HAVE_CUDA
  const auto [rings_n, capacity, writeback] = GetParam();
  const uint64_t n = 50000;
  GeneratorPort gen(test::yaml_node("name: gen\ntype: generator\ncount: 50000\nflows: 1024\nsize: 64-1500"),
                    0, PortContext{});
  DiscardPort sink("sink", 1);
  RingParams p;
  p.rings = rings_n;
  p.ring_size = 512;
  p.tail_batch = 8;
  p.tx_writeback = writeback;
  RingSet rings(p, Placement::device);
  RingBatches batches(rings, capacity, 8, 50'000);
  auto dma = make_cuda_dma_engine(true);
  NicEmulatorConfig nc;
  nc.flow_control = true;
  NicEmulator nic(rings, gen, &sink, *dma, nc);
  const RingBatchView bv = batches.view();
  std::vector<uint64_t> next_seq(rings_n), seq(capacity);
  for (uint32_t r = 0; r < rings_n; ++r) next_seq[r] = r;
  std::vector<uint8_t> verdict(capacity);
  uint64_t packets = 0, dropped = 0, out_of_order = 0;
  bool drained = true;
  // Copies go through a stream of their own, each waited for: a cudaMemcpy from pageable memory
  // to the device may return before the data lands, and the tx loop read a stale verdict once
  // (one packet counted as an NF drop the test had not made). Made before the ring kernel runs.
  cudaStream_t copies = nullptr;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking));
  auto copy = [&](void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
    EXPECT_EQ(cudaSuccess, cudaMemcpyAsync(to, from, bytes, kind, copies));
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(copies));
  };
  {
    auto runner = launch_gpu_ring_batch_runner(rings, batches, 0);
    nic.start();
    bool stopped = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    // Serves one ready batch: reads its sequence numbers, writes verdicts, hands it back.
    auto serve_one = [&]() -> bool {
      RingBatches::Ready r;
      if (!batches.take_ready(r)) return false;
      uint8_t* base = batches.batch_base(r);
      copy(seq.data(), base + bv.off_seq, r.count * 8, cudaMemcpyDeviceToHost);
      for (uint32_t i = 0; i < r.count; ++i) {
        out_of_order += seq[i] != next_seq[r.ring];
        next_seq[r.ring] = seq[i] + rings_n;
        verdict[i] = seq[i] % 5 == 0 ? static_cast<uint8_t>(drop_reason(RouterDrop::no_route)) : 0;
        dropped += verdict[i] != 0;
      }
      copy(base + bv.off_verdict, verdict.data(), r.count, cudaMemcpyHostToDevice);
      packets += r.count;
      batches.hand_done(r);
      return true;
    };
    for (;;) {
      if (serve_one()) continue;
      if (!stopped && nic.rx_finished()) {
        rings.request_stop();
        stopped = true;
      }
      bool rx_done = stopped;
      for (uint32_t k = 0; k < rings_n && rx_done; ++k)
        rx_done = __atomic_load_n(&rings.host_done()[k].rx, __ATOMIC_ACQUIRE) != 0;
      // rx publishes its last batch before it sets done: one more look after seeing done.
      if (rx_done && !serve_one()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        drained = false;
        rings.request_abort();
        break;
      }
    }
    EXPECT_TRUE(runner->wait(20)) << rings.describe_registers();
  }
  nic.join();
  cudaStreamDestroy(copies);
  ASSERT_TRUE(drained) << rings.describe_registers();
  EXPECT_EQ(nic.stats().offered, n);
  EXPECT_EQ(packets, n);
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(nic.stats().tx_packets, n - dropped);
  EXPECT_EQ(nic.stats().reordered_in_ring, 0u);
  uint64_t published = 0, batched = 0, returned = 0, queued = 0, nf_drops = 0, bad = 0;
  for (const RingBatchCounters& c : batches.counters()) {
    published += c.published;
    batched += c.packets_batched;
    returned += c.returned;
    queued += c.queued_for_tx;
    nf_drops += c.freed_by_nf_drop;
    bad += c.bad_length;
  }
  EXPECT_EQ(batched, n);
  EXPECT_EQ(returned, published);
  EXPECT_EQ(nf_drops, dropped);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(queued, n - dropped);
  const BatchHoldings h = batches.holdings();
  const SlotAudit a = rings.audit(&h);
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.held_by_batches, 0u);
#endif
}

INSTANTIATE_TEST_SUITE_P(RingsCapacityWriteback, GpuRingBatchesOnDevice,
                         ::testing::Values(std::make_tuple(1u, 256u, true), std::make_tuple(1u, 64u, false),
                                           std::make_tuple(4u, 256u, true), std::make_tuple(8u, 128u, false),
                                           // Capacities around a warp's look (32 packets): a batch
                                           // filled across looks, a look capped at the room left.
                                           std::make_tuple(1u, 1u, true), std::make_tuple(2u, 7u, true),
                                           std::make_tuple(1u, 33u, false)));

}  // namespace
}  // namespace gpunfv::gpuring
