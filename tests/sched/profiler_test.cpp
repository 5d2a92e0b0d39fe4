// The CPU side of `gpunfv profile`: options, sized traffic, the table. The GPU measurements run
// in the sched suite of scripts/gpu-check.sh.
#include "sched/profiler.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "chain/classify.h"
#include "config/config.h"
#include "core/error.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

ProfileOptions parse(std::vector<std::string> args) {
  CLI::App app;
  ProfileOptions o;
  add_profile_options(app, o);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return o;
}

TEST(Profiler, ParsesOptions) {
  ProfileOptions o = parse({"c.yaml", "--sizes", "64,512", "--batches", "128,256,1024", "--out",
                            "m.json", "--sms", "16", "--repeats", "5", "--no-green"});
  EXPECT_EQ(o.config, "c.yaml");
  EXPECT_EQ(o.sizes, (std::vector<uint32_t>{64, 512}));
  EXPECT_EQ(o.batches, (std::vector<uint32_t>{128, 256, 1024}));
  EXPECT_EQ(o.out, "m.json");
  EXPECT_EQ(o.sms, 16);
  EXPECT_EQ(o.repeats, 5);
  EXPECT_FALSE(o.green);
  ProfileOptions d = parse({"c.yaml"});
  EXPECT_EQ(d.sizes, (std::vector<uint32_t>{64, 128, 256, 512, 1024, 1518}));
  EXPECT_TRUE(d.green);
  EXPECT_EQ(d.sms, 0);
  EXPECT_NO_THROW(validate_profile_options(d));
  EXPECT_THROW(parse({}), CLI::ParseError);                      // CONFIG is required
  EXPECT_THROW(parse({"c.yaml", "--repeats", "0"}), CLI::ParseError);
  EXPECT_THROW(parse({"c.yaml", "--sizes", "64,abc"}), CLI::ParseError);
}

TEST(Profiler, ValidatesValues) {
  ProfileOptions o = parse({"c.yaml", "--sizes", "32"});
  try {
    validate_profile_options(o);
    FAIL() << "32-byte frames accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--sizes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(validate_profile_options(parse({"c.yaml", "--batches", "256"})), ConfigError);
  EXPECT_THROW(validate_profile_options(parse({"c.yaml", "--batches", "256,256"})), ConfigError);
  EXPECT_THROW(validate_profile_options(parse({"c.yaml", "--batches", "0,256"})), ConfigError);
}

std::string generator_config(const std::string& dir) {
  return write_file(temp_dir(dir) / "c.yaml", R"(ports:
  - {name: gen, type: generator, rate: 1kpps, size: 64, flows: 64, duration: 1, dst_from: r1}
  - {name: p1, type: discard}
nfs:
  - name: r1
    type: router
    routes: {file: )" + source_dir() + R"(/data/router/bart_ipv4_random5000.txt, spread: [p1]}
chains:
  - {from: gen, path: [r1]}
)");
}

TEST(Profiler, SizedGeneratorMakesFramesOfEachSize) {
  RuntimeConfig rc = load_runtime_config(generator_config("profiler-gen"));
  for (uint32_t size : {64u, 512u, 1518u}) {
    auto port = sized_generator(rc, size);
    Batch b(1000, (size + 63) / 64 * 64, MemoryKind::host);
    // rate: 1kpps and duration: 1 in the file would give 1000 packets in a second, and fewer
    // after it: the profiler's copy runs unpaced and without an end.
    ASSERT_EQ(fill_batch(*port, b, 1000), 1000u);
    BatchView v = b.view();
    for (uint32_t i = 0; i < v.count; ++i) {
      ASSERT_EQ(v.len[i], size);
      classify_packet(v, i);
      ASSERT_EQ(v.verdict[i], 0) << "packet " << i << " at " << size << " B";
      ASSERT_EQ(v.next_nf[i], 0);
    }
  }
  EXPECT_NE(rc.ports[0]->describe().find("rate=1kpps size=64 "), std::string::npos);  // kept as configured
}

TEST(Profiler, NeedsAGeneratorIngress) {
  auto cfg = write_file(temp_dir("profiler-pcap") / "c.yaml", R"(ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/dns.cap}
  - {name: out, type: discard}
chains:
  - {from: in, path: [], to: out}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  try {
    sized_generator(rc, 64);
    FAIL() << "a pcap port gave sized traffic";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not a generator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cfg), std::string::npos) << e.what();
  }
}

TEST(Profiler, TableHasARowPerSize) {
  ModelStore s;
  for (uint32_t size : {512u, 64u}) {
    ModelEntry e;
    e.device = "NVIDIA H100";
    e.nf_name = "fw";
    e.nf_type = "firewall";
    e.packet_bytes = size;
    e.profile_sms = 8;
    e.kernel_samples = {{256, 10e-6 + 256 * 2e-9}, {512, 10e-6 + 512 * 2e-9}};
    e.transfer_samples = {{2048, 5e-6 + 2048 * size * 1e-10}, {4096, 5e-6 + 4096 * size * 1e-10}};
    fit_entry(e);
    s.add(std::move(e));
  }
  std::string t = profile_table(s);
  EXPECT_NE(t.find("fw (firewall) on NVIDIA H100, profiled on 8 SMs"), std::string::npos) << t;
  const size_t row64 = t.find("|     64 |"), row512 = t.find("|    512 |");
  ASSERT_NE(row64, std::string::npos) << t;
  ASSERT_NE(row512, std::string::npos) << t;
  EXPECT_LT(row64, row512);  // sorted by size
  EXPECT_NE(t.find("|      2.000 |     10.00 |"), std::string::npos) << t;  // k1 2 ns, b1 10 us
}

TEST(Profiler, AllocationTableForTheFirstChain) {
  RuntimeConfig rc = load_runtime_config(generator_config("profiler-alloc"));
  ModelStore s;
  ModelEntry e;
  e.device = "GPU";
  e.nf_name = "r1";
  e.nf_type = "router";
  e.packet_bytes = 64;
  e.model = {1e-6, 10e-6, 0, 0};
  s.add(e);
  SchedParams p;
  p.C_s = 0;
  std::string t = allocation_table(rc, s, "GPU", {4, 1, 1}, p, {64, 128});
  EXPECT_NE(t.find("chain gen -> r1 on 4 SMs"), std::string::npos) << t;
  // Alone on 4 SMs: 990 packets per SM in 1 ms, 3.96 Mpps; fair and gnet give it all 4 SMs.
  EXPECT_NE(t.find("|     64 | temporal |      3.960 |       0 x 3960 |"), std::string::npos) << t;
  EXPECT_NE(t.find("|     64 | fair     |      3.960 |       4 x 3960 |"), std::string::npos) << t;
  EXPECT_NE(t.find("|     64 | unco     |          - |"), std::string::npos) << t;
  EXPECT_NE(t.find("|     64 | gnet     |      3.960 |       4 x 3960 |"), std::string::npos) << t;
  EXPECT_EQ(t.find("|    128 |"), std::string::npos) << t;  // no model at 128 B
  auto nodes = chain_sched_nodes(rc, rc.chains[0], s, "GPU", 64);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "r1");
  EXPECT_TRUE(nodes[0].children.empty());
  EXPECT_NEAR(nodes[0].model.b1, 10e-6, 1e-15);
  EXPECT_TRUE(chain_sched_nodes(rc, rc.chains[0], s, "GPU", 128).empty());
  EXPECT_TRUE(chain_sched_nodes(rc, rc.chains[0], s, "other GPU", 64).empty());
}

}  // namespace
}  // namespace gpunfv
