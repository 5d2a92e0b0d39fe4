#include "gpuring_cases.h"

#include <fmt/core.h>
#include <sys/resource.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "io/discard_port.h"
#include "io/generator_port.h"
#include "io/gpuring/dma_engine.h"
#include "io/gpuring/ring_session.h"
#include "io/gpuring/staged_path.h"

namespace gpunfv::bench::gpuring {

namespace gr = ::gpunfv::gpuring;

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void latency_stats(std::vector<uint32_t>& s, Result& r) {
  if (s.empty()) return;
  double sum = 0, sq = 0;
  for (uint32_t v : s) sum += v;
  r.lat_mean_ns = sum / double(s.size());
  for (uint32_t v : s) sq += (v - r.lat_mean_ns) * (v - r.lat_mean_ns);
  r.lat_std_ns = std::sqrt(sq / double(s.size()));
  const size_t k = std::min(s.size() - 1, size_t(std::ceil(0.99 * double(s.size()))) - 1);
  std::nth_element(s.begin(), s.begin() + k, s.end());
  r.lat_p99_ns = s[k];
  r.lat_max_ns = *std::max_element(s.begin(), s.end());
}

nlohmann::json Result::json() const {
  return {{"path", c.path},
          {"rings", c.rings.rings},
          {"ring_size", c.rings.ring_size},
          {"size", c.size},
          {"tail_batch", c.rings.tail_batch},
          {"tail_timeout_ns", c.rings.tail_timeout_ns},
          {"tx_writeback", c.rings.tx_writeback},
          {"load", c.load},
          {"offered_pps", c.rate_pps},
          {"offered", offered},
          {"sent", sent},
          {"lost", lost},
          {"reordered", reordered},
          {"reordered_in_ring", reordered_in_ring},
          {"mpps", mpps},
          {"copy_engine_mpps", c.copy_engine_pps / 1e6},
          {"latency_mean_ns", lat_mean_ns},
          {"latency_std_ns", lat_std_ns},
          {"latency_p99_ns", lat_p99_ns},
          {"latency_max_ns", lat_max_ns},
          {"cpu_cores", cpu_cores},
          {"driver_cores", driver_cores},
          {"accounting", accounting.empty() ? "ok" : accounting}};
}

namespace {

std::unique_ptr<GeneratorPort> make_generator(const Case& c, const Env& env) {
  const std::string yaml = fmt::format("{{name: gen, type: generator, count: {}, size: {}, flows: 4096, seed: 1{}}}",
                                       c.packets, c.size, env.generator_extra.empty() ? "" : ", " + env.generator_extra);
  return std::make_unique<GeneratorPort>(ConfigNode(YAML::Load(yaml), "gpuring_bench"), 0, env.ctx);
}

}  // namespace

Result run_ring_case(const Case& c, const Env& env) {
  Result r;
  r.c = c;
  auto gen = make_generator(c, env);
  DiscardPort sink("sink", 1);
  gr::NicEmulatorConfig nic;
  nic.rate_pps = c.rate_pps;
  nic.max_latency_samples = c.packets;
  gr::RingSession s(c.rings, env.host ? gr::Placement::host : gr::Placement::device, *gen, &sink, nic);
  const double cpu0 = process_cpu_seconds();
  const uint64_t t0 = monotonic_ns();
  if (env.host)
    s.start_host(0, gr::PassThroughView{}, gr::PassThrough{});
  else
    s.start_gpu(0, env.hook);
  gr::RingRunReport rep = s.finish(env.case_timeout_s);
  const double wall = double(monotonic_ns() - t0) / 1e9;
  const double cpu = process_cpu_seconds() - cpu0;
  r.offered = rep.nic.offered;
  r.sent = rep.nic.tx_packets;
  r.lost = rep.nic.drops_ring_full + rep.nic.drops_oversize;
  r.reordered = rep.nic.reordered;
  r.reordered_in_ring = rep.nic.reordered_in_ring;
  if (rep.nic.tx_last_ns > rep.nic.rx_first_ns)
    r.mpps = double(r.sent) / (double(rep.nic.tx_last_ns - rep.nic.rx_first_ns) / 1e3);
  latency_stats(rep.nic.latency_ns, r);
  r.cpu_cores = cpu / wall;
  r.driver_cores = std::max(0.0, cpu - double(rep.nic.thread_cpu_ns) / 1e9) / wall;
  r.accounting = rep.accounting_errors();
  r.drained = rep.drained;
  // NF drops are not loss; frames that neither left nor were dropped by a reason would be.
  return r;
}

Result run_staged_case(const Case& c, const Env& env) {
  Result r;
  r.c = c;
  auto gen = make_generator(c, env);
  DiscardPort sink("sink", 1);
  const uint32_t stride = (c.size + 63) / 64 * 64;
  auto path = gr::make_staged_path(c.staged_batch, stride, env.hook);
  Batch b(c.staged_batch, stride, MemoryKind::host_pinned);
  std::vector<uint64_t> arrival(c.staged_batch);
  std::vector<uint32_t> lat;
  lat.reserve(c.packets);
  const double cpu0 = process_cpu_seconds();
  const uint64_t t0 = monotonic_ns();
  uint64_t taken = 0, last_tx = t0;
  while (!gen->rx_done() || b.count() > 0) {
    const uint64_t now = monotonic_ns();
    // Frames due at the offered rate join the batch (one worker plays NIC rx and driver).
    if (!gen->rx_done() && b.count() < b.capacity()) {
      uint32_t want = b.capacity() - b.count();
      if (c.rate_pps > 0) {
        const double due = std::floor(double(now - t0) * c.rate_pps / 1e9) + 1 - double(taken);
        want = due > 0 ? uint32_t(std::min<double>(want, due)) : 0;
      }
      const uint32_t first = b.count();
      const uint32_t got = want ? gen->rx_burst(b, want) : 0;
      for (uint32_t i = first; i < first + got; ++i) arrival[i] = now;
      taken += got;
    }
    const bool full = b.count() == b.capacity();
    const bool waited = b.count() > 0 && now - arrival[0] >= c.staged_timeout_ns;
    const bool last = gen->rx_done() && b.count() > 0;
    if (!(full || waited || last)) continue;
    path->process(b);
    const BatchView v = b.view();
    for (uint32_t i = 0; i < b.count(); ++i)
      if (v.verdict[i] == 0) sink.tx(v, i);
    const uint64_t done = monotonic_ns();
    for (uint32_t i = 0; i < b.count(); ++i) {
      lat.push_back(uint32_t(std::min<uint64_t>(done - arrival[i], UINT32_MAX)));
      r.sent += v.verdict[i] == 0;
    }
    last_tx = done;
    b.set_count(0);
  }
  const double wall = double(monotonic_ns() - t0) / 1e9;
  r.offered = taken;
  r.mpps = double(r.sent) / (double(last_tx - t0) / 1e3);
  latency_stats(lat, r);
  r.cpu_cores = (process_cpu_seconds() - cpu0) / wall;
  r.driver_cores = r.cpu_cores;
  return r;
}

double copy_engine_pps(uint32_t size, uint32_t burst, uint64_t packets, bool host) {
  gr::RingParams p;
  p.rings = 1;
  p.ring_size = 1024;
  gr::RingSet rings(p, host ? gr::Placement::host : gr::Placement::device);
  auto dma = host ? gr::make_host_dma_engine() : gr::make_cuda_dma_engine(true);
  const gr::RingSetView& v = rings.view();
  Batch frames(burst, p.slot_bytes, MemoryKind::host_pinned);
  auto* desc = static_cast<gr::RxDesc*>(dma->alloc_staging(sizeof(gr::RxDesc) * burst));
  std::vector<void*> dst(burst), host_dst(burst);
  std::vector<const void*> src(burst), dev(burst);
  std::vector<size_t> sizes(burst, size);
  for (uint32_t i = 0; i < burst; ++i) {
    dst[i] = v.slot_ptr(i);
    dev[i] = v.slot_ptr(i);
    src[i] = frames.base() + frames.layout().off_data + size_t(i) * p.slot_bytes;
    host_dst[i] = const_cast<void*>(src[i]);
  }
  const uint64_t t0 = monotonic_ns();
  uint64_t moved = 0;
  for (uint32_t d = 0; moved < packets; moved += burst, d = d + 2 * burst > p.ring_size ? 0 : d + burst) {
    dma->write_gather(dst, src, sizes);                           // rx: frames into slots
    dma->write_descriptors(v.rx_desc + d, desc, burst);           // rx write-back
    dma->wait();
    dma->read(desc, v.tx_desc + d, sizeof(gr::TxDesc) * burst);  // tx descriptor fetch
    dma->read_gather(host_dst, dev, sizes);                          // tx: frames out
    dma->write_descriptors(v.tx_desc + d, desc, burst);           // tx DD write-back
    dma->wait();
  }
  const double s = double(monotonic_ns() - t0) / 1e9;
  dma->free_staging(desc);
  return double(moved) / s;
}

}  // namespace gpunfv::bench::gpuring
