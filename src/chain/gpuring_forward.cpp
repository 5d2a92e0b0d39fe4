#include "chain/gpuring_forward.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/error.h"
#include "gpu/device.h"
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/forward_session.h"
#include "io/gpuring/gpuring_port.h"
#include "nf/router/router.h"
#include "core/latency_histogram.h"
#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#include "gpu/gpu_calls.h"
#endif

namespace gpunfv {

namespace gr = gpuring;

namespace {

constexpr double kDrainTimeoutS = 60;  // from the source's end to the last frame out
constexpr auto kMonitorPeriod = std::chrono::milliseconds(200);

// The NIC emulator's source, with a switch: once cut off it has no more frames, so the NIC
// finishes and the forward drains (the run's deadline).
class CutOffSource final : public Port {
 public:
  explicit CutOffSource(Port& inner) : Port(inner.name(), inner.id()), inner_(inner) {}
  std::string_view type() const override { return inner_.type(); }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return false; }
  uint32_t rx_burst(Batch& b, uint32_t max) override {
    return cut_.load(std::memory_order_acquire) ? 0 : inner_.rx_burst(b, max);
  }
  bool rx_done() const override { return cut_.load(std::memory_order_acquire) || inner_.rx_done(); }
  bool tx(const BatchView&, uint32_t) override { return false; }
  uint32_t max_frame_bytes() const override { return inner_.max_frame_bytes(); }
  std::string describe() const override { return inner_.describe(); }

  void cut() { cut_.store(true, std::memory_order_release); }

 private:
  Port& inner_;
  std::atomic<bool> cut_{false};
};

Port* port_named(RuntimeConfig& rc, const std::string& name) {
  for (auto& p : rc.ports)
    if (p->name() == name) return p.get();
  return nullptr;
}

// Adds what moved since the last call: `now` is the new total, `published` what was added so
// far (unsigned wrap-around makes a total that went down come out right too).
void publish(std::atomic<uint64_t>& counter, uint64_t now, uint64_t& published) {
  counter.fetch_add(now - published, std::memory_order_relaxed);
  published = now;
}

}  // namespace

struct GpuRingForwards::Forward {
  const ForwardSpec* spec = nullptr;
  GpuRingPort* a = nullptr;
  GpuRingPort* b = nullptr;
  gr::Placement placement = gr::Placement::host;
  gr::ForwardVariant variant = gr::ForwardVariant::rd;
  // Declared before the session, so they outlive its loops and its NIC.
  std::unique_ptr<CutOffSource> source;
  Port* sink = nullptr;
  gr::NfHook hook;  // device: the router's device tables
  std::unique_ptr<Router> device_router;
  uint32_t host_quarantine = 0;  // the route's quarantine flag (ring_nf_hook.h), CPU loops
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint16_t> device_ports;
  DeviceBuffer<uint32_t> device_quarantine;  // the same, GPU loops
#endif
  std::unique_ptr<gr::ForwardSession> session;
  // What the monitor (then finish) has added to the PortCounters.
  uint64_t rx = 0, rx_bytes = 0, dropped = 0, forwarded = 0, tx = 0, tx_bytes = 0;
  std::string line;  // describe()

  bool on_gpu() const { return placement == gr::Placement::device; }
  // Once the loops are done: whether a packet's routing reached outside the router's memory.
  bool route_quarantined() const {
    uint32_t set = host_quarantine;
#if GPUNFV_HAVE_CUDA
    if (device_quarantine.size()) gpu::copy_to_host(&set, device_quarantine.data(), sizeof set);
#endif
    return set != 0;
  }
};

