// Slot indirection (BatchView::slot_index): a batch naming its packets' slots through an index
// array, in any order and in a larger slot area (as GPU ring slots are), gives the same NF
// results, bit for bit, as the same packets laid out directly (packet i in slot i).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "chain/processing_stage.h"
#include "config/config.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/gpu_equals_cpu.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

// G-NET's S_d over the bundled SIP/RTP capture: every NF that reads or rewrites frame bytes
// (firewall, IPsec encapsulation growing the packet, NIDS, router).
std::string sd_config() { return testing::write_sd_chain_config("slot-index", 256); }

TEST(SlotIndex, IndirectBatchGivesTheSameNfResults) {
  // Two configurations, so each side's stateful NFs (IPsec sequence numbers) see the same
  // packets in the same order.
  RuntimeConfig direct_rc = load_runtime_config(sd_config());
  RuntimeConfig indirect_rc = load_runtime_config(sd_config());
  for (auto* rc : {&direct_rc, &indirect_rc})
    for (auto& nf : rc->nfs) nf->prepare(Backend::cpu);
  const BatchShape shape = plan_batch_shape(direct_rc);
  plan_batch_shape(indirect_rc);  // gives its NFs their result offsets
  const uint32_t cap = shape.capacity, stride = shape.stride;
  Port& in = *direct_rc.ports[0];

  uint64_t compared = 0, indirect_slots_used = 0;
  while (!in.rx_done()) {
    Batch direct(cap, stride, MemoryKind::host, shape.result_stride);
    while (direct.count() < cap && !in.rx_done()) in.rx_burst(direct, cap - direct.count());
    const uint32_t n = direct.count();
    if (n == 0) break;

    // The same packets, metadata copied, bytes scattered over twice as many slots in reverse
    // order, skipping every other slot.
    Batch meta(cap, stride, MemoryKind::host, shape.result_stride);
    std::memcpy(meta.base(), direct.base(), direct.layout().bytes);
    meta.set_count(n);
    std::vector<uint8_t> area(size_t(2) * cap * stride, 0xEE);
    std::vector<uint32_t> slot(cap);
    for (uint32_t i = 0; i < n; ++i) {
      slot[i] = 2 * (cap - 1 - i) + 1;
      std::memcpy(area.data() + size_t(slot[i]) * stride,
                  direct.view().data.framework_data() + size_t(i) * stride, stride);
    }
    BatchView a = direct.view();
    BatchView b = meta.view();
    b.data = IsoSpan<uint8_t>(area.data(), area.size());
    b.slot_index = IsoSpan<uint32_t>(slot.data(), cap);
    ASSERT_EQ(slot_offset(b, 0), size_t(slot[0]) * stride);
    ASSERT_EQ(slot_offset(a, 3), size_t(3) * stride);

    run_chain_cpu(direct_rc, direct_rc.chains[0], a);
    run_chain_cpu(indirect_rc, indirect_rc.chains[0], b);
    compared += fixtures::expect_views_equal(a, b);
    ASSERT_FALSE(::testing::Test::HasFailure());
    // The slots the index skips were never written.
    for (uint32_t i = 0; i < n; ++i) indirect_slots_used += area[size_t(2 * i) * stride] == 0xEE;
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_EQ(indirect_slots_used, compared);
}

}  // namespace
}  // namespace gpunfv
