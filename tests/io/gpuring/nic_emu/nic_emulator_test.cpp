// The pipelined NIC emulator on CPU threads over host memory (the memcpy engine), against the
// ring loops: coalesced and per-frame copies, one or several steps in flight, deliver the same
// frames with the same counts; coalescing merges runs of adjacent slots into one copy; the
// latency breakdown covers every sent frame and adds up to its latency. On a GPU (skipped
// without one): the copy engine's pitched copies and tickets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "tests/io/port_test_util.h"
#include "tests/io/gpuring/ring_test_ports.h"
#include "gpu/device.h"
#include "io/generator_port.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/ring_session.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

using ring_test::RecordingPort;

std::unique_ptr<GeneratorPort> generator(uint64_t count, const std::string& size) {
  return ring_test::make_generator(count, size, 256, 5);
}

RingParams params(uint32_t rings) { return ring_test::small_rings(rings); }

using ring_test::ip_id;

std::map<uint16_t, std::vector<uint8_t>> generated(uint64_t count, const std::string& size) {
  return ring_test::frames_by_ip_id(*generator(count, size));
}

// (coalesce, inflight, rings, chain_tx): with chain_tx the engine (memcpy here) fetches a tx
// step's descriptors and copies its frames in one step, one copy per frame, whatever coalesce.
class NicEmulatorCopies : public ::testing::TestWithParam<std::tuple<bool, uint32_t, uint32_t, bool>> {};

TEST_P(NicEmulatorCopies, DeliverEveryFrameUnchangedWhateverTheCopyPattern) {
  const auto [coalesce, inflight, rings, chain_tx] = GetParam();
  constexpr uint64_t kPackets = 6000;
  auto gen = generator(kPackets, "64-1500");
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.flow_control = true;  // exact counts on a busy test machine
  nic.coalesce = coalesce;
  nic.chain_tx = chain_tx;
  nic.inflight = inflight;
  nic.phase_timing = true;
  nic.tx_burst = 16;
  RingSession s(params(rings), Placement::host, *gen, &sink, nic);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const RingRunReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.offered, kPackets);
  ASSERT_EQ(sink.frames.size(), kPackets);
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  if (rings == 1) {
    EXPECT_EQ(r.nic.reordered, 0u);
  }
  auto expected = generated(kPackets, "64-1500");
  size_t same = 0;
  for (const auto& f : sink.frames) same += expected.count(ip_id(f)) && expected[ip_id(f)] == f;
  EXPECT_EQ(same, kPackets);
  EXPECT_EQ(r.nic.phases.rx_frames, kPackets);
  EXPECT_EQ(r.nic.phases.tx_frames, kPackets);
  EXPECT_GE(r.nic.phases.tx_steps, kPackets / 16);  // at most tx_burst frames per tx step
  if (coalesce) {
    // The first steps fill descriptors armed with adjacent slots: runs, so fewer copies.
    EXPECT_LT(r.nic.phases.rx_data_copies, kPackets);
  } else {
    EXPECT_EQ(r.nic.phases.rx_data_copies, kPackets);
  }
  if (coalesce && !chain_tx) {
    EXPECT_LT(r.nic.phases.tx_data_copies, kPackets);
  } else {
    EXPECT_EQ(r.nic.phases.tx_data_copies, kPackets);
  }
  // A chained step is one fetch covering descriptors and frames: no separate copy step.
  if (chain_tx) {
    EXPECT_EQ(r.nic.phases.tx_desc_fetches, r.nic.phases.tx_steps);
  }
  EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
}

INSTANTIATE_TEST_SUITE_P(CoalesceInflightRings, NicEmulatorCopies,
                         ::testing::Values(std::make_tuple(true, 4u, 1u, false), std::make_tuple(false, 4u, 1u, false),
                                           std::make_tuple(true, 1u, 1u, false), std::make_tuple(true, 4u, 3u, false),
                                           std::make_tuple(false, 1u, 3u, false), std::make_tuple(true, 4u, 1u, true),
                                           std::make_tuple(false, 1u, 3u, true), std::make_tuple(true, 4u, 3u, true)));

