#include "gpu_forward_cases.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "core/clock.h"
#include "gpuring_cases.h"
#include "io/discard_port.h"
#include "io/generator_port.h"
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/forward_session.h"

namespace gpunfv::bench::gpuring {

namespace gr = ::gpunfv::gpuring;

namespace {

struct FwdCase {
  gr::ForwardVariant variant = gr::ForwardVariant::rd;
  uint32_t size = 64;
  uint32_t tail_batch = 8;
  double load = 0;  // fraction of the copy engine's rate; 0: unpaced
  double peer_pps = 0;
};

struct FwdRow {
  FwdCase c;
  gr::ForwardReport rep;
  double mpps = 0, gbps = 0, offered_pps = 0, cpu_cores = 0, driver_cores = 0, host_bytes_per_pkt = 0;
  double p50 = 0, p90 = 0, p99 = 0;
  Spread rx_dma, gpu_side, tx_dma;
  double rx_blocked = 0;
  std::string limit = "-";  // unpaced rows: limit_of (gpuring_cases.h)
  std::vector<std::pair<double, double>> cdf;  // (fraction, latency us)
  std::string accounting;
};

double percentile(const std::vector<uint32_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t k = std::min(sorted.size() - 1, size_t(std::ceil(q * double(sorted.size()))) - (q > 0 ? 1 : 0));
  return sorted[k];
}

FwdRow run_case(const FwdCase& c, const ForwardSweep& sw) {
  FwdRow row;
  row.c = c;
  const bool host = sw.host || c.variant == gr::ForwardVariant::bn;
  gr::RingParams p;
  p.rings = sw.rings;
  p.ring_size = 512;
  p.tail_batch = c.tail_batch;
  p.tail_timeout_ns = c.tail_batch == 1 ? 0 : sw.tail_timeout_ns;
  gr::NicEmulatorConfig nic;
  nic.rate_pps = c.load * c.peer_pps;
  nic.burst = sw.nic_burst;
  nic.tx_burst = sw.nic_tx_burst;
  nic.phase_timing = true;
  nic.inflight = sw.nic_inflight;
  nic.coalesce = sw.coalesce;
  nic.latency_breakdown = true;
  // Unpaced rows measure the sustained rate: the emulator holds frames while A's ring is full
  // (802.3x pause) instead of dropping them, so the rate is what the slowest stage moves.
  nic.flow_control = c.load == 0;
  const uint64_t packets = nic.rate_pps > 0 ? std::min<uint64_t>(sw.packets, uint64_t(nic.rate_pps * 1.0) + 1000)
                                            : sw.packets;
  nic.max_latency_samples = packets;
  const std::string yaml = fmt::format("{{name: gen, type: generator, count: {}, size: {}, flows: 4096, seed: 1}}",
                                       packets, c.size);
  GeneratorPort gen(ConfigNode(YAML::Load(yaml), "gpuring_bench"), 0, PortContext{});
  DiscardPort sink("sink", 1);
  gr::ForwardSession s(p, host ? gr::Placement::host : gr::Placement::device, c.variant, gen, &sink, nic,
                       /*route=*/false, sw.integrity);
  const double cpu0 = process_cpu_seconds();
  const uint64_t t0 = monotonic_ns();
  if (host)
    s.start_host(0, nf_hook(gr::PassThroughView{}, gr::PassThrough{}));
  else
    start_gpu(s, 0, gr::NfHook{});
  row.rep = s.finish(sw.case_timeout_s);
  const double wall = double(monotonic_ns() - t0) / 1e9;
  const double cpu = process_cpu_seconds() - cpu0;
  const gr::NicStats& n = row.rep.nic;
  row.offered_pps = nic.rate_pps;
  if (n.tx_last_ns > n.rx_first_ns) row.mpps = double(n.tx_packets) / (double(n.tx_last_ns - n.rx_first_ns) / 1e3);
  row.gbps = row.mpps * 1e6 * double(c.size) * 8 / 1e9;
  row.cpu_cores = cpu / wall;
  row.driver_cores = std::max(0.0, cpu - double(n.thread_cpu_ns) / 1e9) / wall;
  // Frame bytes that cross host DRAM between the two NICs: bn's rings lie there (each frame is
  // written in by A's NIC and read out by B's); wr and rd keep frames in GPU memory.
  uint64_t rx_bytes = 0;
  for (const gr::RxCounters& r : row.rep.rx) rx_bytes += r.bytes;
  if (host && n.tx_packets) row.host_bytes_per_pkt = double(rx_bytes + n.tx_bytes) / double(n.tx_packets);
  std::vector<uint32_t> lat = n.latency_ns;
  std::sort(lat.begin(), lat.end());
  row.p50 = percentile(lat, 0.5);
  row.p90 = percentile(lat, 0.9);
  row.p99 = percentile(lat, 0.99);
  row.rx_dma = spread_of(n.breakdown.rx_dma_ns);
  row.gpu_side = spread_of(n.breakdown.gpu_ns);
  row.tx_dma = spread_of(n.breakdown.tx_dma_ns);
  row.rx_blocked = double(n.phases.rx_wait_ns + n.phases.rx_desc_fetch_ns) / 1e9 / wall;  // on its copy engine
  const double tx_blocked = double(n.phases.tx_wait_ns) / 1e9 / wall;
  if (c.load == 0) row.limit = limit_of(row.rx_blocked, tx_blocked, n.offered, n.drops_ring_full, n.pauses);
  for (double q : {0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0})
    row.cdf.emplace_back(q, percentile(lat, q) / 1e3);
  row.accounting = row.rep.accounting_errors();
  return row;
}

std::string variant_label(const FwdCase& c, const ForwardSweep& sw) {
  const bool host = sw.host || c.variant == gr::ForwardVariant::bn;
  return fmt::format("{} ({})", gr::forward_variant_name(c.variant), host ? "CPU thread, host memory" : "GPU kernel");
}

nlohmann::json json_of(const FwdRow& r, const ForwardSweep& sw) {
  nlohmann::json cdf = nlohmann::json::array();
  for (auto& [q, us] : r.cdf) cdf.push_back({q, us});
  const gr::NicPhaseTimes& ph = r.rep.nic.phases;
  return {{"variant", std::string(gr::forward_variant_name(r.c.variant))},
          {"loops_on", (sw.host || r.c.variant == gr::ForwardVariant::bn) ? "cpu" : "gpu"},
          {"size", r.c.size},
          {"rings", sw.rings},
          {"tail_batch", r.c.tail_batch},
          {"integrity", sw.integrity},
          {"load", r.c.load},
          {"offered_pps", r.offered_pps},
          {"offered", r.rep.nic.offered},
          {"sent", r.rep.nic.tx_packets},
          {"nic_drops", r.rep.nic.drops_ring_full + r.rep.nic.drops_oversize},
          {"integrity_drops", r.rep.drops(DropReason::integrity_mismatch)},
          {"mpps", r.mpps},
          {"gbps_l2", r.gbps},
          {"peer_copy_engine_mpps", r.c.peer_pps / 1e6},
          {"x_copy_engine", r.c.peer_pps > 0 ? r.mpps * 1e6 / r.c.peer_pps : 0.0},
          {"latency_p50_ns", r.p50},
          {"latency_p90_ns", r.p90},
          {"latency_p99_ns", r.p99},
          {"latency_cdf_us", cdf},
          {"latency_breakdown",
           {{"nic_rx_dma", r.rx_dma.json()}, {"gpu_side", r.gpu_side.json()}, {"nic_tx_dma", r.tx_dma.json()}}},
          {"cpu_cores", r.cpu_cores},
          {"driver_cores", r.driver_cores},
          {"host_bytes_per_packet", r.host_bytes_per_pkt},
          {"tx_tail_writes", r.rep.tail_writes_tx()},
          {"rx_tail_writes", r.rep.tail_writes_rx()},
          {"emulator_phases_ns",
           {{"rx_steps", ph.rx_steps}, {"rx_frames", ph.rx_frames}, {"rx_desc_fetches", ph.rx_desc_fetches},
            {"rx_data_copies", ph.rx_data_copies}, {"rx_source", ph.rx_source_ns},
            {"rx_desc_fetch", ph.rx_desc_fetch_ns}, {"rx_copy", ph.rx_copy_ns}, {"rx_wait", ph.rx_wait_ns},
            {"tx_steps", ph.tx_steps}, {"tx_frames", ph.tx_frames}, {"tx_desc_fetches", ph.tx_desc_fetches},
            {"tx_data_copies", ph.tx_data_copies}, {"tx_desc_read", ph.tx_desc_read_ns},
            {"tx_copy", ph.tx_copy_ns}, {"tx_sink", ph.tx_sink_ns}, {"tx_writeback", ph.tx_writeback_ns},
            {"tx_wait", ph.tx_wait_ns}}},
          {"emulator_rx_blocked", r.rx_blocked},
          {"limit", r.limit},
          {"accounting", r.accounting.empty() ? "ok" : r.accounting}};
}

// The "p50 / p99" columns split each frame's latency: the NIC's rx DMA (A's NIC: arrival ->
// frame and descriptor in GPU memory), the GPU side (-> B's tx tail write covering it read by
// B's NIC), the NIC's tx DMA (-> sent).
const char* kHeader =
    "| variant | size | batch | load | lost | Mpps | Gbit/s (L2) | peer: copy engine Mpps | x copy engine | p50 us | "
    "p90 us | p99 us | rx DMA p50 / p99 us | GPU side p50 / p99 us | tx DMA p50 / p99 us | rx blocked | limit | "
    "cpu cores | driver cores | host bytes/pkt | tx tail writes/pkt | accounting |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

std::string pair_us(const Spread& s) { return fmt::format("{:.1f} / {:.1f}", s.p50 / 1e3, s.p99 / 1e3); }

std::string table_row(const FwdRow& r, const ForwardSweep& sw) {
  const double sent = double(std::max<uint64_t>(r.rep.nic.tx_packets, 1));
  return fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.2f} | {:.1f} | {:.1f} | {:.1f} | {} | "
                     "{} | {} | {:.0f}% | {} | {:.2f} | {:.2f} | {:.0f} | {:.3f} | {} |",
                     variant_label(r.c, sw), r.c.size, r.c.tail_batch,
                     r.c.load > 0 ? fmt::format("{:.0f}%", r.c.load * 100) : "max (flow control)",
                     r.rep.nic.drops_ring_full + r.rep.nic.drops_oversize, r.mpps, r.gbps, r.c.peer_pps / 1e6,
                     r.c.peer_pps > 0 ? r.mpps * 1e6 / r.c.peer_pps : 0.0, r.p50 / 1e3, r.p90 / 1e3, r.p99 / 1e3,
                     pair_us(r.rx_dma), pair_us(r.gpu_side), pair_us(r.tx_dma), r.rx_blocked * 100, r.limit, r.cpu_cores, r.driver_cores, r.host_bytes_per_pkt, double(r.rep.tail_writes_tx()) / sent,
                     r.accounting.empty() ? "ok" : r.accounting);
}

