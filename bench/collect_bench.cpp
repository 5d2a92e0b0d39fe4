// Collect benchmark: the host-side cost, per packet, of each NF's collect() (rule hits,
// per-SA packets, NIDS alerts), which the collect workers run once per finished batch. A Google
// Benchmark over one batch that the CPU backend filled as the chain does (generator traffic
// through every NF, so each result record is what the NF's process() wrote), timed per NF for
//   reference  collect_per_packet(): the plain per-packet loop collect() replaced;
//   collect    collect() as the runtime runs it;
// each with the batch in cache (warm) and with its metadata and results flushed from every
// cache level before each run (cold: as after the GPU's download into pinned memory, which the
// CPU has not read yet). Before timing, each NF's collect() and its reference run once on two
// copies of the configuration and their reports must be equal (counters, alerts by sid).
// A table of ns/packet is printed last.
//
//   collect_bench [--config=bench/collect_bench/sd_64.yaml] [--batch=N] [Google Benchmark flags]
// (e.g. --benchmark_repetitions=5: the table then shows each row's median).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_util.h"
#include "chain/processing_stage.h"
#include "core/error.h"
#include "nf/firewall/firewall.h"
#include "nf/ipsec/ipsec.h"
#include "nf/nids/nids.h"

using namespace gpunfv;
using namespace gpunfv::bench;

namespace {

struct Setup {
  RuntimeConfig rc;
  BatchShape shape;
  Batches batch;  // one, filled and run through the chain
};

// Loads the configuration, sizes its batch and runs one batch of generator traffic through it.
void load(Setup& s, const std::string& path, uint32_t batch_size, bool run_chain) {
  s.rc = load_runtime_config(path);
  if (batch_size) s.rc.settings.batch_size = batch_size;
  s.shape = plan_batch_shape(s.rc);
  for (auto& nf : s.rc.nfs) nf->prepare(Backend::cpu);
  if (!run_chain) return;
  s.batch = make_batches(1, s.shape, MemoryKind::host);
  Port& gen = *s.rc.ports[s.rc.chains[0].from];
  if (fill(gen, s.batch, s.shape.capacity) < s.shape.capacity)
    throw ConfigError(path, "the ingress port ended before one full batch");
  uint64_t seq = 0;
  number_packets(s.batch, 1, seq);
  run_chain_cpu(s.rc, s.rc.chains[0], s.batch[0]->view());
}

// The metadata and results the loops read, out of every cache level.
void flush_batch(const Batch& b) {
  const uint8_t* p = b.base();
  for (size_t off = 0; off < b.layout().off_data; off += 64) _mm_clflush(p + off);
  _mm_mfence();
}

using CollectFn = void (*)(NetworkFunction&, const BatchView&, uint8_t);

void run_reference(NetworkFunction& nf, const BatchView& b, uint8_t pos) {
  if (auto* f = dynamic_cast<Firewall*>(&nf)) return f->collect_per_packet(b, pos);
  if (auto* g = dynamic_cast<IpsecGateway*>(&nf)) return g->collect_per_packet(b, pos);
  if (auto* n = dynamic_cast<Nids*>(&nf)) return n->collect_per_packet(b, pos, CollectContext{"gen"});
}
void run_collect(NetworkFunction& nf, const BatchView& b, uint8_t pos) {
  nf.collect(b, pos, CollectContext{"gen"});
}

// Parts of NIDS's loops, to see where its time goes (their sums are kept from being optimised away).
volatile uint64_t g_sink;
// reached_node() and NidsResult::load() of every packet, as the reference does, without counting.
void nids_load_records(NetworkFunction& nf, const BatchView& b, uint8_t pos) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < b.count; ++i) {
    if (!reached_node(b, i, pos)) continue;
    const NidsResult r = NidsResult::load(b.results.framework_data() + size_t(i) * b.result_stride +
                                          nf.result_offset());
    sum += r.fired;
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) sum += r.rules[k];
  }
  g_sink = sum;
}
// collect()'s first pass alone: the alerting packets' indices, from the `fired` words.
void nids_alerting_pass(NetworkFunction& nf, const BatchView& b, uint8_t pos) {
  static std::vector<uint32_t> out;
  out.resize(b.count);
  g_sink = nids_alerting_packets(b, pos, nf.result_offset(), 0, b.count, out.data());
}

// One thread's share of collect() when the NF splits it over its collect_shards() threads (shard 0).
void run_shard0(NetworkFunction& nf, const BatchView& b, uint8_t pos) {
  const uint32_t shards = nf.collect_shards();
  if (shards == 1) return nf.collect(b, pos, CollectContext{"gen"});
  nf.collect_range(b, pos, CollectContext{"gen"}, 0, uint32_t(uint64_t(b.count) / shards), 0);
}

bool has_reference(const NetworkFunction& nf) {
  return nf.type() == "firewall" || nf.type() == "ipsec" || nf.type() == "nids";
}

// Per benchmark name, ns per packet (filled by the reporter).
std::map<std::string, double> g_ns_per_packet;

class TableReporter : public benchmark::ConsoleReporter {
 public:
  explicit TableReporter(uint32_t packets) : packets_(packets) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    // With --benchmark_repetitions, the median of the repetitions; else the one run.
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      std::vector<double>& v = samples_[r.run_name.str()];
      v.push_back(r.real_accumulated_time * 1e9 / double(r.iterations) / packets_);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      const size_t n = sorted.size();
      g_ns_per_packet[r.run_name.str()] = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  uint32_t packets_;
  std::map<std::string, std::vector<double>> samples_;
};

}  // namespace

