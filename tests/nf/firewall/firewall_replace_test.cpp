// A firewall's rule set replaced while it runs: the next batch is classified by the new set
// whole, packets are counted against the set that classified them, and a bad file changes
// nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/parse.h"
#include "nf/firewall/firewall.h"
#include "tests/chain/chain_test_util.h"
#include "tests/nf/firewall/firewall_test_util.h"

namespace gpunfv {
namespace {

using testing::temp_dir;
using testing::write_file;

// Drops of a batch of `n` UDP frames to 10.0.0.1 (all parsed, at node 0).
uint32_t drops_of(const Firewall& fw, uint32_t n) {
  Batch b(n, 128, MemoryKind::host, kFirewallResultBytes);
  b.set_count(n);
  BatchView v = b.view();
  for (uint32_t i = 0; i < n; ++i) {
    const auto f = fwtest::ipv4_frame(FiveTuple{*parse_ipv4("192.0.2.1"), *parse_ipv4("10.0.0.1"),
                                                uint16_t(1000 + i), 53, 17});
    std::memcpy(v.data.framework_data() + size_t(i) * v.stride, f.data(), f.size());
    v.len[i] = uint16_t(f.size());
    v.next_nf[i] = 0;
    v.out_port[i] = kNoPort;
    v.verdict[i] = uint8_t(parse_headers(PacketRef(v, i).frame(), v.headers[i]));
  }
  fw.process(v, 0, n, 0);
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < n; ++i) dropped += v.verdict[i] != 0;
  return dropped;
}

TEST(FirewallReplace, NewRulesApplyToTheNextBatchAndCountPerVersion) {
  const auto dir = temp_dir("fw-replace");
  const std::string accept = write_file(dir / "a.rules",
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 accept\n");
  const std::string drop = write_file(dir / "d.rules",
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0000/0x0000 accept\n"
      "@0.0.0.0/0 10.0.0.0/8 0 : 65535 53 : 53 0x11/0xFF 0x0000/0x0000 drop\n");
  Firewall fw("fw", read_classbench_file(accept), FirewallAction::drop, FirewallAction::accept, accept);
  fw.prepare(Backend::cpu);
  EXPECT_EQ(drops_of(fw, 10), 0u);
  EXPECT_EQ(fw.replace_rules(drop, {}), 2u);
  EXPECT_EQ(fw.rule_count(), 2u);
  EXPECT_EQ(drops_of(fw, 7), 7u);

  // A file with a bad line: refused with its line, the live rules kept.
  const std::string bad = write_file(dir / "bad.rules", "@0.0.0.0/0 10.0.0.0/8 0 : 65535 53 : 53 0x11/0xFF 0x0000/0x0000\n@1.2.3.4/40 x\n");
  try {
    fw.replace_rules(bad, {});
    FAIL() << "a bad rule file was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(drops_of(fw, 3), 3u);

  nlohmann::json j;
  fw.report(j);
  EXPECT_EQ(j["table_version"], 2u);
  ASSERT_EQ(j["table_versions"].size(), 2u);
  EXPECT_EQ(j["table_versions"][0]["packets"], 10u);
  EXPECT_EQ(j["table_versions"][1]["packets"], 10u);
  EXPECT_EQ(j["table_versions"][1]["entries"], 2u);
}

TEST(FirewallReplace, MaxRulesHoldsForReplacements) {
  const auto dir = temp_dir("fw-replace-max");
  const std::string one = write_file(dir / "1.rules",
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 accept\n");
  const std::string two = write_file(dir / "2.rules",
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 accept\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0000/0x0000 accept\n");
  Firewall fw("fw", read_classbench_file(one), FirewallAction::drop, FirewallAction::accept, one, 1);
  EXPECT_THROW(fw.replace_rules(two, {}), ConfigError);
  EXPECT_EQ(fw.rule_count(), 1u);
}

}  // namespace
}  // namespace gpunfv
