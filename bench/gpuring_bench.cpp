// gpuring_bench: the GPU ring port (host bypassing) on a GPU, in the shape of the Host
// Bypassing GPU paper's Table II: rings x packet sizes x offered load, with loss, reordering,
// latency (mean, std, p50, p99; from a frame's arrival at the NIC emulator to it sending the
// frame), split into the NIC's rx DMA, the GPU side and the NIC's tx DMA (p50/p99 each),
// throughput and CPU cores. Offered load is a fraction of what the NIC emulator's copy engine
// moves alone (measured first, per size, in the same run, as the emulator uses it; the way it
// once used it is measured beside it): a row at 50% that loses packets, or whose GPU-side share
// dominates, points at the GPU side. Then tail batching 1/8/16 (+timeout) with write-back on
// and off, and the host-staged path on the same frames and NF for comparison. Every ring row
// is checked: every packet and every slot accounted for.
//
// Usage: gpuring_bench [--rings 1,2,4,8,16] [--sizes 64,300,1000,1500] [--loads 0.25,0.5,0.9,0]
//                      [--packets N] [--max-case-s S] [--case-timeout-s S] [--nf pass|router]
//                      [--sections table,tail,staged] [--nic-burst 32] [--nic-inflight 4]
//                      [--nic-per-frame-copies] [--nic-dma batch,single,sm] [--json FILE] [--quick]
// A ring case whose loops do not drain within --case-timeout-s is aborted, reported, and ends
// the run (exit 1); a hang the abort cannot end is ended by the session's watchdog (exit 3).
// (run from the repository root: --routes defaults to data/router/bart_ipv4_random5000.txt)
// gpuring_bench --gpu-forward [--variants wr,rd,bn] [--fwd-sizes ...] [--fwd-packets N]
//                 [--tail-batch 8] [--no-integrity] [--nic-burst 32] [--nic-tx-burst 64]
//                 [--nic-inflight 4] [--nic-per-frame-copies] [--json FILE]
// instead measures forwarding between two ring ports (gpuring_bench/gpu_forward_cases.h).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include "gpu/device.h"
#include "gpuring_bench/gpu_forward_cases.h"
#include "gpuring_bench/gpuring_cases.h"
#include "nf/router/router.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

using namespace gpunfv;
using namespace gpunfv::bench::gpuring;

