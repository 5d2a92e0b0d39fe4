// The handle-burst forward loop through the generic ZeroCopyIo calls (the path a forward takes
// between ports that offer handle bursts but are not DPDK ethdevs): an in-memory port whose
// handles are frames of known length. Packets exact in every byte-counting mode, bytes exact or
// marked not counted, frames the target refuses freed and counted with their reason.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "io/forward/forwarder.h"
#include "io/zero_copy.h"

namespace gpunfv {
namespace {

struct Frame {
  uint32_t len;
};

// rx hands out queued frames; tx keeps what it takes, at most `tx_room` in all.
class MemoryPort final : public Port, public ZeroCopyIo {
 public:
  MemoryPort(const std::string& name, uint16_t id) : Port(name, id) {}
  std::string_view type() const override { return "memory"; }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch&, uint32_t) override { return 0; }
  bool rx_done() const override { return false; }
  bool tx(const BatchView&, uint32_t) override { return false; }
  std::string describe() const override { return "memory"; }
  ZeroCopyIo* zero_copy() override { return this; }

  std::string_view zc_kind() const override { return "memory-frame"; }
  uint32_t zc_rx(FrameRef*, uint32_t) override { return 0; }
  uint32_t zc_tx(const FrameRef*, uint32_t) override { return 0; }
  void zc_free(const FrameRef*, uint32_t) override {}
  bool zc_handle_bursts() const override { return true; }
  uint32_t zc_rx_handles(void** handles, uint32_t max, uint64_t* bytes) override {
    uint32_t n = 0;
    uint64_t b = 0;
    for (; n < max && !rx_queue.empty(); ++n) {
      handles[n] = rx_queue.front();
      b += rx_queue.front()->len;
      rx_queue.pop_front();
    }
    if (bytes) *bytes = b;
    return n;
  }
  uint32_t zc_tx_handles(void* const* handles, uint32_t n) override {
    ++tx_calls;
    uint32_t took = 0;
    for (; took < n && sent.size() < tx_room; ++took) sent.push_back(static_cast<Frame*>(handles[took]));
    return took;
  }
  uint64_t zc_handle_bytes(void* const* handles, uint32_t n) const override {
    uint64_t b = 0;
    for (uint32_t k = 0; k < n; ++k) b += static_cast<const Frame*>(handles[k])->len;
    return b;
  }
  void zc_free_handles(void* const*, uint32_t n) override { freed += n; }

  std::deque<Frame*> rx_queue;
  std::vector<Frame*> sent;
  size_t tx_room = SIZE_MAX;
  uint64_t freed = 0;
  uint64_t tx_calls = 0;
};

struct Outcome {
  PortCounters from, to;
  ForwardResult result;
  std::vector<Frame*> sent;
  uint64_t freed = 0;
  uint64_t tx_calls = 0;
};

// Both loops: burst 7 with groups of 3 (frames wait for the next burst: run_bursts), burst 32
// with groups of 8 (every turn posts all it got: run_whole_bursts) and with groups of 32 (one
// post a turn: run_whole_bursts<true>).
struct Shape {
  uint32_t burst, descriptor_batch;
};
constexpr Shape kShapes[] = {{7, 3}, {32, 8}, {32, 32}};

void forward(std::vector<Frame>& frames, ByteCounting counting, size_t tx_room, Shape shape, Outcome& r,
             uint32_t latency_sample = 64) {
  MemoryPort a("a", 0), b("b", 1);
  for (Frame& f : frames) a.rx_queue.push_back(&f);
  b.tx_room = tx_room;
  ForwardParams spec;
  spec.name = "a=>b";
  spec.from = 0, spec.to = 1;
  spec.burst = shape.burst;
  spec.descriptor_batch = shape.descriptor_batch;
  spec.count_bytes = counting;
  spec.latency_sample = latency_sample;
  Forwarder fw(spec, a, b, r.from, r.to);
  EXPECT_TRUE(fw.handle_bursts());
  fw.run([&] { return r.from.rx_packets.load() >= frames.size(); });
  r.result = fw.result();
  r.sent = b.sent;
  r.freed = a.freed;
  r.tx_calls = b.tx_calls;
}

TEST(HandleBurstForward, CountsPacketsExactlyAndBytesExactlyOrNotAtAll) {
  std::vector<Frame> frames;
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < 1000; ++i) frames.push_back(Frame{60 + i % 1400}), bytes += 60 + i % 1400;
  for (Shape shape : kShapes)
  for (ByteCounting counting : {ByteCounting::exact, ByteCounting::off}) {
    SCOPED_TRACE(fmt::format("{}, burst {}", counting == ByteCounting::off ? "off" : "exact", shape.burst));
    Outcome r;
    forward(frames, counting, SIZE_MAX, shape, r);
    EXPECT_EQ(r.from.rx_packets.load(), 1000u);
    EXPECT_EQ(r.to.tx_packets.load(), 1000u);
    EXPECT_EQ(r.from.forwarded.load(), 1000u);
    EXPECT_EQ(r.result.sent, 1000u);
    ASSERT_EQ(r.sent.size(), 1000u);
    for (size_t i = 0; i < r.sent.size(); ++i) EXPECT_EQ(r.sent[i], &frames[i]) << i;
    const bool exact = counting == ByteCounting::exact;
    EXPECT_EQ(r.result.byte_counts, exact ? "frame lengths" : "off");
    EXPECT_EQ(r.from.rx_bytes_counted.load(), exact);
    EXPECT_EQ(r.to.tx_bytes_counted.load(), exact);
    EXPECT_EQ(r.from.rx_bytes.load(), exact ? bytes : 0u);
    EXPECT_EQ(r.to.tx_bytes.load(), exact ? bytes : 0u);
  }
}

