// RingSession: one run of a GPU ring port: the rings, the NIC emulator feeding them from a
// source port and draining them into a sink, and the loops (GPU kernels, or CPU threads over
// host memory). finish() waits for the source to run dry, stops the loops, lets them drain,
// and returns what happened to every packet and every slot.
//
// Errors: as RingSet, NicEmulator and GpuRingRunner; finish() reports a drain that did not
// complete in time as report.drained == false (loops still running: the process should exit).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/gpuring/dma_engine.h"
#include "io/gpuring/gpu_ring_runner.h"
#include "io/gpuring/host_ring_runner.h"
#include "io/gpuring/nic_emulator.h"
#include "io/gpuring/ring_set.h"

namespace gpunfv::gpuring {

struct RingRunReport {
  NicStats nic;
  RingSnapshot rings;
  SlotAudit audit;
  bool drained = false;
  double wall_s = 0;  // from start() to the end of the drain
  uint64_t rx_packets() const;
  uint64_t nf_passed() const;
  uint64_t nf_drops() const;
  uint64_t nf_drops(DropReason r) const;
  // offered == delivered + NIC drops; delivered == ring rx; ring rx == passed + NF drops;
  // passed == sent by the NIC; the slot audit holds. Empty when all hold, else what failed.
  std::string accounting_errors() const;
};

class RingSession {
 public:
  RingSession(const RingParams& params, Placement where, Port& source, Port* sink,
              const NicEmulatorConfig& nic, bool batched_dma = true);
  ~RingSession();

  // CPU threads run the loops with NF `fn` (Placement::host).
  template <typename View, typename Fn>
  void start_host(uint16_t port_id, const View& nf, Fn fn) {
    host_runner_ = std::make_unique<HostRingRunner>(*rings_, port_id, nf, fn);
    start_emulator();
  }
  // Persistent kernels (Placement::device).
  void start_gpu(uint16_t port_id, const NfHook& hook);

  RingRunReport finish(double timeout_s = 30);

  RingSet& rings() { return *rings_; }
  const char* dma_name() const { return dma_->name(); }

 private:
  void start_emulator();

  std::unique_ptr<RingSet> rings_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<NicEmulator> nic_;
  std::unique_ptr<HostRingRunner> host_runner_;
  std::unique_ptr<GpuRingRunner> gpu_runner_;
  uint64_t start_ns_ = 0;
};

}  // namespace gpunfv::gpuring
