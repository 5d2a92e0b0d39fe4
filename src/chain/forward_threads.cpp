#include "chain/forward_threads.h"

namespace gpunfv {

ForwardThreads::ForwardThreads(RuntimeConfig& rc, RunStats& stats) : rc_(rc), stats_(stats) {
  for (const ForwardSpec& f : rc.forwards) {
    if (f.on_rings) continue;  // runs on the gpuring ports' rings (chain/gpuring_forward.h)
    specs_.push_back(&f);
    forwarders_.push_back(std::make_unique<Forwarder>(f, *rc.ports[f.from], *rc.ports[f.to],
                                                      *stats.ports[f.from], *stats.ports[f.to]));
  }
}

ForwardThreads::~ForwardThreads() { join(); }

void ForwardThreads::start(std::function<bool()> stop) {
  stop_ = std::move(stop);
  for (auto& f : forwarders_) threads_.emplace_back([this, fw = f.get()] { fw->run(stop_); });
}

void ForwardThreads::join() {
  if (threads_.empty()) return;
  for (auto& t : threads_) t.join();
  threads_.clear();
  for (size_t i = 0; i < forwarders_.size(); ++i) {
    const ForwardSpec& spec = *specs_[i];
    const ForwardResult& r = forwarders_[i]->result();
    PortCounters& from = *stats_.ports[spec.from];
    for (int k = 0; k < kMaxDropReasons; ++k) from.dropped.by_reason[k] += r.drops.by_reason[k];
    stats_.latency.merge(r.latency);
    stats_.latency_untimed += r.sent - r.latency.count();
    nlohmann::json j;
    j["name"] = spec.name;
    j["mode"] = forwarders_[i]->zero_copy() ? "zerocopy" : "copy";
    j["describe"] = forwarders_[i]->describe();
    j["descriptor_batch"] = spec.descriptor_batch;
    j["posts"] = r.posts;
    j["copied_bytes"] = r.copied_bytes;
    j["byte_counts"] = r.byte_counts;  // "frame lengths", "port counters" or "off"
    j["sent"] = r.sent;
    j["latency_sample"] = r.latency_sample;  // one rx burst in this many timed
    j["latency_ns"] = {{"p50", r.latency.quantile(0.5)}, {"p90", r.latency.quantile(0.9)},
                       {"p99", r.latency.quantile(0.99)}, {"max", r.latency.max()},
                       {"count", r.latency.count()}, {"untimed", r.sent - r.latency.count()}};
    stats_.forward_reports.push_back(std::move(j));
  }
}

}  // namespace gpunfv