GpuRingForwards::GpuRingForwards(RuntimeConfig& rc, RunStats& stats) : rc_(rc), stats_(stats) {
  for (const ForwardSpec& spec : rc.forwards) {
    if (!spec.on_rings) continue;
    auto f = std::make_unique<Forward>();
    f->spec = &spec;
    f->a = &dynamic_cast<GpuRingPort&>(*rc.ports[spec.from]);
    f->b = &dynamic_cast<GpuRingPort&>(*rc.ports[spec.to]);
    const gr::GpuRingConfig& ca = f->a->config();
    const gr::GpuRingConfig& cb = f->b->config();
    const std::string where = rc.file + ": forward " + spec.name;
    f->placement = ca.placement;
    f->variant = gr::parse_forward_variant(spec.gpu_variant.empty() ? "rd" : spec.gpu_variant);
    if (f->on_gpu()) {
#if !GPUNFV_HAVE_CUDA
      throw ConfigError(where, "placement: device runs the forwarding kernel, and this build has no "
                               "CUDA (nvcc was not found at build time); use placement: host");
#else
      if (!cuda_device_available())
        throw std::runtime_error("forward " + spec.name + ": placement: device needs a CUDA GPU, and none "
                                 "is present (placement: host runs the same loops on CPU threads)");
#endif
    }
    Port* src = f->a->inline_source() ? f->a->inline_source() : port_named(rc, ca.source_name);
    if (!src) throw ConfigError(where, "source: of port '" + f->a->name() + "': unknown port '" + ca.source_name + "'");
    if (!src->has_rx()) throw ConfigError(where, "source: port '" + src->name() + "' has no rx side");
    f->source = std::make_unique<CutOffSource>(*src);
    if (f->b->inline_sink()) {
      f->sink = f->b->inline_sink();
    } else if (!cb.sink_name.empty()) {
      f->sink = port_named(rc, cb.sink_name);
      if (!f->sink) throw ConfigError(where, "sink: of port '" + f->b->name() + "': unknown port '" + cb.sink_name + "'");
      if (!f->sink->has_tx()) throw ConfigError(where, "sink: port '" + f->sink->name() + "' has no tx side");
    }
    gr::NicEmulatorConfig nic;
    nic.rate_pps = ca.rate_pps;
    nic.burst = ca.burst * ca.rings.rings;  // per ring, as the chain feed's
    nic.flow_control = ca.flow_control;
    f->session = std::make_unique<gr::ForwardSession>(ca.rings, f->placement, f->variant, *f->source, f->sink,
                                                      nic, spec.route != nullptr, spec.integrity, ca.dma);
#if GPUNFV_HAVE_CUDA
    if (f->on_gpu() && spec.route) {
      // The kernel needs the route's tables in device memory: the same routes, every next hop
      // the forward's `to` (forward_config.cpp allows no other).
      const std::vector<Route> routes = spec.route->routes();
      uint32_t hops = 1;
      for (const Route& r : routes) hops = std::max(hops, r.next_hop + 1);
      const std::vector<uint16_t> ports(hops, spec.to);
      f->device_router = std::make_unique<Router>("forward " + spec.name, routes, ports,
                                                  std::vector<std::string>(hops, f->b->name()));
      f->device_router->prepare(Backend::gpu);
      f->device_ports.upload(ports);
      f->hook.kind = gr::NfHook::Kind::router;
      f->hook.router = RouterView{f->device_router->table().device_ref(), f->device_ports.span()};
      f->device_quarantine.upload({0});
      f->hook.quarantine = f->device_quarantine.span();
    }
#endif
    const gr::RingParams& p = ca.rings;
    f->line = fmt::format(
        "gpuring forward {}: variant {}, {}, {} ring{} x {} descriptors, tail_batch {}{}{}; NIC: source {}, sink {}",
        spec.name, gr::forward_variant_name(f->variant),
        f->on_gpu() ? "persistent GPU kernel" : "CPU threads over host memory", p.rings, p.rings > 1 ? "s" : "",
        p.ring_size, p.tail_batch, spec.route ? ", routed" : "", spec.integrity ? ", sampled integrity" : "",
        src->describe(), f->sink ? f->sink->describe() : "(none: counted, discarded)");
    forwards_.push_back(std::move(f));
  }
}

