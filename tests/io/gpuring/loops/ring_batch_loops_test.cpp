// Batch mode of the GPU ring loops (ring_batch_loops.h) on CPU threads over host memory, fed
// by the NIC emulator and served by the test playing the chain: every packet accounted for,
// packets named in place through slot_index (no copy), batches in ring order and packets never
// reordered within a ring, NF drops freeing their slots, changed lengths sent, and the slot
// audit holding at exit, also after an abort with batches still out.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "tests/io/port_test_util.h"
#include "tests/io/gpuring/batch_run_util.h"
#include "tests/io/gpuring/ring_test_ports.h"
#include "chain/classify.h"
#include "io/generator_port.h"
#include "io/gpuring/loops/host_ring_batch_runner.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

using ring_test::RecordingPort;

std::unique_ptr<GeneratorPort> generator(uint64_t count) {
  return ring_test::make_generator(count, "64-1500", 64, 7);
}

RingParams params(uint32_t rings, bool writeback) {
  return ring_test::small_rings(rings, writeback);
}

uint16_t ip_id(const uint8_t* f) { return uint16_t(f[18] << 8 | f[19]); }

// What the test's "chain" does to one packet: classify, then drop IP IDs that are multiples
// of 5 (no_route), mark the rest in place and trim 4 bytes off the even ones.
void chain_step(const BatchView& b, uint32_t i) {
  classify_packet(b, i);
  if (b.verdict[i] != 0) return;
  PacketRef p(b, i);
  IsoSpan<uint8_t> f = p.frame();
  if (ip_id(&f[0]) % 5 == 0) {
    b.verdict[i] = static_cast<uint8_t>(drop_reason(RouterDrop::no_route));
    return;
  }
  f[0] = 0xAA;
  if (ip_id(&f[0]) % 2 == 0) p.set_length(p.length() - 4);
}

struct ChainPlayer {
  RingBatches& batches;
  uint64_t batches_seen = 0, packets = 0, out_of_order = 0, max_count = 0;
  std::vector<uint64_t> next_seq;  // per ring
  std::vector<uint8_t> slot_seen;  // a slot named twice in one batch would be a copy bug

  explicit ChainPlayer(RingBatches& b) : batches(b), next_seq(b.view().rings, 0) {
    for (uint32_t r = 0; r < b.view().rings; ++r) next_seq[r] = r;
  }
  // Serves one ready batch; false if none.
  bool serve_one(bool hand_back = true) {
    RingBatches::Ready r;
    if (!batches.take_ready(r)) return false;
    const BatchView b = batches.batch_view(r);
    for (uint32_t i = 0; i < b.count; ++i) {
      if (b.seq[i] != next_seq[r.ring]) ++out_of_order;
      next_seq[r.ring] = b.seq[i] + batches.view().rings;
      chain_step(b, i);
    }
    ++batches_seen;
    packets += b.count;
    max_count = std::max<uint64_t>(max_count, b.count);
    if (hand_back) batches.hand_done(r);
    return true;
  }
};


class GpuRingBatches : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t, bool>> {};

