// Per-NF benchmark: router, firewall, NIDS and IPsec, each at several frame sizes, on the CPU
// backend (1 thread, all threads), against a peer library (1 thread, all threads), and on the
// GPU (kernel-only on device-resident batches, end to end through pinned host batches).
//
// Per NF a configuration in bench/nf_bench/ (a generator port feeding the NF). Per frame size,
// the generator's frames are reshaped outside the timed regions into the NF's traffic
// (bench/nf_bench/*_case.cpp: firewall 5-tuples aimed at the rules, NIDS payloads with real
// patterns planted), then processed in rounds of batches by every path. Checks, per row:
//   - GPU rows and "CPU, 1 thread": every output packet bit for bit against "CPU, N threads"
//     (bytes, length, verdict, next_nf, out_port, headers, flow hash, the results record);
//   - peer rows: the peer's answer against ours (next hop, first matching rule, number of
//     distinct patterns in the payload, ESP frame bytes).
// The ratio column is relative to the first peer on all threads at the same frame size (the
// CPU all-threads row where no peer was built). Single-thread rows run on the second round of
// batches when it is a full one (the first pays cold caches and first-touch page faults), else
// on the first; all-threads rows on every round.
//
//   nf_bench [--nf router|firewall|nids|ipsec|all] [--sizes 64,512,1518] [--packets N]
//            [--threads T] [--json FILE] [--no-peer] [--config FILE] [--config-dir DIR]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_util.h"
#include "nf_bench/nf_case.h"
#include "chain/processing_stage.h"
#include "core/error.h"

using namespace gpunfv;
using namespace gpunfv::bench;

namespace {

constexpr size_t kRoundBytes = size_t(512) << 20;  // slots of one set of batches, at most

struct Options {
  std::vector<uint32_t> sizes{64, 512, 1518};
  uint64_t packets = 2'000'000;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool peers = true;
};

struct SizeResult {
  uint32_t size = 0;
  uint64_t packets = 0;
  double mean_frame = 0;
  int single_round = 0;
  std::vector<Row> rows;
  size_t base = 1;  // index of the ratio baseline in rows
};

// One timed path: its rows for 1 and N threads.
struct RowPair {
  Row one, all;
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
  res.single_round = o.packets >= 2 * uint64_t(nb) * shape.capacity ? 1 : 0;

  const MemoryKind mem = gpu ? MemoryKind::host_pinned : MemoryKind::host;
  Batches in = make_batches(nb, shape, mem), cpu_out = make_batches(nb, shape, MemoryKind::host);
  Batches one, gpu_out = gpu ? make_batches(nb, shape, mem) : Batches{};
  std::unique_ptr<GpuBench> gb = gpu ? std::make_unique<GpuBench>(rc, shape, nb) : nullptr;

  RowPair cpu{Row("gpunfv CPU, 1 thread"), Row(fmt::format("gpunfv CPU, {} threads", T))};
  cpu.one.checked = true;
  cpu.all.note = "reference";
  std::vector<RowPair> peer_rows;
  for (auto& p : c.peers) {
    RowPair r{Row(p->name() + ", 1 thread", p->lookup_only()),
              Row(fmt::format("{}, {} threads", p->name(), T), p->lookup_only())};
    r.one.checked = r.all.checked = p->is_peer();
    peer_rows.push_back(r);
  }
  Row kernel{"gpunfv GPU, kernel only"}, e2e{"gpunfv GPU, end to end"};
  kernel.checked = e2e.checked = true;

  uint64_t done = 0, bytes = 0;
  const uint64_t t_start = monotonic_ns();
  double phase[4] = {};  // wall seconds: traffic, CPU backend, peers, GPU (checks included)
  uint64_t t_phase = t_start;
  auto lap = [&](int k) {
    uint64_t now = monotonic_ns();
    phase[k] += (now - t_phase) / 1e9;
    t_phase = now;
  };
  for (int round = 0; done < o.packets; ++round) {
    const uint64_t n = fill(port, in, o.packets - done);
    if (n == 0) break;
    const size_t used = used_batches(in);
    if (c.shape)
      run_batches(used, T, [&](size_t i) {
        c.shape(*in[i], Rng((uint64_t(size) << 40) ^ (uint64_t(round) << 20) ^ i).next());
      });
    bytes += frame_bytes(in, used);
    const bool single = round == res.single_round;
    lap(0);

    // CPU backend: all threads (the reference output), then 1 thread on the single round.
    copy_batches(in, cpu_out, used, T);
    number_packets(cpu_out, used, next_seq);
    reset_stateful_nfs(rc, Backend::cpu);
    cpu.all.seconds += run_cpu(rc, cpu_out, used, T);
    cpu.all.packets += n;
    if (single) {
      one = make_batches(uint32_t(used), shape, MemoryKind::host);
      copy_batches(in, one, used, T);
      number_packets(one, used, next_seq);
      reset_stateful_nfs(rc, Backend::cpu);
      cpu.one.seconds += run_cpu(rc, one, used, 1);
      cpu.one.packets += n;
      cpu.one.check.add(compare_batches(cpu_out, one, used, T));
      one.clear();
    }

    // Peers (and our own "only" rows), in alternating order across rounds so that none always
    // finds the caches as another left them.
    const RoundData rd{in, cpu_out, used, T};
    if (c.observe) c.observe(rd);
    lap(1);
    for (size_t k = 0; k < c.peers.size(); ++k) {
      const size_t at = round % 2 == 0 ? k : c.peers.size() - 1 - k;
      Peer& p = *c.peers[at];
      RowPair& r = peer_rows[at];
      const uint64_t units = p.prepare(rd);
      auto timed = [&](Row& row, unsigned threads) {
        p.before_run(rd);
        row.seconds += run_batches(used, threads, [&](size_t i, unsigned t) { p.work(i, t); });
        row.packets += units;
        if (p.is_peer()) row.check.add(p.check(rd));
      };
      timed(r.all, T);
      if (single) timed(r.one, 1);
    }
    lap(2);

    // GPU: end to end through the GPU stage, then kernel-only; both outputs compared.
    if (gpu) {
      copy_batches(in, gpu_out, used, T);
      reset_stateful_nfs(rc, Backend::gpu);
      e2e.seconds += gb->end_to_end(gpu_out, used);
      e2e.packets += n;
      e2e.check.add(compare_batches(cpu_out, gpu_out, used, T));
      reset_stateful_nfs(rc, Backend::gpu);
      kernel.seconds += gb->kernel_only(in, used, &gpu_out);
      kernel.packets += n;
      kernel.check.add(compare_batches(cpu_out, gpu_out, used, T));
    }
    lap(3);
    done += n;
    fmt::print(stderr, "nf_bench: [{}] {} B: round {} done, {} of {} packets\n", tag, size,
               round + 1, done, o.packets);
  }
  fmt::print(stderr,
             "nf_bench: [{}] {} B: {} packets in {:.1f} s (traffic {:.1f}, CPU {:.1f}, peers "
             "{:.1f}, GPU {:.1f}; checks included)\n",
             tag, size, done, (monotonic_ns() - t_start) / 1e9, phase[0], phase[1], phase[2],
             phase[3]);

