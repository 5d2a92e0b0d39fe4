#include "chain/executor.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <vector>

#include "config/config.h"
#include "core/error.h"
#include "tests/chain/chain_test_util.h"
#include "nf/router/router_logic.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

struct Frame {
  std::vector<uint8_t> bytes;
  uint64_t ts_ns;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << err;
  std::vector<Frame> out;
  if (!p) return out;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1)
    out.push_back({std::vector<uint8_t>(data, data + h->caplen),
                   uint64_t(h->ts.tv_sec) * 1'000'000'000ull + h->ts.tv_usec});
  pcap_close(p);
  return out;
}

void expect_accounted(const RunStats& s) { EXPECT_EQ(s.accounting_errors(), ""); }

// Small batches and many workers finish batches out of order; egress must restore it.
TEST(Executor, PassthroughKeepsOrderAndTimestampsWithManyWorkers) {
  auto dir = temp_dir("passthrough");
  std::string trace = source_dir() + "/data/traces/SIP_CALL_RTP_G711.pcap";
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + trace + R"(}
  - {name: out, type: pcap, tx: out.pcap}
chains:
  - {from: in, path: [], to: out}
settings: {batch_size: 7, batches: 16, workers: 4, batch_deadline_us: 1}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  rc.ports.clear();  // closes the output capture
  expect_accounted(s);
  auto in = read_pcap(trace);
  auto out = read_pcap((dir / "out.pcap").string());
  ASSERT_EQ(in.size(), 4269u);
  EXPECT_EQ(s.total_rx(), in.size());
  EXPECT_EQ(out, in);  // every frame parses, so all pass, in order, timestamps kept
}

TEST(Executor, RouterChainCountsPerNfAndPort) {
  auto dir = temp_dir("router");
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/SIP_CALL_RTP_G711.pcap}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - {name: r1, type: router, routes: )" + source_dir() + R"(/data/router/example.routes}
chains:
  - {from: in, path: [r1]}
settings: {batch_size: 64, workers: 2}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  expect_accounted(s);
  const NfCounters& r1 = s.nfs[0];
  EXPECT_EQ(r1.in, 4269u);
  EXPECT_EQ(r1.drops[DropReason::not_ipv4], 164u);  // the trace's non-IP frames
  EXPECT_GT(r1.drops[drop_reason(RouterDrop::no_route)], 0u);
  EXPECT_EQ(s.ports[1]->tx_packets + s.ports[2]->tx_packets, r1.out);
  EXPECT_GT(s.ports[1]->tx_packets, 0u);
  EXPECT_GT(s.ports[2]->tx_packets, 0u);
}

TEST(Executor, ChainWithoutEgressDropsAsNoEgress) {
  auto dir = temp_dir("noegress");
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/dns.cap}
chains:
  - {from: in, path: []}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  expect_accounted(s);
  EXPECT_EQ(s.ports[0]->dropped[DropReason::no_egress], s.total_rx());
}

TEST(Executor, GeneratorWithDurationStops) {
  auto dir = temp_dir("duration");
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: gen, type: generator, rate: 1Mpps, size: 64, duration: 60}
  - {name: out, type: discard}
chains:
  - {from: gen, path: [], to: out}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0.3, nullptr});
  expect_accounted(s);
  EXPECT_GT(s.total_rx(), 0u);
  EXPECT_LT(s.elapsed_s, 30.0);
}

}  // namespace
}  // namespace gpunfv