TEST(NicEmulatorBreakdown, CoversEverySentFrameAndAddsUpToItsLatency) {
  constexpr uint64_t kPackets = 5000;
  auto gen = generator(kPackets, "64-1500");
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.rate_pps = 300'000;
  nic.flow_control = true;
  nic.latency_breakdown = true;
  nic.max_latency_samples = kPackets;
  RingSession s(params(2), Placement::host, *gen, &sink, nic);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const RingRunReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  const NicLatencyBreakdown& b = r.nic.breakdown;
  ASSERT_EQ(r.nic.latency_ns.size(), kPackets);
  ASSERT_EQ(b.rx_dma_ns.size(), kPackets);
  ASSERT_EQ(b.gpu_ns.size(), kPackets);
  ASSERT_EQ(b.tx_dma_ns.size(), kPackets);
  uint64_t parts = 0, total = 0;
  for (size_t i = 0; i < kPackets; ++i) parts += uint64_t(b.rx_dma_ns[i]) + b.gpu_ns[i] + b.tx_dma_ns[i];
  for (uint32_t v : r.nic.latency_ns) total += v;
  EXPECT_EQ(parts, total);
  // The ring loops did take time: the GPU side's share is not empty.
  EXPECT_GT(std::accumulate(b.gpu_ns.begin(), b.gpu_ns.end(), uint64_t(0)), 0u);
}

TEST(NicEmulatorBreakdown, OffByDefaultAndNotRecordedForDroppedFrames) {
  auto gen = generator(1000, "64");
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.flow_control = true;
  RingSession s(params(1), Placement::host, *gen, &sink, nic);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const RingRunReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_TRUE(r.nic.breakdown.rx_dma_ns.empty());
  EXPECT_EQ(r.nic.latency_ns.size(), 1000u);
}

TEST(HostDmaEngine, RowsAndTickets) {
  auto e = make_host_dma_engine();
  std::vector<uint8_t> src(4 * 100), dst(4 * 128, 0xEE);
  std::iota(src.begin(), src.end(), uint8_t(1));
  e->copy_rows(dst.data(), 128, src.data(), 100, 60, 4);
  for (size_t row = 0; row < 4; ++row) {
    EXPECT_EQ(std::memcmp(dst.data() + row * 128, src.data() + row * 100, 60), 0) << row;
    EXPECT_EQ(dst[row * 128 + 60], 0xEE) << "wrote past the row's width";
  }
  const uint64_t a = e->mark(), b = e->mark();
  EXPECT_LT(a, b);
  EXPECT_TRUE(e->reached(b));
  auto peer = e->make_peer();
  EXPECT_STREQ(peer->name(), e->name());
}

#if GPUNFV_HAVE_CUDA
// A GPU DMA engine: copies of rows into device memory and back (narrow rows leave the gaps
// alone; wide ones may move them), tickets reached in order, more marks than the copy engine's
// event pool, and a peer on its own queue. Both engines are parked before memory is freed.
void rows_round_trip(DmaEngine& e, DmaEngine& peer, std::initializer_list<size_t> widths) {
  constexpr size_t kRows = 64, kPitch = 2048;
  auto* host = static_cast<uint8_t*>(e.alloc_staging(kRows * kPitch));
  auto* back = static_cast<uint8_t*>(peer.alloc_staging(kRows * kPitch));
  for (size_t i = 0; i < kRows * kPitch; ++i) host[i] = uint8_t(i * 7 + 3);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, kRows * kPitch), cudaSuccess);
  for (size_t width : widths) {
    e.park();
    peer.park();
    std::memset(back, 0, kRows * kPitch);
    ASSERT_EQ(cudaMemset(dev, 0, kRows * kPitch), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    e.copy_rows(dev, kPitch, host, kPitch, width, kRows);
    const uint64_t in = e.mark();
    e.wait_for(in);
    EXPECT_TRUE(e.reached(in));
    peer.copy_rows(back, kPitch, dev, kPitch, width, kRows);
    uint64_t last = 0;
    for (int i = 0; i < 300; ++i) last = peer.mark();  // more than the event pool: mark() recycles
    peer.wait_for(last);
    for (size_t row = 0; row < kRows; ++row) {
      ASSERT_EQ(std::memcmp(back + row * kPitch, host + row * kPitch, width), 0) << width << " B, row " << row;
      if (width < kPitch / 2) {
        ASSERT_EQ(back[row * kPitch + width], 0) << width << " B: a narrow copy moved a gap";
      }
    }
  }
  e.park();
  peer.park();
  cudaFree(dev);
  e.free_staging(host);
  peer.free_staging(back);
}

