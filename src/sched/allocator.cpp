#include "sched/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpunfv {

SchedulerPolicy parse_scheduler_policy(std::string_view s) {
  if (s == "temporal") return SchedulerPolicy::temporal;
  if (s == "fair") return SchedulerPolicy::fair;
  if (s == "unco") return SchedulerPolicy::unco;
  if (s == "gnet") return SchedulerPolicy::gnet;
  throw std::invalid_argument("unknown scheduler policy '" + std::string(s) +
                              "' (temporal, fair, unco or gnet)");
}

std::string_view scheduler_policy_name(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::temporal: return "temporal";
    case SchedulerPolicy::fair: return "fair";
    case SchedulerPolicy::unco: return "unco";
    case SchedulerPolicy::gnet: return "gnet";
  }
  return "?";
}

uint32_t max_per_sm_batch(const NfModel& m, int n, const SchedParams& p) {
  if (n <= 0) return 0;
  const double slack = p.latency_bound_s - m.b1 - m.b2 - p.C_s;
  const double per = m.k1 + m.k2 * n;
  const double cap = std::floor(double(p.max_batch) / n);
  double b0 = per > 0 ? std::floor(slack / per) : cap;
  b0 = std::min(b0, cap);
  // floor() of a quotient may land one above the bound by rounding; step back if it did.
  while (b0 >= 1 && m.latency_s(n, b0, p.C_s) > p.latency_bound_s) b0 -= 1;
  return b0 >= 1 ? static_cast<uint32_t>(b0) : 0;
}

uint32_t min_per_sm_batch(const NfModel& m, int n, double target, const SchedParams& p) {
  if (n <= 0) return 0;
  const double d = n - target * (m.k1 + m.k2 * n);  // Eq. 3's denominator
  if (d <= 0) return 0;                             // no batch reaches the target on n SMs
  double b0 = std::max(1.0, std::ceil(target * (m.b1 + m.b2 + p.C_s) / d * (1 - 1e-12)));
  if (b0 * n > p.max_batch) return 0;
  return static_cast<uint32_t>(b0);
}

namespace {

struct Plan {
  std::vector<int> order;  // children before parents (post-order from the root)
};

Plan plan(const std::vector<SchedNode>& nodes, int root) {
  const int n = static_cast<int>(nodes.size());
  if (n == 0) throw std::invalid_argument("no nodes to allocate");
  if (root < 0 || root >= n) throw std::invalid_argument("root index out of range");
  Plan pl;
  std::vector<int> state(n, 0);  // 0 unseen, 1 on the stack, 2 done
  std::vector<std::pair<int, size_t>> stack{{root, 0}};
  state[root] = 1;
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next < nodes[v].children.size()) {
      const int c = nodes[v].children[next++];
      if (c < 0 || c >= n)
        throw std::invalid_argument("node '" + nodes[v].name + "' has a child index out of range");
      if (state[c] != 0)
        throw std::invalid_argument("node '" + nodes[c].name +
                                    "' is reached twice (chains must be trees)");
      state[c] = 1;
      stack.push_back({c, 0});
      continue;
    }
    state[v] = 2;
    pl.order.push_back(v);
    stack.pop_back();
  }
  for (int i = 0; i < n; ++i) {
    if (state[i] == 0)
      throw std::invalid_argument("node '" + nodes[i].name + "' is not reachable from the root");
    if (!(nodes[i].share > 0) || nodes[i].share > 1)
      throw std::invalid_argument("node '" + nodes[i].name + "' has a share outside (0, 1]");
    double children = 0;
    for (int c : nodes[i].children) children += nodes[c].share;
    if (children > nodes[i].share * (1 + 1e-9))
      throw std::invalid_argument("the children of '" + nodes[i].name +
                                  "' receive more traffic (shares) than it does");
  }
  return pl;
}

// SM counts a partition may have: min_sms, min_sms + align_sms, ... up to the total.
std::vector<int> sm_units(const GpuBudget& b) {
  std::vector<int> u;
  for (int s = std::max(1, b.min_sms); s <= b.total_sms; s += std::max(1, b.align_sms)) u.push_back(s);
  return u;
}

NodeAllocation at(const NfModel& m, int n, uint32_t b0, const SchedParams& p) {
  NodeAllocation a;
  a.sms = n;
  a.batch = b0 * static_cast<uint32_t>(n);
  a.throughput_pps = m.throughput_pps(n, b0, p.C_s);
  a.latency_s = m.latency_s(n, b0, p.C_s);
  return a;
}

// The chain rate the nodes' rates sustain: each node sees share x the chain's input.
double chain_rate(const std::vector<SchedNode>& nodes, const std::vector<NodeAllocation>& a) {
  double r = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < nodes.size(); ++i) r = std::min(r, a[i].throughput_pps / nodes[i].share);
  return std::isfinite(r) ? r : 0;
}