TEST_P(GpuRingBatches, EveryPacketAndSlotAccountedFor) {
  const auto [rings_n, per_ring, writeback] = GetParam();
  const uint64_t n = 12000;
  auto gen = generator(n);
  RecordingPort sink;
  RingSet rings(params(rings_n, writeback), Placement::host);
  RingBatches batches(rings, 64, per_ring, 20'000);
  auto dma = make_host_dma_engine();
  NicEmulatorConfig nc;
  nc.rate_pps = 400'000;
  nc.flow_control = true;  // exact counts on a busy machine
  NicEmulator nic(rings, *gen, &sink, *dma, nc);
  ChainPlayer chain(batches);
  {
    HostRingBatchRunner runner(rings, batches, 3);
    nic.start();
    ring_test::serve_until_drained(rings, nic, chain, 60, false);
    runner.join();
  }
  nic.join();
  const NicStats& s = nic.stats();
  EXPECT_EQ(s.offered, n);
  EXPECT_EQ(s.delivered, n);
  EXPECT_EQ(chain.packets, n);
  EXPECT_EQ(chain.out_of_order, 0u);
  EXPECT_LE(chain.max_count, 64u);
  EXPECT_EQ(s.reordered_in_ring, 0u);
  const std::vector<RingBatchCounters> c = batches.counters();
  uint64_t published = 0, returned = 0, queued = 0, nf_drops = 0, bad = 0;
  for (const auto& k : c) {
    published += k.published;
    returned += k.returned;
    queued += k.queued_for_tx;
    nf_drops += k.freed_by_nf_drop;
    bad += k.bad_length;
  }
  EXPECT_EQ(published, chain.batches_seen);
  EXPECT_EQ(returned, published);
  EXPECT_EQ(nf_drops, n / 5);  // IP IDs 0..n-1
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(queued, n - n / 5);
  EXPECT_EQ(s.tx_packets, n - n / 5);
  ASSERT_EQ(sink.frames.size(), n - n / 5);
  // Sent frames: marked in place, trimmed where the chain trimmed them.
  std::map<uint16_t, size_t> sent_len;
  for (const auto& f : sink.frames) {
    EXPECT_EQ(f[0], 0xAA);
    sent_len[ip_id(f.data())] = f.size();
  }
  auto again = generator(n);
  Batch b(64, 2048, MemoryKind::host);
  uint64_t checked = 0;
  while (!again->rx_done()) {
    b.set_count(0);
    again->rx_burst(b, 64);
    for (uint32_t i = 0; i < b.count(); ++i) {
      const uint16_t id = ip_id(b.view().data.framework_data() + size_t(i) * 2048);
      if (id % 5 == 0) continue;
      EXPECT_EQ(sent_len[id], b.view().len[i] - (id % 2 == 0 ? 4u : 0u)) << id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, n - n / 5);
  const BatchHoldings h = batches.holdings();
  const SlotAudit a = rings.audit(&h);
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.held_by_batches, 0u);
  EXPECT_EQ(a.queued_for_tx + a.in_tx_ring, 0u);
  EXPECT_EQ(a.armed, uint64_t(rings_n) * 256);
}

INSTANTIATE_TEST_SUITE_P(RingsBatchesWriteback, GpuRingBatches,
                         ::testing::Values(std::make_tuple(1u, 4u, true), std::make_tuple(1u, 2u, false),
                                           std::make_tuple(3u, 8u, true), std::make_tuple(4u, 2u, false)));

TEST(GpuRingBatchesAbort, BatchesStillOutAreHeldInTheAudit) {
  // The chain keeps every batch: rx runs out of free batches and leaves packets in the ring;
  // the abort then finds slots in batches, in the ring, and free, each counted once.
  auto gen = generator(1000);
  RingSet rings(params(1, true), Placement::host);
  RingBatches batches(rings, 32, 3, 1'000'000'000);  // batches close only when full
  auto dma = make_host_dma_engine();
  NicEmulatorConfig nc;
  NicEmulator nic(rings, *gen, nullptr, *dma, nc);
  ChainPlayer chain(batches);
  {
    HostRingBatchRunner runner(rings, batches, 0);
    nic.start();
    while (!nic.rx_finished()) std::this_thread::yield();
    while (chain.batches_seen < 3) {
      if (!chain.serve_one(false)) std::this_thread::yield();
    }
    rings.request_abort();
    runner.join();
  }
  nic.join();
  const BatchHoldings h = batches.holdings();
  const SlotAudit a = rings.audit(&h);
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.held_by_batches, 96u);
  EXPECT_EQ(nic.stats().drops_ring_full + nic.stats().delivered, 1000u);
  EXPECT_GT(nic.stats().drops_ring_full, 0u);  // 96 in batches, 255 descriptors: the rest dropped
}

TEST(GpuRingBatchesShape, ABatchLargerThanTheSpareSlotsIsRefused) {
  RingSet rings(params(1, true), Placement::host);  // 768 slots, 256 descriptors
  EXPECT_THROW(RingBatches(rings, 513, 2, 1000), std::invalid_argument);
  EXPECT_NO_THROW(RingBatches(rings, 512, 2, 1000));
}

}  // namespace
}  // namespace gpunfv::gpuring