TEST(CudaDmaEngine, RowsRoundTripAndTicketsInOrder) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto e = make_cuda_dma_engine(true);
  auto peer = e->make_peer();
  rows_round_trip(*e, *peer, {64, 1500});
}

// GPU threads as the engine (dma: sm): the same round trip, with widths that leave a tail of
// single bytes; a copy from an address off 16-byte alignment; a gather; a synchronous read; and
// descriptor write-backs that land whole. Parking ends the kernel; the next copy starts it again.
TEST(SmDmaEngine, RowsGathersDescriptorsAndPark) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto e = make_device_dma_engine(NicDma::sm);
  auto peer = e->make_peer();
  EXPECT_STRNE(e->name(), make_cuda_dma_engine(true)->name());
  rows_round_trip(*e, *peer, {64, 61, 1500, 1514});

  constexpr size_t kBytes = 8192;
  auto* host = static_cast<uint8_t*>(e->alloc_staging(kBytes));
  auto* back = static_cast<uint8_t*>(e->alloc_staging(kBytes));
  for (size_t i = 0; i < kBytes; ++i) host[i] = uint8_t(i * 13 + 1);
  void* dev_v = nullptr;
  ASSERT_EQ(cudaMalloc(&dev_v, kBytes), cudaSuccess);
  auto* dev = static_cast<uint8_t*>(dev_v);
  // Off alignment: 1000 bytes from host + 3 to dev + 5.
  e->copy_rows(dev + 5, 1000, host + 3, 1000, 1000, 1);
  // A gather of three pieces.
  void* dsts[] = {dev + 2048, dev + 4096, dev + 6000};
  const void* srcs[] = {host + 2048, host + 4096, host + 6000};
  const size_t sizes[] = {64, 1500, 100};
  e->write_gather(dsts, srcs, sizes);
  // Descriptors: 40 write-backs of 16 bytes.
  auto* wb = static_cast<RxDesc*>(e->alloc_staging(sizeof(RxDesc) * 40));
  for (uint32_t d = 0; d < 40; ++d) {
    wb[d].qword[0] = 0x1111'0000'0000'0000ull | d;
    wb[d].qword[1] = rx_upper(kRxStatusDD | kRxStatusEOP, uint16_t(60 + d), 0);
  }
  e->write_descriptors(dev + 7168, wb, 40);
  e->read(back, dev, kBytes);  // synchronous: every copy before it completed too
  EXPECT_EQ(std::memcmp(back + 5, host + 3, 1000), 0);
  EXPECT_EQ(std::memcmp(back + 2048, host + 2048, 64), 0);
  EXPECT_EQ(std::memcmp(back + 4096, host + 4096, 1500), 0);
  EXPECT_EQ(std::memcmp(back + 6000, host + 6000, 100), 0);
  EXPECT_EQ(std::memcmp(back + 7168, wb, sizeof(RxDesc) * 40), 0);
  // Host memory the block cannot reach: refused, not a kernel fault. A small copy from it rides
  // inline and works.
  std::vector<uint8_t> unpinned(8192, 0x5C);
  EXPECT_THROW(e->copy_rows(unpinned.data(), 64, dev, 64, 64, 1), std::invalid_argument);
  EXPECT_THROW(e->copy_rows(dev, 4096, unpinned.data(), 4096, 4096, 1), std::invalid_argument);
  e->copy_rows(dev + 2048, 64, unpinned.data(), 64, 64, 1);
  e->read(back, dev + 2048, 64);
  EXPECT_EQ(back[0], 0x5C);
  EXPECT_EQ(back[63], 0x5C);
  e->copy_rows(dev + 2048, 64, host + 2048, 64, 64, 1);  // as it was, for the relaunch check below
  e->park();
  e->park();  // parking a parked engine is a no-op
  std::memset(back, 0, 64);
  e->copy_rows(back, 64, dev + 2048, 64, 64, 1);  // starts the kernel again
  e->wait();
  EXPECT_EQ(std::memcmp(back, host + 2048, 64), 0);
  e->park();
  peer->park();
  cudaFree(dev_v);
  e->free_staging(wb);
  e->free_staging(host);
  e->free_staging(back);
}
#endif

}  // namespace
}  // namespace gpunfv::gpuring
