// RingSession: one run of a GPU ring port: the rings, the NIC emulator feeding them from a
// source port and draining them into a sink, and the loops (GPU kernels, or CPU threads over
// host memory). finish() waits for the source to run dry, stops the loops, lets them drain,
// and returns what happened to every packet and every slot.
//
// Errors: as RingSet, NicEmulator and GpuRingRunner; finish() reports a drain that did not
// complete in time as report.drained == false: the loops were then aborted (report.aborted) and
// report.stall says what the host saw; the counters snapshot shows which identities failed.
//
// Hangs: on the GPU, every step that could block for ever (the kernel launch, finish(), the
// destructor) runs under a HangWatchdog (hang_watchdog.h): past its limit the process prints
// the phase and the ring registers and exits with HangWatchdog::kExitCode.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/loops/gpu_ring_runner.h"
#include "io/gpuring/loops/hang_watchdog.h"
#include "io/gpuring/loops/host_ring_runner.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

struct RingRunReport {
  NicStats nic;
  RingSnapshot rings;
  SlotAudit audit;
  bool drained = false;
  bool aborted = false;  // the drain timed out and the loops were told to exit as they stood
  std::string stall;     // when not drained: what did not finish, and the registers at that time
  double wall_s = 0;     // from start() to the end of the drain
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
              const NicEmulatorConfig& nic, NicDma dma = NicDma::batch);
  ~RingSession();

  // CPU threads run the loops with the per-packet `hook` (ring_loops.h; Placement::host).
  template <typename Hook>
  void start_host(uint16_t port_id, const Hook& hook) {
    host_runner_ = std::make_unique<HostRingRunner>(*rings_, port_id, hook);
    start_emulator();
  }
  // Persistent kernels (Placement::device): `launch` starts them over the rings, with the hook
  // it compiled in (gpu_ring_kernels.cuh; the NF hooks: chain/ring_nf_runners.h).
  using GpuLaunch = std::function<std::unique_ptr<GpuRingRunner>(RingSet&)>;
  void start_gpu(const GpuLaunch& launch);

  // Waits at most timeout_s for the source to run dry and the loops to drain, then aborts them
  // (at most kAbortWaitS more). On the GPU the whole of finish() is bounded by the watchdog at
  // timeout_s + watchdog_grace_s().
  RingRunReport finish(double timeout_s = 30);

  static constexpr double kAbortWaitS = 5;
  static constexpr double kLaunchLimitS = 30;
  void set_watchdog_grace_s(double s) { watchdog_grace_s_ = s; }
  double watchdog_grace_s() const { return watchdog_grace_s_; }

  RingSet& rings() { return *rings_; }
  const char* dma_name() const { return dma_->name(); }

 private:
  void start_emulator();
  std::string state() const;  // host-visible state, safe while kernels hang

  std::unique_ptr<RingSet> rings_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<NicEmulator> nic_;
  std::unique_ptr<HostRingRunner> host_runner_;
  std::unique_ptr<GpuRingRunner> gpu_runner_;
  uint64_t start_ns_ = 0;
  double watchdog_grace_s_ = 20;
  bool finished_ = false;
  std::unique_ptr<HangWatchdog> watchdog_;  // last: destroyed first
};

}  // namespace gpunfv::gpuring
