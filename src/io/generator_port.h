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

  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override;
  bool tx(const BatchView&, uint32_t) override { return false; }
  // Live mode (`live: true`): frames keep arriving at the rate whether or not they are taken;
  // a receive queue of `ring` frames holds them, and what overflows it is lost here.
  uint64_t take_rx_drops() override;

  uint32_t max_frame_bytes() const override { return sizes_.max; }
  std::string describe() const override;

  uint64_t generated() const { return generated_; }
  size_t flow_count() const { return flows_.size(); }

  static constexpr uint32_t kHeaderBytes = 42;  // Ethernet 14 + IPv4 20 + UDP 8
  static constexpr uint32_t kMaxFlows = 1u << 20;

 private:
  // One flow's pre-built headers plus the checksum sums over its fixed fields.
  struct alignas(64) FlowTemplate {
    uint8_t header[kHeaderBytes];
    uint32_t ip_sum;   // IPv4 header words, total length, ID and checksum taken as 0
    uint32_t udp_sum;  // pseudo-header addresses and protocol, plus the two ports
  };

  void build_flows(const ConfigNode& node, const PortContext& ctx);
  void build_payload();
  uint32_t draw_size();
  void write_frame(uint8_t* out, uint32_t size, const FlowTemplate& flow, uint16_t ip_id) const;
  double cost(uint32_t size) const;  // tokens one frame of `size` bytes takes
  void refill(uint64_t now_ns);

  // Configuration
  GeneratorRate rate_;
  std::string rate_text_{"0"}, size_text_{"64"}, dst_from_;
  FrameSizes sizes_;
  uint64_t count_ = 0;        // 0: no packet limit
  uint64_t duration_ns_ = 0;  // 0: no time limit
  uint64_t seed_ = 1;
  bool live_ = false;
  uint32_t ring_ = 4096;  // live: receive queue, in frames

  // Pre-built data
  std::vector<FlowTemplate> flows_;
  std::vector<uint8_t> payload_;       // pattern copied after the headers
  std::vector<uint16_t> payload_sum_;  // ones' complement sum of payload_[0, n), by n
  std::vector<uint8_t> scratch_;       // a frame larger than the batch slot is built here

  // Running state
  uint64_t generated_ = 0;
  uint32_t next_flow_ = 0;
  uint16_t next_ip_id_ = 0;
  uint32_t next_size_ = 64;  // size of the next frame, drawn ahead so pacing can price it
  uint64_t imix_pos_ = 0;
  SplitMix64 size_rng_{0};
  bool started_ = false;
  uint64_t start_ns_ = 0;  // CLOCK_MONOTONIC of the first rx_burst

  // Token bucket (CLOCK_MONOTONIC): tokens are packets or bits, per the rate's unit.
  double tokens_ = 0;
  double tokens_per_ns_ = 0;
  double bucket_depth_ = 0;
  uint64_t last_refill_ns_ = 0;
  double overflow_tokens_ = 0;  // live: tokens past the ring, not yet counted as drops
};

}  // namespace gpunfv
