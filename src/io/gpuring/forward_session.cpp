#include "io/gpuring/forward_session.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/clock.h"

namespace gpunfv::gpuring {

namespace {
constexpr double kWatchdogGraceS = 20;
}

uint64_t ForwardReport::rx_packets() const {
  uint64_t n = 0;
  for (const RxCounters& c : rx) n += c.packets;
  return n;
}
uint64_t ForwardReport::passed() const {
  uint64_t n = 0;
  for (const RxCounters& c : rx) n += c.passed;
  return n;
}
uint64_t ForwardReport::drops(DropReason r) const {
  uint64_t n = 0;
  for (const RxCounters& c : rx) n += c.drops[static_cast<int>(r)];
  return n;
}
uint64_t ForwardReport::drops() const {
  uint64_t n = 0;
  for (int r = 0; r < kMaxDropReasons; ++r) n += drops(static_cast<DropReason>(r));
  return n;
}
uint64_t ForwardReport::tail_writes_rx() const {
  uint64_t n = 0;
  for (const RxCounters& c : rx) n += c.tail_writes;
  return n;
}
uint64_t ForwardReport::tail_writes_tx() const {
  uint64_t n = 0;
  for (const TxCounters& c : tx) n += c.tail_writes;
  return n;
}

std::string ForwardReport::accounting_errors() const {
  std::string e;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) e += (e.empty() ? "" : "; ") + what;
  };
  check(drained, stall.empty() ? std::string("loops did not drain") : "loops did not drain: " + stall);
  check(nic.offered == nic.delivered + nic.drops_ring_full + nic.drops_oversize,
        fmt::format("offered {} != delivered {} + ring_full {} + oversize {}", nic.offered,
                    nic.delivered, nic.drops_ring_full, nic.drops_oversize));
  check(nic.delivered == rx_packets(),
        fmt::format("A's NIC delivered {} != A's rings received {}", nic.delivered, rx_packets()));
  check(rx_packets() == passed() + drops(),
        fmt::format("received {} != forwarded {} + dropped {}", rx_packets(), passed(), drops()));
  check(passed() == nic.tx_packets,
        fmt::format("forwarded {} != sent by B's NIC {}", passed(), nic.tx_packets));
  check(audit.ok(), "slot audit: " + audit.describe());
  return e;
}

ForwardSession::ForwardSession(const RingParams& params, Placement where, ForwardVariant variant,
                               Port& source, Port* sink, const NicEmulatorConfig& nic, bool route,
                               bool integrity, NicDma dma)
    : a_(std::make_unique<RingSet>(params, where)),
      b_(std::make_unique<RingSet>(params, where)),
      fwd_(std::make_unique<ForwardRings>(*a_, *b_, variant, route, integrity)),
      dma_(where == Placement::device ? make_device_dma_engine(dma) : make_host_dma_engine()),
      nic_(std::make_unique<NicEmulator>(*a_, source, sink, *dma_, nic, b_.get())) {}

ForwardSession::~ForwardSession() {
  if (gpu_runner_ && watchdog_) watchdog_->arm("ForwardSession teardown", 2 * kAbortWaitS + kWatchdogGraceS);
  if (host_runner_ || gpu_runner_) {
    fwd_->request_stop();
    if (gpu_runner_ && !finished_ && !gpu_runner_->wait(kAbortWaitS)) {
      fwd_->request_abort();
      if (!gpu_runner_->wait(kAbortWaitS))
        watchdog_->fire("forward kernel did not exit after stop and abort (" + state() + ")");
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

std::string ForwardSession::state() const {
  return fmt::format("NIC rx {}; A: {}; B: {}", nic_->rx_finished() ? "finished" : "NOT finished",
                     a_->describe_registers(), b_->describe_registers());
}

void ForwardSession::start_gpu(const GpuLaunch& launch) {
  watchdog_ = std::make_unique<HangWatchdog>([this] { return state(); });
  watchdog_->arm("GPU forward kernel launch", 30);
  gpu_runner_ = launch(*fwd_);
  watchdog_->disarm();
  start_emulator();
}

void ForwardSession::start_emulator() {
  start_ns_ = monotonic_ns();
  nic_->start();
}

ForwardReport ForwardSession::finish(double timeout_s) {
  ForwardReport rep;
  rep.variant = fwd_->variant();
  if (watchdog_) watchdog_->arm("ForwardSession::finish", timeout_s + kAbortWaitS + kWatchdogGraceS);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!nic_->rx_finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const bool nic_done = nic_->rx_finished();
  fwd_->request_stop();
  bool exited = true;
  if (host_runner_) {
    host_runner_->stop_and_join();
    rep.drained = true;
  } else if (gpu_runner_) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    rep.drained = gpu_runner_->wait(left > 1 ? left : 1);
    if (!rep.drained) {
      rep.stall = fmt::format("after {:.1f} s: {}{}", timeout_s,
                              nic_done ? "" : "the NIC emulator had not delivered its last frame; ", state());
      fwd_->request_abort();
      rep.aborted = true;
      exited = gpu_runner_->wait(kAbortWaitS);
      if (!exited) watchdog_->fire("forward kernel did not exit on abort either (" + rep.stall + ")");
    }
  }
  finished_ = exited;
  rep.wall_s = double(monotonic_ns() - start_ns_) / 1e9;
  try {
    nic_->join();
  } catch (...) {
    if (watchdog_) watchdog_->disarm();
    throw;
  }
  rep.nic = nic_->stats();
  if (exited) {
    rep.rx = a_->snapshot().rx;
    rep.tx = b_->snapshot().tx;
    rep.audit = fwd_->audit();
  }
  if (watchdog_) watchdog_->disarm();
  if (!rep.drained) std::fprintf(stderr, "gpuring forward: %s\n", rep.accounting_errors().c_str());
  return rep;
}

}  // namespace gpunfv::gpuring
