// Egress over several threads per chain (chain/egress.h) on the CPU backend: with 3 threads the
// runs equal one thread's: every port's frames in the same order (the captures' frames equal
// byte for byte), the same counters per port and per NF, every packet accounted for; through
// several chains, a branch, NF drops, no_egress drops and a port that refuses frames
// (port_tx_error); and NIDS's alert log keeps its lines in packet order.
#include "chain/egress.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chain/executor.h"
#include "config/config.h"
#include "core/error.h"
#include "nf/run_per_packet.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

#define DROPPER_DROPS(X) X(dropper_drop, "dropped by the tests' dropper NF")
GPUNFV_NF_DROP_REASONS(DropperDrop, "dropper", DROPPER_DROPS);

struct DropView {
  uint32_t drop_mod;  // drop packets whose flow hash / 16 is a multiple (0: none)
};
struct DropLogic {
  GPUNFV_HD NfVerdict operator()(const DropView& v, PacketRef p) const {
    if (v.drop_mod && (p.flow_hash() >> 4) % v.drop_mod == 0) return DropperDrop::dropper_drop;
    return DropReason::none;
  }
};

// Passes packets on, dropping some; collects nothing (egress does all the accounting).
class DropNf final : public NetworkFunction {
 public:
  DropNf(std::string name, uint32_t drop_mod)
      : NetworkFunction(std::move(name)), drop_mod_(drop_mod) {}
  std::string_view type() const override { return "dropper"; }
  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t pos) const override {
    run_per_packet_cpu(b, begin, end, pos, DropView{drop_mod_}, DropLogic{},
                       first_drop_code<DropperDrop>());
  }
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  std::string describe() const override { return "dropper " + name(); }

 private:
  uint32_t drop_mod_;
};

// A sink that refuses every 7th frame it is offered (counted port_tx_error) and records the
// ingress number of each frame it takes, in order. Not thread-safe: egress must lock it.
class RefusingPort final : public Port {
 public:
  RefusingPort(std::string name, uint16_t id) : Port(std::move(name), id) {}
  std::string_view type() const override { return "refusing"; }
  bool has_rx() const override { return false; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch&, uint32_t) override { return 0; }
  bool rx_done() const override { return true; }
  bool tx(const BatchView& b, uint32_t i) override {
    if (++offered_ % 7 == 0) return false;
    taken.push_back(b.seq[i]);
    return true;
  }
  std::string describe() const override { return "refuses every 7th frame"; }
  std::vector<uint64_t> taken;

