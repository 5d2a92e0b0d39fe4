// ForwardSession: one run of a forward between two GPU ring ports A -> B, fed and drained by
// the NIC emulator (which plays A's NIC on rx and B's on tx, so its latency is A-in to B-out):
// both ports' rings, the shared pool (ForwardRings), and the loops: the persistent kernel
// (start_gpu, variants wr and rd on device rings) or CPU threads (start_host: host rings, all
// variants; bn is always this). finish() waits for the source to run dry, stops the loops,
// lets them drain and returns what happened to every packet and every slot.
//
// Errors: as RingSet, ForwardRings, NicEmulator and the GPU runner (gpu_ring_runner.h); a drain that did
// not complete in time is report.drained == false (the loop was aborted); on the GPU a hang is
// ended by the HangWatchdog (hang_watchdog.h) as in RingSession.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/loops/forward_rings.h"
#include "io/gpuring/loops/gpu_ring_runner.h"
#include "io/gpuring/loops/hang_watchdog.h"
#include "io/gpuring/loops/host_forward_runner.h"
#include "io/gpuring/nic_emu/nic_emulator.h"

namespace gpunfv::gpuring {

struct ForwardReport {
  ForwardVariant variant = ForwardVariant::rd;
  NicStats nic;
  std::vector<RxCounters> rx;  // A's rx rings
  std::vector<TxCounters> tx;  // B's tx rings
  SlotAudit audit;
  bool drained = false, aborted = false;
  std::string stall;
  double wall_s = 0;
  uint64_t rx_packets() const;
  uint64_t passed() const;
  uint64_t drops() const;
  uint64_t drops(DropReason r) const;
  uint64_t tail_writes_rx() const;
  uint64_t tail_writes_tx() const;
  // offered == delivered + NIC drops; delivered == A's rx; A's rx == passed + drops by reason;
  // passed == sent by B's NIC; the slot audit holds. Empty when all hold, else what failed.
  std::string accounting_errors() const;
};

class ForwardSession {
 public:
  // `route`: the loops run the per-packet hook given to start_* (routing) on each packet.
  ForwardSession(const RingParams& params, Placement where, ForwardVariant variant, Port& source,
                 Port* sink, const NicEmulatorConfig& nic, bool route, bool integrity,
                 NicDma dma = NicDma::batch);
  ~ForwardSession();

  // CPU threads run the loops with the per-packet `hook` (ring_loops.h).
  template <typename Hook, typename Tamper = NoTamper>
  void start_host(uint16_t port_id, const Hook& hook, Tamper tamper = {}) {
    host_runner_ = std::make_unique<HostForwardRunner>(*fwd_, port_id, hook, tamper);
    start_emulator();
  }
  // The persistent kernel: `launch` starts it over the rings, with the hook it compiled in
  // (gpu_forward_kernels.cuh; the NF hooks: chain/ring_nf_runners.h).
  using GpuLaunch = std::function<std::unique_ptr<GpuRingRunner>(ForwardRings&)>;
  void start_gpu(const GpuLaunch& launch);

  ForwardReport finish(double timeout_s = 30);

  static constexpr double kAbortWaitS = 5;
  ForwardRings& rings() { return *fwd_; }
  // The NIC has taken the source's last frame (or stopped on an error join() will rethrow).
  bool source_finished() const { return nic_->rx_finished(); }

 private:
  void start_emulator();
  std::string state() const;

  std::unique_ptr<RingSet> a_, b_;
  std::unique_ptr<ForwardRings> fwd_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<NicEmulator> nic_;
  std::unique_ptr<HostForwardRunner> host_runner_;
  std::unique_ptr<GpuRingRunner> gpu_runner_;
  uint64_t start_ns_ = 0;
  bool finished_ = false;
  std::unique_ptr<HangWatchdog> watchdog_;  // last: destroyed first
};

}  // namespace gpunfv::gpuring