int main(int argc, char** argv) {
  ChainBenchArgs args = parse_chain_bench_args(argc, argv, "bench/collect_bench/sd_64.yaml");
  const std::string& config = args.config;
  const uint32_t batch_size = args.batch_size;
  int bargc = int(args.rest.size());
  benchmark::Initialize(&bargc, args.rest.data());

  Setup timed, ref;
  try {
    load(timed, config, batch_size, true);
    load(ref, config, batch_size, false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collect_bench: %s\n", e.what());
    return 2;
  }
  const Chain& chain = timed.rc.chains[0];
  Batch& batch = *timed.batch[0];
  const BatchView view = batch.view();

  // The NFs' reports after one collect() must equal their reference's after one reference run.
  int mismatches = 0;
  std::string counts;
  for (size_t k = 0; k < chain.path.size(); ++k) {
    NetworkFunction& nf = *timed.rc.nfs[chain.path[k]];
    NetworkFunction& peer = *ref.rc.nfs[chain.path[k]];
    if (!has_reference(nf)) continue;
    run_collect(nf, view, uint8_t(k));
    run_reference(peer, view, uint8_t(k));
    nlohmann::json a, b;
    nf.report(a);
    peer.report(b);
    // The packets each table version processed are counted where the NF processes a batch: the
    // timed copy processed it, its peer only collects.
    a.erase("table_versions");
    b.erase("table_versions");
    if (a != b) {
      ++mismatches;
      std::fprintf(stderr, "collect_bench: %s: collect() and its reference disagree:\n%s\n%s\n",
                   nf.name().c_str(), a.dump().c_str(), b.dump().c_str());
    }
    if (auto* n = dynamic_cast<Nids*>(&nf))
      counts += fmt::format("; {}: {} packets alerting ({:.1f}%), {} alerts", nf.name(),
                            n->packets_alerted(), 100.0 * n->packets_alerted() / view.count,
                            n->alerts());
  }
  std::printf("collect_bench: %s, %u packets per batch, result record %u B per packet%s\n",
              config.c_str(), view.count, view.result_stride, counts.c_str());

  struct Path {
    const char* name;
    CollectFn fn;
  };
  const Path paths[] = {{"reference", run_reference}, {"collect", run_collect}};
  const Path nids_parts[] = {{"part: load every record", nids_load_records},
                             {"part: alerting pass", nids_alerting_pass}};
  std::vector<std::string> nf_names;
  std::map<std::string, uint32_t> shards_of;
  for (size_t k = 0; k < chain.path.size(); ++k) {
    NetworkFunction* nf = timed.rc.nfs[chain.path[k]].get();
    if (!has_reference(*nf)) continue;
    nf_names.push_back(nf->name());
    shards_of[nf->name()] = nf->collect_shards();
    std::vector<Path> timed_paths(std::begin(paths), std::end(paths));
    if (nf->collect_shards() > 1) timed_paths.push_back(Path{"collect: one thread of its shards", run_shard0});
    if (nf->type() == "nids") timed_paths.insert(timed_paths.end(), std::begin(nids_parts), std::end(nids_parts));
    for (bool cold : {false, true})
      for (const Path& p : timed_paths) {
        const uint8_t pos = uint8_t(k);
        const CollectFn fn = p.fn;
        benchmark::RegisterBenchmark(
            fmt::format("{}/{}/{}", nf->name(), cold ? "cold" : "warm", p.name).c_str(),
            [nf, pos, fn, cold, &batch, view](benchmark::State& st) {
              for (auto _ : st) {
                if (cold) {
                  st.PauseTiming();
                  flush_batch(batch);
                  st.ResumeTiming();
                }
                fn(*nf, view, pos);
              }
              st.counters["ns/pkt"] = benchmark::Counter(
                  double(view.count) * double(st.iterations()),
                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
            })
            ->Unit(benchmark::kMicrosecond);
      }
  }
  TableReporter reporter(view.count);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\n| NF | batch in cache | reference ns/packet | collect ns/packet | speedup |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const std::string& n : nf_names)
    for (const char* cache : {"warm", "cold"}) {
      auto r = g_ns_per_packet.find(fmt::format("{}/{}/reference", n, cache));
      auto c = g_ns_per_packet.find(fmt::format("{}/{}/collect", n, cache));
      if (r == g_ns_per_packet.end() || c == g_ns_per_packet.end()) continue;
      std::printf("| %s | %s | %.2f | %.2f | %.2fx |\n", n.c_str(), cache, r->second, c->second,
                  r->second / c->second);
      const std::string shard_row = fmt::format("{}/{}/collect: one thread of its shards", n, cache);
      if (auto x = g_ns_per_packet.find(shard_row); x != g_ns_per_packet.end())
        std::printf("| %s, collect on %u threads: one thread's time / batch packets | %s | | %.2f | %.2fx |\n",
                    n.c_str(), shards_of[n], cache, x->second, r->second / x->second);
      for (const Path& p : nids_parts)
        if (auto x = g_ns_per_packet.find(fmt::format("{}/{}/{}", n, cache, p.name)); x != g_ns_per_packet.end())
          std::printf("| %s, %s | %s | | %.2f | |\n", n.c_str(), p.name, cache, x->second);
    }
  std::printf("\nreports of collect() and reference: %s\n",
              mismatches ? "DIFFER (see stderr)" : "equal for every NF");
  return mismatches ? 1 : 0;
}