std::string phase_row(const FwdRow& r, const ForwardSweep& sw) {
  const gr::NicPhaseTimes& ph = r.rep.nic.phases;
  auto per = [](uint64_t ns, uint64_t n) { return n ? double(ns) / double(n) / 1e3 : 0.0; };
  auto ratio = [](uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; };
  return fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} ({} fetches) | {:.1f} | {:.1f} | {} | {:.1f} | "
                     "{:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |",
                     variant_label(r.c, sw), r.c.size, ph.rx_steps, ratio(ph.rx_frames, ph.rx_steps),
                     ratio(ph.rx_frames, ph.rx_data_copies), per(ph.rx_source_ns, ph.rx_steps),
                     per(ph.rx_desc_fetch_ns, ph.rx_steps), ph.rx_desc_fetches, per(ph.rx_copy_ns, ph.rx_steps),
                     per(ph.rx_wait_ns, ph.rx_steps), ph.tx_steps, ratio(ph.tx_frames, ph.tx_steps),
                     per(ph.tx_desc_read_ns, ph.tx_steps), per(ph.tx_copy_ns, ph.tx_steps),
                     per(ph.tx_sink_ns, ph.tx_steps), per(ph.tx_writeback_ns, ph.tx_steps), per(ph.tx_wait_ns, ph.tx_steps));
}

}  // namespace

