#include "gpuring_cases.h"

#include <fmt/core.h>
#include <sys/resource.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <thread>

#include "core/clock.h"
#include "io/discard_port.h"
#include "io/generator_port.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/nic_emu/rss.h"
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/ring_session.h"
#include "gpuring_bench/staged_path.h"

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

Spread spread_of(std::vector<uint32_t> s) {
  Spread r;
  if (s.empty()) return r;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) {
    return double(s[std::min(s.size() - 1, size_t(std::ceil(q * double(s.size()))) - (q > 0 ? 1 : 0))]);
  };
  r.p50 = at(0.5);
  r.p90 = at(0.9);
  r.p99 = at(0.99);
  r.max = double(s.back());
  return r;
}

std::string limit_of(double rx_blocked, double tx_blocked, uint64_t offered, uint64_t ring_full, uint64_t pauses) {
  if (rx_blocked >= 0.5) return "NIC rx copy engine";
  if (tx_blocked >= 0.5) return "NIC tx copy engine";
  if (double(ring_full + pauses) > 0.001 * double(offered)) return "GPU side (ring full)";
  return "emulator CPU";
}

nlohmann::json Spread::json() const { return {{"p50_ns", p50}, {"p90_ns", p90}, {"p99_ns", p99}, {"max_ns", max}}; }

