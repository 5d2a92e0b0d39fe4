// The dpdk port on DPDK's virtual devices, in-process and without privileges (--no-huge,
// --no-pci): net_ring (a port whose tx ring is its own rx ring), and a zero-copy forward
// between two of them through the Forwarder.
#include "io/dpdk_port.h"

#include <gtest/gtest.h>

#include <atomic>

#include "chain/forward_spec.h"
#include "io/forward/forwarder.h"
#include "io/pcap_port.h"
#include "tests/io/port_test_util.h"

#if GPUNFV_HAVE_DPDK_PORT

namespace gpunfv {
namespace {

using test::yaml_node;

// EAL runs once per process: every test gives the same options, with the memory the DPDK
// peers' tests (rte_lpm, rte_acl) need in case these run first.
const char* kEal = "eal: [--no-huge, --no-pci, -m, '1024', --no-shconf, --no-telemetry, --log-level=error]";

std::unique_ptr<Port> ring_port(const std::string& name, uint16_t id) {
  return make_dpdk_port(yaml_node("{name: " + name + ", type: dpdk, device: " + name + ", " + kEal + "}"), id);
}

test::Received sip_frames(uint32_t limit) {
  PcapPort trace(yaml_node("{name: t, type: pcap, rx: " + test::trace_path("SIP_CALL_RTP_G711.pcap") + "}"), 9);
  return test::drain(trace, 2048, 64, limit);
}

// Puts frames into a port through its tx side (for net_ring, they come back on its rx side).
void send(Port& p, const test::Received& frames) {
  Batch b(uint32_t(frames.size()), 2048, MemoryKind::host);
  BatchView v = b.view();
  for (size_t i = 0; i < frames.size(); ++i) {
    std::memcpy(v.data.framework_data() + i * 2048, frames.bytes[i].data(), frames.len[i]);
    v.len[i] = frames.len[i];
  }
  b.set_count(uint32_t(frames.size()));
  v = b.view();
  for (uint32_t i = 0; i < v.count; ++i) ASSERT_TRUE(p.tx(v, i));
  p.tx_burst_end();
}

test::Received receive(Port& p, size_t want) {
  Batch b(64, 2048, MemoryKind::host);
  test::Received out;
  for (int idle = 0; out.size() < want && idle < 100000; ++idle) {
    b.set_count(0);
    if (p.rx_burst(b, 64)) test::append_batch(b, 0, out), idle = 0;
  }
  return out;
}

TEST(DpdkPort, NetRingRoundTrip) {
  auto port = ring_port("net_ring0", 0);
  EXPECT_NE(port->describe().find("net_ring0"), std::string::npos) << port->describe();
  auto frames = sip_frames(300);
  ASSERT_EQ(frames.size(), 300u);
  for (size_t at = 0; at < frames.size(); at += 100) {  // within the ring's size per round
    test::Received part;
    for (size_t i = at; i < at + 100; ++i)
      part.bytes.push_back(frames.bytes[i]), part.len.push_back(frames.len[i]);
    send(*port, part);
    auto got = receive(*port, 100);
    ASSERT_EQ(got.size(), 100u);
    EXPECT_TRUE(got.bytes == part.bytes);
    for (uint16_t p : got.port) EXPECT_EQ(p, 0);
  }
  ASSERT_NE(port->zero_copy(), nullptr);
  EXPECT_EQ(port->zero_copy()->zc_kind(), "dpdk-mbuf");
}

TEST(DpdkPort, ZeroCopyForwardHandsMbufsOverAndChecksIntegrity) {
  auto a = ring_port("net_ring1", 0), b = ring_port("net_ring2", 1);
  auto frames = sip_frames(200);
  send(*a, frames);
  ForwardSpec spec;
  spec.name = "a=>b";
  spec.from = 0, spec.to = 1;
  spec.integrity = true;
  spec.descriptor_batch = 8;
  PortCounters ca, cb;
  Forwarder fw(spec, *a, *b, ca, cb);
  ASSERT_TRUE(fw.zero_copy());
  uint64_t seen = 0;
  fw.between_rx_and_tx = [&](uint8_t* f, uint32_t len) {
    if (seen++ % 10 == 0) f[42] ^= 0x10;  // a sampled byte: these 20 frames must be dropped
  };
  fw.run([&] { return ca.rx_packets.load() >= 200; });
  EXPECT_EQ(seen, 200u);
  EXPECT_EQ(fw.result().drops[DropReason::integrity_mismatch], 20u);
  EXPECT_EQ(cb.tx_packets.load(), 180u);
  EXPECT_EQ(fw.result().copied_bytes, 0u);
  EXPECT_GE(fw.result().posts, 180u / 8);
  auto got = receive(*b, 180);
  ASSERT_EQ(got.size(), 180u);
  size_t j = 0;
  for (size_t i = 0; i < 200; ++i) {
    if (i % 10 != 0) {
      EXPECT_TRUE(got.bytes[j++] == frames.bytes[i]) << i;
    }
  }
}

// Without routing or integrity the forward hands whole mbuf bursts over (no per-frame work):
// every frame arrives unchanged and in order, packets and bytes are counted exactly on both
// ports, one latency sample per frame; frames the target does not take are freed and counted.
TEST(DpdkPort, ZeroCopyForwardHandsWholeBurstsOverAndCountsEveryFrame) {
  auto a = ring_port("net_ring3", 0), b = ring_port("net_ring4", 1);
  auto frames = sip_frames(1100);
  ASSERT_EQ(frames.size(), 1100u);
  auto part = [&](size_t from, size_t to) {
    test::Received r;
    for (size_t i = from; i < to; ++i) r.bytes.push_back(frames.bytes[i]), r.len.push_back(frames.len[i]);
    return r;
  };
  auto bytes_of = [&](size_t from, size_t to) {
    uint64_t n = 0;
    for (size_t i = from; i < to; ++i) n += frames.len[i];
    return n;
  };
  ForwardSpec spec;
  spec.name = "a=>b";
  spec.from = 0, spec.to = 1;
  spec.descriptor_batch = 8;
  spec.latency_sample = 1;  // every frame timed

  send(*a, part(0, 1000));
  PortCounters ca, cb;
  Forwarder fw(spec, *a, *b, ca, cb);
  ASSERT_TRUE(fw.zero_copy());
  ASSERT_TRUE(fw.handle_bursts()) << fw.describe();
  fw.run([&] { return ca.rx_packets.load() >= 1000; });
  EXPECT_EQ(cb.tx_packets.load(), 1000u);
  EXPECT_EQ(ca.forwarded.load(), 1000u);
  // net_ring keeps no byte counters (DPDK 22.11): the lengths are read frame by frame.
  EXPECT_EQ(fw.result().byte_counts, "frame lengths");
  EXPECT_EQ(ca.rx_bytes.load(), bytes_of(0, 1000));
  EXPECT_EQ(cb.tx_bytes.load(), bytes_of(0, 1000));
  EXPECT_EQ(fw.result().sent, 1000u);
  EXPECT_EQ(fw.result().latency.count(), 1000u);
  EXPECT_EQ(fw.result().drops.total(), 0u);
  EXPECT_GE(fw.result().posts, 1000u / 8);
  auto got = receive(*b, 1000);
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_TRUE(got.bytes == part(0, 1000).bytes);

  // b's ring (1023 frames) keeps 1000 from a second round; 100 more find it nearly full: what
  // it does not take is freed and counted, and only what it took is counted as sent.
  send(*a, part(0, 1000));
  PortCounters ca2, cb2;
  Forwarder fill(spec, *a, *b, ca2, cb2);
  fill.run([&] { return ca2.rx_packets.load() >= 1000; });
  ASSERT_EQ(cb2.tx_packets.load(), 1000u);
  send(*a, part(1000, 1100));
  PortCounters ca3, cb3;
  Forwarder over(spec, *a, *b, ca3, cb3);
  over.run([&] { return ca3.rx_packets.load() >= 100; });
  const uint64_t sent = cb3.tx_packets.load(), lost = over.result().drops[DropReason::port_tx_error];
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(sent + lost, 100u);
  EXPECT_EQ(ca3.dropped_total.load(), lost);
  EXPECT_EQ(ca3.forwarded.load(), sent);
  EXPECT_EQ(cb3.tx_bytes.load(), bytes_of(1000, 1000 + sent));
  EXPECT_EQ(over.result().sent, sent);
  EXPECT_EQ(over.result().latency.count(), sent);
}

// latency_sample: N times one rx burst in N and sends the rest untimed, counted. 1000 frames
// waiting in a net_ring come as 31 bursts of 32 and one of 8; bursts 0, 4, ..., 28 are timed:
// 8 x 32 frames. Every frame is still sent and its bytes counted.
TEST(DpdkPort, HandleBurstForwardTimesOneBurstInLatencySample) {
  auto a = ring_port("net_ring12", 0), b = ring_port("net_ring13", 1);
  auto frames = sip_frames(1000);
  uint64_t bytes = 0;
  for (uint16_t len : frames.len) bytes += len;
  send(*a, frames);
  ForwardSpec spec;
  spec.name = "a=>b";
  spec.from = 0, spec.to = 1;
  spec.descriptor_batch = 8;
  spec.burst = 32;
  spec.latency_sample = 4;
  PortCounters ca, cb;
  Forwarder fw(spec, *a, *b, ca, cb);
  ASSERT_TRUE(fw.handle_bursts());
  fw.run([&] { return ca.rx_packets.load() >= 1000; });
  EXPECT_EQ(cb.tx_packets.load(), 1000u);
  EXPECT_EQ(fw.result().sent, 1000u);
  EXPECT_EQ(fw.result().latency_sample, 4u);
  EXPECT_EQ(fw.result().latency.count(), 8u * 32u);
  EXPECT_GT(fw.result().latency.quantile(0.5), 0u);
  EXPECT_EQ(ca.rx_bytes.load(), bytes);
  EXPECT_EQ(cb.tx_bytes.load(), bytes);
  auto got = receive(*b, 1000);
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_TRUE(got.bytes == frames.bytes);
}

// Where both ports count bytes themselves (net_pcap counts them in software in rx/tx burst),
// the handle-burst forward compares their counts with the frames' lengths at its first publish
// (64 bursts in) and, as they agree, reads no frame's length after that. The totals must still
// be exactly the sum of the frames' lengths (4269 frames, most counted by the ports), and the
// capture what came in.
TEST(DpdkPort, HandleBurstForwardTakesBytesFromPortCountersWhereTheyAgree) {
  test::TempDir dir;
  const std::string trace = test::trace_path("SIP_CALL_RTP_G711.pcap"), out = dir.file("out.pcap");
  auto frames = sip_frames(100000);
  ASSERT_EQ(frames.size(), 4269u);
  uint64_t bytes = 0;
  for (uint16_t len : frames.len) bytes += len;
  auto a = make_dpdk_port(yaml_node("{name: pa, type: dpdk, device: net_pcap10, args: 'rx_pcap=" + trace + "', " + kEal + "}"), 0);
  auto b = make_dpdk_port(yaml_node("{name: pb, type: dpdk, device: net_pcap11, args: 'tx_pcap=" + out + "', " + kEal + "}"), 1);
  ForwardSpec spec;
  spec.name = "pa=>pb";
  spec.from = 0, spec.to = 1;
  spec.descriptor_batch = 32;
  PortCounters ca, cb;
  Forwarder fw(spec, *a, *b, ca, cb);
  ASSERT_TRUE(fw.handle_bursts());
  fw.run([&] { return ca.rx_packets.load() >= frames.size(); });
  EXPECT_EQ(fw.result().byte_counts, "port counters");
  EXPECT_EQ(ca.rx_packets.load(), frames.size());
  EXPECT_EQ(cb.tx_packets.load(), frames.size());
  EXPECT_EQ(ca.rx_bytes.load(), bytes);
  EXPECT_EQ(cb.tx_bytes.load(), bytes);
  EXPECT_EQ(fw.result().drops.total(), 0u);
  b.reset();  // closes the capture
  PcapPort capture(yaml_node("{name: c, type: pcap, rx: " + out + "}"), 9);
  auto got = test::drain(capture, 2048, 64);
  ASSERT_EQ(got.size(), frames.size());
  EXPECT_TRUE(got.bytes == frames.bytes);
}

// count_bytes: exact sums every frame's length (bursts of 7, posts of 3: the sum's tail and
// partial groups); off reads no frame: packets stay exact (rx = tx + drops), the bytes of that
// direction are marked not counted on both ports (the reports print none), frames arrive unchanged.
TEST(DpdkPort, HandleBurstForwardCountsBytesExactlyOrNotAtAll) {
  auto a = ring_port("net_ring14", 0), b = ring_port("net_ring15", 1);
  auto frames = sip_frames(1000);
  uint64_t bytes = 0;
  for (uint16_t len : frames.len) bytes += len;
  ForwardSpec spec;
  spec.name = "a=>b";
  spec.from = 0, spec.to = 1;
  spec.burst = 7;
  spec.descriptor_batch = 3;
  for (ByteCounting counting : {ByteCounting::exact, ByteCounting::off}) {
    SCOPED_TRACE(counting == ByteCounting::off ? "off" : "exact");
    spec.count_bytes = counting;
    send(*a, frames);
    PortCounters ca, cb;
    Forwarder fw(spec, *a, *b, ca, cb);
    ASSERT_TRUE(fw.handle_bursts());
    fw.run([&] { return ca.rx_packets.load() >= 1000; });
    EXPECT_EQ(ca.rx_packets.load(), 1000u);
    EXPECT_EQ(cb.tx_packets.load(), 1000u);
    EXPECT_EQ(ca.forwarded.load(), 1000u);
    EXPECT_EQ(fw.result().sent, 1000u);
    EXPECT_EQ(fw.result().drops.total(), 0u);
    if (counting == ByteCounting::exact) {
      EXPECT_EQ(fw.result().byte_counts, "frame lengths");
      EXPECT_TRUE(ca.rx_bytes_counted.load() && cb.tx_bytes_counted.load());
      EXPECT_EQ(ca.rx_bytes.load(), bytes);
      EXPECT_EQ(cb.tx_bytes.load(), bytes);
    } else {
      EXPECT_EQ(fw.result().byte_counts, "off");
      EXPECT_NE(fw.describe().find("bytes not counted"), std::string::npos) << fw.describe();
      EXPECT_FALSE(ca.rx_bytes_counted.load());
      EXPECT_FALSE(cb.tx_bytes_counted.load());
      EXPECT_TRUE(ca.tx_bytes_counted.load() && cb.rx_bytes_counted.load());  // the other direction's
      EXPECT_EQ(ca.rx_bytes.load(), 0u);
      EXPECT_EQ(cb.tx_bytes.load(), 0u);
    }
    auto got = receive(*b, 1000);
    ASSERT_EQ(got.size(), 1000u);
    EXPECT_TRUE(got.bytes == frames.bytes);
  }
}

TEST(DpdkPort, ConfigErrors) {
  auto fails = [](const std::string& yaml, const std::string& needle) {
    try {
      make_dpdk_port(yaml_node(yaml), 0);
      ADD_FAILURE() << "expected a ConfigError for " << yaml;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails(std::string("{name: x, type: dpdk, device: net_ring5, rx_qeues: 2, ") + kEal + "}",
        "unknown key 'rx_qeues'");
  fails(std::string("{name: x, type: dpdk, device: net_nosuchdriver0, ") + kEal + "}",
        "DPDK device 'net_nosuchdriver0' not found");
  fails("{name: x, type: dpdk, device: net_ring6, eal: [--no-pci]}",
        "differs from the options EAL was initialised with");
  fails(std::string("{name: x, type: dpdk, device: net_ring7, rx_queues: 64, ") + kEal + "}",
        "offers");
}

}  // namespace
}  // namespace gpunfv

#endif