int run_gpu_forward_sweep(const ForwardSweep& sw) {
  std::vector<gr::ForwardVariant> variants;
  for (const std::string& v : sw.variants) variants.push_back(gr::parse_forward_variant(v));
  fmt::print("# gpuring_bench --gpu-forward: {} ring pair(s), ring_size 512, tail batch {} / {} ns, integrity {}, "
             "NIC emulated (rx burst {}, tx burst {}, {} steps in flight per side, {})\n\n",
             sw.rings, sw.tail_batch, sw.tail_timeout_ns, sw.integrity ? "on" : "off", sw.nic_burst, sw.nic_tx_burst,
             sw.nic_inflight, sw.coalesce ? "one copy per run of adjacent slots" : "one copy per frame");
  fmt::print("wr and rd: the forwarding kernel on the GPU, rings in GPU memory, the emulator's copies by the GPU's "
             "copy engine.{}\nbn: the same loop on a CPU thread over rings in host memory, copies by memcpy.\n"
             "On one GPU wr and rd move the same bytes over the same link; they differ in whose slots carry the "
             "frames and which queue recycles them.\n\n",
             sw.host ? " (--host: wr and rd also on CPU threads over host memory)" : "");

  fmt::print("## Peers: the emulator's copy engine alone (its DMA work per frame, no forwarding side)\n\n"
             "| size | device copy engine Mpps | memcpy Mpps |\n|---|---|---|\n");
  std::map<uint32_t, double> ce_dev, ce_host;
  const uint64_t ce_packets = std::min<uint64_t>(sw.packets, 200000);
  for (uint32_t size : sw.sizes) {
    ce_dev[size] = sw.host ? 0 : copy_engine_pps(size, sw.nic_burst, ce_packets, false, sw.nic_inflight, sw.coalesce);
    ce_host[size] = copy_engine_pps(size, sw.nic_burst, ce_packets, true, sw.nic_inflight, sw.coalesce);
    fmt::print("| {} | {:.3f} | {:.3f} |\n", size, ce_dev[size] / 1e6, ce_host[size] / 1e6);
  }
  auto peer = [&](gr::ForwardVariant v, uint32_t size) {
    return (sw.host || v == gr::ForwardVariant::bn) ? ce_host[size] : ce_dev[size];
  };

  std::vector<FwdRow> all;
  bool stalled = false;
  auto emit = [&](const FwdCase& c) {
    if (stalled) return;
    FwdRow r = run_case(c, sw);
    fmt::print("{}\n", table_row(r, sw));
    std::fflush(stdout);
    if (!r.rep.drained) stalled = true;
    all.push_back(std::move(r));
  };

  fmt::print("\n## Throughput, unpaced with flow control (Figures 5-6 shape)\n\n{}\n", kHeader);
  const size_t first_tp = all.size();
  for (uint32_t size : sw.sizes)
    for (gr::ForwardVariant v : variants) emit(FwdCase{v, size, sw.tail_batch, 0, peer(v, size)});
  const size_t end_tp = all.size();

  fmt::print("\n## Latency at 50% of the copy engine's rate (Figure 7 shape; CDF points in the JSON)\n\n{}\n", kHeader);
  for (uint32_t size : {sw.sizes.front(), sw.sizes.back()})
    for (gr::ForwardVariant v : variants) emit(FwdCase{v, size, sw.tail_batch, 0.5, peer(v, size)});

  const gr::ForwardVariant tb_variant = variants.front();
  fmt::print("\n## The latency cost of batching tail updates ({}, {} B, 50% load)\n\n{}\n",
             gr::forward_variant_name(tb_variant), sw.sizes.front(), kHeader);
  for (uint32_t batch : {1u, 8u, 32u})
    emit(FwdCase{tb_variant, sw.sizes.front(), batch, 0.5, peer(tb_variant, sw.sizes.front())});

  fmt::print("\n## Where the emulator's time goes (unpaced rows; us per step; issue times exclude the copies, "
             "which run in the background; \"rx wait\": blocked with every step in flight; \"tx wait\": descriptors "
             "posted but not fetched, every tx step in flight)\n\n"
             "| variant | size | rx steps | frames/step | frames/copy | rx source | rx desc fetch | rx stage + issue | "
             "rx wait | tx steps | frames/step | tx desc fetch issue | tx copy issue | tx sink | tx wb issue | tx wait |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = first_tp; i < end_tp && i < all.size(); ++i) fmt::print("{}\n", phase_row(all[i], sw));

  if (!sw.json_path.empty()) {
    nlohmann::json j;
    j["rings"] = sw.rings;
    j["integrity"] = sw.integrity;
    for (auto& [size, pps] : ce_dev) j["peer_copy_engine_pps"]["device"][std::to_string(size)] = pps;
    for (auto& [size, pps] : ce_host) j["peer_copy_engine_pps"]["memcpy"][std::to_string(size)] = pps;
    for (const FwdRow& r : all) j["rows"].push_back(json_of(r, sw));
    std::ofstream(sw.json_path) << j.dump(1) << "\n";
  }
  size_t bad = 0;
  for (const FwdRow& r : all) bad += !r.accounting.empty();
  if (bad) fmt::print(stderr, "gpuring_bench --gpu-forward: {} rows with accounting errors\n", bad);
  if (stalled) fmt::print(stderr, "gpuring_bench --gpu-forward: a case did not drain; stopped\n");
  return bad || stalled ? 1 : 0;
}

}  // namespace gpunfv::bench::gpuring