GpuRingForwards::~GpuRingForwards() {
  monitor_stop_ = true;
  if (monitor_.joinable()) monitor_.join();
  for (auto& f : forwards_)
    if (f->source) f->source->cut();
}

std::vector<std::string> GpuRingForwards::describe() const {
  std::vector<std::string> out;
  for (const auto& f : forwards_) out.push_back(f->line);
  return out;
}

void GpuRingForwards::start() {
  for (auto& f : forwards_) {
    const uint16_t port = f->spec->from;  // the packets' ingress port, for the router
    if (f->on_gpu())
      gr::start_gpu(*f->session, port, f->hook);
    else if (f->spec->route)
      f->session->start_host(port, gr::nf_hook(f->spec->route->host_view(), RouterLogic{},
                                               IsoSpan<uint32_t>(&f->host_quarantine, 1)));
    else
      f->session->start_host(port, gr::nf_hook(gr::PassThroughView{}, gr::PassThrough{}));
  }
  if (!forwards_.empty()) monitor_ = std::thread([this] { monitor_loop(); });
}

// Live figures for the progress line: A's ring counters and B's tx completions, read while the
// loops run (host memory, or a copy from device memory). finish() puts the exact ones in place.
void GpuRingForwards::monitor_loop() {
  while (!monitor_stop_.load()) {
    std::this_thread::sleep_for(kMonitorPeriod);
    if (monitor_stop_.load()) break;
    for (auto& f : forwards_) {
      const gr::RingSnapshot a = f->session->rings().from().snapshot();
      const gr::RingSnapshot b = f->session->rings().to().snapshot();
      uint64_t rx = 0, rx_bytes = 0, dropped = 0, sent = 0;
      for (const gr::RxCounters& c : a.rx) {
        rx += c.packets;
        rx_bytes += c.bytes;
        for (uint64_t d : c.drops) dropped += d;
      }
      for (const gr::TxCounters& c : b.tx) sent += c.completed;
      PortCounters& pa = *stats_.ports[f->spec->from];
      PortCounters& pb = *stats_.ports[f->spec->to];
      publish(pa.rx_packets, rx, f->rx);
      publish(pa.rx_bytes, rx_bytes, f->rx_bytes);
      publish(pa.dropped_total, dropped, f->dropped);
      publish(pa.forwarded, sent, f->forwarded);
      publish(pb.tx_packets, sent, f->tx);
      // Bytes out are known per frame only at the end: until then, at the mean size received.
      publish(pb.tx_bytes, rx ? sent * rx_bytes / rx : 0, f->tx_bytes);
    }
  }
}

