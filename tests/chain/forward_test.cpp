// `forward:` between file ports (copy mode; pcap ports cannot hand buffers over): parsing and
// its errors, accounting, routing through the router's logic, and the sampled integrity check.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <vector>

#include "chain/executor.h"
#include "config/config.h"
#include "core/error.h"
#include "io/forward/forwarder.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

std::vector<std::vector<uint8_t>> read_frames(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  std::vector<std::vector<uint8_t>> out;
  if (!p) return out;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) out.emplace_back(data, data + h->caplen);
  pcap_close(p);
  return out;
}

std::string sip_trace() { return source_dir() + "/data/traces/SIP_CALL_RTP_G711.pcap"; }

std::string ports_yaml() {
  return "ports:\n  - {name: in, type: pcap, rx: " + sip_trace() +
         "}\n  - {name: out, type: pcap, tx: out.pcap}\n";
}

void expect_error(const std::string& yaml, const std::string& needle, const std::string& line) {
  auto dir = temp_dir("fwd-err");
  write_file(dir / "r.routes", "0.0.0.0/0 in\n");
  std::string cfg = write_file(dir / "c.yaml", yaml);
  try {
    load_runtime_config(cfg);
    ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c.yaml:" + line), std::string::npos) << e.what();
  }
}

TEST(ForwardConfig, Defaults) {
  auto dir = temp_dir("fwd-defaults");
  std::string cfg = write_file(dir / "c.yaml", ports_yaml() + "forward:\n  - {from: in, to: out}\n");
  RuntimeConfig rc = load_runtime_config(cfg);
  ASSERT_EQ(rc.forwards.size(), 1u);
  EXPECT_TRUE(rc.chains.empty());
  const ForwardSpec& f = rc.forwards[0];
  EXPECT_EQ(f.name, "in=>out");
  EXPECT_EQ(f.mode, ForwardMode::zerocopy);
  EXPECT_EQ(f.descriptor_batch, 8u);
  EXPECT_EQ(f.latency_sample, 64u);
  EXPECT_FALSE(f.integrity);
  EXPECT_EQ(f.route, nullptr);
  EXPECT_EQ(f.count_bytes, ByteCounting::exact);
}

TEST(ForwardConfig, CountBytes) {
  auto dir = temp_dir("fwd-count-bytes");
  for (const auto& [value, want] : {std::pair{"exact", ByteCounting::exact}, {"off", ByteCounting::off}}) {
    std::string cfg = write_file(dir / "c.yaml", ports_yaml() + "forward:\n  - {from: in, to: out, count_bytes: " + value + "}\n");
    RuntimeConfig rc = load_runtime_config(cfg);
    ASSERT_EQ(rc.forwards.size(), 1u);
    EXPECT_EQ(rc.forwards[0].count_bytes, want) << value;
  }
}

TEST(ForwardConfig, Errors) {
  const std::string p = ports_yaml();
  expect_error(p + "forward:\n  - {from: nope, to: out}\n", "unknown port 'nope'", "5");
  expect_error(p + "forward:\n  - {from: in, to: in}\n", "port 'in' has no tx side", "5");
  expect_error(p + "forward:\n  - {from: out, to: out}\n", "port 'out' has no rx side", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, mode: fast}\n", "expected zerocopy or copy", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, integrity: maybe}\n", "not a boolean", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, descriptor_batch: 0}\n", "out of range [1, 4096]", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, latency_sample: 0}\n", "out of range", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, batch: 8}\n", "batch", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, count_bytes: some}\n",
               "count_bytes: expected exact or off, got 'some'", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, count_bytes: off, mode: copy}\n",
               "count_bytes: off applies to a plain zero-copy forward only", "5");
  expect_error(p + "forward:\n  - {from: in, to: out, count_bytes: off, integrity: on}\n",
               "count_bytes: off applies to a plain zero-copy forward only", "5");
  expect_error(p + "forward:\n  - {from: in, to: out}\n  - {from: in, to: out}\n",
               "already feeds another forward", "6");
  expect_error(p + "forward:\n  - {from: in, to: out, route: r.routes}\n",
               "a next hop is a port other than the forward's `to`", "5");
  expect_error(p + "forward:\n  - {from: in, to: out}\nchains:\n  - {from: in, to: out}\n",
               "already feeds another chain or a forward", "7");
}

// Runs `forward:` through the executor and returns the stats.
RunStats run_config(const std::string& cfg) {
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  rc.ports.clear();  // closes the output capture
  return s;
}

