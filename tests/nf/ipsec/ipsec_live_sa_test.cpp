// Live SA changes on the CPU backend (IpsecGateway::add_sa, delete_sa): traffic moves between
// SAs from one batch to the next, an SA kept across a change keeps its sequence numbers and
// replay window, packets are counted per table version, and refused changes keep the live table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "nf/ipsec/ipsec.h"
#include "tests/nf/ipsec/ipsec_test_util.h"
#include "nf/ipsec/esp.h"

namespace gpunfv {
namespace {

using ipsec_test::EspBatch;
using ipsec_test::FrameSpec;
using ipsec_test::sa_config;
using ipsec_test::udp_frame;

uint32_t be32(const std::vector<uint8_t>& f, size_t o) {
  return uint32_t(f[o]) << 24 | uint32_t(f[o + 1]) << 16 | uint32_t(f[o + 2]) << 8 | f[o + 3];
}

std::vector<std::vector<uint8_t>> frames_to(const std::vector<uint32_t>& dsts) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t d : dsts) {
    FrameSpec s;
    s.dst = d;
    out.push_back(udp_frame(s));
  }
  return out;
}

// (SPI, sequence number) of every ESP frame of the batch, all of which must have passed.
std::vector<std::pair<uint32_t, uint32_t>> esp_headers(const EspBatch& b) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t i = 0; i < b.count(); ++i) {
    EXPECT_EQ(b.verdict(i), DropReason::none) << i;
    const std::vector<uint8_t> f = b.frame(i);
    out.emplace_back(be32(f, 34), be32(f, 38));
  }
  return out;
}

using Headers = std::vector<std::pair<uint32_t, uint32_t>>;
constexpr uint32_t kTo2 = 0xC0A80202, kTo3 = 0xC0A80303;  // 192.168.2.2, 192.168.3.3

TEST(IpsecLiveSa, AddedMoreSpecificSaTakesItsTrafficAndDeletingItGivesItBack) {
  IpsecGateway nf("out", IpsecDirection::outbound, {sa_config(0x1000, 1, "192.168.0.0/16")});
  nf.prepare(Backend::cpu);
  const auto frames = frames_to({kTo2, kTo3, kTo2});
  uint64_t ingress = 0;
  auto batch = [&] {
    EspBatch b(frames, ingress);
    ingress += frames.size();
    ipsec_test::run(nf, b);
    return esp_headers(b);
  };
  EXPECT_EQ(batch(), (Headers{{0x1000, 1}, {0x1000, 2}, {0x1000, 3}}));

  EXPECT_EQ(nf.add_sa(sa_config(0x2000, 2, "192.168.2.0/24"), "add 2000"), 2u);
  // 192.168.2.x now takes the new SA from 1; the kept SA goes on from 4.
  EXPECT_EQ(batch(), (Headers{{0x2000, 1}, {0x1000, 4}, {0x2000, 2}}));
  EXPECT_EQ(batch(), (Headers{{0x2000, 3}, {0x1000, 5}, {0x2000, 4}}));

  EXPECT_EQ(nf.delete_sa(0x2000, "del 2000"), 3u);
  EXPECT_EQ(batch(), (Headers{{0x1000, 6}, {0x1000, 7}, {0x1000, 8}}));

  // Re-added, the SPI is a new SA: numbered from 1 again.
  EXPECT_EQ(nf.add_sa(sa_config(0x2000, 3, "192.168.2.0/24"), "add 2000 again"), 4u);
  EXPECT_EQ(batch(), (Headers{{0x2000, 1}, {0x1000, 9}, {0x2000, 2}}));

  const nlohmann::json v = nf.table_versions()->json();
  ASSERT_EQ(v.size(), 4u);
  const uint64_t expect_packets[] = {3, 6, 3, 3};
  const uint64_t expect_entries[] = {1, 2, 1, 2};
  for (size_t k = 0; k < v.size(); ++k) {
    EXPECT_EQ(v[k]["packets"].get<uint64_t>(), expect_packets[k]) << k;
    EXPECT_EQ(v[k]["entries"].get<uint64_t>(), expect_entries[k]) << k;
  }
  EXPECT_EQ(v[1]["change"], "add 2000");
  nlohmann::json report;
  nf.report(report);
  EXPECT_EQ(report["table_version"], 4u);
  ASSERT_EQ(report["sas"].size(), 3u);  // every SA of the run, the deleted one marked
  EXPECT_EQ(report["sas"][1]["spi"], "0x00002000");
  EXPECT_EQ(report["sas"][1].value("deleted", false), true);
  EXPECT_FALSE(report["sas"][2].contains("deleted"));
}

