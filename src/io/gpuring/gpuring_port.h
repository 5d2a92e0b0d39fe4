// `type: gpuring` port: host bypassing. The NIC's rx/tx descriptor rings (82599 format) and the
// packet slots live in GPU memory; persistent kernels poll and post descriptors themselves; a
// NIC EMULATOR thread (nic_emulator.h) plays the NIC, fed by a source port and draining into a
// sink port, since no NIC that can DMA into GPU memory was available to test with.
//
//   - name: gr0
//     type: gpuring
//     rings: 4               # rx/tx ring pairs (1..64; 128 with nic:), one kernel block per ring and side
//     ring_size: 512         # descriptors per ring, a power of two (8..8192)
//     slot_bytes: 2048       # bytes per packet slot, a multiple of 64 (128..16384)
//     slots_per_ring: 1536   # slots per ring pair (> ring_size; default 3 x ring_size)
//     tail_batch: 32         # write RDT/TDT after this many descriptors (1..ring_size-1) ...
//     tail_timeout_ns: 1000  # ... or after this long (0: count only)
//     tx_writeback: true     # tx completion by DD write-back (true) or by reading TDH (false)
//     source: gen0           # a port of `ports:` by name, or an inline port: {type: generator, ...}
//     sink: out              # optional, likewise; absent: sent frames are counted and discarded
//     rate: 2Mpps            # the emulator's offered rate (packets per second; 0: unpaced)
//     placement: device      # device (GPU), host (CPU threads over host memory), or auto
//                            # (a chain's feed: device on the GPU backend, host on the CPU's)
//     dma: batch             # emulator copies: batch (cudaMemcpyBatchAsync) or single
//     flow_control: false    # emulator pauses instead of dropping when a ring is full
//     burst: 32              # frames the emulator takes from the source per step
//     nic: 0000:03:00.0      # instead of the emulator (source, sink, rate, dma, flow_control,
//     eal: [-a, 0000:03:00.0]  # burst refused): a real 82599 bound to vfio-pci, set up through
//                            # DPDK (eal: its EAL options); rings up to 128, slot_bytes a
//                            # multiple of 1024; see dpdk_nic.h (compiles, never run: no NIC)
//
// State of integration: RingSession runs it with an inline NF hook (bench/gpuring_bench); as a
// chain's `from:` the executor drives it in batch mode (chain/gpuring_feed.h: placement: host on
// the CPU backend, placement: device on the GPU backend). rx_burst() and tx() are never the
// path: they throw a runtime_error.
#pragma once

#include <memory>
#include <string>

#include "core/config_node.h"
#include "io/gpuring/gpuring_config.h"
#include "io/port.h"
#include "io/port_factory.h"

namespace gpunfv {

class GpuRingPort final : public Port {
 public:
  // Throws ConfigError. Inline source/sink ports are built here; named ones are resolved by
  // whoever runs the port (the executor, once it adopts this port).
  GpuRingPort(const ConfigNode& node, uint16_t id, const PortContext& ctx);
  ~GpuRingPort() override;

  std::string_view type() const override { return "gpuring"; }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override { return false; }
  bool tx(const BatchView& b, uint32_t i) override;
  uint32_t max_frame_bytes() const override { return config_.rings.slot_bytes; }
  std::string describe() const override;

  const gpuring::GpuRingConfig& config() const { return config_; }
  // Inline source/sink (null when named or absent).
  Port* inline_source() const { return source_.get(); }
  Port* inline_sink() const { return sink_.get(); }

 private:
  gpuring::GpuRingConfig config_;
  std::unique_ptr<Port> source_, sink_;
};

}  // namespace gpunfv