void GpuRingForwards::finish(const std::function<bool()>& past_deadline) {
  if (forwards_.empty()) return;
  auto sources_finished = [&] {
    for (auto& f : forwards_)
      if (!f->session->source_finished()) return false;
    return true;
  };
  while (!sources_finished() && !past_deadline()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto& f : forwards_) f->source->cut();  // no-op for a source that ended by itself
  monitor_stop_ = true;
  if (monitor_.joinable()) monitor_.join();
  std::vector<gr::ForwardReport> reports(forwards_.size());
  std::vector<bool> finished(forwards_.size(), false);
  for (size_t i = 0; i < forwards_.size(); ++i) {
    try {
      reports[i] = forwards_[i]->session->finish(kDrainTimeoutS);
      finished[i] = true;
    } catch (const std::exception& e) {  // the NIC's error, rethrown by its join: reported below
      failures_ += (failures_.empty() ? "" : "; ") + ("forward " + forwards_[i]->spec->name + ": " + e.what());
    }
  }

  for (size_t i = 0; i < forwards_.size(); ++i) {
    if (!finished[i]) continue;
    Forward& f = *forwards_[i];
    const gr::ForwardReport& r = reports[i];
    const gr::NicStats& nic = r.nic;
    PortCounters& pa = *stats_.ports[f.spec->from];
    PortCounters& pb = *stats_.ports[f.spec->to];
    // Exact figures: A's rings and NIC on rx, B's NIC on tx; a frame its sink refused is lost.
    uint64_t rx_bytes = 0;
    for (const gr::RxCounters& c : r.rx) rx_bytes += c.bytes;
    const uint64_t nic_drops = nic.drops_ring_full + nic.drops_oversize;
    const uint64_t sent = nic.tx_packets - std::min(nic.tx_errors, nic.tx_packets);
    publish(pa.rx_packets, r.rx_packets() + nic_drops, f.rx);
    publish(pa.rx_bytes, rx_bytes, f.rx_bytes);
    publish(pa.dropped_total, r.drops() + nic_drops + nic.tx_errors, f.dropped);
    publish(pa.forwarded, r.passed() - std::min(nic.tx_errors, r.passed()), f.forwarded);
    publish(pb.tx_packets, sent, f.tx);
    publish(pb.tx_bytes, nic.tx_bytes, f.tx_bytes);
    for (int k = 0; k < kMaxDropReasons; ++k) pa.dropped.add(DropReason(k), r.drops(DropReason(k)));
    pa.dropped.add(DropReason::nic_rx_ring_full, nic.drops_ring_full);
    pa.dropped.add(DropReason::oversize, nic.drops_oversize);
    pa.dropped.add(DropReason::port_tx_error, nic.tx_errors);

    LatencyHistogram lat;
    for (uint32_t ns : nic.latency_ns) lat.record(ns);
    stats_.latency.merge(lat);
    const std::string errors = r.accounting_errors();
    nlohmann::json j;
    j["name"] = f.spec->name;
    j["mode"] = "zerocopy";
    j["describe"] = f.line;
    j["variant"] = std::string(gr::forward_variant_name(f.variant));
    j["loops"] = f.on_gpu() ? "gpu" : "cpu";
    j["descriptor_batch"] = f.a->config().rings.tail_batch;
    j["posts"] = r.tail_writes_tx();
    j["rx_tail_writes"] = r.tail_writes_rx();
    j["copied_bytes"] = 0;  // the emulated NICs copy into and out of the slots; gpunfv none
    j["latency_ns"] = {{"p50", lat.quantile(0.5)}, {"p90", lat.quantile(0.9)}, {"p99", lat.quantile(0.99)},
                       {"max", lat.max()}, {"count", lat.count()}};
    j["nic"] = {{"offered", nic.offered}, {"delivered", nic.delivered}, {"ring_full", nic.drops_ring_full},
                {"oversize", nic.drops_oversize}, {"sent", nic.tx_packets}, {"sink_errors", nic.tx_errors},
                {"reordered", nic.reordered}, {"reordered_in_ring", nic.reordered_in_ring}};
    j["slot_audit"] = r.audit.ok() ? "ok" : r.audit.describe();
    if (f.route_quarantined()) {
      j["quarantined"] = true;
      std::fprintf(stderr, "gpunfv: forward %s's route reached outside its memory: quarantined, its "
                   "later packets were dropped as nf_isolation_fault\n", f.spec->name.c_str());
    }
    j["accounting"] = errors.empty() ? "ok" : errors;
    stats_.forward_reports.push_back(std::move(j));
    stats_.backend_detail += fmt::format(
        "; gpuring forward {} ({}, {}): NIC offered {} delivered {} ring_full {} sent {}{}", f.spec->name,
        gr::forward_variant_name(f.variant), f.on_gpu() ? "GPU kernel" : "CPU threads", nic.offered,
        nic.delivered, nic.drops_ring_full, nic.tx_packets, errors.empty() ? "; slots audited ok" : "");
    if (!errors.empty()) failures_ += (failures_.empty() ? "" : "; ") + ("forward " + f.spec->name + ": " + errors);
  }
}

void GpuRingForwards::throw_if_failed() const {
  if (!failures_.empty()) throw std::runtime_error("gpuring " + failures_);
}

}  // namespace gpunfv
