// What crosses PCIe for a GPU ring's device-resident batch (chain/ring_batch_transfer.h): the
// download after the chain holds every metadata array the host reads and no packet byte; egress
// copies the frames of exactly the packets it sends to host ports or an NF's collect() reads;
// the verdicts go back. And the configurations of a gpuring-fed chain each backend refuses.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "chain/gpuring_feed.h"
#include "chain/ring_batch_transfer.h"
#include "config/config.h"
#include "core/error.h"
#include "gpu/persistent_kernel_guard.h"
#include "io/gpuring/gpuring_port.h"
#include "tests/chain/chain_test_util.h"
#include "nf/router/router_logic.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

bool covered(const std::array<ByteRange, 2>& ranges, size_t off, size_t bytes) {
  for (const ByteRange& r : ranges)
    if (off >= r.offset && off + bytes <= r.offset + r.bytes) return true;
  return false;
}

bool touches(const std::array<ByteRange, 2>& ranges, size_t off, size_t bytes) {
  for (const ByteRange& r : ranges)
    if (off < r.offset + r.bytes && r.offset < off + bytes) return true;
  return false;
}

TEST(RingBatchTransfer, DownloadHoldsEveryMetadataArrayAndNoPacketByte) {
  for (uint32_t capacity : {1u, 32u, 256u, 1000u, 2048u})
    for (uint32_t result_stride : {0u, 4u, 52u}) {
      // The ring batches' layout: the data area is unused (packets lie in ring slots).
      const BatchLayout l = BatchLayout::make(capacity, 64, result_stride);
      const auto ranges = metadata_download_ranges(l);
      const size_t cap = capacity;
      struct Array {
        const char* name;
        size_t off, bytes;
      } arrays[] = {
          {"len", l.off_len, cap * 2},         {"port", l.off_port, cap * 2},
          {"out_port", l.off_out_port, cap * 2}, {"next_nf", l.off_next_nf, cap},
          {"visited", l.off_visited, cap * 4},   {"node_packets", l.off_node_packets, kMaxChainNodes * 4},
          {"verdict", l.off_verdict, cap},       {"headers", l.off_headers, cap * sizeof(PacketHeaders)},
          {"flow_hash", l.off_flow_hash, cap * 4}, {"results", l.off_results, cap * result_stride},
          {"seq", l.off_seq, cap * 8},           {"rx_ns", l.off_rx_ns, cap * 8},
          {"wire_ns", l.off_wire_ns, cap * 8},
      };
      for (const Array& a : arrays)
        EXPECT_TRUE(covered(ranges, a.off, a.bytes)) << a.name << " capacity " << capacity;
      EXPECT_FALSE(touches(ranges, l.off_data, cap * l.stride)) << "capacity " << capacity;
      for (const ByteRange& r : ranges) EXPECT_LE(r.offset + r.bytes, l.bytes);
      EXPECT_EQ(metadata_download_bytes(l) + (l.off_seq - l.off_data), l.bytes);
      // A host batch of 2048-byte slots moves its prefix with the packets; the ring batch's
      // metadata is a small part of that.
      const BatchLayout host = BatchLayout::make(capacity, 2048, result_stride);
      EXPECT_LT(metadata_download_bytes(l), host.device_prefix_bytes(capacity));
    }
}

TEST(RingBatchTransfer, VerdictsGoBackForTheBatchsPackets) {
  const BatchLayout l = BatchLayout::make(256, 64, 8);
  const ByteRange v = verdict_upload_range(l, 100);
  EXPECT_EQ(v.offset, l.off_verdict);
  EXPECT_EQ(v.bytes, 100u);
}

TEST(RingBatchTransfer, FramesNeededOnHostAreThoseOfHostPortsAndFrameReadingNfs) {
  Batch b(16, 64, MemoryKind::host);
  b.set_count(9);
  BatchView v = b.view();
  const uint16_t ring = 0, p1 = 1, p2 = 2;
  const auto drop = static_cast<uint8_t>(drop_reason(RouterDrop::no_route));
  struct P {
    uint16_t out_port;
    uint8_t verdict;
    uint32_t visited;
  } packets[] = {
      {p1, 0, 0b01},         // 0: to a host port
      {ring, 0, 0b01},       // 1: back to the ring: stays in its slot
      {kNoPort, 0, 0b01},    // 2: chain.to (set below)
      {p2, drop, 0b01},      // 3: dropped
      {ring, 0, 0b11},       // 4: to the ring, but node 1's NF reads frames in collect()
      {p1, drop, 0b10},      // 5: dropped at node 1, which read it
      {kNoPort, 0, 0},       // 6: a chain without NFs: chain.to decides
      {7, 0, 0b01},          // 7: a port id past the configuration: egress drops it
      {p2, 0, 0b01},         // 8: to a host port
  };
  for (uint32_t i = 0; i < v.count; ++i) {
    v.out_port[i] = packets[i].out_port;
    v.verdict[i] = packets[i].verdict;
    v.visited[i] = packets[i].visited;
  }
  Chain chain;
  std::vector<uint32_t> out = {99};
  chain.to = kNoPort;
  std::vector<std::pair<uint8_t, uint32_t>> asked;
  auto reads_all = [&](uint8_t node, uint32_t i) {
    asked.emplace_back(node, i);
    return true;
  };
  frames_needed_on_host(v, chain, ring, 3, 0, reads_all, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 8}));
  EXPECT_TRUE(asked.empty());  // no node reads frames: nothing to ask
  chain.to = p2;
  frames_needed_on_host(v, chain, ring, 3, 0, reads_all, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 2, 6, 8}));
  chain.to = ring;
  frames_needed_on_host(v, chain, ring, 3, 0b10, reads_all, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 4, 5, 8}));
  // Only the packets node 1 saw are asked about; an NF that reads some frames gets just those.
  EXPECT_EQ(asked, (std::vector<std::pair<uint8_t, uint32_t>>{{1, 4}, {1, 5}}));
  auto reads_4 = [](uint8_t, uint32_t i) { return i == 4; };
  frames_needed_on_host(v, chain, ring, 3, 0b10, reads_4, out);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 4, 8}));
}