namespace {

std::string header() {
  // "x copy engine": sent Mpps over the copy engine's own rate; near 1 the emulator limits, and
  // loss well below 1 points at the GPU side. The three "p50 / p99" columns split each frame's
  // latency: the NIC's rx DMA (arrival -> data and descriptor in GPU memory), the GPU side
  // (-> the tx tail write covering it read by the NIC), the NIC's tx DMA (-> sent). "on GPU":
  // the GPU side timed on the GPU itself (rx taking the packet -> its tx tail write), without
  // the emulator's polling (io/gpuring/ring/gpu_latency.h).
  // "rx blocked": share of the run the emulator's rx thread waited for its copy engine;
  // "limit" (unpaced rows): what held the rate, by limit_of's rule.
  return "| path | NIC DMA | rings | size | batch | t/o ns | wb | load | offered Mpps | Mpps | x copy engine | lost | "
         "reordered (in ring) | lat mean us | std us | p50 us | p99 us | max us | rx DMA p50 / p99 us | "
         "GPU side p50 / p99 us | on GPU p50 / p99 us | tx DMA p50 / p99 us | rx blocked | frames/copy | limit | cpu cores | driver cores | "
         "accounting |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";
}

std::string pair(const Spread& s) { return fmt::format("{:.1f} / {:.1f}", s.p50 / 1e3, s.p99 / 1e3); }

std::string row(const Result& r) {
  const Case& c = r.c;
  const bool ring = c.path == "gpuring";
  return fmt::format(
      "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.3f} | {:.2f} | {} | {} ({}) | {:.1f} | {:.1f} | {:.1f} | "
      "{:.1f} | {:.1f} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {} |",
      c.path, ring ? c.dma_name() : "-", c.rings.rings, c.size, c.rings.tail_batch, c.rings.tail_timeout_ns,
      c.rings.tx_writeback ? "on" : "off", c.load > 0 ? fmt::format("{:.0f}%", c.load * 100) : "max",
      c.rate_pps / 1e6, r.mpps, c.copy_engine_pps > 0 ? r.mpps * 1e6 / c.copy_engine_pps : 0.0, r.lost,
      r.reordered, r.reordered_in_ring, r.lat_mean_ns / 1e3, r.lat_std_ns / 1e3, r.lat_p50_ns / 1e3,
      r.lat_p99_ns / 1e3, r.lat_max_ns / 1e3, ring ? pair(r.rx_dma) : "-", ring ? pair(r.gpu_side) : "-",
      ring ? fmt::format("{:.1f} / {:.1f}", r.on_gpu.p50_ns / 1e3, r.on_gpu.p99_ns / 1e3) : "-",
      ring ? pair(r.tx_dma) : "-", ring ? fmt::format("{:.0f}%", r.rx_blocked * 100) : "-",
      ring ? fmt::format("{:.1f}", r.frames_per_copy) : "-", r.limit, r.cpu_cores, r.driver_cores,
      r.accounting.empty() ? "ok" : r.accounting);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"GPU ring port benchmark (host bypassing, NIC emulated)"};
  std::vector<uint32_t> rings{1, 2, 4, 8, 16}, sizes{64, 300, 1000, 1500};
  std::vector<double> loads{0.25, 0.5, 0.9, 0};
  uint64_t packets = 200000;
  double max_case_s = 1.0;
  std::string nf = "pass", json_path, routes = "data/router/bart_ipv4_random5000.txt";
  bool quick = false, host = false;
  app.add_option("--rings", rings, "ring pairs per case")->delimiter(',');
  app.add_option("--sizes", sizes, "frame sizes (bytes)")->delimiter(',');
  app.add_option("--loads", loads, "offered load, fraction of the copy engine's rate (0: unpaced)")->delimiter(',');
  app.add_option("--packets", packets, "packets per case (at most)");
  app.add_option("--max-case-s", max_case_s, "seconds per case at most (fewer packets at low rates)");
  double case_timeout_s = 20;
  app.add_option("--case-timeout-s", case_timeout_s, "a ring case's drain limit; past it the case is aborted and the run ends")
      ->check(CLI::PositiveNumber);
  app.add_option("--nf", nf, "NF run in the rx kernel: pass or router")->check(CLI::IsMember({"pass", "router"}));
  app.add_option("--json", json_path, "write all rows as JSON");
  app.add_option("--routes", routes, "prefix file of the router NF (--nf router)");
  uint32_t staged_batch = 256;
  double staged_timeout_us = 50;
  app.add_option("--staged-batch", staged_batch, "staged path: packets per batch")->check(CLI::Range(1, 65536));
  app.add_option("--staged-timeout-us", staged_timeout_us, "staged path: send a partial batch after this wait");
  app.add_flag("--quick", quick, "rings 1,4; sizes 64,1500; loads 0.5,0");
  app.add_flag("--host", host, "run the loops on CPU threads over host memory (checks the benchmark without a GPU)");
  bench::gpuring::ForwardSweep fwd;
  bool gpu_forward = false, no_integrity = false;
  app.add_flag("--gpu-forward", gpu_forward, "forwarding between two GPU ring ports (variants x sizes)");
  app.add_option("--variants", fwd.variants, "--gpu-forward: wr, rd, bn")->delimiter(',');
  app.add_option("--fwd-sizes", fwd.sizes, "--gpu-forward: frame sizes")->delimiter(',');
  app.add_option("--fwd-packets", fwd.packets, "--gpu-forward: packets per case (at most)");
  app.add_option("--tail-batch", fwd.tail_batch, "--gpu-forward: descriptors per tail update")->check(CLI::Range(1, 4096));
  app.add_flag("--no-integrity", no_integrity, "--gpu-forward: no sampled integrity check");
  app.add_option("--nic-tx-burst", fwd.nic_tx_burst, "--gpu-forward: descriptors per emulator tx step")->check(CLI::Range(1, 4096));
  uint32_t nic_burst = 32, nic_inflight = 4;
  bool per_frame_copies = false;
  app.add_option("--nic-burst", nic_burst, "frames per emulator rx step (ring port: per ring)")->check(CLI::Range(1, 4096));
  app.add_option("--nic-inflight", nic_inflight, "emulator steps in flight per side (1: each waits for the last)")
      ->check(CLI::Range(1, 64));
  app.add_flag("--nic-per-frame-copies", per_frame_copies, "emulator: one copy per frame instead of one per run of adjacent slots");
  std::vector<uint32_t> table_tail_batch{gpuring::RingParams{}.tail_batch};
  std::vector<uint64_t> table_tail_timeout_ns{gpuring::RingParams{}.tail_timeout_ns};
  app.add_option("--table-tail-batch", table_tail_batch, "table: descriptors per tail update (each value a row)")
      ->delimiter(',')->check(CLI::Range(1, 511));
  app.add_option("--table-tail-timeout-ns", table_tail_timeout_ns, "table: tail timeout (each value a row)")
      ->delimiter(',')->check(CLI::Range(uint64_t(0), uint64_t(1'000'000'000)));
  std::vector<std::string> nic_dma_names{"batch"};
  app.add_option("--nic-dma", nic_dma_names,
                 "the emulator's DMA on the GPU, each a set of rows: batch, single (the copy engine), sm (GPU threads)")
      ->delimiter(',')->check(CLI::IsMember({"batch", "single", "sm"}));
  std::vector<std::string> sections{"table", "tail", "staged"};
  app.add_option("--sections", sections, "table, tail, staged")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  auto section = [&](const char* s) { return std::find(sections.begin(), sections.end(), s) != sections.end(); };
  fwd.nic_burst = nic_burst;
  fwd.nic_inflight = nic_inflight;
  fwd.coalesce = !per_frame_copies;
  if (quick) {
    rings = {1, 4};
    sizes = {64, 1500};
    loads = {0.5, 0};
  }
  if (!host && !cuda_device_available()) {
    fmt::print(stderr, "gpuring_bench: no CUDA device; the ring port's CPU variant is tested by gpunfv_tests\n");
    return 0;
  }

  if (gpu_forward) {
    fwd.rings = rings.empty() ? 1 : rings.front();
    fwd.integrity = !no_integrity;
    fwd.host = host;
    fwd.case_timeout_s = case_timeout_s;
    fwd.json_path = json_path;
    try {
      return bench::gpuring::run_gpu_forward_sweep(fwd);
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpuring_bench --gpu-forward: {}\n", e.what());
      return 2;
    }
  }

  Env env;
  env.host = host;
  env.case_timeout_s = case_timeout_s;
  env.nic.burst = nic_burst;
  env.nic.inflight = nic_inflight;
  env.nic.coalesce = !per_frame_copies;
  if (host && nf != "pass") {
    fmt::print(stderr, "gpuring_bench: --host runs the pass-through NF only\n");
    return 2;
  }
  std::unique_ptr<Router> router;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint16_t> next_hop_ports;
  if (nf == "router" && !host) {
    const std::string yaml = "{name: r1, type: router, routes: {file: " + routes + ", spread: [out]}}";
    router = Router::from_config(ConfigNode(YAML::Load(yaml), "gpuring_bench"),
                                 [](const std::string&) { return std::optional<uint16_t>(0); });
    router->prepare(Backend::gpu);
    next_hop_ports.upload(std::vector<uint16_t>(router->route_count() + 1, 0));
    env.hook.kind = gpuring::NfHook::Kind::router;
    env.hook.router = RouterView{router->table().device_ref(), next_hop_ports.span()};
    env.ctx.routes_of = [&](const std::string& n) -> const std::vector<Ipv4Prefix>* {
      return n == "r1" ? &router->prefixes() : nullptr;
    };
    env.generator_extra = "dst_from: r1";
  }
#endif

  std::vector<Result> all;
  bool stalled = false;
  auto emit = [&](const Result& r) {
    fmt::print("{}\n", row(r));
    std::fflush(stdout);
    all.push_back(r);
    if (!r.drained) {
      stalled = true;
      fmt::print(stderr, "gpuring_bench: a case did not drain within {} s; stopping (see its accounting)\n",
                 case_timeout_s);
    }
  };
  auto packets_for = [&](double rate) {
    return rate > 0 ? std::min<uint64_t>(packets, uint64_t(rate * max_case_s)) : packets;
  };

  fmt::print("# gpuring_bench: NF {}, NIC emulated ({}; rx burst {} per ring, {} steps in flight per side, {}), "
             "ring_size 512, slots 2048 B, loops on {}\n\n",
             nf, host ? "memcpy" : "copy engine", nic_burst, nic_inflight,
             per_frame_copies ? "one copy per frame" : "one copy per run of adjacent slots",
             host ? "CPU threads (--host)" : "the GPU");
  fmt::print("## Copy engine alone (the emulator's DMA and per-frame work, no GPU side)\n\n"
             "pipelined: as the emulator works now (rx and tx threads, each its own stream, {} bursts of {} in "
             "flight, {}; frames taken from a generator, RSS, staged); stepwise: the copies as it once did them "
             "(one thread, one copy per frame, each step waiting for its copies). The ring rows' load and \"x copy "
             "engine\" are over the pipelined rate.\n\n"
             "| size | pipelined Mpps | stepwise Mpps | ratio |\n|---|---|---|---|\n",
             nic_inflight, nic_burst, per_frame_copies ? "one copy per frame" : "adjacent slots in one copy");
  std::vector<gpuring::NicDma> dmas;
  if (host) nic_dma_names = {"batch"};  // memcpy plays the DMA on the CPU: one kind of row
  for (const std::string& d : nic_dma_names)
    dmas.push_back(d == "sm" ? gpuring::NicDma::sm : d == "single" ? gpuring::NicDma::single : gpuring::NicDma::batch);
  std::map<uint32_t, double> ce_old;
  std::map<gpuring::NicDma, std::map<uint32_t, double>> ce_of;  // per DMA kind, per size
  for (uint32_t size : sizes) {
    const uint64_t n = std::min<uint64_t>(packets, 200000);
    for (gpuring::NicDma d : dmas) ce_of[d][size] = copy_engine_pps(size, nic_burst, n, host, nic_inflight, !per_frame_copies, d);
    ce_old[size] = copy_engine_pps_stepwise(size, 32, n, host);
    const double first = ce_of[dmas[0]][size];
    fmt::print("| {} | {:.3f} | {:.3f} | {:.1f} |\n", size, first / 1e6, ce_old[size] / 1e6,
               ce_old[size] > 0 ? first / ce_old[size] : 0.0);
  }
  if (dmas.size() > 1 && !host) {
    fmt::print("\n### The emulator alone with each DMA engine (pipelined, as above)\n\n| size |");
    for (gpuring::NicDma d : dmas) fmt::print(" {} Mpps |", gpuring::nic_dma_name(d));
    fmt::print(" {} / {} |\n|---|", gpuring::nic_dma_name(dmas.back()), gpuring::nic_dma_name(dmas[0]));
    for (size_t i = 0; i <= dmas.size(); ++i) fmt::print("---|");
    fmt::print("\n");
    for (uint32_t size : sizes) {
      fmt::print("| {} |", size);
      for (gpuring::NicDma d : dmas) fmt::print(" {:.3f} |", ce_of[d][size] / 1e6);
      fmt::print(" {:.2f} |\n", ce_of[dmas[0]][size] > 0 ? ce_of[dmas.back()][size] / ce_of[dmas[0]][size] : 0.0);
    }
  }
  // The tail and staged sections use the first DMA kind.
  std::map<uint32_t, double>& ce = ce_of[dmas[0]];

  if (section("table"))
    fmt::print("\n## Table II shape: rings x size x load (tail batch {} / {} ns, write-back on; a row's load is a "
               "fraction of what the emulator moves alone with that row's DMA engine)\n\n{}\n",
               fmt::join(table_tail_batch, ","), fmt::join(table_tail_timeout_ns, ","), header());
  for (gpuring::NicDma dma : dmas)
  for (uint32_t size : section("table") ? sizes : std::vector<uint32_t>{})
    for (uint32_t n : rings)
      for (double load : loads)
        for (uint32_t tail_batch : table_tail_batch)
          for (uint64_t tail_timeout_ns : table_tail_timeout_ns) {
            Case c;
            c.rings.rings = n;
            c.rings.ring_size = 512;
            c.rings.tail_batch = tail_batch;
            c.rings.tail_timeout_ns = tail_timeout_ns;
            c.size = size;
            c.load = load;
            c.dma = dma;
            c.rate_pps = load * ce_of[dma][size];
            c.copy_engine_pps = ce_of[dma][size];
            c.packets = packets_for(c.rate_pps);
            if (!stalled) emit(run_ring_case(c, env));
          }

  const uint32_t tb_size = std::find(sizes.begin(), sizes.end(), 300u) != sizes.end() ? 300 : sizes[0];
  if (section("tail"))
    fmt::print("\n## Tail batching and tx write-back (1 ring, {} B, 50% load)\n\n{}\n", tb_size, header());
  for (bool wb : section("tail") ? std::vector<bool>{true, false} : std::vector<bool>{})
    for (uint32_t batch : {1u, 8u, 16u}) {
      Case c;
      c.rings.rings = 1;
      c.rings.ring_size = 512;
      c.rings.tail_batch = batch;
      c.rings.tail_timeout_ns = batch == 1 ? 0 : 2500;
      c.rings.tx_writeback = wb;
      c.dma = dmas[0];
      c.size = tb_size;
      c.load = 0.5;
      c.rate_pps = 0.5 * ce[tb_size];
      c.copy_engine_pps = ce[tb_size];
      c.packets = packets_for(c.rate_pps);
      if (!stalled) emit(run_ring_case(c, env));
    }

  if (section("staged"))
    fmt::print("\n## GPU ring port vs host-staged path (same frames, same NF; 50% load)\n\n{}\n", header());
  for (uint32_t size : section("staged") ? sizes : std::vector<uint32_t>{}) {
    Case c;
    c.rings.rings = 1;
    c.rings.ring_size = 512;
    c.dma = dmas[0];
    c.size = size;
    c.load = 0.5;
    c.rate_pps = 0.5 * ce[size];
    c.copy_engine_pps = ce[size];
    c.packets = packets_for(c.rate_pps);
    if (stalled) break;
    emit(run_ring_case(c, env));
    if (host || stalled) continue;
    Case s = c;
    s.path = "staged";
    s.staged_batch = staged_batch;
    s.staged_timeout_ns = uint64_t(staged_timeout_us * 1e3);
    emit(run_staged_case(s, env));
  }

  if (!json_path.empty()) {
    nlohmann::json j;
    j["nf"] = nf;
    for (auto& [size, pps] : ce) j["copy_engine_pps"][std::to_string(size)] = pps;
    for (auto& [d, per_size] : ce_of)
      for (auto& [size, pps] : per_size) j["emulator_alone_pps"][gpuring::nic_dma_name(d)][std::to_string(size)] = pps;
    for (auto& [size, pps] : ce_old) j["copy_engine_stepwise_pps"][std::to_string(size)] = pps;
    j["nic"] = {{"burst", nic_burst}, {"inflight", nic_inflight}, {"coalesce", !per_frame_copies}};
    for (const Result& r : all) j["rows"].push_back(r.json());
    std::ofstream(json_path) << j.dump(1) << "\n";
  }
  size_t bad = 0;
  for (const Result& r : all) bad += !r.accounting.empty();
  if (bad) fmt::print(stderr, "gpuring_bench: {} rows with accounting errors\n", bad);
  return bad ? 1 : 0;
}
