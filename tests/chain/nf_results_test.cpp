// The per-packet results record: each NF gets its own slice, writes it per packet, and reads
// it back in collect() on the egress thread, in ingress order.
#include <gtest/gtest.h>

#include <cstring>

#include "chain/executor.h"
#include "config/config.h"
#include "nf/run_per_packet.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

#define TAG_DROPS(X) X(tag_drop, "dropped by the tests' tag NF")
GPUNFV_NF_DROP_REASONS(TagDrop, "tag", TAG_DROPS);

struct TagView {
  uint32_t offset;
  uint32_t tag;
};

// Writes (tag, frame length) into its slice of every packet it sees; drops every 10th frame
// by length so collect() sees both outcomes.
struct TagLogic {
  NfVerdict operator()(const TagView& v, PacketRef p) const {
    IsoSpan<uint8_t> r = p.results();
    uint32_t words[2] = {v.tag, p.length()};
    for (int i = 0; i < 8; ++i) r[i] = reinterpret_cast<const uint8_t*>(words)[i];
    return p.length() % 10 == 0 ? NfVerdict(TagDrop::tag_drop) : DropReason::none;
  }
};

class TagNf final : public NetworkFunction {
 public:
  TagNf(std::string name, uint32_t tag) : NetworkFunction(std::move(name)), tag_(tag) {}
  std::string_view type() const override { return "tag"; }
  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t pos) const override {
    run_per_packet_cpu(b, begin, end, pos, TagView{result_offset(), tag_}, TagLogic{},
                       NfSlot(first_drop_code<TagDrop>(), result_offset(), 8));
  }
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  uint32_t result_bytes() const override { return 8; }
  std::string describe() const override { return "tag"; }
  void collect(const BatchView& b, uint8_t pos, const CollectContext& ctx) override {
    EXPECT_EQ(ctx.port_name, "in");
    EXPECT_TRUE(ctx.from_pcap);
    for (uint32_t i = 0; i < b.count; ++i) {
      if (!reached_node(b, i, pos)) continue;
      uint32_t words[2];
      std::memcpy(words, b.results.framework_data() + size_t(i) * b.result_stride + result_offset(), 8);
      if (words[0] == tag_ && words[1] == b.len[i]) ++good;
      EXPECT_GE(b.seq[i], next_seq);  // ingress order: sequence numbers only grow
      next_seq = b.seq[i] + 1;
      ++seen;
    }
  }
  uint32_t tag_;
  uint64_t seen = 0, good = 0, next_seq = 0;
};

TEST(NfResults, EachNfReadsBackItsOwnSliceInOrder) {
  auto dir = testing::temp_dir("results");
  std::string cfg = testing::write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + testing::source_dir() + R"(/data/traces/SIP_CALL_RTP_G711.pcap}
  - {name: out, type: discard}
chains:
  - {from: in, path: [], to: out}
settings: {batch_size: 100, workers: 3}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  rc.nfs.push_back(std::make_unique<TagNf>("a", 0xA));
  rc.nfs.push_back(std::make_unique<TagNf>("b", 0xB));
  rc.chains[0].set_path({0, 1});
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  auto& a = static_cast<TagNf&>(*rc.nfs[0]);
  auto& b = static_cast<TagNf&>(*rc.nfs[1]);
  EXPECT_EQ(a.result_offset(), 0u);
  EXPECT_EQ(b.result_offset(), 8u);
  EXPECT_EQ(a.seen, s.nfs[0].in);
  EXPECT_EQ(a.good, a.seen);
  EXPECT_EQ(b.seen, s.nfs[1].in);
  EXPECT_EQ(b.good, b.seen);
  EXPECT_GT(s.nfs[0].drops.total(), 0u);
  EXPECT_EQ(s.nfs[1].in, s.nfs[0].out);
}

}  // namespace
}  // namespace gpunfv
