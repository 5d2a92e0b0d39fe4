// The ring loops' NF hook (chain/ring_nf_hook.h) contains an NF that reaches outside its memory:
// the faulting packet is dropped as nf_isolation_fault, and with a quarantine flag every later
// packet is too, without running the NF, as the batch path quarantines an NF.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "chain/ring_nf_hook.h"
#include "tests/fixtures/frames.h"

namespace gpunfv {
namespace {

// Writes past its frame for a packet whose TTL is 1; counts the packets it ran on.
struct StrayView {
  IsoSpan<uint32_t> runs;
};
struct StrayReader {
  GPUNFV_HD NfVerdict operator()(const StrayView& v, PacketRef p) const {
    v.runs[0] += 1;
    if (p.frame()[22] == 1) p.frame()[p.length() + 64] = 0;
    return DropReason::none;
  }
};

// Runs the hook on one frame in a 2 KiB slot; returns its verdict.
DropReason run(const gpuring::NfPacketHook<StrayView, StrayReader>& hook, uint8_t ttl) {
  std::vector<uint8_t> slot(2048, 0);
  fixtures::Ipv4Fields h;
  h.ttl = ttl;
  h.dst = 0x0A000001;
  const std::vector<uint8_t> f = fixtures::ipv4_frame(h);
  std::copy(f.begin(), f.end(), slot.begin());
  uint32_t len = uint32_t(f.size());
  return hook(slot.data(), uint32_t(slot.size()), len, 0);
}

TEST(RingNfHook, AFaultQuarantinesTheNfForLaterPackets) {
  uint32_t runs = 0, quarantine = 0;
  const auto hook = gpuring::nf_hook(StrayView{IsoSpan<uint32_t>(&runs, 1)}, StrayReader{},
                                     IsoSpan<uint32_t>(&quarantine, 1));
  EXPECT_EQ(run(hook, 64), DropReason::none);
  EXPECT_EQ(run(hook, 1), DropReason::nf_isolation_fault);
  EXPECT_EQ(quarantine, 1u);
  EXPECT_EQ(run(hook, 64), DropReason::nf_isolation_fault);
  EXPECT_EQ(runs, 2u);  // the packet after the fault did not reach the NF
}

TEST(RingNfHook, WithoutAFlagAFaultDropsItsPacketOnly) {
  uint32_t runs = 0;
  const auto hook = gpuring::nf_hook(StrayView{IsoSpan<uint32_t>(&runs, 1)}, StrayReader{});
  EXPECT_EQ(run(hook, 1), DropReason::nf_isolation_fault);
  EXPECT_EQ(run(hook, 64), DropReason::none);
  EXPECT_EQ(runs, 2u);
}

}  // namespace
}  // namespace gpunfv