// Every node at `n` SMs with its largest batch within the bound (fair, and gnet's round 0).
bool each_at(const std::vector<SchedNode>& nodes, int n, const SchedParams& p,
             std::vector<NodeAllocation>& out, std::string& why) {
  out.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint32_t b0 = max_per_sm_batch(nodes[i].model, n, p);
    if (b0 == 0) {
      why = fmt::format("'{}' cannot meet the latency bound ({:.0f} us) on {} SMs even with one "
                        "packet per SM", nodes[i].name, p.latency_bound_s * 1e6, n);
      return false;
    }
    out[i] = at(nodes[i].model, n, b0, p);
  }
  return true;
}

// One gnet round: per node (children first) the fewest SMs and Eq. 3's batch that reach its
// share of `target` (a parent at least the sum of its children's targets) within Eq. 4's bound.
bool gnet_round(const std::vector<SchedNode>& nodes, const Plan& pl, const GpuBudget& b,
                const SchedParams& p, double target, std::vector<NodeAllocation>& out,
                std::string& why) {
  const std::vector<int> units = sm_units(b);
  std::vector<double> need(nodes.size(), 0);
  out.assign(nodes.size(), {});
  int used = 0;
  for (int v : pl.order) {
    double t = target * nodes[v].share, sum = 0;
    for (int c : nodes[v].children) sum += need[c];
    need[v] = t = std::max(t, sum);
    bool placed = false;
    for (int n : units) {
      uint32_t b0 = min_per_sm_batch(nodes[v].model, n, t, p);
      if (b0 == 0 || nodes[v].model.latency_s(n, b0, p.C_s) > p.latency_bound_s) continue;
      out[v] = at(nodes[v].model, n, b0, p);
      used += n;
      placed = true;
      break;
    }
    if (!placed) {
      why = fmt::format("'{}' cannot reach {:.4g} pps within {:.0f} us on up to {} SMs",
                        nodes[v].name, t, p.latency_bound_s * 1e6, b.total_sms);
      return false;
    }
  }
  if (used > b.total_sms) {
    why = fmt::format("{:.4g} pps needs {} SMs, the GPU has {}", target, used, b.total_sms);
    return false;
  }
  return true;
}

int sum_sms(const std::vector<NodeAllocation>& a) {
  int s = 0;
  for (const NodeAllocation& x : a) s += x.sms;
  return s;
}

std::string describe(const std::vector<SchedNode>& nodes, const Allocation& a) {
  std::string s;
  for (size_t i = 0; i < nodes.size(); ++i)
    s += fmt::format("\n  {}: {} SMs, batch {}, {:.4g} pps, {:.1f} us", nodes[i].name,
                     a.nodes[i].sms, a.nodes[i].batch, a.nodes[i].throughput_pps,
                     a.nodes[i].latency_s * 1e6);
  return s;
}

// The SMs below one partition step join the NF that limits the chain (the lowest rate per
// unit of its share), at its per-SM batch (capped so the batch stays within max_batch).
// Returns what it did for the explanation.
std::string fold_remainder(const std::vector<SchedNode>& nodes, const GpuBudget& b,
                           const SchedParams& p, Allocation& a) {
  const int left = b.total_sms - sum_sms(a.nodes);
  if (left <= 0 || left >= std::max(1, b.align_sms) || a.nodes.empty()) return "";
  size_t slow = 0;
  for (size_t i = 1; i < nodes.size(); ++i)
    if (a.nodes[i].throughput_pps / nodes[i].share < a.nodes[slow].throughput_pps / nodes[slow].share)
      slow = i;
  NodeAllocation& x = a.nodes[slow];
  if (x.sms <= 0) return "";
  const int n = x.sms + left;
  const uint32_t b0 = std::min<uint32_t>(x.batch / uint32_t(x.sms), p.max_batch / uint32_t(n));
  if (b0 == 0 || nodes[slow].model.latency_s(n, b0, p.C_s) > p.latency_bound_s) return "";
  const double before = a.chain_pps;
  x = at(nodes[slow].model, n, b0, p);
  a.chain_pps = chain_rate(nodes, a.nodes);
  a.folded_sms = left;
  return fmt::format("; the {} SM(s) below a partition step went to '{}' ({:.4g} -> {:.4g} pps)",
                     left, nodes[slow].name, before, a.chain_pps);
}