// --- configurations ------------------------------------------------------------------------

std::string ring_config(const std::string& name, const std::string& placement) {
  auto dir = temp_dir("ring-config-" + name);
  const std::string yaml = "ports:\n"
                     "  - name: gr\n"
                     "    type: gpuring\n"
                     "    placement: " + placement + "\n"
                     "    source: {type: pcap, rx: " + source_dir() + "/data/traces/SIP_CALL_RTP_G711.pcap}\n"
                     "  - {name: out, type: discard}\n"
                     "chains:\n"
                     "  - {from: gr, path: [], to: out}\n";
  return write_file(dir / "c.yaml", yaml);
}

void expect_refused(const std::string& cfg, Backend backend, const std::string& where, const std::string& what) {
  RuntimeConfig rc = load_runtime_config(cfg);
  try {
    GpuRingFeed::check_config(rc, backend);
    ADD_FAILURE() << "accepted: " << cfg;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(GpuRingFeedConfig, EachBackendTakesItsOwnPlacement) {
  expect_refused(ring_config("dev-cpu", "device"), Backend::cpu, "c.yaml:4", "needs --backend gpu");
  expect_refused(ring_config("host-gpu", "host"), Backend::gpu, "c.yaml:4", "CPU backend only");
  RuntimeConfig host = load_runtime_config(ring_config("host-cpu", "host"));
  EXPECT_NO_THROW(GpuRingFeed::check_config(host, Backend::cpu));
  RuntimeConfig dev = load_runtime_config(ring_config("dev-gpu", "device"));
  EXPECT_NO_THROW(GpuRingFeed::check_config(dev, Backend::gpu));
  RuntimeConfig autop = load_runtime_config(ring_config("auto", "auto"));
  const auto& port = dynamic_cast<const GpuRingPort&>(*autop.ports[0]);
  EXPECT_EQ(GpuRingFeed::placement_on(port, Backend::cpu), gpuring::Placement::host);
  EXPECT_EQ(GpuRingFeed::placement_on(port, Backend::gpu), gpuring::Placement::device);
  EXPECT_NO_THROW(GpuRingFeed::check_config(autop, Backend::cpu));
  EXPECT_NO_THROW(GpuRingFeed::check_config(autop, Backend::gpu));
}

TEST(GpuRingFeedConfig, DeviceRingsAskForEagerLoadingAndAllHardwareQueues) {
  // Only where a variable is unset: a user's own choice stands.
  const char* names[] = {"CUDA_MODULE_LOADING", "CUDA_DEVICE_MAX_CONNECTIONS"};
  std::string saved[2];
  bool had[2];
  for (int k = 0; k < 2; ++k) {
    const char* v = std::getenv(names[k]);
    had[k] = v != nullptr;
    saved[k] = v ? v : "";
    unsetenv(names[k]);
  }
  RuntimeConfig host = load_runtime_config(ring_config("eager-host", "auto"));
  GpuRingFeed::check_config(host, Backend::cpu);
  EXPECT_EQ(std::getenv("CUDA_MODULE_LOADING"), nullptr);
  EXPECT_EQ(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), nullptr);
  EXPECT_EQ(cuda_hardware_queues(), 8);
  GpuRingFeed::check_config(host, Backend::gpu);
  ASSERT_NE(std::getenv("CUDA_MODULE_LOADING"), nullptr);
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "EAGER");
  ASSERT_NE(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), nullptr);
  EXPECT_STREQ(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), "32");
  EXPECT_EQ(cuda_hardware_queues(), 32);
  setenv("CUDA_MODULE_LOADING", "LAZY", 1);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4", 1);
  GpuRingFeed::check_config(host, Backend::gpu);
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "LAZY");
  EXPECT_STREQ(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), "4");
  EXPECT_EQ(cuda_hardware_queues(), 4);
  for (int k = 0; k < 2; ++k) {
    if (had[k])
      setenv(names[k], saved[k].c_str(), 1);
    else
      unsetenv(names[k]);
  }
}

}  // namespace
}  // namespace gpunfv