TEST(Forward, CopyForwardIsIdenticalAndAccounted) {
  auto dir = temp_dir("fwd-copy");
  std::string cfg = write_file(dir / "c.yaml", ports_yaml() +
                                                   "forward:\n  - {from: in, to: out, mode: "
                                                   "zerocopy, integrity: on, descriptor_batch: 5}\n");
  RunStats s = run_config(cfg);
  EXPECT_EQ(s.accounting_errors(), "");
  auto in = read_frames(sip_trace()), out = read_frames((dir / "out.pcap").string());
  ASSERT_EQ(in.size(), 4269u);
  EXPECT_EQ(out, in);
  EXPECT_EQ(s.ports[0]->rx_packets, in.size());
  EXPECT_EQ(s.ports[1]->tx_packets, in.size());
  EXPECT_EQ(s.latency.count(), in.size());
  ASSERT_EQ(s.forward_reports.size(), 1u);
  // pcap ports cannot hand buffers over: zerocopy falls back to copying, and says so.
  EXPECT_EQ(s.forward_reports[0]["mode"], "copy");
  EXPECT_NE(s.forward_reports[0]["describe"].get<std::string>().find("cannot hand buffers over"),
            std::string::npos);
  // Posts of 5 frames, plus partial ones.
  EXPECT_GE(s.forward_reports[0]["posts"].get<uint64_t>(), in.size() / 5);
}

TEST(Forward, RouteDecrementsTtlAndDropsWhatTheRouterDrops) {
  auto dir = temp_dir("fwd-route");
  write_file(dir / "r.routes", "0.0.0.0/0 out\n");
  std::string cfg = write_file(dir / "c.yaml", ports_yaml() +
                                                   "forward:\n  - {from: in, to: out, route: r.routes}\n");
  RunStats s = run_config(cfg);
  EXPECT_EQ(s.accounting_errors(), "");
  auto in = read_frames(sip_trace()), out = read_frames((dir / "out.pcap").string());
  const DropCounts& d = s.ports[0]->dropped;
  EXPECT_EQ(out.size() + d.total(), in.size());
  EXPECT_GT(d[DropReason::not_ipv4], 0u);  // the trace has ARP and IPv6 frames
  // Every IPv4 frame left with its TTL one lower and a checksum that still verifies.
  size_t j = 0;
  for (const auto& f : in) {
    if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || f[22] <= 1) continue;
    ASSERT_LT(j, out.size());
    const auto& o = out[j++];
    ASSERT_EQ(o.size(), f.size());
    EXPECT_EQ(o[22], f[22] - 1);
    uint32_t sum = 0;
    for (int k = 14; k < 34; k += 2) sum += (o[k] << 8) | o[k + 1];
    while (sum > 0xFFFF) sum = (sum & 0xFFFF) + (sum >> 16);
    EXPECT_EQ(sum, 0xFFFFu);
  }
  EXPECT_EQ(j, out.size());
}

TEST(Forward, IntegrityMismatchIsADropWithItsReason) {
  auto dir = temp_dir("fwd-integrity");
  std::string cfg = write_file(dir / "c.yaml", ports_yaml() +
                                                   "forward:\n  - {from: in, to: out, integrity: on}\n");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats stats;
  for (const auto& p : rc.ports) {
    stats.ports.push_back(std::make_unique<PortCounters>());
    stats.ports.back()->name = p->name();
  }
  Forwarder fw(rc.forwards[0], *rc.ports[0], *rc.ports[1], *stats.ports[0], *stats.ports[1]);
  // Corrupt a sampled byte (offset 21) of every third frame, and an unsampled one (offset 5)
  // of every other frame, between rx and tx.
  uint64_t seen = 0, corrupted = 0;
  fw.between_rx_and_tx = [&](uint8_t* frame, uint32_t len) {
    if (seen % 3 == 0 && len > 21) frame[21] ^= 0x01, ++corrupted;
    if (seen % 2 == 0 && len > 5) frame[5] ^= 0x80;
    ++seen;
  };
  fw.run([] { return false; });
  EXPECT_EQ(seen, 4269u);
  EXPECT_EQ(fw.result().drops[DropReason::integrity_mismatch], corrupted);
  EXPECT_EQ(fw.result().drops.total(), corrupted);
  EXPECT_EQ(stats.ports[1]->tx_packets + corrupted, stats.ports[0]->rx_packets.load());
}

}  // namespace
}  // namespace gpunfv
