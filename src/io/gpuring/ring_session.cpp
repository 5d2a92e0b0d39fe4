#include "io/gpuring/ring_session.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/clock.h"

namespace gpunfv::gpuring {

namespace {
struct DisarmOnExit {
  HangWatchdog* w;
  ~DisarmOnExit() {
    if (w) w->disarm();
  }
};
}  // namespace

uint64_t RingRunReport::rx_packets() const {
  uint64_t n = 0;
  for (const RxCounters& c : rings.rx) n += c.packets;
  return n;
}
uint64_t RingRunReport::nf_passed() const {
  uint64_t n = 0;
  for (const RxCounters& c : rings.rx) n += c.passed;
  return n;
}
uint64_t RingRunReport::nf_drops(DropReason r) const {
  uint64_t n = 0;
  for (const RxCounters& c : rings.rx) n += c.drops[static_cast<int>(r)];
  return n;
}
uint64_t RingRunReport::nf_drops() const {
  uint64_t n = 0;
  for (int r = 0; r < kMaxDropReasons; ++r) n += nf_drops(static_cast<DropReason>(r));
  return n;
}

std::string RingRunReport::accounting_errors() const {
  std::string e;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) e += (e.empty() ? "" : "; ") + what;
  };
  check(drained, stall.empty() ? std::string("loops did not drain") : "loops did not drain: " + stall);
  check(nic.offered == nic.delivered + nic.drops_ring_full + nic.drops_oversize,
        fmt::format("offered {} != delivered {} + ring_full {} + oversize {}", nic.offered,
                    nic.delivered, nic.drops_ring_full, nic.drops_oversize));
  check(nic.delivered == rx_packets(),
        fmt::format("NIC delivered {} != rings received {}", nic.delivered, rx_packets()));
  check(rx_packets() == nf_passed() + nf_drops(),
        fmt::format("received {} != passed {} + dropped {}", rx_packets(), nf_passed(), nf_drops()));
  check(nf_passed() == nic.tx_packets,
        fmt::format("passed {} != sent by the NIC {}", nf_passed(), nic.tx_packets));
  check(audit.ok(), "slot audit: " + audit.describe());
  // Every descriptor tx announced was measured once on the GPU side (gpu_latency.h).
  uint64_t posted = 0, measured = 0;
  for (const TxCounters& t : rings.tx) posted += t.posted;
  for (const GpuLatencyHistogram& h : rings.latency) measured += h.count;
  check(!drained || measured == posted,
        fmt::format("GPU-side latency measured {} of {} posted descriptors", measured, posted));
  return e;
}

RingSession::RingSession(const RingParams& params, Placement where, Port& source, Port* sink,
                         const NicEmulatorConfig& nic, NicDma dma)
    : rings_(std::make_unique<RingSet>(params, where)),
      dma_(where == Placement::device ? make_device_dma_engine(dma) : make_host_dma_engine()),
      nic_(std::make_unique<NicEmulator>(*rings_, source, sink, *dma_, nic)) {}

RingSession::~RingSession() {
  // Loops first (they stop on the flag; the emulator must still run to drain tx), then the NIC.
  if (gpu_runner_ && watchdog_) watchdog_->arm("RingSession teardown", 2 * kAbortWaitS + watchdog_grace_s_);
  if (host_runner_ || gpu_runner_) {
    rings_->request_stop();
    if (gpu_runner_ && !finished_ && !gpu_runner_->wait(kAbortWaitS)) {
      rings_->request_abort();
      if (!gpu_runner_->wait(kAbortWaitS)) {
        // Freeing memory that running kernels use would block in cudaFree for ever, and so may
        // the CUDA teardown at exit: give up loudly instead of hanging.
        watchdog_->fire("ring kernels did not exit after stop and abort (" + state() + ")");
      }
    }
    host_runner_.reset();
  }
  try {
    nic_->join();
  } catch (...) {
  }
  gpu_runner_.reset();
  if (watchdog_) watchdog_->disarm();
}

std::string RingSession::state() const {
  return fmt::format("NIC rx {}; {}", nic_->rx_finished() ? "finished" : "NOT finished",
                     rings_->describe_registers());
}

void RingSession::start_gpu(const GpuLaunch& launch) {
  watchdog_ = std::make_unique<HangWatchdog>([this] { return state(); });
  // A launch that blocks (a kernel loaded lazily while the other persistent kernel spins: see
  // loops/gpu_ring_kernels.cuh) would hang here for ever.
  watchdog_->arm("GPU ring kernel launch", kLaunchLimitS);
  const DisarmOnExit disarm{watchdog_.get()};
  gpu_runner_ = launch(*rings_);
  start_emulator();
}

void RingSession::start_emulator() {
  start_ns_ = monotonic_ns();
  nic_->start();
}

RingRunReport RingSession::finish(double timeout_s) {
  RingRunReport rep;
  if (watchdog_) watchdog_->arm("RingSession::finish", timeout_s + kAbortWaitS + watchdog_grace_s_);
  const DisarmOnExit disarm{watchdog_.get()};  // also when join() rethrows the emulator's error
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!nic_->rx_finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const bool nic_done = nic_->rx_finished();
  rings_->request_stop();
  bool exited = true;
  if (host_runner_) {
    host_runner_->stop_and_join();  // CPU loops always end once the NIC has stopped delivering
    rep.drained = true;
  } else if (gpu_runner_) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    rep.drained = gpu_runner_->wait(left > 1 ? left : 1);
    if (!rep.drained) {
      // Watchdog: say what did not finish, with the registers as they stood, then tell the
      // loops to exit as they are; the counters below then show which identities fail.
      rep.stall = fmt::format("after {:.1f} s: {}{}", timeout_s,
                              nic_done ? "" : "the NIC emulator had not delivered its last frame; ",
                              state());
      rings_->request_abort();
      rep.aborted = true;
      exited = gpu_runner_->wait(kAbortWaitS);
      if (!exited) watchdog_->fire("ring kernels did not exit on abort either (" + rep.stall + ")");
    }
  }
  finished_ = exited;
  rep.wall_s = double(monotonic_ns() - start_ns_) / 1e9;
  nic_->join();
  rep.nic = nic_->stats();
  if (exited) {
    rep.rings = rings_->snapshot();
    rep.audit = rings_->audit();
  }
  if (!rep.drained) std::fprintf(stderr, "gpuring: %s\n", rep.accounting_errors().c_str());
  return rep;
}

}  // namespace gpunfv::gpuring