Allocation gnet(const std::vector<SchedNode>& nodes, const Plan& pl, const GpuBudget& b,
                const SchedParams& p, double cap) {
  Allocation a;
  const int unit = std::max(1, b.min_sms);
  if (static_cast<int>(nodes.size()) * unit > b.total_sms) {
    a.nodes.assign(nodes.size(), {});
    a.explain = fmt::format("infeasible: {} NFs need at least {} SMs each, the GPU has {}",
                            nodes.size(), unit, b.total_sms);
    return a;
  }
  std::string why;
  std::vector<NodeAllocation> cur;
  // Round 0: every NF on the smallest partition with its largest batch; T' is the slowest.
  if (!each_at(nodes, unit, p, cur, why)) {
    a.nodes.assign(nodes.size(), {});
    a.explain = "infeasible: " + why;
    return a;
  }
  a.nodes = cur;
  a.chain_pps = chain_rate(nodes, cur);
  if (!(a.chain_pps > 0)) {
    a.explain = "infeasible: the models predict no throughput (all coefficients zero?)";
    return a;
  }
  std::string stop = "the round limit";
  for (int round = 1; round <= 10000; ++round) {
    if (a.chain_pps >= cap) {
      stop = "the chain's PCIe transfer rate";
      break;
    }
    const double target = a.chain_pps * (1 + p.P);
    if (!gnet_round(nodes, pl, b, p, target, cur, why)) {
      stop = why;
      break;
    }
    a.nodes = cur;
    a.chain_pps = chain_rate(nodes, cur);
    a.rounds = round;
  }
  // Beyond G-NET: the failed round's +P step may have skipped targets that still fit; bisect
  // between the last target met and the one that failed instead of leaving that headroom.
  std::string refined;
  if (p.refine && a.rounds < 10000 && a.chain_pps < cap) {
    double lo = a.chain_pps, hi = std::min(a.chain_pps * (1 + p.P), cap);
    const double start = lo;
    for (int i = 0; i < 40 && hi > lo * (1 + 1e-6); ++i) {
      const double mid = (lo + hi) / 2;
      if (gnet_round(nodes, pl, b, p, mid, cur, why)) {
        a.nodes = cur;
        a.chain_pps = chain_rate(nodes, cur);
        lo = std::max(mid, a.chain_pps);
      } else {
        hi = mid;
      }
    }
    if (a.chain_pps > start) refined = fmt::format(", refined +{:.2f}%", (a.chain_pps / start - 1) * 100);
  }
  const std::string folded = b.fold_remainder ? fold_remainder(nodes, b, p, a) : "";
  a.sms_used = sum_sms(a.nodes);
  a.explain = fmt::format("gnet: {} round(s) of +{:.0f}% from the slowest NF on {} SMs{}; "
                          "stopped: {}{}", a.rounds, p.P * 100, unit, refined, stop, folded) +
              describe(nodes, a);
  return a;
}

Allocation fair(const std::vector<SchedNode>& nodes, const GpuBudget& b, const SchedParams& p) {
  Allocation a;
  const int n = static_cast<int>(nodes.size());
  int each = 0;
  for (int s : sm_units(b))
    if (s * n <= b.total_sms) each = s;
  std::string why;
  if (each == 0) {
    a.nodes.assign(nodes.size(), {});
    a.explain = fmt::format("infeasible: {} NFs cannot each get {} SMs of {}", n,
                            std::max(1, b.min_sms), b.total_sms);
    return a;
  }
  if (!each_at(nodes, each, p, a.nodes, why)) {
    a.nodes.assign(nodes.size(), {});
    a.explain = "infeasible: " + why;
    return a;
  }
  a.chain_pps = chain_rate(nodes, a.nodes);
  a.sms_used = each * n;
  a.explain = fmt::format("fair: {} SMs per NF, largest batch within the bound", each) +
              describe(nodes, a);
  return a;
}

// temporal and unco: every NF launches on the whole GPU (sms = 0); its batch is the largest
// within the bound as if it had the GPU alone.
Allocation whole_gpu(SchedulerPolicy policy, const std::vector<SchedNode>& nodes,
                     const GpuBudget& b, const SchedParams& p) {
  Allocation a;
  std::string why;
  if (!each_at(nodes, b.total_sms, p, a.nodes, why)) {
    a.nodes.assign(nodes.size(), {});
    a.explain = "infeasible: " + why;
    return a;
  }
  for (NodeAllocation& x : a.nodes) x.sms = 0;
  if (policy == SchedulerPolicy::temporal) {
    // One NF at a time: a chain packet costs share_i / rate_i seconds of GPU per NF.
    double per_packet = 0;
    for (size_t i = 0; i < nodes.size(); ++i) per_packet += nodes[i].share / a.nodes[i].throughput_pps;
    a.chain_pps = per_packet > 0 ? 1 / per_packet : 0;
    a.serialize = true;
    a.explain = "temporal: each NF has the whole GPU, one at a time; throughputs are per NF alone";
  } else {
    a.explain = "unco: every NF launches on the whole GPU at once; throughputs are per NF alone, "
                "the chain rate under contention is not predicted (chain_pps = 0)";
  }
  a.explain += describe(nodes, a);
  return a;
}

}  // namespace

