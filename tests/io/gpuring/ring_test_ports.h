// Ports the GPU ring tests share: a sink that keeps every frame it is sent (through
// slot_offset, so batches naming ring slots work too), and a generator of `count` frames.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../port_test_util.h"
#include "core/batch.h"
#include "io/generator_port.h"
#include "io/gpuring/ring/ring_params.h"
#include "io/port.h"

namespace gpunfv::gpuring::ring_test {

class RecordingPort final : public Port {
 public:
  RecordingPort() : Port("rec", 9) {}
  std::string_view type() const override { return "recording"; }
  bool has_rx() const override { return false; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch&, uint32_t) override { return 0; }
  bool rx_done() const override { return true; }
  bool tx(const BatchView& b, uint32_t i) override {
    const uint8_t* p = b.data.framework_data() + slot_offset(b, i);
    frames.emplace_back(p, p + b.len[i]);
    return true;
  }
  std::string describe() const override { return "recording"; }
  std::vector<std::vector<uint8_t>> frames;
};

// `size` and `flows` as the generator's keys ("64", "64-1500"); a test's own seed keeps its
// frames what they were when the test was written.
inline std::unique_ptr<GeneratorPort> make_generator(uint64_t count, const std::string& size,
                                                     uint32_t flows, uint64_t seed) {
  return std::make_unique<GeneratorPort>(
      gpunfv::test::yaml_node("name: gen\ntype: generator\nseed: " + std::to_string(seed) +
                              "\ncount: " + std::to_string(count) + "\nsize: " + size +
                              "\nflows: " + std::to_string(flows)),
      0, PortContext{});
}

// A generated frame's IPv4 ID, which the generator counts up packet by packet.
inline uint16_t ip_id(const std::vector<uint8_t>& f) { return uint16_t(f[18] << 8 | f[19]); }

// Every frame a source port gives, by IP ID: what a test expects out of the rings.
inline std::map<uint16_t, std::vector<uint8_t>> frames_by_ip_id(Port& source) {
  std::map<uint16_t, std::vector<uint8_t>> out;
  Batch b(64, 2048, MemoryKind::host);
  while (!source.rx_done()) {
    b.set_count(0);
    source.rx_burst(b, 64);
    const BatchView v = b.view();
    for (uint32_t i = 0; i < b.count(); ++i) {
      const uint8_t* p = v.data.framework_data() + slot_offset(v, i);
      std::vector<uint8_t> f(p, p + v.len[i]);
      out[ip_id(f)] = std::move(f);
    }
  }
  return out;
}

// Ring shapes the tests use: 256 descriptors, 2 KiB slots, tails every 8 packets or 2.5 us.
inline RingParams small_rings(uint32_t rings, bool writeback = true) {
  RingParams p;
  p.rings = rings;
  p.ring_size = 256;
  p.slot_bytes = 2048;
  p.tail_batch = 8;
  p.tail_timeout_ns = 2500;
  p.tx_writeback = writeback;
  return p;
}

}  // namespace gpunfv::gpuring::ring_test
