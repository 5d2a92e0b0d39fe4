// The CPU side of `gpunfv profile`: options, traffic, the result table. The measurements are
// in profiler.cu.
#include "sched/profiler.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "io/generator_config.h"

namespace gpunfv {

void add_profile_options(CLI::App& sub, ProfileOptions& o) {
  sub.add_option("config", o.config, "Chain configuration whose NFs are profiled; the first "
                                     "chain's ingress port must be a generator")
      ->required();
  sub.add_option("--sizes", o.sizes, "Frame sizes in bytes")->delimiter(',')->capture_default_str();
  sub.add_option("--batches", o.batches, "Batch sizes in packets per SM")
      ->delimiter(',')
      ->capture_default_str();
  sub.add_option("--out", o.out, "Write the fitted models to FILE.json");
  sub.add_option("--sms", o.sms, "SMs of the profiling partition (default: the smallest allowed)")
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--repeats", o.repeats, "Timed runs per point (the median is kept)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  sub.add_flag("--no-green", [&o](int64_t) { o.green = false; },
               "Cap blocks per launch instead of using a green context");
}

void validate_profile_options(const ProfileOptions& o) {
  auto check = [](const std::vector<uint32_t>& v, const char* what, uint32_t lo, uint32_t hi) {
    for (uint32_t x : v)
      if (x < lo || x > hi)
        throw ConfigError("--" + std::string(what), fmt::format("{} outside {}..{}", x, lo, hi));
  };
  check(o.sizes, "sizes", 64, kMaxGeneratedFrame);
  check(o.batches, "batches", 1, 1u << 20);
  if (o.sizes.empty()) throw ConfigError("--sizes", "at least one size");
  if (std::set<uint32_t>(o.batches.begin(), o.batches.end()).size() < 2)
    throw ConfigError("--batches", "at least two different batch sizes (a line needs two points)");
}

uint32_t fill_batch(Port& port, Batch& b, uint32_t n) {
  n = std::min(n, b.capacity());
  while (b.count() < n && !port.rx_done()) port.rx_burst(b, n - b.count());
  return b.count();
}

std::string profile_table(const ModelStore& store) {
  // Rows grouped by device and NF, in the order NFs were first seen.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const ModelEntry*>> rows;
  for (const ModelEntry& e : store.entries()) {
    std::string k = e.device + "\n" + e.nf_name + "\n" + e.nf_type;
    if (!rows.count(k)) keys.push_back(k);
    rows[k].push_back(&e);
  }
  std::string s;
  for (const std::string& k : keys) {
    auto& v = rows[k];
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->packet_bytes < b->packet_bytes; });
    const ModelEntry& f = *v.front();
    s += fmt::format("\n{} ({}) on {}, profiled on {} SMs; L_k = k1*B + b1 per SM, L_m = k2*B + b2\n",
                     f.nf_name, f.nf_type, f.device, f.profile_sms);
    s += fmt::format("| {:>6} | {:>10} | {:>9} | {:>10} | {:>9} | {:>8} | {:>9} | {:>8} | {:>9} |\n",
                     "size", "k1 ns/pkt", "b1 us", "k2 ns/pkt", "b2 us", "R2 kern", "err% kern",
                     "R2 xfer", "err% xfer");
    s += fmt::format("|{:-<8}|{:-<12}|{:-<11}|{:-<12}|{:-<11}|{:-<10}|{:-<11}|{:-<10}|{:-<11}|\n",
                     "", "", "", "", "", "", "", "", "");
    for (const ModelEntry* e : v)
      s += fmt::format("| {:>6} | {:>10.3f} | {:>9.2f} | {:>10.3f} | {:>9.2f} | {:>8.4f} | {:>9.1f} | "
                       "{:>8.4f} | {:>9.1f} |\n",
                       e->packet_bytes, e->model.k1 * 1e9, e->model.b1 * 1e6, e->model.k2 * 1e9,
                       e->model.b2 * 1e6, e->kernel_fit.r2, e->kernel_fit.max_rel_err * 100,
                       e->transfer_fit.r2, e->transfer_fit.max_rel_err * 100);
    if (!f.note.empty()) s += f.note + "\n";
  }
  return s;
}

std::vector<SchedNode> chain_sched_nodes(const RuntimeConfig& rc, const Chain& c,
                                         const ModelStore& store, const std::string& device,
                                         uint32_t packet_bytes) {
  std::vector<SchedNode> nodes;
  for (size_t i = 0; i < c.path.size(); ++i) {
    const NetworkFunction& nf = *rc.nfs[c.path[i]];
    auto m = store.find(device, nf.name(), std::string(nf.type()), packet_bytes);
    if (!m) return {};
    SchedNode n{nf.name(), *m, {}, 1.0};
    if (i + 1 < c.path.size()) n.children = {static_cast<int>(i + 1)};
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::string allocation_table(const RuntimeConfig& rc, const ModelStore& store,
                             const std::string& device, const GpuBudget& budget,
                             const SchedParams& params, const std::vector<uint32_t>& sizes) {
  if (rc.chains.empty() || rc.chains[0].path.empty()) return {};
  const Chain& chain = rc.chains[0];
  std::string s, names;
  for (uint16_t nf : chain.path) names += " -> " + rc.nfs[nf]->name();
  s += fmt::format("\nallocations for chain {}{} on {} SMs (partitions of {} + k*{}), latency "
                   "bound {:.0f} us per NF, P {:.2f}, C {:.0f} us; cells: SMs x batch (0 SMs: whole GPU)\n",
                   rc.ports[chain.from]->name(), names, budget.total_sms, budget.min_sms,
                   budget.align_sms, params.latency_bound_s * 1e6, params.P, params.C_s * 1e6);
  std::string head = fmt::format("| {:>6} | {:<8} | {:>10} |", "size", "policy", "chain Mpps");
  std::string rule = fmt::format("|{:-<8}|{:-<10}|{:-<12}|", "", "", "");
  for (uint16_t nf : chain.path) {
    head += fmt::format(" {:>14} |", rc.nfs[nf]->name());
    rule += fmt::format("{:-<16}|", "");
  }
  s += head + "\n" + rule + "\n";
  for (uint32_t size : sizes) {
    const std::vector<SchedNode> nodes = chain_sched_nodes(rc, chain, store, device, size);
    if (nodes.empty()) continue;
    for (auto policy : {SchedulerPolicy::temporal, SchedulerPolicy::fair, SchedulerPolicy::unco,
                        SchedulerPolicy::gnet}) {
      Allocation a = allocate(policy, nodes, 0, budget, params);
      std::string rate = policy == SchedulerPolicy::unco ? "-" : fmt::format("{:.3f}", a.chain_pps / 1e6);
      s += fmt::format("| {:>6} | {:<8} | {:>10} |", size, scheduler_policy_name(policy), rate);
      for (const NodeAllocation& n : a.nodes) s += fmt::format(" {:>14} |", fmt::format("{} x {}", n.sms, n.batch));
      s += "\n";
    }
  }
  return s;
}

}  // namespace gpunfv