// The target takes 500 frames; the other 500 are freed and counted as port_tx_error, and tx
// bytes are those of the frames it took.
TEST(HandleBurstForward, FramesTheTargetRefusesAreFreedAndCounted) {
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 1000; ++i) frames.push_back(Frame{64 + i});
  for (Shape shape : kShapes)
  for (ByteCounting counting : {ByteCounting::exact, ByteCounting::off}) {
    SCOPED_TRACE(fmt::format("{}, burst {}", counting == ByteCounting::off ? "off" : "exact", shape.burst));
    Outcome r;
    forward(frames, counting, 500, shape, r);
    EXPECT_EQ(r.from.rx_packets.load(), 1000u);
    EXPECT_EQ(r.to.tx_packets.load(), 500u);
    EXPECT_EQ(r.result.drops[DropReason::port_tx_error], 500u);
    EXPECT_EQ(r.from.dropped_total.load(), 500u);
    EXPECT_EQ(r.freed, 500u);
    uint64_t took = 0;
    for (const Frame* f : r.sent) took += f->len;
    if (counting == ByteCounting::exact) {
      EXPECT_EQ(r.to.tx_bytes.load(), took);
    }
  }
}

// One rx burst in latency_sample is timed (from the first), the rest sent untimed; a post is one
// tx call. 1000 frames: bursts of 32 are 31 full and one of 8, 8 of them timed (1, 5, .., 29);
// bursts of 7 are 142 full and one of 6, 36 timed (1, 5, .., 141).
TEST(HandleBurstForward, TimesOneBurstInLatencySampleAndCountsEveryPost) {
  std::vector<Frame> frames(1000, Frame{64});
  struct Expect {
    Shape shape;
    uint64_t timed, posts;  // posts 0: not checked beyond tx calls (frames wait between turns)
  };
  for (Expect e : {Expect{{7, 3}, 36 * 7, 0}, Expect{{32, 8}, 8 * 32, 31 * 4 + 1}, Expect{{32, 32}, 8 * 32, 32}}) {
    SCOPED_TRACE(fmt::format("burst {}, groups of {}", e.shape.burst, e.shape.descriptor_batch));
    Outcome r;
    forward(frames, ByteCounting::off, SIZE_MAX, e.shape, r, 4);
    EXPECT_EQ(r.result.sent, 1000u);
    EXPECT_EQ(r.result.latency_sample, 4u);
    EXPECT_EQ(r.result.latency.count(), e.timed);
    EXPECT_EQ(r.result.posts, r.tx_calls);
    if (e.posts) {
      EXPECT_EQ(r.result.posts, e.posts);
    }
  }
}

}  // namespace
}  // namespace gpunfv