 private:
  uint64_t offered_ = 0;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The frames of a capture, without their timestamps (a generator stamps frames when made).
std::vector<std::string> pcap_frames(const std::string& file) {
  std::vector<std::string> out;
  size_t off = 24;  // the file header
  while (off + 16 <= file.size()) {
    uint32_t caplen = 0;
    std::memcpy(&caplen, file.data() + off + 8, 4);
    off += 16;
    if (off + caplen > file.size()) break;
    out.push_back(file.substr(off, caplen));
    off += caplen;
  }
  return out;
}

struct Outcome {
  nlohmann::json counters;                                   // per port and per NF
  std::map<std::string, std::vector<std::string>> captures;  // frames per capture file
  std::vector<uint64_t> refused_port_taken;
  size_t egress_threads = 0;
};

// Four chains: `one` (a branch, drops), `two` and `four` (no egress port: every packet
// no_egress) share NFs, so one set of egress threads serves them; `three` has its own. Generators
// on one queue each, so each port's frames come in one order whatever the threads do.
Outcome run_chains(const std::string& name, uint32_t per_chain) {
  auto dir = testing::temp_dir(name);
  testing::write_file(dir / "empty.rules", "");
  std::string nfs = "nfs:\n";
  for (const char* n : {"a", "b", "c", "d"})
    nfs +=
        std::string("  - {name: ") + n + ", type: firewall, rules: empty.rules, default: accept}\n";
  const std::string yaml = R"(
ports:
  - {name: g1, type: generator, count: 40000, flows: 300, size: 64-200, seed: 11}
  - {name: g2, type: generator, count: 25000, flows: 100, size: 64, seed: 12}
  - {name: g3, type: generator, count: 30000, flows: 500, size: 128, seed: 13}
  - {name: g4, type: generator, count: 5000, flows: 50, size: 64, seed: 14}
  - {name: out1, type: pcap, tx: out1.pcap}
  - {name: out2, type: pcap, tx: out2.pcap}
  - {name: refusing, type: discard}
)" + nfs + R"(
chains:
  - {name: one, from: g1, to: out1, path: [{nf: a, next: [b, done]}, b]}
  - {name: two, from: g2, to: out2, path: [b, c]}
  - {name: three, from: g3, to: refusing, path: [d]}
  - {name: four, from: g4, path: [c]}
settings: {batch_size: 64, batches: 32, workers: 2, egress_threads_per_chain: )" +
                           std::to_string(per_chain) + "}\n";
  RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", yaml));
  const std::map<std::string, uint32_t> drop_mod = {{"a", 5}, {"b", 7}, {"c", 0}, {"d", 3}};
  for (auto& nf : rc.nfs) nf = std::make_unique<DropNf>(nf->name(), drop_mod.at(nf->name()));
  rc.ports[6] = std::make_unique<RefusingPort>("refusing", 6);
  Outcome o;
  Settings s = rc.settings;
  o.egress_threads = Egress::threads_per_chain(s);
  RunStats st = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(st.accounting_errors(), "") << name;
  EXPECT_EQ(st.total_rx(), 100000u);
  for (const auto& p : st.ports) {
    nlohmann::json drops = nlohmann::json::object();
    for (int r = 0; r < kMaxDropReasons; ++r)
      if (p->dropped.by_reason[r]) drops[std::to_string(r)] = p->dropped.by_reason[r];
    o.counters["port " + p->name] = {p->rx_packets.load(),    p->tx_packets.load(),
                                     p->tx_bytes.load(),      p->forwarded.load(),
                                     p->dropped_total.load(), drops};
  }
  for (const auto& n : st.nfs) {
    std::vector<uint64_t> drops(n.drops.by_reason.begin(), n.drops.by_reason.end());
    o.counters["nf " + n.name] = {n.in, n.out, drops};
  }
  o.refused_port_taken = static_cast<RefusingPort&>(*rc.ports[6]).taken;
  rc.ports.clear();  // closes the captures
  for (const char* f : {"out1.pcap", "out2.pcap"}) o.captures[f] = pcap_frames(read_file(dir / f));
  return o;
}

TEST(Egress, SeveralThreadsPerChainEqualOneThread) {
  const Outcome one = run_chains("egress-1", 1);
  const Outcome three = run_chains("egress-3", 3);
  EXPECT_EQ(one.egress_threads, 1u);
  EXPECT_EQ(three.egress_threads, 3u);
  EXPECT_EQ(three.counters, one.counters);
  for (const auto& [file, frames] : one.captures) {
    EXPECT_GT(frames.size(), 10000u) << file;
    EXPECT_TRUE(three.captures.at(file) == frames) << file << ": frames differ from one thread's";
  }
  // The refusing port: frames offered in the same order, so the same ones taken, in order.
  ASSERT_GT(one.refused_port_taken.size(), 10000u);
  EXPECT_EQ(three.refused_port_taken, one.refused_port_taken);
  // And the drops this test means to cover all happened.
  const auto& a = one.counters["nf a"];
  EXPECT_GT(a[2][static_cast<int>(drop_reason(DropperDrop::dropper_drop))].get<uint64_t>(), 1000u);
  EXPECT_EQ(one.counters["port g4"][5][std::to_string(static_cast<int>(DropReason::no_egress))],
            5000u);
  const auto& refusing_in = one.counters["port g3"][5];
  EXPECT_GT(
      refusing_in[std::to_string(static_cast<int>(DropReason::port_tx_error))].get<uint64_t>(),
      1000u);
}

// NIDS with an alert log: a line per alert in packet order, the same lines with 3 egress
// threads as with 1 (batches of 8 packets, so the threads share many batches).
std::string alert_log(const std::string& name, uint32_t per_chain) {
  auto dir = testing::temp_dir(name);
  testing::write_file(
      dir / "http.rules",
      "alert tcp any any -> any any (msg:\"get\"; content:\"GET\"; sid:1;)\n"
      "alert tcp any any -> any any (msg:\"http\"; content:\"http\"; nocase; sid:2;)\n"
      "alert tcp any any -> any any (msg:\"html\"; content:\"html\"; sid:3;)\n");
  const std::string trace = testing::source_dir() + "/data/traces/http_with_jpegs.cap";
  const std::string yaml = "ports:\n  - {name: in, type: pcap, rx: " + trace +
                           "}\n  - {name: out, type: discard}\n"
                           "nfs:\n  - {name: ids, type: nids, rules: [http.rules], action: alert, "
                           "alerts: alerts.json}\n"
                           "chains:\n  - {from: in, path: [ids], to: out}\n"
                           "settings: {batch_size: 8, batches: 32, workers: 2, "
                           "egress_threads_per_chain: " +
                           std::to_string(per_chain) + "}\n";
  RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", yaml));
  RunStats st = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(st.accounting_errors(), "");
  rc.nfs.clear();  // closes the log
  return read_file(dir / "alerts.json");
}

TEST(Egress, NidsAlertLogKeepsPacketOrderWithSeveralThreads) {
  const std::string one = alert_log("egress-alerts-1", 1);
  const std::string three = alert_log("egress-alerts-3", 3);
  std::istringstream lines(one);
  uint64_t last = 0, count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    const uint64_t pkt = nlohmann::json::parse(line).at("pcap_cnt").get<uint64_t>();
    EXPECT_GE(pkt, last);
    last = pkt;
  }
  EXPECT_GT(count, 10u);
  EXPECT_EQ(three, one);
}