nlohmann::json Result::json() const {
  return {{"path", c.path},
          {"nic_dma", c.dma_name()},
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
          {"latency_p50_ns", lat_p50_ns},
          {"latency_breakdown",
           {{"nic_rx_dma", rx_dma.json()}, {"gpu_side", gpu_side.json()}, {"nic_tx_dma", tx_dma.json()}}},
          {"gpu_side_on_gpu",
           {{"count", on_gpu.count}, {"mean_ns", on_gpu.mean_ns}, {"p50_ns", on_gpu.p50_ns},
            {"p99_ns", on_gpu.p99_ns}, {"p999_ns", on_gpu.p999_ns}, {"max_ns", on_gpu.max_ns}}},
          {"emulator_rx_blocked", rx_blocked},
          {"emulator_tx_blocked", tx_blocked},
          {"rx_frames_per_copy", frames_per_copy},
          {"limit", limit},
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
  r.c.host = env.host;
  auto gen = make_generator(c, env);
  DiscardPort sink("sink", 1);
  gr::NicEmulatorConfig nic = env.nic;
  // env.nic.burst frames per ring and step: spread over more rings, a step still makes runs of
  // adjacent slots (one copy each) instead of one copy per frame.
  nic.burst = env.nic.burst * c.rings.rings;
  nic.rate_pps = c.rate_pps;
  nic.max_latency_samples = c.packets;
  nic.latency_breakdown = true;
  nic.phase_timing = true;
  gr::RingSession s(c.rings, env.host ? gr::Placement::host : gr::Placement::device, *gen, &sink, nic, c.dma);
  const double cpu0 = process_cpu_seconds();
  const uint64_t t0 = monotonic_ns();
  if (env.host)
    s.start_host(0, nf_hook(gr::PassThroughView{}, gr::PassThrough{}));
  else
    start_gpu(s, 0, env.hook);
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
  r.lat_p50_ns = spread_of(rep.nic.latency_ns).p50;
  latency_stats(rep.nic.latency_ns, r);
  r.rx_dma = spread_of(rep.nic.breakdown.rx_dma_ns);
  r.gpu_side = spread_of(rep.nic.breakdown.gpu_ns);
  r.tx_dma = spread_of(rep.nic.breakdown.tx_dma_ns);
  r.on_gpu = gr::summarize_gpu_latency(rep.rings.latency);
  const gr::NicPhaseTimes& ph = rep.nic.phases;
  r.rx_blocked = double(ph.rx_wait_ns + ph.rx_desc_fetch_ns) / 1e9 / wall;  // on its copy engine
  r.frames_per_copy = ph.rx_data_copies ? double(ph.rx_frames) / double(ph.rx_data_copies) : 0;
  r.tx_blocked = double(ph.tx_wait_ns) / 1e9 / wall;
  if (c.rate_pps == 0) r.limit = limit_of(r.rx_blocked, r.tx_blocked, r.offered, rep.nic.drops_ring_full, rep.nic.pauses);
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

double copy_engine_pps(uint32_t size, uint32_t burst, uint64_t packets, bool host, uint32_t inflight,
                       bool coalesce, gr::NicDma dma) {
  gr::RingParams p;
  p.rings = 1;
  p.ring_size = 1024;
  burst = std::clamp<uint32_t>(burst, 1, p.ring_size / 2);
  inflight = std::clamp<uint32_t>(inflight, 1, 64);
  gr::RingSet rings(p, host ? gr::Placement::host : gr::Placement::device);
  const gr::RingSetView& v = rings.view();
  auto rx = host ? gr::make_host_dma_engine() : gr::make_device_dma_engine(dma);
  auto tx = rx->make_peer();
  // Staging as the emulator's: one entry per descriptor, slot-sized.
  Batch rx_frames(p.ring_size, p.slot_bytes, MemoryKind::host_pinned), tx_frames(p.ring_size, p.slot_bytes, MemoryKind::host_pinned);
  const size_t pitch = rx_frames.stride();
  uint8_t* rx_base = rx_frames.base() + rx_frames.layout().off_data;
  uint8_t* tx_base = tx_frames.base() + tx_frames.layout().off_data;
  auto* rx_wb = static_cast<gr::RxDesc*>(rx->alloc_staging(sizeof(gr::RxDesc) * p.ring_size));
  auto* tx_mirror = static_cast<gr::TxDesc*>(tx->alloc_staging(sizeof(gr::TxDesc) * p.ring_size));
  auto* tx_wb = static_cast<gr::TxDesc*>(tx->alloc_staging(sizeof(gr::TxDesc) * p.ring_size));
  // Descriptor d names slot d, so a burst of adjacent descriptors is a run of adjacent slots.
  auto next = [&](uint32_t d) { return d + 2 * burst > p.ring_size ? 0u : d + burst; };
  auto frames_copy = [&](gr::DmaEngine& e, uint32_t d, bool in) {
    if (coalesce) {
      if (in)
        e.copy_rows(v.slot_ptr(d), p.slot_bytes, rx_base + d * pitch, pitch, size, burst);
      else
        e.copy_rows(tx_base + d * pitch, pitch, v.slot_ptr(d), p.slot_bytes, size, burst);
      return;
    }
    std::vector<void*> dst(burst);
    std::vector<const void*> src(burst);
    std::vector<size_t> sizes(burst, size);
    for (uint32_t i = 0; i < burst; ++i) {
      dst[i] = in ? static_cast<void*>(v.slot_ptr(d + i)) : tx_base + (d + i) * pitch;
      src[i] = in ? static_cast<const void*>(rx_base + (d + i) * pitch) : v.slot_ptr(d + i);
    }
    if (in)
      e.write_gather(dst, src, sizes);
    else
      e.read_gather(dst, src, sizes);
  };
  // The emulator's own work per frame comes with it: taken from a generator, RSS, staged.
  GeneratorPort gen(ConfigNode(YAML::Load(fmt::format("{{name: gen, type: generator, count: {}, size: {}, "
                                                      "flows: 4096, seed: 1}}", packets + burst, size)),
                               "gpuring_bench"),
                    0, PortContext{});
  const gr::Rss rss(1);
  Batch source(burst, p.slot_bytes, MemoryKind::host);
  uint64_t rx_ns = 0, tx_ns = 0;
  uint32_t hashes = 0;
  auto rx_side = [&] {
    const uint64_t t0 = monotonic_ns();
    std::deque<uint64_t> tickets;
    uint32_t d = 0;
    for (uint64_t moved = 0; moved < packets; moved += burst, d = next(d)) {
      if (tickets.size() >= inflight) {
        rx->wait_for(tickets.front());
        tickets.pop_front();
      }
      source.set_count(0);
      while (source.count() < burst && !gen.rx_done()) gen.rx_burst(source, burst - source.count());
      const BatchView sv = source.view();
      for (uint32_t i = 0; i < source.count(); ++i) {
        const uint8_t* frame = sv.data.framework_data() + size_t(i) * sv.stride;
        const gr::RssResult r = rss.classify(frame, sv.len[i]);
        hashes ^= r.hash;
        std::memcpy(rx_base + (d + i) * pitch, frame, sv.len[i]);
        rx_wb[d + i].qword[0] = r.hash;
        rx_wb[d + i].qword[1] = gr::rx_upper(gr::kRxStatusDD | gr::kRxStatusEOP, sv.len[i], 0);
      }
      frames_copy(*rx, d, true);                              // frames into slots
      rx->write_descriptors(v.rx_desc + d, rx_wb + d, burst);  // write-backs behind them
      tickets.push_back(rx->mark());
    }
    rx->wait();
    rx_ns = monotonic_ns() - t0;
    rx->park();  // nothing of the engine runs when the staging is freed
  };
  // The tx descriptors name their slots, as the GPU side posts them: a chaining engine
  // (DmaEngine::fetch_tx_frames) follows them to the frames.
  for (uint32_t d = 0; d < p.ring_size; ++d) {
    tx_wb[d].read.buffer_addr = reinterpret_cast<uint64_t>(v.slot_ptr(d));
    tx_wb[d].read.cmd_type_len = gr::tx_cmd_type_len(size, true);
    tx_wb[d].read.olinfo_status = 0;
  }
  tx->write_descriptors(v.tx_desc, tx_wb, p.ring_size);
  tx->wait();
  auto tx_side = [&] {
    const uint64_t t0 = monotonic_ns();
    struct Item {
      uint64_t ticket;
      uint32_t d;
      bool fetched;
    };
    std::deque<Item> items;
    uint64_t issued = 0, done = 0;
    uint32_t d = 0;
    bool chain = true;  // until the engine says it cannot (the copy engine)
    while (done < packets) {
      while (issued < packets && items.size() < 2 * inflight) {
        if (chain)  // descriptors and frames in one step
          chain = tx->fetch_tx_frames(gr::DmaEngine::TxFetch{v.tx_desc, tx_mirror, p.ring_size, d, burst, tx_base,
                                                             pitch, 0, p.slot_bytes});
        if (!chain) tx->read_async(tx_mirror + d, v.tx_desc + d, sizeof(gr::TxDesc) * burst);  // descriptor fetch
        items.push_back({tx->mark(), d, chain});
        issued += burst;
        d = next(d);
      }
      tx->wait_for(items.front().ticket);
      Item it = items.front();
      items.pop_front();
      if (!it.fetched) {
        frames_copy(*tx, it.d, false);                                 // frames out
        tx->write_descriptors(v.tx_desc + it.d, tx_wb + it.d, burst);  // DD behind them
        items.push_back({tx->mark(), it.d, true});
      } else {
        if (chain) tx->write_descriptors(v.tx_desc + it.d, tx_wb + it.d, burst);  // DD, after the frames
        done += burst;
      }
    }
    tx->wait();
    tx_ns = monotonic_ns() - t0;
    tx->park();
  };
  std::thread a(rx_side), b(tx_side);
  a.join();
  b.join();
  if (hashes == 0x5A5A5A5Au) fmt::print(" ");  // keeps the RSS work from being optimised away
  rx->free_staging(rx_wb);
  tx->free_staging(tx_mirror);
  tx->free_staging(tx_wb);
  const uint64_t moved = (packets + burst - 1) / burst * burst;
  return double(moved) / (double(std::max(rx_ns, tx_ns)) / 1e9);
}

double copy_engine_pps_stepwise(uint32_t size, uint32_t burst, uint64_t packets, bool host) {
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
