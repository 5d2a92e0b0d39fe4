// Every NF's collect() against the plain per-packet loop it replaced (collect_per_packet, kept
// as the reference): on batches of random records, random chain positions, packets that did and
// did not reach the NF and dropped ones, the NFs' reports must be equal after each batch. Also
// CollectScan's once-per-batch bounds checks.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/config_node.h"
#include "core/parse.h"
#include "nf/collect_scan.h"
#include "nf/firewall/classbench_file.h"
#include "nf/firewall/firewall.h"
#include "nf/ipsec/ipsec.h"
#include "nf/nids/nids.h"
#include "nf/shard_counters.h"
#include "tests/chain/chain_test_util.h"
#include "tests/nf/ipsec/ipsec_test_util.h"
#include "nf/firewall/firewall_logic.h"

namespace gpunfv {
namespace {

// Result slices as plan_batch_shape would place them, with a spare word after them.
constexpr uint32_t kFwOffset = 0, kEspOffset = 4, kNidsOffset = 16, kResultStride = 52;
constexpr uint32_t kNidsRules = 10;

std::unique_ptr<Firewall> make_firewall() {
  std::string text;
  for (int r = 0; r < 5; ++r)
    text += "@10." + std::to_string(r) + ".0.0/16 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000\n";
  auto fw = std::make_unique<Firewall>("fw", parse_classbench(text, "t.rules"), FirewallAction::drop,
                                       FirewallAction::accept);
  fw->set_result_offset(kFwOffset);
  return fw;
}

std::unique_ptr<IpsecGateway> make_ipsec() {
  auto g = std::make_unique<IpsecGateway>(
      "esp", IpsecDirection::outbound,
      std::vector<esp::SaConfig>{ipsec_test::sa_config(0x1001, 1, "10.0.0.0/8"),
                                 ipsec_test::sa_config(0x1002, 2, "0.0.0.0/0")});
  g->set_result_offset(kEspOffset);
  return g;
}

std::unique_ptr<Nids> make_nids(const std::string& name, const std::string& extra = "") {
  auto dir = testing::temp_dir("collect-" + name);
  std::string rules;
  for (uint32_t r = 0; r < kNidsRules; ++r)
    rules += "alert tcp any any -> any any (msg:\"r" + std::to_string(r) + "\"; content:\"<r" +
             std::to_string(r) + ">\"; sid:" + std::to_string(100 + r) + ";)\n";
  testing::write_file(dir / "t.rules", rules);
  auto n = Nids::from_config(ConfigNode(YAML::Load("name: ids\ntype: nids\nrules: t.rules\n" + extra),
                                        (dir / "c.yaml").string()));
  n->set_result_offset(kNidsOffset);
  return n;
}

void store_word(const BatchView& v, uint32_t i, uint32_t offset, uint32_t word) {
  uint8_t* p = v.results.framework_data() + size_t(i) * v.result_stride + offset;
  for (int k = 0; k < 4; ++k) p[k] = uint8_t(word >> (8 * k));
}

// A batch of random chain state and random records for the three NFs (fw at node 0, IPsec at
// node 1, NIDS at node 2). Records of packets that did not reach an NF hold garbage, as in a
// real batch (nothing wrote them).
void fill_random(Batch& b, std::mt19937& rng, double alerting) {
  BatchView v = b.view();
  std::uniform_int_distribution<uint32_t> any;
  for (uint32_t i = 0; i < v.count; ++i) {
    const uint32_t reached = rng() % 5;  // nodes 0 .. reached-1 saw the packet
    v.visited[i] = (1u << reached) - 1;
    const bool dropped = reached > 0 && rng() % 4 == 0;
    v.verdict[i] = dropped ? uint8_t(drop_reason(FirewallDrop::firewall_rule)) : uint8_t(DropReason::none);
    v.next_nf[i] = dropped ? uint8_t(reached - 1) : uint8_t(reached == 4 ? kChainDone : reached);
    const uint32_t fw_words[] = {0, 1, 4, kNoRule, kNotIpv4, any(rng)};
    store_word(v, i, kFwOffset, fw_words[rng() % 6]);
    const uint32_t sas[] = {0, 1, esp::kNoSa, any(rng)};
    store_word(v, i, kEspOffset, sas[rng() % 4]);
    store_word(v, i, kEspOffset + 4, any(rng));
    NidsResult r;
    if (std::uniform_real_distribution<double>(0, 1)(rng) < alerting) {
      const uint32_t fired = 1 + rng() % 10;  // more than 7 sometimes: counted, not kept
      for (uint32_t k = 0; k < fired; ++k) r.add((k * 3 + i) % kNidsRules);
    }
    r.store(v.results.subspan(size_t(i) * v.result_stride + kNidsOffset, kNidsResultBytes));
    store_word(v, i, kResultStride - 4, any(rng));
  }
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nlohmann::json report_of(const NetworkFunction& nf) {
  nlohmann::json j;
  nf.report(j);
  return j;
}

// Counts taken elsewhere (the device's, at the end of a GPU run) add to what the shards counted.
TEST(Collect, ShardCountersAddCountsFromElsewhere) {
  ShardCounters c(2, 3);
  c.shard(1)[1 * 3 + 2] = 5;  // shard 1, lane 1, slot 2
  c.add({7, 0, 1});
  c.add({1, 2});
  EXPECT_EQ(c.total(0), 8u);
  EXPECT_EQ(c.total(1), 2u);
  EXPECT_EQ(c.total(2), 6u);
}

// count_packets: each packet's count lands in its slot, in the lane of its index.
TEST(Collect, ShardCountersCountPacketsByLane) {
  ShardCounters c(2, 3);
  c.count_packets(1, 2, 11, [](uint32_t i) { return PacketCount{i % 3, i % 2 ? 1u : 0u}; });
  // Odd packets 3..9 count once each: 3 and 9 in slot 0, 7 in slot 1, 5 in slot 2.
  EXPECT_EQ(c.total(0), 2u);
  EXPECT_EQ(c.total(1), 1u);
  EXPECT_EQ(c.total(2), 1u);
  EXPECT_EQ(c.shard(1)[(9 % ShardCounters::kLanes) * 3 + 0], 1u);  // packet 9: lane 1
  EXPECT_EQ(c.shard(0)[0], 0u);                                      // shard 0 untouched
}

TEST(Collect, EveryNfCountsAsItsPerPacketReference) {
  auto fw = make_firewall(), fw_ref = make_firewall();
  auto esp = make_ipsec(), esp_ref = make_ipsec();
  auto ids = make_nids("a"), ids_ref = make_nids("b");
  std::mt19937 rng(7);
  Batch b(1000, 64, MemoryKind::host, kResultStride);
  for (double alerting : {0.0, 0.4, 1.0}) {
    for (uint32_t count : {1000u, 1u, 0u, 999u}) {
      b.set_count(count);
      fill_random(b, rng, alerting);
      const BatchView v = b.view();
      fw->collect(v, 0, CollectContext{});
      fw_ref->collect_per_packet(v, 0);
      esp->collect(v, 1, CollectContext{});
      esp_ref->collect_per_packet(v, 1);
      ids->collect(v, 2, CollectContext{});
      ids_ref->collect_per_packet(v, 2, CollectContext{});
      EXPECT_EQ(report_of(*fw), report_of(*fw_ref)) << "alerting " << alerting << " count " << count;
      EXPECT_EQ(report_of(*esp), report_of(*esp_ref)) << "alerting " << alerting << " count " << count;
      EXPECT_EQ(report_of(*ids), report_of(*ids_ref)) << "alerting " << alerting << " count " << count;
    }
  }
  // Something was counted (the test could not pass on empty reports).
  EXPECT_GT(ids->packets_alerted(), 0u);
  EXPECT_GT(ids->alerts_not_logged(), 0u);
  EXPECT_FALSE(report_of(*fw)["rule_hits"].empty());
  EXPECT_GT(report_of(*fw)["no_match"].get<uint64_t>(), 0u);
  EXPECT_GT(report_of(*esp)["sas"][1]["packets"].get<uint64_t>(), 0u);
}

TEST(Collect, NidsShardsTogetherCountAsTheWholeBatch) {
  auto ids = make_nids("c"), ids_ref = make_nids("d");
  EXPECT_EQ(ids->collect_shards(), Nids::kCollectShards);
  std::mt19937 rng(11);
  Batch b(777, 64, MemoryKind::host, kResultStride);
  b.set_count(777);
  fill_random(b, rng, 0.5);
  const BatchView v = b.view();
  // Shard 1 first: shards run at once, in any order.
  ids->collect_range(v, 2, CollectContext{}, 400, 777, 1);
  ids->collect_range(v, 2, CollectContext{}, 0, 400, 0);
  ids_ref->collect_per_packet(v, 2, CollectContext{});
  EXPECT_EQ(report_of(*ids), report_of(*ids_ref));
  EXPECT_GT(ids->alerts(), 0u);
}

TEST(Collect, FirewallAndIpsecShardsTogetherCountAsTheWholeBatch) {
  auto fw = make_firewall(), fw_ref = make_firewall();
  auto esp = make_ipsec(), esp_ref = make_ipsec();
  EXPECT_EQ(fw->collect_shards(), Firewall::kCollectShards);
  EXPECT_EQ(esp->collect_shards(), IpsecGateway::kCollectShards);
  std::mt19937 rng(17);
  Batch b(777, 64, MemoryKind::host, kResultStride);
  for (int round = 0; round < 3; ++round) {
    b.set_count(777);
    fill_random(b, rng, 0.5);
    const BatchView v = b.view();
    // Shard 1 first (shards run at once, in any order), split at an odd index so the lanes
    // of the two shards start at different packets.
    fw->collect_range(v, 0, CollectContext{}, 401, 777, 1);
    fw->collect_range(v, 0, CollectContext{}, 0, 401, 0);
    fw_ref->collect_per_packet(v, 0);
    esp->collect_range(v, 1, CollectContext{}, 401, 777, 1);
    esp->collect_range(v, 1, CollectContext{}, 0, 401, 0);
    esp_ref->collect_per_packet(v, 1);
    EXPECT_EQ(report_of(*fw), report_of(*fw_ref)) << "round " << round;
    EXPECT_EQ(report_of(*esp), report_of(*esp_ref)) << "round " << round;
  }
  EXPECT_FALSE(report_of(*fw)["rule_hits"].empty());
  EXPECT_GT(report_of(*esp)["sas"][0]["packets"].get<uint64_t>(), 0u);
  // A range past the batch is refused, not read.
  const BatchView v = b.view();
  EXPECT_DEATH(fw->collect_range(v, 0, CollectContext{}, 0, 778, 0), "out of bounds");
}

TEST(Collect, NidsWithAnAlertLogIsNotShardedAndLogsAsItsReference) {
  auto dir = testing::temp_dir("collect-log");
  auto ids = make_nids("e", "alerts: " + (dir / "new.json").string() + "\n");
  auto ids_ref = make_nids("f", "alerts: " + (dir / "ref.json").string() + "\n");
  EXPECT_EQ(ids->collect_shards(), 1u);
  ids->prepare(Backend::cpu);
  ids_ref->prepare(Backend::cpu);
  std::mt19937 rng(13);
  Batch b(300, 64, MemoryKind::host, kResultStride);
  b.set_count(300);
  fill_random(b, rng, 0.5);
  const BatchView v = b.view();
  for (uint32_t i = 0; i < v.count; ++i) {  // frames the log names: UDP from 192.168.x.y
    ipsec_test::FrameSpec spec;
    spec.src = 0xC0A80000u + i;
    const std::vector<uint8_t> f = ipsec_test::udp_frame(spec);
    std::memcpy(v.data.framework_data() + size_t(i) * v.stride, f.data(), f.size());
    v.len[i] = uint16_t(f.size());
    ASSERT_EQ(parse_headers(PacketRef(v, i).frame(), v.headers[i]), DropReason::none);
    v.wire_ns[i] = 1'700'000'000'000'000'000ull + i;
    v.seq[i] = i;
  }
  ids->collect(v, 2, CollectContext{"in", true});
  ids_ref->collect_per_packet(v, 2, CollectContext{"in", true});
  ids->finish();
  ids_ref->finish();
  const std::string got = read_file(dir / "new.json");
  EXPECT_NE(got.find("\"src_ip\":\"192.168."), std::string::npos) << got.substr(0, 300);
  EXPECT_EQ(got, read_file(dir / "ref.json"));
  EXPECT_EQ(report_of(*ids)["alerts"], report_of(*ids_ref)["alerts"]);
}

TEST(CollectScan, ChecksTheBatchOnceAndReadsLittleEndianWords) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Batch b(4, 64, MemoryKind::host, 8);
  b.set_count(4);
  const BatchView v = b.view();
  store_word(v, 3, 4, 0x11223344u);
  v.visited[3] = 0b100;
  const CollectScan scan(v, 4, 4);
  EXPECT_EQ(scan.word(3, 0), 0x11223344u);
  EXPECT_TRUE(scan.reached(3, 2));
  EXPECT_FALSE(scan.reached(3, 1));
  EXPECT_DEATH(CollectScan(v, 4, 8), "out of bounds");  // slice past the record
  BatchView longer = v;
  longer.count = 5;  // more packets than the arrays hold
  EXPECT_DEATH(CollectScan(longer, 0, 4), "out of bounds");
}

}  // namespace
}  // namespace gpunfv