// Threads: egress_threads_per_chain per set of chains (one set per group of chains sharing an
// NF), egress_threads capping them all; the report says how many ran.
uint64_t egress_threads_run(const std::string& name, const std::string& settings) {
  auto dir = testing::temp_dir(name);
  std::string yaml = "ports:\n";
  for (int c = 0; c < 3; ++c)
    yaml += "  - {name: g" + std::to_string(c) + ", type: generator, count: 2000, size: 64}\n";
  yaml += "  - {name: out, type: discard}\nchains:\n";
  for (int c = 0; c < 3; ++c) yaml += "  - {from: g" + std::to_string(c) + ", path: [], to: out}\n";
  yaml += "settings: {batch_size: 64, " + settings + "}\n";
  RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", yaml));
  RunStats st = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(st.accounting_errors(), "");
  EXPECT_EQ(st.total_tx(), 6000u);
  return st.egress.at("threads").get<uint64_t>();
}

TEST(Egress, ThreadsPerChainAndTheirCap) {
  EXPECT_EQ(egress_threads_run("egress-n1", "egress_threads_per_chain: 1"), 3u);
  EXPECT_EQ(egress_threads_run("egress-n2", "egress_threads_per_chain: 2"), 6u);
  EXPECT_EQ(egress_threads_run("egress-cap", "egress_threads_per_chain: 2, egress_threads: 4"), 4u);
  EXPECT_EQ(egress_threads_run("egress-cap1", "egress_threads_per_chain: 3, egress_threads: 1"),
            1u);
}

TEST(Egress, ThreadsPerChainOutOfRangeIsAConfigErrorWithLine) {
  auto dir = testing::temp_dir("egress-cfg");
  const std::string cfg = testing::write_file(dir / "c.yaml",
                                              "ports:\n  - {name: g, type: generator, count: 1}\n"
                                              "chains:\n  - {from: g, path: []}\n"
                                              "settings:\n  egress_threads_per_chain: 65\n");
  try {
    load_runtime_config(cfg);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:6"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpunfv
