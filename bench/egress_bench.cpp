// Egress benchmark: what a chain's egress (chain/egress.h) costs per packet, and how
// it scales with threads per chain. A Google Benchmark that feeds finished S_d batches, as the
// CPU backend fills them (generator traffic through firewall, IPsec, NIDS and router, spread
// over four discard ports), to an Egress with 1, 2 or 3 threads; the hand-off returns each
// batch to the feeder, which pushes it again under the next batch_seq. --batches of them
// circulate (8: egress's metadata, about 600 KiB a batch, stays in a 32 MiB L3; 64: mostly
// not, as after the GPU's downloads). Each run checks that every packet fed was transmitted or
// dropped. A table is printed last (median of the repetitions): elapsed ns/packet and the ratio
// to one thread, and the egress threads' CPU time per packet, all of it and that spent in turns
// (the ordered part, one thread at a time per chain).
//
//   egress_bench [--config=bench/collect_bench/sd_64.yaml] [--batch=N] [--batches=8]
//                [Google Benchmark flags]
// (e.g. --benchmark_repetitions=5 --benchmark_min_time=1s).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench_util.h"
#include "chain/egress.h"
#include "chain/processing_stage.h"
#include "core/error.h"

using namespace gpunfv;
using namespace gpunfv::bench;

namespace {

uint32_t g_circulating = 8;  // --batches

struct Setup {
  RuntimeConfig rc;
  BatchShape shape;
  Batches batches;
};

// Loads the configuration, runs one batch of generator traffic through its first chain and
// copies it into g_circulating batches.
void load(Setup& s, const std::string& path, uint32_t batch_size) {
  s.rc = load_runtime_config(path);
  if (batch_size) s.rc.settings.batch_size = batch_size;
  s.shape = plan_batch_shape(s.rc);
  for (auto& nf : s.rc.nfs) nf->prepare(Backend::cpu);
  s.batches = make_batches(g_circulating, s.shape, MemoryKind::host);
  Batches first = make_batches(1, s.shape, MemoryKind::host);
  Port& gen = *s.rc.ports[s.rc.chains[0].from];
  if (fill(gen, first, s.shape.capacity) < s.shape.capacity)
    throw ConfigError(path, "the ingress port ended before one full batch");
  uint64_t seq = 0;
  number_packets(first, 1, seq);
  const uint64_t t0 = monotonic_ns();
  BatchView v = first[0]->view();
  for (uint32_t i = 0; i < v.count; ++i) v.rx_ns[i] = t0;
  run_chain_cpu(s.rc, s.rc.chains[0], v);
  for (auto& b : s.batches) {
    copy_batch(*first[0], *b);
    b->chain = 0;
  }
}

RunStats fresh_stats(const RuntimeConfig& rc) {
  RunStats st;
  for (const auto& p : rc.ports) {
    st.ports.push_back(std::make_unique<PortCounters>());
    st.ports.back()->name = p->name();
  }
  for (const auto& nf : rc.nfs)
    st.nfs.push_back(NfCounters{nf->name(), std::string(nf->type()), 0, 0, {}});
  return st;
}

// Batches handed back by egress, for the feeder to push again.
struct FreeBatches {
  std::mutex m;
  std::condition_variable cv;
  std::vector<Batch*> free;
  void put(Batch* b) {
    {
      std::lock_guard<std::mutex> lk(m);
      free.push_back(b);
    }
    cv.notify_one();
  }
  Batch* take() {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return !free.empty(); });
    Batch* b = free.back();
    free.pop_back();
    return b;
  }
  void wait_all(size_t n) {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [&] { return free.size() == n; });
  }
};

// One run of a benchmark (Google Benchmark runs each with growing iteration counts first).
struct Run {
  uint64_t iterations;
  double wall_ns, cpu_ns, turn_cpu_ns;  // per packet: elapsed; egress threads' CPU; of it in turns
};
std::map<uint32_t, std::vector<Run>> g_runs;  // per threads per chain

void run_egress(benchmark::State& st, Setup& s, uint32_t threads) {
  s.rc.settings.egress_threads_per_chain = threads;
  s.rc.settings.egress_threads = 0;
  RunStats stats = fresh_stats(s.rc);
  FreeBatches freed;
  Egress::Hooks hooks;
  hooks.hand_off = [&](Batch* b) { freed.put(b); };
  Egress egress(s.rc, stats, s.shape, std::move(hooks));
  egress.start();
  for (auto& b : s.batches) freed.free.push_back(b.get());
  uint64_t seq = 0, packets = 0;
  const uint64_t t0 = monotonic_ns();
  for (auto _ : st) {
    Batch* b = freed.take();
    b->batch_seq = seq++;
    packets += b->count();
    egress.push(b);
  }
  freed.wait_all(s.batches.size());
  const double ns = double(monotonic_ns() - t0);
  egress.finish();
  uint64_t tx = 0;
  for (const auto& p : stats.ports) tx += p->tx_packets;
  const PortCounters& in = *stats.ports[s.rc.chains[0].from];
  if (in.forwarded + in.dropped_total != packets || tx != in.forwarded ||
      in.dropped.total() != in.dropped_total)
    st.SkipWithError(fmt::format("{} packets fed, {} sent, {} forwarded + {} dropped", packets, tx,
                                 in.forwarded.load(), in.dropped_total.load())
                         .c_str());
  const double n = double(packets);
  const Run run{uint64_t(st.iterations()), ns / n, stats.egress.value("cpu_s", 0.0) * 1e9 / n,
                stats.egress.value("in_turn_cpu_s", 0.0) * 1e9 / n};
  st.counters["ns/pkt"] = run.wall_ns;
  st.counters["cpu_ns/pkt"] = run.cpu_ns;
  st.counters["turn_ns/pkt"] = run.turn_cpu_ns;
  g_runs[threads].push_back(run);
}

// The median (by elapsed time) of the runs with the most iterations: the timed repetitions.
Run median(std::vector<Run> runs) {
  if (runs.empty()) return {};
  uint64_t most = 0;
  for (const Run& r : runs) most = std::max(most, r.iterations);
  runs.erase(
      std::remove_if(runs.begin(), runs.end(), [&](const Run& r) { return r.iterations != most; }),
      runs.end());
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.wall_ns < b.wall_ns; });
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  ChainBenchArgs args =
      parse_chain_bench_args(argc, argv, "bench/collect_bench/sd_64.yaml", [](const std::string& a) {
        if (a.rfind("--batches=", 0) != 0) return false;
        g_circulating = std::max(1u, uint32_t(std::stoul(a.substr(10))));
        return true;
      });
  const std::string& config = args.config;
  const uint32_t batch_size = args.batch_size;
  int bargc = int(args.rest.size());
  benchmark::Initialize(&bargc, args.rest.data());

  Setup s;
  try {
    load(s, config, batch_size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "egress_bench: %s\n", e.what());
    return 2;
  }
  const BatchView v = s.batches[0]->view();
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < v.count; ++i) dropped += v.verdict[i] != 0;
  std::printf("egress_bench: %s, %u packets per batch, %u dropped by the chain, %u ports\n",
              config.c_str(), v.count, dropped, unsigned(s.rc.ports.size()));
  warn_if_few_cpus("egress_bench", 3);
  for (uint32_t threads : {1u, 2u, 3u})
    benchmark::RegisterBenchmark(
        fmt::format("egress/threads:{}", threads).c_str(),
        [&s, threads](benchmark::State& st) { run_egress(st, s, threads); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // Elapsed time scales only where the threads get cores of their own; CPU time per packet
  // says what the split costs, and the CPU time in turns (tx calls and hand-off, one thread at a
  // time per chain) bounds the rate any number of threads can reach: 1000 / turn Mpps.
  if (g_runs.empty() || g_runs[1].empty()) {  // a --benchmark_filter left the 1-thread runs out
    std::printf("\negress_bench: no runs with one egress thread, so no table\n");
    return 0;
  }
  const double base = median(g_runs[1]).wall_ns;
  std::printf(
      "\n| egress threads per chain | elapsed ns/packet | Mpps | speedup vs 1 thread | egress CPU "
      "ns/packet | of it in turns (ordered) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& [threads, runs] : g_runs) {
    const Run r = median(runs);
    std::printf("| %u | %.2f | %.1f | %.2f | %.2f | %.2f |\n", threads, r.wall_ns, 1e3 / r.wall_ns,
                base / r.wall_ns, r.cpu_ns, r.turn_cpu_ns);
  }
  return 0;
}
