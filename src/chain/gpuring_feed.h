// GpuRingFeed: a `type: gpuring` port feeding a chain (the chain's `from`). The port's rings run
// in batch mode (io/gpuring/loops/ring_batches.h): the rx loops hand received packets, still in
// their ring slots, to the chain as batches; the executor's ingress takes them instead of
// calling rx_burst, the chain runs on them in place (BatchView::slot_index), egress accounts
// every packet as for any port and hands the batch back; the tx loops then post descriptors
// for the packets sent to the gpuring port itself and free the slots of the others (dropped,
// or transmitted by the host on another port). The NIC emulator feeds the rings from the
// port's source and drains them into its sink.
//
// Two ways to run, by the port's `placement:` (auto: the backend's own):
//   - host, CPU backend: CPU threads run the ring loops over host memory; the batch handle's
//     view is the ring batch itself.
//   - device, GPU backend: the loops run as one persistent kernel over device memory and the
//     NIC emulator writes frames into the slots with the GPU's copy engine. The batch handle is
//     device-resident (Batch::set_device_resident): the GPU stage runs the chain on the ring
//     batch's own metadata and slots, uploads nothing and downloads metadata only into the
//     handle's pinned host copy (chain/ring_batch_transfer.h). Before accounting, egress copies
//     out of their slots only the frames it sends to host ports or that an NF's collect() reads
//     (prepare_egress, counted); give_back writes the verdicts back so the ring's tx loop frees
//     the slots of packets the host sent or dropped. Packets sent to the gpuring port itself
//     never cross PCIe between the NIC's DMA in and the NIC's DMA out.
// Other combinations are ConfigErrors (check_config), raised before any CUDA call.
//
// Nothing may need CUDA to synchronize the device once the persistent ring kernel spins: a
// kernel loaded lazily at its first launch, local memory or the printf buffer set up at the
// first kernel that needs them, a stream, event or allocation made late, all may wait for the
// ring kernel, which never ends, and stop the chain and the NIC emulator with it (seen on an
// H200). check_config therefore asks CUDA for eager loading and 32 hardware queues
// (CUDA_MODULE_LOADING=EAGER, CUDA_DEVICE_MAX_CONNECTIONS=32, unless the user set them; streams
// sharing the ring kernel's queue would wait behind it), the constructor refuses a process whose
// CUDA already loads lazily, the executor has the GPU stage make its streams, events and device
// batches first (ProcessingStage::prepare_for_persistent_kernels), and start() runs the device
// preflight (gpu/device_preflight.h) before the launch. CUDA set-up calls made while the kernel
// runs are counted (gpu/persistent_kernel_guard.h) and named in the summary line and the
// watchdog's report. Every step that could block for ever (the launch, a batch that makes no
// progress, the drain) runs under a HangWatchdog that ends the process with the ring registers,
// the NIC emulator's progress and those late calls.
//
// With `nic:` (a real 82599, io/gpuring/nic/dpdk_nic.h) there is no emulator, source or sink: the
// NIC is attached to the device rings before the loops start (its preconditions are checked
// before any GPU memory is taken) and detached after they exit; the run ends at its deadline
// (--duration, required: check_run_ends). Untested: no NIC that can DMA into GPU memory was available.
//
// Timestamps: rx_ns is when the rx loop took the packet, on CLOCK_MONOTONIC (the device clock is
// mapped through offsets measured at start, io/gpuring/ring/ring_clock.h), so latency = egress -
// rx_ns; wire_ns (the capture time a pcap sink writes) is the same moment in UNIX time.
//
// Errors: ConfigError for unsupported combinations; the RingSet/RingBatches/GPU errors
// otherwise; finish() throws std::runtime_error when the slot audit fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/ring_egress_copy.h"
#include "chain/runtime_config.h"
#include "gpu/device_preflight.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/nic/dpdk_nic.h"
#include "io/gpuring/loops/gpu_ring_batch_runner.h"
#include "io/gpuring/loops/hang_watchdog.h"
#include "io/gpuring/loops/host_ring_batch_runner.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "io/gpuring/loops/ring_batches.h"
#include "io/gpuring/ring/ring_clock.h"
#include "core/counters.h"

namespace gpunfv {

class GpuRingPort;

class GpuRingFeed {
 public:
  // Throws ConfigError for what is not supported: placement: host on the GPU backend, and
  // placement: device on the CPU backend. Call before CUDA starts: with device rings on the
  // GPU backend it also asks for eager kernel loading.
  static void check_config(const RuntimeConfig& rc, Backend backend);
  // A real NIC (nic:) has no end of input: its run needs --duration (ConfigError otherwise).
  static void check_run_ends(const RuntimeConfig& rc, double duration_s);
  // Where the port's rings live on `backend`.
  static gpuring::Placement placement_on(const GpuRingPort& port, Backend backend);

