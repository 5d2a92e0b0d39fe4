// GpuRingFeed: a `type: gpuring` port feeding a chain (the chain's `from`). The port's rings run
// in batch mode (io/gpuring/ring_batches.h): the rx loops hand received packets, still in
// their ring slots, to the chain as batches; the executor's ingress takes them instead of
// calling rx_burst, the chain runs on them in place (BatchView::slot_index), egress accounts
// every packet as for any port and hands the batch back; the tx loops then post descriptors
// for the packets sent to the gpuring port itself and free the slots of the others (dropped,
// or transmitted by the host on another port). The NIC emulator feeds the rings from the
// port's source and drains them into its sink.
//
// One RingSet per gpuring port; a chain's packets leave through the ring they came in on.
// Integrated so far: placement: host on the CPU backend (CPU threads run the same loops the
// GPU runs). The GPU backend (device-resident batches, stage-0 upload skipped) is not wired
// yet: the constructor refuses it with a ConfigError.
//
// Latency: rx_ns is the ring's clock when the rx loop took the packet from its descriptor
// (CLOCK_MONOTONIC with placement: host, the host's clock), so latency = egress - rx_ns.
//
// Errors: ConfigError for unsupported combinations; the RingSet/RingBatches errors otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/runtime_config.h"
#include "io/gpuring/dma_engine.h"
#include "io/gpuring/host_ring_batch_runner.h"
#include "io/gpuring/nic_emulator.h"
#include "io/gpuring/ring_batches.h"
#include "telemetry/counters.h"

namespace gpunfv {

class GpuRingPort;

class GpuRingFeed {
 public:
  GpuRingFeed(RuntimeConfig& rc, uint16_t port_id, const BatchShape& shape, Backend backend);
  ~GpuRingFeed();
  GpuRingFeed(const GpuRingFeed&) = delete;
  GpuRingFeed& operator=(const GpuRingFeed&) = delete;

  uint16_t port_id() const { return port_id_; }
  // Starts the loops and the NIC emulator.
  void start();
  // Ingress: the next ready batch (count set, view over the ring), or nullptr. `stop_now`:
  // the run's deadline passed (the rings are then aborted as they stand; packets the chain
  // sends back to the ring after that are counted as sent but never leave). Sets `finished`
  // once no batch will come any more.
  Batch* take(bool stop_now, bool& finished);
  // Egress, in the order taken, after accounting: the ring's tx side takes the batch back.
  void give_back(Batch* b);
  // Whether egress sends packet i to this feed's ring (true) rather than to a host port.
  bool is_ring_port(uint16_t port) const { return port == port_id_; }
  // After every batch was given back: waits for the loops and the emulator, adds the NIC's
  // drops to `pc` (nic_rx_ring_full, oversize), audits the slots (std::runtime_error if any
  // is lost) and returns a one-line summary.
  std::string finish(PortCounters& pc);

 private:
  RuntimeConfig& rc_;
  uint16_t port_id_;
  GpuRingPort& port_;
  Port* source_ = nullptr;
  Port* sink_ = nullptr;
  std::unique_ptr<gpuring::RingSet> rings_;
  std::unique_ptr<gpuring::RingBatches> batches_;
  std::unique_ptr<gpuring::DmaEngine> dma_;
  std::unique_ptr<gpuring::NicEmulator> nic_;
  std::unique_ptr<gpuring::HostRingBatchRunner> runner_;
  std::vector<std::unique_ptr<Batch>> handles_;   // one per ring batch
  std::vector<gpuring::RingBatches::Ready> taken_;  // per handle
  bool stop_requested_ = false, abort_requested_ = false;
  bool finished_ = false;
};

}  // namespace gpunfv
