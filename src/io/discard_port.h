// `discard` port: a tx-only sink that counts and discards (as DPDK's net_null), for benchmarks
// where writing captures would be the bottleneck.
//
//   - name: sink
//     type: discard
#pragma once

#include <cstring>

#include "core/config_node.h"
#include "io/port.h"

namespace gpunfv {

class DiscardPort final : public Port {
 public:
  DiscardPort(std::string name, uint16_t id) : Port(std::move(name), id) {}
  static std::unique_ptr<DiscardPort> from_config(const ConfigNode& node, uint16_t id);

  std::string_view type() const override { return "discard"; }
  bool has_rx() const override { return false; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch&, uint32_t) override { return 0; }
  bool rx_done() const override { return true; }
  bool tx(const BatchView&, uint32_t) override { return true; }
  uint32_t tx_list(const BatchView&, const uint32_t*, uint32_t n, uint8_t* ok) override {
    std::memset(ok, 1, n);
    return n;
  }
  bool tx_thread_safe() const override { return true; }  // keeps no state
  std::string describe() const override { return "discard (consumes what it is sent)"; }
};

}  // namespace gpunfv