  GpuRingFeed(RuntimeConfig& rc, uint16_t port_id, const BatchShape& shape, Backend backend);
  ~GpuRingFeed();
  GpuRingFeed(const GpuRingFeed&) = delete;
  GpuRingFeed& operator=(const GpuRingFeed&) = delete;

  uint16_t port_id() const { return port_id_; }
  bool device_resident() const { return device_; }
  // Starts the loops and the NIC emulator.
  void start();
  // Ingress: the next ready batch (count set, view over the ring), or nullptr; `bytes` its
  // frame bytes. `stop_now`: the run's deadline passed (the rings are then aborted as they
  // stand; packets the chain sends back to the ring after that are counted as sent but never
  // leave). Sets `finished` once no batch will come any more.
  Batch* take(bool stop_now, bool& finished, uint64_t& bytes);
  // Egress, before accounting a device-resident batch of `chain`: copies the frames the host
  // will read (packets to host ports; packets an NF whose collect() reads frames saw) out of
  // their slots into the handle's view. Nothing for host placement.
  void prepare_egress(Batch& b, const Chain& chain);
  // Egress, in the order taken, after accounting: the ring's tx side takes the batch back.
  void give_back(Batch* b);
  // Whether egress sends packet i to this feed's ring (true) rather than to a host port.
  bool is_ring_port(uint16_t port) const { return port == port_id_; }
  // After every batch was given back: waits for the loops and the emulator, adds the NIC's
  // drops to `pc` (nic_rx_ring_full, oversize), audits the slots (std::runtime_error if any
  // is lost) and returns a one-line summary.
  std::string finish(PortCounters& pc);

  // Device placement, egress's PCIe traffic so far.
  struct EgressCopies {
    uint64_t frames = 0, frame_bytes = 0;  // frames copied out of slots to the host
    uint64_t verdict_bytes = 0;            // verdicts written back
  };
  const EgressCopies& egress_copies() const { return copies_; }

 private:
  std::string state() const;  // host-visible state for the watchdog (safe while kernels hang)
  void resolve_endpoints(RuntimeConfig& rc, const gpuring::GpuRingConfig& cfg, const std::string& where);
  std::string finish_real_nic(bool drained);
  void stop_device_loops();   // destructor: abort the kernel, or end the process if it hangs

  RuntimeConfig& rc_;
  uint16_t port_id_;
  GpuRingPort& port_;
  bool device_ = false;
  Port* source_ = nullptr;
  Port* sink_ = nullptr;
  std::unique_ptr<gpuring::RingSet> rings_;
  std::unique_ptr<gpuring::DpdkNic> real_nic_;  // nic: set; detached before rings_ is freed
  std::unique_ptr<gpuring::RingBatches> batches_;
  std::unique_ptr<gpuring::DmaEngine> dma_;
  std::unique_ptr<gpuring::NicEmulator> nic_;
  std::unique_ptr<gpuring::HostRingBatchRunner> runner_;
  std::unique_ptr<gpuring::GpuRingBatchRunner> gpu_runner_;
  std::unique_ptr<RingEgressCopy> egress_copy_;
  std::vector<std::unique_ptr<Batch>> handles_;   // one per ring batch
  std::vector<gpuring::RingBatches::Ready> taken_;  // per handle
  std::vector<uint32_t> host_rows_of_;  // device placement: packet -> row of the egress copy
  std::vector<uint32_t> needed_;        // device placement: packets whose frames egress copies
  gpuring::RingClockOffsets clock_;
  PreflightReport preflight_;       // device placement: what was set up before the ring kernel
  uint64_t late_setup_before_ = 0;  // late_cuda_setup().calls when the ring kernel started
  uint64_t streams_ = 0;            // live CUDA streams once the ring kernel runs
  int queues_ = 0;                  // hardware queues asked for (CUDA_DEVICE_MAX_CONNECTIONS)
  EgressCopies copies_;
  uint32_t outstanding_ = 0;  // batches taken, not given back
  bool stop_requested_ = false, abort_requested_ = false;
  bool started_ = false, finished_ = false;
  std::unique_ptr<gpuring::HangWatchdog> watchdog_;  // last: destroyed first
};

}  // namespace gpunfv
