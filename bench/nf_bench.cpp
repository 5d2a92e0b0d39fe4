// Per-NF benchmark: router, firewall, NIDS and IPsec, each at several frame sizes, on the CPU
// backend (1 thread, all threads), against peer libraries run as their users run them (1 thread,
// all threads), and on the GPU (kernel-only on device-resident batches, end to end through
// pinned host batches).
//
// Per NF a configuration in bench/nf_bench/ (a generator port feeding the NF). Per frame size,
// one packet set is generated and reshaped into the NF's traffic (bench/nf_bench/*_case.cpp:
// firewall 5-tuples aimed at the rules, NIDS payloads with real patterns planted) outside the
// timed regions; every row then processes that set in passes (bench/nf_bench/timing.h: a
// warm-up pass, then --repeats samples of at least --min-seconds each, taken in turns across
// rows), on a pool of worker threads started and pinned once before any timing
// (bench/worker_pool.h). Rows report the median sample with min and max; ratios are between
// medians of the same run; an all-threads row scaling under half its thread count over its
// 1-thread row is flagged. Checks, on each row's warm-up pass:
//   - GPU rows and "CPU, 1 thread": every output packet bit for bit against "CPU, N threads"
//     (bytes, length, verdict, next_nf, out_port, headers, flow hash, the results record);
//   - peer rows: the peer's answer against ours (next hop, first matching rule, patterns or
//     rules found in the payload, ESP frame bytes).
// Each row says what work it includes (its scope); where a peer does narrower work than the NF,
// a gpunfv row doing the same narrow work sits beside it.
//
//   nf_bench [--nf router|firewall|nids|ipsec|all] [--case TAG,...] [--sizes 64,512,1518]
//            [--packets N] [--threads T] [--min-seconds S] [--repeats R] [--json FILE]
//            [--no-peer] [--config FILE] [--config-dir DIR]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_util.h"
#include "gpu_info.h"
#include "nf_bench/nf_case.h"
#include "nf_bench/timing.h"
#include "worker_pool.h"
#include "chain/processing_stage.h"
#include "core/error.h"

#if GPUNFV_HAVE_DPDK
#include "peers/eal.h"
#endif

using namespace gpunfv;
using namespace gpunfv::bench;

namespace {

constexpr size_t kRoundBytes = size_t(512) << 20;  // slots of the packet set, at most
constexpr size_t kDeviceCopiesBytes = size_t(4) << 30;  // kernel-only: device copies, at most
constexpr uint32_t kSweepsPerPass = 8;  // read-only peer rows on many threads: sweeps per pass

struct Options {
  std::vector<uint32_t> sizes{64, 512, 1518};
  uint64_t packets = 2'000'000;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool peers = true;
  TimingOptions timing;
};

struct SizeResult {
  uint32_t size = 0;
  uint64_t packets = 0;
  double mean_frame = 0;
  uint32_t device_copies = 0;
  std::vector<TimedRow> rows;
  size_t base = 1;  // index of the ratio baseline in rows
  nlohmann::json gpu_clocks;  // sampled right after the GPU rows
};

// The timed paths over one packet set: gpunfv's CPU backend, the case's peers (and our own
// narrow rows), the GPU kernel only and end to end.
struct SizeBench {
  RuntimeConfig& rc;
  NfCase& c;
  const Options& o;
  uint64_t& next_seq;
  Batches in, ref, work, gpu_out;
  size_t used = 0;
  std::unique_ptr<GpuBench> gb;

  TimedPath cpu_path(uint64_t n) {
    TimedPath p;
    p.name = "gpunfv CPU";
    p.scope = c.nf_scope;
    p.units = n;
    p.before_pass = [this] {
      copy_batches(in, work, used, o.threads);
      number_packets(work, used, next_seq);
      reset_stateful_nfs(rc, Backend::cpu);
    };
    p.pass = [this](unsigned t) { return run_cpu(rc, work, used, t); };
    p.check = [this] { return compare_batches(ref, work, used, o.threads); };
    return p;
  }

  TimedPath peer_path(Peer& peer, const RoundData& rd) {
    TimedPath p;
    p.name = peer.name();
    p.scope = peer.scope();
    p.lookup_only = peer.lookup_only();
    p.peer = peer.is_peer();
    p.checked = peer.checked();
    // Several sweeps on many threads (one thread's pass is long already), only where the round
    // has batches enough that threads rarely meet on one (they would write the same results).
    p.sweeps_on_many = peer.repeatable() && used >= 2 * size_t(o.threads) ? kSweepsPerPass : 1;
    p.units = peer.prepare(rd);
    p.before_pass = [&peer, rd] { peer.before_run(rd); };
    p.pass = [&peer, this, sweeps = p.sweeps_on_many](unsigned t) {
      const size_t items = used * (t > 1 ? sweeps : 1);
      return run_batches(items, t, [&](size_t i, unsigned k) { peer.work(i % used, k); });
    };
    p.check = [&peer, rd] { return peer.check(rd); };
    return p;
  }