TEST(IpsecLiveSa, KeptSaKeepsItsReplayWindowAndADeletedSpiIsUnknown) {
  const std::vector<esp::SaConfig> sas = {sa_config(0x1000, 1, "192.168.2.0/24"),
                                          sa_config(0x2000, 2, "192.168.3.0/24")};
  IpsecGateway out("out", IpsecDirection::outbound, sas);
  IpsecGateway in("in", IpsecDirection::inbound, sas);
  out.prepare(Backend::cpu);
  in.prepare(Backend::cpu);
  EspBatch clear(frames_to({kTo2, kTo2, kTo3, kTo2}));
  ipsec_test::run(out, clear);
  std::vector<std::vector<uint8_t>> esp;
  for (uint32_t i = 0; i < clear.count(); ++i) esp.push_back(clear.frame(i));

  EspBatch first({esp[0], esp[1], esp[2]}, 0);
  ipsec_test::run(in, first);
  for (uint32_t i = 0; i < first.count(); ++i) EXPECT_EQ(first.verdict(i), DropReason::none);

  EXPECT_EQ(in.add_sa(sa_config(0x3000, 3), "add 3000"), 2u);
  // 0x1000 #1 again is a replay (the window was kept); 0x1000 #3 is new.
  EspBatch second({esp[0], esp[3]}, 3);
  ipsec_test::run(in, second);
  EXPECT_EQ(second.verdict(0), drop_reason(IpsecDrop::esp_replay));
  EXPECT_EQ(second.verdict(1), DropReason::none);

  EXPECT_EQ(in.delete_sa(0x1000, "del 1000"), 3u);
  EspBatch third({esp[3], esp[2]}, 5);
  ipsec_test::run(in, third);
  EXPECT_EQ(third.verdict(0), drop_reason(IpsecDrop::esp_unknown_spi));
  EXPECT_EQ(third.verdict(1), drop_reason(IpsecDrop::esp_replay));  // 0x2000's window kept too
}

TEST(IpsecLiveSa, OutboundTrafficOfADeletedSaFollowsBypassOrDrops) {
  for (bool bypass : {false, true}) {
    IpsecGateway nf("out", IpsecDirection::outbound,
                    {sa_config(0x1000, 1, "192.168.2.0/24"), sa_config(0x2000, 2, "192.168.3.0/24")},
                    bypass);
    nf.prepare(Backend::cpu);
    nf.delete_sa(0x2000, "del");
    EspBatch b(frames_to({kTo2, kTo3}));
    const std::vector<uint8_t> plain = b.frame(1);
    ipsec_test::run(nf, b);
    EXPECT_EQ(b.verdict(0), DropReason::none);
    EXPECT_EQ(b.verdict(1), bypass ? DropReason::none : drop_reason(IpsecDrop::ipsec_no_sa));
    if (bypass) {
      EXPECT_EQ(b.frame(1), plain);
    }
  }
}

// The message of a refused change, which must not hold a key of any SA involved.
std::string refusal(const std::function<void()>& change) {
  try {
    change();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "not refused";
  return {};
}

TEST(IpsecLiveSa, RefusedChangesKeepTheLiveTable) {
  IpsecGateway nf("out", IpsecDirection::outbound,
                  {sa_config(0x1000, 1, "192.168.2.0/24"), sa_config(0x2000, 2, "192.168.3.0/24")},
                  false, 0, 3);
  nf.prepare(Backend::cpu);
  EXPECT_EQ(refusal([&] { nf.add_sa(sa_config(0x1000, 5, "10.0.0.0/8"), "x"); }),
            "SPI 0x00001000 exists already (sa del it first)");
  EXPECT_EQ(refusal([&] { nf.add_sa(sa_config(0x3000, 5, "192.168.3.0/24"), "x"); }),
            "match: SA 0x00002000 protects 192.168.3.0/24 already");
  EXPECT_EQ(refusal([&] { nf.add_sa(sa_config(0x3000, 5), "x"); }),
            "outbound SA 0x00003000: missing key 'match' (the destination prefix it protects)");
  EXPECT_EQ(refusal([&] { nf.delete_sa(0x4000, "x"); }), "no SA with SPI 0x00004000");
  EXPECT_EQ(nf.table_version(), 1u);
  EXPECT_EQ(nf.table().size(), 2u);

  // max_sas counts every SA of the run: a deleted SA's slot is not given out again.
  EXPECT_EQ(nf.add_sa(sa_config(0x3000, 5, "10.0.0.0/8"), "x"), 2u);
  EXPECT_EQ(nf.delete_sa(0x3000, "x"), 3u);
  EXPECT_EQ(refusal([&] { nf.add_sa(sa_config(0x3000, 5, "10.0.0.0/8"), "x"); }),
            "the run has had max_sas (3) SAs: deleted SAs' slots are reused only after a restart");
  EXPECT_EQ(nf.table_version(), 3u);
  EXPECT_EQ(nf.table().size(), 2u);

  // Traffic still takes the live table.
  EspBatch b(frames_to({kTo2, kTo3}));
  ipsec_test::run(nf, b);
  EXPECT_EQ(esp_headers(b), (Headers{{0x1000, 1}, {0x2000, 1}}));
}

}  // namespace
}  // namespace gpunfv
