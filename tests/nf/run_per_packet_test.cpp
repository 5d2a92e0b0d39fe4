// The framework's per-packet driver (nf/run_per_packet.h) on the CPU: a packet whose NF
// function reached outside the NF's memory is dropped as nf_isolation_fault at the NF, what the
// function said notwithstanding; the packets around it are untouched.
#include "nf/run_per_packet.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"

namespace gpunfv {
namespace {

using fixtures::FrameBatch;

struct ReachView {
  uint8_t reach_ttl;  // packets with this TTL write past their slot
};
struct ReachLogic {
  GPUNFV_HD NfVerdict operator()(const ReachView& v, PacketRef p) const {
    IsoSpan<uint8_t> f = p.frame();
    if (f[p.headers().l3_off + 8] == v.reach_ttl) p.slot()[p.slot().size() + 1] = 0xEE;
    f[0] = 0x0A;  // the NF's own write, kept for packets that did not fault
    return DropReason::none;
  }
};

TEST(RunPerPacket, PacketThatReachedOutsideIsDroppedAsIsolationFault) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t ttl : {10, 20, 10, 30}) frames.push_back(fixtures::ipv4_frame({.ttl = ttl}));
  FrameBatch b(frames, {.stride = 128});
  const uint32_t ran = run_per_packet_cpu(b.view(), 0, b.count(), 0, ReachView{20}, ReachLogic{}, 0);
  EXPECT_EQ(ran, 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    const bool faulted = i == 1;
    EXPECT_EQ(b.verdict(i), faulted ? DropReason::nf_isolation_fault : DropReason::none) << i;
    EXPECT_EQ(b.next_nf(i), faulted ? 0 : 1) << i;
    // The refused write landed nowhere: the next packet's first byte is its own NF write or,
    // for the last, untouched.
    EXPECT_EQ(b.frame(i)[0], 0x0A) << i;
    EXPECT_EQ(b.frame(i).size(), frames[i].size()) << i;
    EXPECT_TRUE(std::equal(frames[i].begin() + 1, frames[i].end(), b.frame(i).begin() + 1)) << i;
  }
}

}  // namespace
}  // namespace gpunfv
