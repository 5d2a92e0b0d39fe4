// A batch leaves ingress when it is full or when its first frame reaches the chain's batching
// deadline, also while frames keep arriving (a source that never polls empty), unless the chain
// has batches waiting (then it keeps filling: chain_flow_test). Time enters only through sleeps,
// which last at least as long as asked: the first batch, which nothing can wait ahead of, holds
// no more frames than arrive within the deadline after its first, however slow the machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "chain/executor.h"
#include "config/config.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

// Hands out the frames of a wrapped source one per poll, each poll first waiting `gap`: a
// trickle that never leaves a poll empty.
class TrickleSource final : public Port {
 public:
  TrickleSource(std::unique_ptr<Port> inner, uint32_t frames, std::chrono::microseconds gap)
      : Port(inner->name(), inner->id()), inner_(std::move(inner)), left_(frames), gap_(gap) {}
  std::string_view type() const override { return "trickle"; }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return false; }
  uint32_t rx_burst(Batch& b, uint32_t max) override {
    if (rx_done() || max == 0) return 0;
    std::this_thread::sleep_for(gap_);
    const uint32_t n = inner_->rx_burst(b, 1);
    left_ -= std::min(left_, n);
    if (n == 0) left_ = 0;
    return n;
  }
  bool rx_done() const override { return left_ == 0; }
  bool tx(const BatchView&, uint32_t) override { return false; }
  std::string describe() const override { return "trickle"; }

 private:
  std::unique_ptr<Port> inner_;
  uint32_t left_;
  std::chrono::microseconds gap_;
};

// Passes every packet and records the size of each batch it saw.
class BatchSizes final : public NetworkFunction {
 public:
  explicit BatchSizes(std::string name) : NetworkFunction(std::move(name)) {}
  std::string_view type() const override { return "batch_sizes"; }
  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t pos) const override {
    for (uint32_t i = begin; i < end; ++i)
      if (b.next_nf[i] == pos) b.next_nf[i] = uint8_t(pos + 1);
  }
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  void collect(const BatchView& b, uint8_t, const CollectContext&) override { sizes.push_back(b.count); }
  std::string describe() const override { return "batch sizes"; }
  std::vector<uint32_t> sizes;
};

RuntimeConfig trickle_config(const std::string& name, const std::string& chain_keys,
                             uint32_t frames, std::chrono::microseconds gap) {
  auto dir = testing::temp_dir(name);
  testing::write_file(dir / "empty.rules", "");
  RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + testing::source_dir() + R"(/data/traces/SIP_CALL_RTP_G711.pcap}
  - {name: out, type: discard}
nfs:
  - {name: p, type: firewall, rules: empty.rules, default: accept}
chains:
  - {from: in, path: [p], to: out)" + chain_keys + R"(}
settings: {batch_size: 1024, batches: 8, workers: 1}
)"));
  rc.ports[0] = std::make_unique<TrickleSource>(std::move(rc.ports[0]), frames, gap);
  rc.nfs[0] = std::make_unique<BatchSizes>("p");
  return rc;
}

TEST(BatchDeadline, ATrickleClosesBatchesOnAgeNotOnlyWhenFull) {
  // 1 ms between frames, 5 ms deadline: at most 6 frames in the first batch (the first, then 5
  // more at least 1 ms apart); waiting for a full batch would hold all 40 in one.
  RuntimeConfig rc = trickle_config("trickle", ", batch_deadline_us: 5000", 40,
                                    std::chrono::microseconds(1000));
  ASSERT_EQ(rc.chains[0].batch_deadline_us, 5000u);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_tx(), 40u);
  const auto& sizes = static_cast<BatchSizes&>(*rc.nfs[0]).sizes;
  ASSERT_GE(sizes.size(), 2u);
  EXPECT_LE(sizes[0], 6u);
}

TEST(BatchDeadline, DefaultsToAQuarterOfTheChainsBound) {
  RuntimeConfig rc = trickle_config("bound", ", latency_bound_us: 200", 1, std::chrono::microseconds(0));
  EXPECT_DOUBLE_EQ(rc.chains[0].latency_bound_us, 200.0);
  EXPECT_EQ(rc.chains[0].batch_deadline_us, 50u);
}

TEST(BatchDeadline, ChainBoundAndTimesAppearInTheReport) {
  RuntimeConfig rc = trickle_config("report", ", latency_bound_us: 250", 5, std::chrono::microseconds(0));
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  ASSERT_EQ(s.chains.size(), 1u);
  const auto& c = s.chains[0];
  EXPECT_DOUBLE_EQ(c["latency_bound_us"].get<double>(), 250.0);
  EXPECT_EQ(c["batch_deadline_us"].get<uint32_t>(), 62u);
  EXPECT_EQ(c["latency_ns"]["count"].get<uint64_t>(), 5u);
  EXPECT_LE(c["latency_ns"]["p50"].get<uint64_t>(), c["latency_ns"]["p99"].get<uint64_t>());
  EXPECT_LE(c["latency_ns"]["p99"].get<uint64_t>(), c["latency_ns"]["p999"].get<uint64_t>());
  EXPECT_EQ(c["bound_held"].get<bool>(), c["latency_ns"]["p99"].get<uint64_t>() <= 250'000u);
}

}  // namespace
}  // namespace gpunfv