  res.packets = done;
  res.mean_frame = done ? double(bytes) / done : 0;
  res.rows = {cpu.one, cpu.all};
  res.base = 1;
  for (size_t k = 0; k < peer_rows.size(); ++k) {
    if (c.peers[k]->is_peer() && res.base == 1) res.base = res.rows.size() + 1;
    res.rows.push_back(peer_rows[k].one);
    res.rows.push_back(peer_rows[k].all);
  }
  if (gpu) res.rows.insert(res.rows.end(), {kernel, e2e});
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
  const bool peer_base = first.base != 1;
  Columns cols{peer_base ? "vs peer N thr." : "vs CPU all thr.", true, true, 0};
  for (const SizeResult& s : results)
    for (const Row& r : s.rows) cols.path_width = std::max(cols.path_width, r.path.size());

  fmt::print("\nnf_bench: {} ({}), {} packets per frame size\n", tag, config, o.packets);
  fmt::print("{}\n", nf.describe());
  for (const auto& n : c.notes) fmt::print("{}\n", n);
  fmt::print("ratio baseline: \"{}\" at the same frame size; single-thread rows on round {} of "
             "batches; Gbit/s from the input frames' bytes; lookup-only rows count lookups (no "
             "Gbit/s)\n", base, first.single_round);
  fmt::print("mismatches: GPU rows and CPU 1 thread vs CPU {} threads, every output packet bit "
             "for bit; peer rows: the peer's answer vs ours\n", o.threads);
  if (!gpu) fmt::print("no CUDA device: GPU rows and the GPU-vs-CPU comparison were skipped\n");
  print_header(cols);
  nlohmann::json j = {{"name", tag}, {"config", config}, {"nf", std::string(nf.type())},
                      {"describe", nf.describe()}, {"notes", c.notes}, {"baseline", base}};
  for (const SizeResult& s : results) {
    nlohmann::json js = {{"size", s.size},
                         {"packets", s.packets},
                         {"mean_frame_bytes", s.mean_frame},
                         {"single_thread_round", s.single_round}};
    for (const Row& r : s.rows) {
      print_row(cols, r, s.mean_frame, s.rows[s.base].mpps(), std::to_string(s.size));
      js["rows"].push_back(row_json(r, s.mean_frame, s.rows[s.base].mpps()));
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
  std::string nf = "all", json_out, config, dir = "bench/nf_bench";
  app.add_option("--nf", nf, "router, firewall, nids, ipsec or all")
      ->check(CLI::IsMember({"router", "firewall", "nids", "ipsec", "all"}))
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "Frame sizes in bytes")->delimiter(',')->capture_default_str();
  app.add_option("--packets", o.packets, "Packets per frame size")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads for the all-threads rows")->capture_default_str();
  app.add_option("--json", json_out, "Also write the tables as JSON");
  bool no_peer = false;
  app.add_flag("--no-peer", no_peer, "Leave out the peer library rows");
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
      {"router", {"router"}},
      {"firewall", {"firewall_acl1_1k", "firewall_fw1_10k"}},
      {"nids", {"nids"}},
      {"ipsec", {"ipsec"}}};
  std::vector<std::pair<std::string, std::string>> cases;
  if (!config.empty()) {
    cases.emplace_back(std::filesystem::path(config).stem().string(), config);
  } else {
    for (const char* k : {"router", "firewall", "nids", "ipsec"})
      if (nf == "all" || nf == k)
        for (const auto& tag : cases_of.at(k)) cases.emplace_back(tag, dir + "/" + tag + ".yaml");
  }

  warn_if_few_cpus("nf_bench", o.threads);
  nlohmann::json j = {{"threads", o.threads}, {"packets_per_size", o.packets},
                      {"sizes", o.sizes}, {"gpu", gpu_present()}};
  bool all_ok = true;
  try {
    for (const auto& [tag, path] : cases) j["cases"].push_back(run_case(tag, path, o, all_ok));
  } catch (const ConfigError& e) {
    fmt::print(stderr, "nf_bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nf_bench: error: {}\n", e.what());
    return 1;
  }
  if (!json_out.empty()) std::ofstream(json_out) << j.dump(2) << "\n";
  fmt::print("\n{}\n", all_ok ? "every check passed" : "MISMATCHES: see stderr and the tables");
  return all_ok ? 0 : 1;
}