  std::vector<TimedPath> gpu_paths(uint64_t n) {
    std::vector<TimedPath> v;
    TimedPath k;
    k.name = "gpunfv GPU, kernel only";
    k.scope = c.nf_scope + " (device-resident batches)";
    k.threaded = false;
    k.units = n * gb->kernel_copies();
    // Warm-up and check over one copy (the CPU's packets in the CPU's order), the samples over
    // every device copy.
    auto copies = std::make_shared<uint32_t>(1);
    k.before_pass = [this] { reset_stateful_nfs(rc, Backend::gpu); };
    k.pass = [this, copies](unsigned) {
      const double s = gb->kernel_pass(*copies);
      return s;
    };
    k.check = [this, copies] {
      gb->download(gpu_out, used);
      *copies = gb->kernel_copies();
      return compare_batches(ref, gpu_out, used, o.threads);
    };
    v.push_back(std::move(k));
    TimedPath e;
    e.name = "gpunfv GPU, end to end";
    e.scope = c.nf_scope + " + copies to and from the GPU";
    e.threaded = false;
    e.units = n;
    e.before_pass = [this] {
      copy_batches(in, gpu_out, used, o.threads);
      reset_stateful_nfs(rc, Backend::gpu);
    };
    e.pass = [this](unsigned) { return gb->end_to_end(gpu_out, used); };
    e.check = [this] { return compare_batches(ref, gpu_out, used, o.threads); };
    v.push_back(std::move(e));
    return v;
  }
};

SizeResult run_size(RuntimeConfig& rc, NfCase& c, uint32_t size, const Options& o, bool gpu,
                    uint64_t& next_seq, const std::string& tag) {
  set_generator_size(rc, size);
  const BatchShape shape = plan_batch_shape(rc);
  Port& port = *rc.ports[rc.chains[0].from];
  const unsigned T = o.threads;
  const uint32_t nb = round_batches(rc, shape, o.packets, T, kRoundBytes);
  SizeResult res;
  res.size = size;
  const uint64_t t_start = monotonic_ns();

  const MemoryKind mem = gpu ? MemoryKind::host_pinned : MemoryKind::host;
  SizeBench sb{rc, c, o, next_seq, make_batches(nb, shape, mem),
               make_batches(nb, shape, MemoryKind::host), make_batches(nb, shape, MemoryKind::host),
               gpu ? make_batches(nb, shape, mem) : Batches{}, 0, nullptr};
  const uint64_t n = fill(port, sb.in, o.packets);
  if (n == 0) throw std::runtime_error("the generator gave no packets");
  sb.used = used_batches(sb.in);
  if (c.shape)
    run_batches(sb.used, T, [&](size_t i) {
      c.shape(*sb.in[i], Rng((uint64_t(size) << 40) ^ i).next());
    });
  res.packets = n;
  res.mean_frame = double(frame_bytes(sb.in, sb.used)) / n;

  // The reference output: the CPU backend on all threads, untimed.
  copy_batches(sb.in, sb.ref, sb.used, T);
  number_packets(sb.ref, sb.used, next_seq);
  reset_stateful_nfs(rc, Backend::cpu);
  run_cpu(rc, sb.ref, sb.used, T);
  const RoundData rd{sb.in, sb.ref, sb.used, T};
  if (c.observe) c.observe(rd);

  std::vector<TimedPath> paths;
  paths.push_back(sb.cpu_path(n));
  size_t first_peer = SIZE_MAX;
  for (auto& p : c.peers) {
    if (p->is_peer() && first_peer == SIZE_MAX) first_peer = paths.size();
    paths.push_back(sb.peer_path(*p, rd));
  }
  if (gpu) {
    const size_t set_bytes = size_t(sb.used) * sb.in[0]->layout().bytes;
    const uint32_t copies = uint32_t(std::clamp<size_t>(kDeviceCopiesBytes / set_bytes, 1, 16));
    sb.gb = std::make_unique<GpuBench>(rc, shape, nb);
    sb.gb->upload(sb.in, sb.used, copies);
    res.device_copies = copies;
    for (auto& p : sb.gpu_paths(n)) paths.push_back(std::move(p));
  }
  fmt::print(stderr, "nf_bench: [{}] {} B: {} packets in {} batches, {} paths\n", tag, size, n,
             sb.used, paths.size());
  res.rows = run_paths(paths, T, o.timing, [&](const std::string& line) {
    fmt::print(stderr, "nf_bench: [{}] {} B: {}\n", tag, size, line);
  });
  if (gpu) res.gpu_clocks = gpu_clocks_json();
  // Baseline: the first peer's all-threads row, else the CPU backend's all-threads row.
  auto all_threads_row = [&](size_t path) {
    size_t k = 0;
    for (size_t i = 0; i < path; ++i) k += paths[i].threaded ? (T > 1 ? 2 : 1) : 1;
    return k + (T > 1 ? 1 : 0);
  };
  res.base = all_threads_row(first_peer == SIZE_MAX ? 0 : first_peer);
  fmt::print(stderr, "nf_bench: [{}] {} B: done in {:.1f} s\n", tag, size,
             (monotonic_ns() - t_start) / 1e9);
  return res;
}

// Runs one configuration at every size, prints its table; returns its JSON and whether every
// check passed.
nlohmann::json run_case(const std::string& tag, const std::string& config, const Options& o,
                        bool& all_ok) {
  fmt::print(stderr, "nf_bench: [{}] loading {} ...\n", tag, config);
  const uint64_t t0 = monotonic_ns();
  RuntimeConfig rc = load_runtime_config(config);
  plan_batch_shape(rc);  // NFs learn their results offsets before prepare()
  for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
  NfCase c = make_case(rc, CaseOptions{o.threads, o.peers});
  const bool gpu = gpu_present();
  if (gpu) for (auto& nf : rc.nfs) nf->prepare(Backend::gpu);
  const NetworkFunction& nf = *rc.nfs[rc.chains[0].path[0]];
  fmt::print(stderr, "nf_bench: [{}] ready in {:.1f} s: {}\n", tag, (monotonic_ns() - t0) / 1e9,
             nf.describe());

  uint64_t next_seq = 0;
  std::vector<SizeResult> results;
  for (uint32_t size : o.sizes) results.push_back(run_size(rc, c, size, o, gpu, next_seq, tag));

  const SizeResult& first = results.front();
  const std::string base = first.rows[first.base].path;
  fmt::print("\nnf_bench: {} ({}), packet set of {} packets per frame size\n", tag, config,
             first.packets);
  fmt::print("{}\n", nf.describe());
  for (const auto& line : c.notes) fmt::print("{}\n", line);
  fmt::print("ratio baseline: \"{}\" at the same frame size (medians); each row: a warm-up "
             "pass, then {} samples of at least {} s of passes over the packet set, taken in "
             "turns across rows; Mpps is the median sample [min-max]; Gbit/s from the input "
             "frames' bytes; lookup-only rows count lookups (no Gbit/s); scaling: N threads over "
             "1 thread, LOW under N/2\n",
             base, o.timing.repeats, o.timing.min_seconds);
  fmt::print("mismatches (warm-up pass): GPU rows and CPU rows vs the CPU backend's reference "
             "run on {} threads, every output packet bit for bit; peer rows: the peer's answer "
             "vs ours\n", o.threads);
  if (!gpu) fmt::print("no CUDA device: GPU rows and the GPU-vs-CPU comparison were skipped\n");
  else
    fmt::print("kernel-only rows: {} device copies of the packet set per pass\n",
               first.device_copies);
  nlohmann::json j = {{"name", tag}, {"config", config}, {"nf", std::string(nf.type())},
                      {"describe", nf.describe()}, {"notes", c.notes}, {"baseline", base}};
  print_timed_header();
  for (const SizeResult& s : results) {
    nlohmann::json js = {{"size", s.size},
                         {"packets", s.packets},
                         {"mean_frame_bytes", s.mean_frame},
                         {"device_copies", s.device_copies}};
    if (!s.gpu_clocks.is_null()) js["gpu_clocks_after"] = s.gpu_clocks;
    const double base_mpps = s.rows[s.base].rate().median;
    for (const TimedRow& r : s.rows) {
      print_timed_row(r, s.size, s.mean_frame, base_mpps);
      js["rows"].push_back(timed_row_json(r, s.mean_frame, base_mpps));
      if (r.checked && r.check.mismatches) {
        all_ok = false;
        fmt::print(stderr, "nf_bench: [{}] {} B, {}: {} mismatches, first: {}\n", tag, s.size,
                   r.path, r.check.mismatches, r.check.first);
      }
    }
    j["sizes"].push_back(js);
  }
  std::vector<std::string> summaries;
  if (c.summary) summaries.push_back(c.summary());
  for (const auto& p : c.peers) summaries.push_back(p->summary());
  for (const std::string& line : summaries)
    if (!line.empty()) {
      fmt::print("{}\n", line);
      j["summaries"].push_back(line);
    }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpunfv per-NF benchmark: CPU, peer library and GPU throughput, outputs checked"};
  Options o;
  std::string json_out, config, dir = "bench/nf_bench";
  std::vector<std::string> nfs{"all"};
  app.add_option("--nf", nfs, "router, firewall, nids, ipsec or all (a comma list)")
      ->delimiter(',')
      ->check(CLI::IsMember({"router", "firewall", "nids", "ipsec", "all"}))
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "Frame sizes in bytes")->delimiter(',')->capture_default_str();
  app.add_option("--packets", o.packets, "Packets per frame size")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads for the all-threads rows (the worker pool's size)")
      ->capture_default_str();
  app.add_option("--min-seconds", o.timing.min_seconds, "Timed work per sample, at least")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--repeats", o.timing.repeats, "Samples per row (median, min, max reported)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--json", json_out, "Also write the tables as JSON");
  bool no_peer = false;
  app.add_flag("--no-peer", no_peer, "Leave out the peer library rows");
  std::vector<std::string> only;
  app.add_option("--case", only, "Only these cases of --nf's (a comma list of router, "
                                 "router_fulltable, firewall_acl1_1k, firewall_fw1_10k, nids, ipsec)")
      ->delimiter(',');
  app.add_option("--config", config, "Run this one configuration instead of --nf's "
                                     "(e.g. bench/nf_bench/router_fulltable.yaml)");
  app.add_option("--config-dir", dir, "Folder of the per-NF configurations")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  o.threads = std::max(1u, o.threads);
  o.peers = !no_peer;
  for (uint32_t s : o.sizes)
    if (s < 64 || s > 9216) {
      fmt::print(stderr, "nf_bench: error: frame size {} outside 64..9216\n", s);
      return 2;
    }
  if (o.sizes.empty() || o.packets == 0) {
    fmt::print(stderr, "nf_bench: error: nothing to measure\n");
    return 2;
  }

  // (tag, configuration) per case, in table order.
  const std::map<std::string, std::vector<std::string>> cases_of = {
      {"router", {"router", "router_fulltable"}},
      {"firewall", {"firewall_acl1_1k", "firewall_fw1_10k"}},
      {"nids", {"nids"}},
      {"ipsec", {"ipsec"}}};
  std::vector<std::pair<std::string, std::string>> cases;
  if (!config.empty()) {
    cases.emplace_back(std::filesystem::path(config).stem().string(), config);
  } else {
    auto wanted = [&](const std::string& k) {
      return std::find(nfs.begin(), nfs.end(), "all") != nfs.end() ||
             std::find(nfs.begin(), nfs.end(), k) != nfs.end();
    };
    for (const char* k : {"router", "firewall", "nids", "ipsec"})
      if (wanted(k))
        for (const auto& tag : cases_of.at(k))
          if (only.empty() || std::find(only.begin(), only.end(), tag) != only.end())
            cases.emplace_back(tag, dir + "/" + tag + ".yaml");
    for (const std::string& tag : only) {
      bool known = false;
      for (const auto& [k, tags] : cases_of)
        known |= std::find(tags.begin(), tags.end(), tag) != tags.end();
      if (!known) {
        fmt::print(stderr, "nf_bench: error: no case '{}'\n", tag);
        return 2;
      }
    }
    if (cases.empty()) {
      fmt::print(stderr, "nf_bench: error: --case names no case of --nf's NFs\n");
      return 2;
    }
  }

  warn_if_few_cpus("nf_bench", o.threads);
  nlohmann::json j = {{"threads", o.threads}, {"packets_per_size", o.packets},
                      {"sizes", o.sizes}, {"gpu", gpu_present()},
                      {"min_seconds", o.timing.min_seconds}, {"repeats", o.timing.repeats}};
  bool all_ok = true;
  try {
#if GPUNFV_HAVE_DPDK
    // EAL first: rte_eal_init pins its thread; the pool's workers are pinned after it, one per
    // CPU (ensure_dpdk_eal puts the calling thread's affinity back).
    if (o.peers) ensure_dpdk_eal();
#endif
    WorkerPool& pool = WorkerPool::start_shared(o.threads);
    fmt::print("nf_bench: {} worker threads pinned to CPUs {}\n", pool.size(), pool.cpus());
    j["worker_cpus"] = pool.cpus();
    if (gpu_present()) {
      const nlohmann::json dev = gpu_device_json();
      fmt::print("{}\n", gpu_device_line(dev));
      j["device"] = dev;
    }
    for (const auto& [tag, path] : cases) j["cases"].push_back(run_case(tag, path, o, all_ok));
  } catch (const ConfigError& e) {
    fmt::print(stderr, "nf_bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nf_bench: error: {}\n", e.what());
    return 1;
  }
  if (gpu_present()) j["device_after"] = gpu_device_json();
  if (!json_out.empty()) std::ofstream(json_out) << j.dump(2) << "\n";
  fmt::print("\n{}\n", all_ok ? "every check passed" : "MISMATCHES: see stderr and the tables");
  return all_ok ? 0 : 1;
}
