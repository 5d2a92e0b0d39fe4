// `type: generator` port (rx only): synthetic Ethernet/IPv4/UDP traffic for benchmarks.
//
//   - name: gen
//     type: generator
//     rate: 10Mpps          # or 40Gbps, 500kpps...; 0 or absent: as fast as possible
//     size: 64              # or imix, or 64-1518
//     flows: 1024           # distinct 5-tuples, packets cycle through them
//     count: 1000000        # stop after this many packets, and/or
//     duration: 10          # after this many seconds (at least one of the two)
//     seed: 1               # same seed, same frames
//     dst_from: router      # draw destinations from this router NF's prefixes
//     queues: 4             # rx queues, flows spread by RSS (default 1)
//
// Queues: each flow belongs to one queue, chosen as a NIC's RSS would (Toeplitz hash of the
// addresses and ports, Microsoft key, 128-entry redirection table filled round robin). Frame k
// of the port (k = 0, 1, ...) uses flow k mod flows, IP ID k mod 65536 and a size that depends
// only on k and the seed; queue q produces, in increasing k, exactly the frames whose flow is
// its own. So for a given seed and count the union of the queues is the same multiset of frames
// as one queue's, and each flow's frames come in the same order. Every queue has its own state
// and token bucket (rate x its share of the flows; `ring:` frames each when live), so queues run
// on different threads without locks. duration: counts from the first rx on any queue.
//
// Frames are built from one pre-built header template per flow and a shared payload pattern;
// per packet only the lengths, IP ID and the two checksums are patched, the checksums from
// precomputed partial sums, so a core produces tens of millions of frames per second.
//
// Pacing is a token bucket on CLOCK_MONOTONIC holding at most 1 ms of traffic: like a NIC's
// rx ring, frames due while the consumer is stalled for longer are lost, not burst later.
// rx_burst waits (spinning) at most 50 us for a token, else returns 0. duration: counts from
// the first rx_burst. wire_ns is CLOCK_REALTIME, one reading per burst.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/splitmix64.h"
#include "io/generator_config.h"
#include "io/port.h"
#include "io/port_factory.h"

namespace gpunfv {

class GeneratorPort final : public Port {
 public:
  // Throws ConfigError (bad keys or values, unknown dst_from router).
  GeneratorPort(const ConfigNode& node, uint16_t id, const PortContext& ctx);

  std::string_view type() const override { return "generator"; }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return false; }

  // Queue-less calls take every queue in turn.
  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override;
  bool tx(const BatchView&, uint32_t) override { return false; }
  // Live mode (`live: true`): frames keep arriving at the rate whether or not they are taken;
  // a receive queue of `ring` frames holds them, and what overflows it is lost here.
  uint64_t take_rx_drops() override;

  uint16_t rx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint32_t rx_queue_burst(uint16_t queue, Batch& b, uint32_t max) override;
  bool rx_queue_done(uint16_t queue) const override;
  uint64_t take_rx_queue_drops(uint16_t queue) override;

  uint32_t max_frame_bytes() const override { return sizes_.max; }
  std::string describe() const override;

  // Frames produced (or lost, live) so far, over all queues; not safe while queues run.
  uint64_t generated() const;
  size_t flow_count() const { return flows_.size(); }
  // Flow indices of queue q, ascending.
  const std::vector<uint32_t>& queue_flows(uint16_t q) const { return queues_[q].flows; }

  static constexpr uint32_t kHeaderBytes = 42;  // Ethernet 14 + IPv4 20 + UDP 8
  static constexpr uint32_t kMaxFlows = 1u << 20;
  static constexpr uint32_t kMaxQueues = 128;  // entries of the RSS redirection table

 private:
  // One flow's pre-built headers plus the checksum sums over its fixed fields.
  struct alignas(64) FlowTemplate {
    uint8_t header[kHeaderBytes];
    uint32_t ip_sum;   // IPv4 header words, total length, ID and checksum taken as 0
    uint32_t udp_sum;  // pseudo-header addresses and protocol, plus the two ports
  };

  // One rx queue's running state, touched only by the thread polling that queue.
  struct alignas(64) Queue {
    std::vector<uint32_t> flows;  // flow indices, ascending
    uint64_t total = UINT64_MAX;  // frames this queue produces under count: (none: no limit)
    uint64_t generated = 0;
    uint64_t cycle = 0;           // next frame index: cycle * flows_.size() + flows[pos]
    uint32_t pos = 0;
    bool started = false;
    // Token bucket (CLOCK_MONOTONIC): tokens are packets or bits, per the rate's unit.
    double tokens = 0, tokens_per_ns = 0, bucket_depth = 0;
    double overflow_tokens = 0;  // live: tokens past the ring, not yet counted as drops
    uint64_t last_refill_ns = 0;
  };

  void build_flows(const ConfigNode& node, const PortContext& ctx);
  void build_payload();
  void build_queues(const ConfigNode& node);
  uint64_t frame_index(const Queue& q) const {
    return q.cycle * flows_.size() + q.flows[q.pos];
  }
  void advance(Queue& q, uint64_t frames) const;
  uint32_t size_of(uint64_t k) const;
  // Writes the frame, or its first `room` bytes if it is longer.
  void write_frame(uint8_t* out, uint32_t size, uint32_t room, const FlowTemplate& flow,
                   uint16_t ip_id) const;
  // Writes the frame (`header`: its kHeaderBytes, fields set) with streaming stores where it
  // pays; false where it wrote nothing.
  bool stream_frame(uint8_t* out, uint32_t size, uint32_t room, const uint8_t* header) const;
  double cost(uint32_t size) const;  // tokens one frame of `size` bytes takes
  void refill(Queue& q, uint64_t now_ns) const;
  bool past_duration(uint64_t now_ns) const;

  // Configuration
  GeneratorRate rate_;
  std::string rate_text_{"0"}, size_text_{"64"}, dst_from_;
  FrameSizes sizes_;
  uint64_t count_ = 0;        // 0: no packet limit
  uint64_t duration_ns_ = 0;  // 0: no time limit
  uint64_t seed_ = 1;
  uint64_t size_seed_ = 0;    // size: lo-hi draws a size per frame index from this
  bool live_ = false;
  uint32_t ring_ = 4096;  // live: receive queue, in frames, per rx queue
  // `stores:` frames of this many bytes or more are written with streaming stores (auto: 256,
  // stream: 0, plain: never).
  static constexpr uint32_t kStreamAutoMinBytes = 256;
  uint32_t stream_min_bytes_ = kStreamAutoMinBytes;

  // Pre-built data
  std::vector<FlowTemplate> flows_;
  std::vector<uint8_t> payload_;       // pattern copied after the headers
  std::vector<uint16_t> payload_sum_;  // ones' complement sum of payload_[0, n), by n

  // Running state
  std::vector<Queue> queues_;
  std::atomic<uint64_t> start_ns_{0};  // CLOCK_MONOTONIC of the first rx on any queue; 0: none
  uint16_t rx_turn_ = 0;               // queue-less rx_burst: the queue to try first
};

}  // namespace gpunfv
