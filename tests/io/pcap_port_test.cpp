#include "io/pcap_port.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <fstream>
#include <set>

#include "core/error.h"
#include "core/parse.h"
#include "port_test_util.h"

namespace gpunfv {
namespace {

using test::drain;
using test::Received;
using test::TempDir;
using test::trace_path;
using test::yaml_node;

std::unique_ptr<PcapPort> open_rx(const std::string& path, const std::string& extra = "") {
  return std::make_unique<PcapPort>(yaml_node("name: in\ntype: pcap\nrx: " + path + "\n" + extra),
                                    3);
}

// The ConfigError message of `make()`, or a failure when it does not throw one.
template <typename F>
std::string config_error(F make) {
  try {
    make();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

// Writes a pcap file of the given link type with one 20-byte record.
void write_capture(const std::string& path, int link_type) {
  pcap_t* dead = pcap_open_dead(link_type, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(d, nullptr);
  uint8_t frame[20] = {0x45};
  pcap_pkthdr h{};
  h.caplen = h.len = sizeof(frame);
  pcap_dump(reinterpret_cast<u_char*>(d), &h, frame);
  pcap_dump_close(d);
  pcap_close(dead);
}

TEST(PcapPort, RoundTripKeepsBytesLengthsAndNanosecondTimestamps) {
  TempDir dir;
  const uint32_t stride = 2048;
  Batch out(8, stride, MemoryKind::host);
  BatchView v = out.view();
  const uint16_t lengths[5] = {60, 64, 1514, 333, 42};
  const uint64_t base_ns = 1'700'000'000'123'456'789ull;
  for (uint32_t i = 0; i < 5; ++i) {
    uint8_t* slot = v.data.framework_data() + size_t(i) * stride;
    for (uint32_t k = 0; k < lengths[i]; ++k) slot[k] = uint8_t(i * 31 + k * 7);
    v.len[i] = lengths[i];
    v.wire_ns[i] = base_ns + i * 1'000'001ull + i;  // distinct sub-microsecond digits
  }
  out.set_count(5);
  {
    PcapPort tx(yaml_node("name: out\ntype: pcap\ntx: out.pcap\n", dir.config()), 1);
    EXPECT_FALSE(tx.has_rx());
    EXPECT_TRUE(tx.has_tx());
    for (uint32_t i = 0; i < 5; ++i) EXPECT_TRUE(tx.tx(out.view(), i));
    tx.flush();
  }
  for (const char* preload : {"true", "false"}) {
    PcapPort rx(yaml_node(std::string("name: in\ntype: pcap\nrx: out.pcap\npreload: ") + preload,
                          dir.config()),
                7);
    Received got = drain(rx);
    ASSERT_EQ(got.size(), 5u) << "preload " << preload;
    for (uint32_t i = 0; i < 5; ++i) {
      EXPECT_EQ(got.len[i], lengths[i]);
      EXPECT_EQ(got.port[i], 7);
      EXPECT_EQ(got.wire_ns[i], v.wire_ns[i]);
      const uint8_t* slot = v.data.framework_data() + size_t(i) * stride;
      EXPECT_EQ(got.bytes[i], std::vector<uint8_t>(slot, slot + lengths[i]));
    }
    EXPECT_TRUE(rx.rx_done());
  }
}

TEST(PcapPort, TxRefusesFrameLongerThanItsSlot) {
  TempDir dir;
  Batch b(2, 64, MemoryKind::host);
  b.view().len[0] = 100;
  b.set_count(1);
  PcapPort tx(yaml_node("name: out\ntype: pcap\ntx: out.pcap\n", dir.config()), 1);
  EXPECT_FALSE(tx.tx(b.view(), 0));
}

TEST(PcapPort, ReadsRealTrace) {
  auto port = open_rx(trace_path("SIP_CALL_RTP_G711.pcap"));
  EXPECT_TRUE(port->has_rx());
  EXPECT_FALSE(port->has_tx());
  Received got = drain(*port);
  ASSERT_EQ(got.size(), 4269u);
  uint32_t largest = 0, ipv4 = 0, non_ip = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got.port[i], 3);
    EXPECT_EQ(got.bytes[i].size(), got.len[i]);
    largest = std::max<uint32_t>(largest, got.len[i]);
    PacketHeaders h;
    IsoSpan<const uint8_t> frame(got.bytes[i].data(), got.bytes[i].size());
    EXPECT_EQ(parse_headers(frame, h), DropReason::none) << "frame " << i;
    if (h.ip_version == 4) ++ipv4;
    if (h.ip_version == 0) ++non_ip;
    EXPECT_GT(got.wire_ns[i], 1'000'000'000ull * 1'000'000'000ull);  // after 2001
  }
  EXPECT_EQ(ipv4, 4105u);  // as counted in data/traces/README.md
  EXPECT_EQ(non_ip, 164u);
  EXPECT_EQ(port->max_frame_bytes(), largest);  // preload knows the true largest frame
  EXPECT_TRUE(port->rx_done());
  Batch b(4, 2048, MemoryKind::host);
  EXPECT_EQ(port->rx_burst(b, 4), 0u);
}

TEST(PcapPort, ReadsPcapng) {
  auto port = open_rx(trace_path("iperf3-udp.pcapng"));
  Received got = drain(*port);
  EXPECT_EQ(got.size(), 314u);
  size_t over_1024 = 0;
  for (uint16_t len : got.len) over_1024 += len > 1024;
  EXPECT_EQ(over_1024, 272u);
}

TEST(PcapPort, AppendsAfterFramesAlreadyInTheBatch) {
  auto port = open_rx(trace_path("dns.cap"));
  Batch b(16, 2048, MemoryKind::host);
  b.view().len[0] = 1234;
  b.set_count(3);
  EXPECT_EQ(port->rx_burst(b, 5), 5u);
  EXPECT_EQ(b.count(), 8u);
  EXPECT_EQ(b.view().len[0], 1234);
  for (uint32_t i = 3; i < 8; ++i) EXPECT_GT(b.view().len[i], 0);
  // Never past the batch's capacity, whatever `max` says.
  EXPECT_EQ(port->rx_burst(b, 100), 8u);
  EXPECT_EQ(b.count(), 16u);
}

TEST(PcapPort, OversizeFrameKeepsItsTrueLength) {
  Received wide = drain(*open_rx(trace_path("http_with_jpegs.cap")));
  Received narrow = drain(*open_rx(trace_path("http_with_jpegs.cap")), /*stride=*/64);
  ASSERT_EQ(wide.size(), 483u);
  ASSERT_EQ(narrow.size(), wide.size());
  size_t longer = 0;
  for (size_t i = 0; i < wide.size(); ++i) {
    EXPECT_EQ(narrow.len[i], wide.len[i]);
    size_t copied = std::min<size_t>(wide.len[i], 64);
    ASSERT_EQ(narrow.bytes[i].size(), copied);
    EXPECT_TRUE(std::equal(narrow.bytes[i].begin(), narrow.bytes[i].end(), wide.bytes[i].begin()));
    longer += wide.len[i] > 64;
  }
  EXPECT_GT(longer, 0u);
}

TEST(PcapPort, RepeatReplaysWithMonotonicTime) {
  Received once = drain(*open_rx(trace_path("dns.cap")));
  ASSERT_EQ(once.size(), 38u);
  for (const char* preload : {"true", "false"}) {
    Received thrice =
        drain(*open_rx(trace_path("dns.cap"), std::string("repeat: 3\npreload: ") + preload));
    ASSERT_EQ(thrice.size(), 3 * once.size()) << "preload " << preload;
    for (size_t i = 1; i < thrice.size(); ++i)
      EXPECT_LE(thrice.wire_ns[i - 1], thrice.wire_ns[i]) << "frame " << i;
    for (size_t i = 0; i < thrice.size(); ++i) {
      EXPECT_EQ(thrice.bytes[i], once.bytes[i % once.size()]);
      EXPECT_EQ(thrice.len[i], once.len[i % once.size()]);
    }
    // Each round is the same capture shifted by one constant.
    uint64_t shift = thrice.wire_ns[once.size()] - once.wire_ns[0];
    EXPECT_GT(shift, once.wire_ns.back() - once.wire_ns.front());
    EXPECT_EQ(thrice.wire_ns[2 * once.size() + 5], once.wire_ns[5] + 2 * shift);
  }
}

TEST(PcapPort, StreamingMatchesPreloaded) {
  Received preloaded = drain(*open_rx(trace_path("telnet-raw.pcap")));
  Received streamed = drain(*open_rx(trace_path("telnet-raw.pcap"), "preload: false"));
  ASSERT_EQ(preloaded.size(), 272u);
  EXPECT_EQ(streamed.bytes, preloaded.bytes);
  EXPECT_EQ(streamed.wire_ns, preloaded.wire_ns);
}

TEST(PcapPort, MissingFileIsConfigErrorNamingIt) {
  std::string msg = config_error([] { open_rx("/nonexistent/nowhere.pcap"); });
  EXPECT_NE(msg.find("/nonexistent/nowhere.pcap"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cfg.yaml:3"), std::string::npos) << msg;  // the rx: line
}

TEST(PcapPort, NonEthernetLinkTypeIsConfigError) {
  TempDir dir;
  std::string path = dir.file("raw_ip.pcap");
  write_capture(path, DLT_RAW);
  std::string msg = config_error([&] { open_rx(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("link type"), std::string::npos) << msg;
}

TEST(PcapPort, CorruptFileIsConfigErrorNamingIt) {
  TempDir dir;
  std::string path = dir.file("garbage.pcap");
  std::ofstream(path) << "this is not a capture file, just some text that is long enough";
  std::string msg = config_error([&] { open_rx(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(PcapPort, TruncatedFile) {
  TempDir dir;
  std::string path = dir.file("cut.pcap");
  {
    std::ifstream in(trace_path("dns.cap"), std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(path, std::ios::binary) << all.substr(0, all.size() / 2);
  }
  // Preloading reads it all at open: the broken record is a ConfigError.
  std::string msg = config_error([&] { open_rx(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  // Streaming finds it late: the source ends there instead of throwing from rx.
  Received got = drain(*open_rx(path, "preload: false"));
  EXPECT_GT(got.size(), 0u);
  EXPECT_LT(got.size(), 38u);
}

TEST(PcapPort, ConfigErrors) {
  TempDir dir;
  auto make = [&](const std::string& yaml) { PcapPort(yaml_node(yaml, dir.config()), 0); };
  EXPECT_NE(config_error([&] { make("name: p\ntype: pcap\n"); }).find("rx:"), std::string::npos);
  std::string msg = config_error([&] { make("name: p\ntype: pcap\ntx: no/such/dir/out.pcap\n"); });
  EXPECT_NE(msg.find("no/such/dir"), std::string::npos) << msg;
  msg = config_error([&] { make("name: p\ntype: pcap\nrx: a.pcap\nrepeet: 2\n"); });
  EXPECT_NE(msg.find("repeet"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cfg.yaml:4"), std::string::npos) << msg;
  msg = config_error(
      [&] { make("name: p\ntype: pcap\nrx: " + trace_path("dns.cap") + "\nrepeat: 0\n"); });
  EXPECT_NE(msg.find("cfg.yaml:4"), std::string::npos) << msg;
  write_capture(dir.file("same.pcap"), DLT_EN10MB);
  msg = config_error([&] { make("name: p\ntype: pcap\nrx: same.pcap\ntx: ./same.pcap\n"); });
  EXPECT_NE(msg.find("same.pcap"), std::string::npos) << msg;
}

TEST(PcapPort, Describe) {
  auto port = open_rx(trace_path("dns.cap"), "repeat: 2");
  EXPECT_EQ(port->describe(), "pcap rx=" + trace_path("dns.cap") + " repeat=2");
  EXPECT_EQ(port->type(), "pcap");
  EXPECT_EQ(port->name(), "in");
  EXPECT_EQ(port->id(), 3);
}

}  // namespace
}  // namespace gpunfv