std::vector<int> partition_request(const std::vector<std::vector<int>>& sms, bool per_chain) {
  std::vector<int> flat;
  for (const auto& c : sms) {
    if (!per_chain) {
      flat.insert(flat.end(), c.begin(), c.end());
      continue;
    }
    int sum = 0;
    for (int k : c) sum = (k == 0 || sum < 0) ? -1 : sum + k;
    flat.push_back(std::max(sum, 0));
  }
  return flat;
}

bool chain_saturated(double full_share, bool largest_batch) { return largest_batch && full_share > 0.5; }

RateBatch batch_for_rate(const std::vector<SchedNode>& nodes, const Allocation& a, int total_sms,
                         double input_pps, double chain_bound_s, const SchedParams& p) {
  RateBatch r;
  if (nodes.size() != a.nodes.size() || nodes.empty() || !(input_pps > 0)) {
    r.why = "no allocation or no measured input";
    return r;
  }
  const double target = input_pps * (1 + p.P);
  uint32_t batch = 1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int n = a.nodes[i].sms > 0 ? a.nodes[i].sms : total_sms;
    NfModel kernel = nodes[i].model;
    kernel.k2 = kernel.b2 = 0;  // the chain's transfer is counted once, below
    const uint32_t b0 = min_per_sm_batch(kernel, n, target * nodes[i].share, p);
    if (b0 == 0) {
      r.why = fmt::format("'{}' cannot sustain {:.4g} pps on {} SMs within batches of {}",
                          nodes[i].name, target * nodes[i].share, n, p.max_batch);
      r.batch = p.max_batch;
      batch = p.max_batch;
      break;
    }
    batch = std::max(batch, b0 * uint32_t(n));
  }
  r.batch = std::min(batch, p.max_batch);
  r.fill_s = (r.batch - 1) / input_pps;
  double transfer = 0, kernels = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NfModel& m = nodes[i].model;
    const int n = a.nodes[i].sms > 0 ? a.nodes[i].sms : total_sms;
    transfer = std::max(transfer, m.k2 * r.batch + m.b2);
    kernels += m.k1 * std::ceil(double(r.batch) / n) + m.b1 + p.C_s;
  }
  r.latency_s = r.fill_s + transfer + kernels;
  if (!r.why.empty()) return r;
  r.feasible = r.latency_s <= chain_bound_s;
  if (!r.feasible)
    r.why = fmt::format("at {:.4g} pps a batch of {} takes {:.0f} us (fill {:.0f}), over the bound "
                        "of {:.0f} us", input_pps, r.batch, r.latency_s * 1e6, r.fill_s * 1e6,
                        chain_bound_s * 1e6);
  return r;
}

Allocation allocate(SchedulerPolicy policy, const std::vector<SchedNode>& nodes, int root,
                    const GpuBudget& budget, const SchedParams& params) {
  if (budget.total_sms <= 0 || budget.min_sms < 0 || budget.align_sms < 0)
    throw std::invalid_argument("the GPU budget needs SMs");
  if (!(params.latency_bound_s > 0) || !(params.P > 0) || params.C_s < 0 || params.max_batch == 0)
    throw std::invalid_argument("scheduler parameters: latency bound, P and max_batch must be > 0");
  const Plan pl = plan(nodes, root);
  double cap = std::numeric_limits<double>::infinity();
  std::vector<SchedNode> kernel_nodes;
  const std::vector<SchedNode>* use = &nodes;
  if (params.transfer_once) {
    kernel_nodes = nodes;
    double k2 = 0, b2 = 0;
    for (SchedNode& n : kernel_nodes) {
      k2 = std::max(k2, n.model.k2);
      b2 = std::max(b2, n.model.b2);
      n.model.k2 = n.model.b2 = 0;
    }
    const double per_batch = (k2 * params.max_batch + b2) / 2;
    if (per_batch > 0) cap = params.max_batch / per_batch;
    use = &kernel_nodes;
  }
  Allocation a;
  switch (policy) {
    case SchedulerPolicy::gnet: a = gnet(*use, pl, budget, params, cap); break;
    case SchedulerPolicy::fair: a = fair(*use, budget, params); break;
    case SchedulerPolicy::temporal:
    case SchedulerPolicy::unco: a = whole_gpu(policy, *use, budget, params); break;
  }
  if (std::isfinite(cap)) {
    a.transfer_cap_pps = cap;
    if (a.chain_pps > cap) {
      a.chain_pps = cap;
      a.explain += fmt::format("\n  chain rate capped by its PCIe transfers: {:.4g} pps", cap);
    }
  }
  return a;
}

}  // namespace gpunfv
