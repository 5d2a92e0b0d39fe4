#include "sched/gpu_sharing.h"

#if GPUNFV_HAVE_CUDA

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/persistent_kernel_guard.h"

namespace gpunfv {

namespace {

// Rounds down to a size a partition may have (min_sms, then steps of align_sms).
int partition_floor(const SmInfo& info, int sms) {
  if (sms < info.min_sms) return 0;
  return info.min_sms + (sms - info.min_sms) / info.align_sms * info.align_sms;
}

}  // namespace

GpuSharing::GpuSharing(const RuntimeConfig& rc)
    : rc_(rc), policy_(parse_scheduler_policy(rc.settings.scheduler)), info_(query_sm_info(0)) {
  // settings.gpu_sms restricts the chains to part of the GPU (as Simmer's MIG slices do).
  budget_sms_ = info_.total_sms;
  chain_lanes_ = policy_ == SchedulerPolicy::gnet && rc.settings.gpu_pipeline != "staged";
  if (rc.settings.gpu_sms) budget_sms_ = std::min<int>(budget_sms_, int(rc.settings.gpu_sms));
  cudaDeviceProp prop{};
  GPUNFV_CUDA(cudaGetDeviceProperties(&prop, 0));
  device_name_ = prop.name;
  ingress_batch_.assign(rc.chains.size(), 0);
  if (policy_ == SchedulerPolicy::gnet) {
    if (rc.settings.model_file.empty())
      throw ConfigError(rc.file, "scheduler: gnet needs settings.model (run `gpunfv profile` first)");
    models_ = ModelStore::load(rc.settings.model_file);
  }
  std::vector<std::vector<int>> sms(rc.chains.size());
  size_t nodes = 0;
  for (const Chain& c : rc.chains) nodes += c.path.size();
  // fair, and gnet's start before any traffic was measured: equal partitions.
  int each = 0;
  if (policy_ == SchedulerPolicy::fair || policy_ == SchedulerPolicy::gnet)
    each = nodes ? partition_floor(info_, budget_sms_ / int(nodes)) : 0;
  for (size_t c = 0; c < rc.chains.size(); ++c) sms[c].assign(rc.chains[c].path.size(), each);
  std::string why = std::string(scheduler_policy_name(policy_)) +
                    (policy_ == SchedulerPolicy::gnet ? ": equal shares until rates are measured" : "");
  if ((policy_ == SchedulerPolicy::fair || policy_ == SchedulerPolicy::gnet) && each == 0 && nodes)
    why += fmt::format(" (too few SMs for {} partitions of at least {}: sharing the whole GPU)",
                       nodes, info_.min_sms);
  apply(sms, why);
}

void GpuSharing::apply(const std::vector<std::vector<int>>& sms, const std::string& why,
                       const std::vector<uint32_t>& batches) {
  Lanes lanes;
  bool kept = false;
  {
    std::lock_guard<std::mutex> lk(m_);
    // The same SM split: the partitions and their streams stay, only the batches change.
    const bool same = !lanes_.empty() &&
                      partition_request(sms, chain_lanes_) == partition_request(current_sms_, chain_lanes_);
    kept = !same && !lanes_.empty() && persistent_kernel_running();
    if (same || kept) lanes = lanes_;
  }
  const bool rebuilt = lanes.empty();
  if (rebuilt) lanes = make_lanes(sms);
  std::string line = std::string(scheduler_policy_name(policy_)) + ":";
  for (size_t c = 0; c < lanes.size(); ++c)
    for (size_t k = 0; k < (chain_lanes_ ? std::min<size_t>(1, lanes[c].size()) : lanes[c].size()); ++k) {
      const Lane& lane = *lanes[c][k];
      line += fmt::format(" {} {}", chain_lanes_ ? "chain " + rc_.chains[c].name : rc_.chains[c].graph.name[k],
                          lane.sms ? fmt::format("{}SM", lane.sms)
                                   : lane.gs.max_blocks ? fmt::format("<={}blk", lane.gs.max_blocks)
                                                        : std::string("all"));
      if (c < batches.size() && batches[c]) line += fmt::format("/B{}", batches[c]);
    }
  const SmPartitions* owner = nullptr;
  for (const auto& c : lanes)
    if (!c.empty()) owner = c[0]->owner.get();
  std::lock_guard<std::mutex> lk(m_);
  if (!kept) current_sms_ = sms;
  lanes_ = std::move(lanes);
  if (!batches.empty()) ingress_batch_ = batches;
  line_ = line;
  partition_builds_ += rebuilt;
  history_.push_back({{"t_s", monotonic_ns() * 1e-9}, {"line", line},
                      {"why", kept ? why + " (partitions kept: a persistent kernel runs)" : why},
                      {"partitions", owner ? owner->describe() : std::string()},
                      {"partitions_rebuilt", rebuilt}});
}

GpuSharing::Lanes GpuSharing::make_lanes(const std::vector<std::vector<int>>& sms) const {
  auto owner = std::make_shared<SmPartitions>(partition_request(sms, chain_lanes_), info_.green_contexts, 0);
  auto lane_at = [&](size_t i) {
    auto lane = std::make_shared<Lane>();
    const SmPartition& part = (*owner)[i];
    lane->owner = owner;
    lane->index = i;
    lane->gs.stream = part.stream;
    lane->gs.max_blocks = part.max_blocks;
    // Whole-GPU lanes inside a restricted budget: G-NET's block cap, one block per SM.
    if (lane->gs.max_blocks == 0 && part.sms == 0 && budget_sms_ < info_.total_sms)
      lane->gs.max_blocks = budget_sms_;
    // A per-NF stage's lane: its batches in order on one stream (a chain lane's fused batches
    // overlap on the issuing thread's streams instead).
    lane->gs.serial = !chain_lanes_;
    if (!chain_lanes_) {
      lane->gs.aux = part.aux_stream;
      lane->gs.aux_done = part.aux_done;
    }
    lane->sms = part.sms;
    return lane;
  };
  Lanes lanes(sms.size());
  size_t i = 0;
  for (size_t c = 0; c < sms.size(); ++c) {
    if (chain_lanes_) {
      lanes[c].assign(sms[c].size(), lane_at(i++));
      continue;
    }
    for (size_t k = 0; k < sms[c].size(); ++k) lanes[c].push_back(lane_at(i++));
  }
  return lanes;
}

void GpuSharing::debug_replan() {
  std::vector<std::vector<int>> sms;
  {
    std::lock_guard<std::mutex> lk(m_);
    sms = current_sms_;
  }
  if (chain_lanes_) {
    // One partition per chain, which a rotation among its NFs keeps: each chain's first NF one
    // step smaller, and at the next re-plan the plan before that again (unless a plan of the
    // model's came in between, which is then made smaller in turn).
    if (!debug_smaller_.empty() && sms == debug_smaller_) {
      sms = debug_before_;
      debug_smaller_.clear();
    } else {
      debug_before_ = sms;
      for (auto& c : sms)
        if (!c.empty() && c[0] - info_.align_sms >= info_.min_sms) c[0] -= info_.align_sms;
      debug_smaller_ = sms;
    }
    apply(sms, "debug re-plan (GPUNFV_DEBUG_REPLAN_MS)");
    return;
  }
  for (auto& c : sms) {
    if (c.size() < 2) continue;
    const std::vector<int> was = c;
    std::rotate(c.begin(), c.begin() + 1, c.end());
    if (c == was && c[0] > info_.min_sms) {
      // Equal shares: give the first NF the smallest partition and its SMs to the second.
      c[1] = partition_floor(info_, c[1] + c[0] - info_.min_sms);
      c[0] = info_.min_sms;
    } else if (c == was && c[0] == info_.min_sms) {
      c[1] = c[0] = partition_floor(info_, (c[0] + c[1]) / 2);
    }
  }
  apply(sms, "debug re-plan (GPUNFV_DEBUG_REPLAN_MS)");
}

std::vector<std::vector<double>> GpuSharing::sm_shares() const {
  std::lock_guard<std::mutex> lk(m_);
  std::vector<std::vector<double>> out(lanes_.size());
  const double total = std::max(1, info_.total_sms);
  for (size_t c = 0; c < lanes_.size(); ++c)
    for (const auto& lane : lanes_[c]) out[c].push_back((lane->sms ? lane->sms : budget_sms_) / total);
  return out;
}

std::shared_ptr<const Lane> GpuSharing::lane(size_t chain, size_t node) const {
  std::lock_guard<std::mutex> lk(m_);
  return lanes_[chain][node];
}

uint32_t GpuSharing::ingress_batch(size_t chain) const {
  std::lock_guard<std::mutex> lk(m_);
  return ingress_batch_[chain];
}

std::string GpuSharing::line() const {
  std::lock_guard<std::mutex> lk(m_);
  return line_;
}

void GpuSharing::report(nlohmann::json& j) const {
  std::lock_guard<std::mutex> lk(m_);
  j = {{"policy", std::string(scheduler_policy_name(policy_))},
       {"device", device_name_},
       {"sms", info_.total_sms},
       {"green_contexts", info_.green_contexts},
       {"line", line_},
       {"partition_builds", partition_builds_},
       {"chain_plans", chain_plans_},
       {"trials", trials_},
       {"plans", history_}};
}

void GpuSharing::observe(const std::vector<std::vector<double>>& node_pps, double frame_bytes,
                         const std::vector<double>& full_share) {
  if (policy_ != SchedulerPolicy::gnet) return;
  const uint64_t now = monotonic_ns();
  if (trial_.active()) {
    step_trial(node_pps, now);
    return;
  }
  switch (trial_.baseline(now)) {
    case PlanTrial::Baseline::wait:
      return;
    case PlanTrial::Baseline::take:
      replan_.planned(node_pps, now);
      return;
    case PlanTrial::Baseline::none:
      break;
  }
  if (!replan_.due(node_pps, now)) return;
  if (!plan_gnet(node_pps, frame_bytes, full_share)) return;
  replan_.planned(node_pps, now);
  {
    std::lock_guard<std::mutex> lk(m_);
    if (std::find(plan_saturated_.begin(), plan_saturated_.end(), true) == plan_saturated_.end()) return;
    if (persistent_kernel_running()) return;  // the trial's two arms would be the same partitions
    model_sms_ = current_sms_;
  }
  trial_.start(now);
}

void GpuSharing::step_trial(const std::vector<std::vector<double>>& node_pps, uint64_t now) {
  double input = 0;
  for (const auto& c : node_pps) input += c.empty() ? 0.0 : c[0];
  const bool switch_now = trial_.observe(input, now);
  std::vector<std::vector<int>> sms;
  std::vector<uint32_t> batches;
  {
    std::lock_guard<std::mutex> lk(m_);
    sms = model_sms_;
    batches = ingress_batch_;
  }
  if (switch_now && trial_.next_arm() == PlanTrial::Arm::whole_gpu) {
    for (auto& c : sms) std::fill(c.begin(), c.end(), 0);
    apply(sms, trial_.active()
                   ? std::string("gnet trial: unco's whole-GPU lanes against the model's plan")
                   : fmt::format("gnet trial: the whole GPU carried as much ({:.1f} against the "
                                 "model's {:.1f} Mpps): kept", trial_.whole_gpu_rate() / 1e6,
                                 trial_.model_rate() / 1e6),
          batches);
  } else if (switch_now) {
    apply(sms, "gnet trial: the model's plan again (its two windows cancel drift)", batches);
  }
  if (trial_.active()) return;
  // The winner's rates are the new baseline, or the switch itself would trigger a re-plan
  // (after a switch, taken again once the lanes settle: PlanTrial::baseline).
  replan_.planned(node_pps, now);
  std::lock_guard<std::mutex> lk(m_);
  trials_.push_back({{"model_pps", trial_.model_rate()}, {"whole_gpu_pps", trial_.whole_gpu_rate()},
                     {"kept", trial_.winner() == PlanTrial::Arm::model ? "model" : "whole_gpu"}});
}

bool GpuSharing::plan_gnet(const std::vector<std::vector<double>>& node_pps, double frame_bytes,
                           const std::vector<double>& full_share) {
  const uint32_t size = static_cast<uint32_t>(std::lround(frame_bytes));
  // Chains split the SMs evenly; within a chain, G-NET's rule.
  const int chain_sms = budget_sms_ / int(std::max<size_t>(rc_.chains.size(), 1));
  std::vector<std::vector<int>> sms(rc_.chains.size());
  std::vector<uint32_t> batches(rc_.chains.size(), 0);
  std::vector<bool> saturated_now(rc_.chains.size(), false);
  std::string why = fmt::format("gnet at {} B/packet:", size);
  nlohmann::json plans = nlohmann::json::array();
  SchedParams params;
  params.P = rc_.settings.sched_p;
  params.C_s = rc_.settings.sched_c_us * 1e-6;
  params.max_batch = rc_.settings.batch_size;
  params.transfer_once = true;  // the executor copies a chain's batch in once and out once
  for (size_t c = 0; c < rc_.chains.size(); ++c) {
    const Chain& chain = rc_.chains[c];
    const size_t n = chain.path.size();
    if (n == 0) continue;
    params.latency_bound_s = chain.latency_bound_us * 1e-6;  // each NF's L (Eq. 4)
    std::vector<SchedNode> nodes(n);
    const double in0 = std::max(node_pps[c][0], 1.0);
    // A tree over the graph: each node hangs under its first parent (G-NET's rule sums
    // children into their parent; a node with two parents is counted once).
    auto parents = chain.graph.parents();
    for (size_t k = 0; k < n; ++k) {
      const NetworkFunction& nf = *rc_.nfs[chain.path[k]];
      auto m = models_.find(device_name_, nf.name(), std::string(nf.type()), size);
      if (!m) {
        why += fmt::format(" no model for {} ({}) at {} B on {}: keeping the current plan",
                           nf.name(), nf.type(), size, device_name_);
        std::lock_guard<std::mutex> lk(m_);
        line_ = "gnet: " + why;
        return false;
      }
      nodes[k].name = nf.name();
      nodes[k].model = *m;
      nodes[k].share = std::min(1.0, std::max(node_pps[c][k], 0.0) / in0);
      if (k == 0) nodes[k].share = 1.0;
      if (k > 0 && !parents[k].empty()) nodes[parents[k][0]].children.push_back(int(k));
    }
    // Rates are sampled per stage a few microseconds apart: a child can read a little more
    // than its parent. A child never gets more of the input than its parent.
    for (size_t k = 0; k < n; ++k) {
      nodes[k].share = std::max(nodes[k].share, 1e-6);  // an idle NF still gets its minimum
      double children = 0;
      for (int ch : nodes[k].children) children += std::max(nodes[ch].share, 1e-6);
      if (children > nodes[k].share)
        for (int ch : nodes[k].children)
          nodes[ch].share = std::max(nodes[ch].share, 1e-6) * nodes[k].share / children;
    }
    Allocation a;
    try {
      // One partition may take the SMs below a step (SmPartitions): with one chain on the
      // whole device, gnet gives them to the chain's limiting NF.
      const bool fold = rc_.settings.sched_fold_remainder && rc_.chains.size() == 1 &&
                        chain_sms == info_.total_sms && info_.green_contexts;
      a = allocate(SchedulerPolicy::gnet, nodes, 0,
                   GpuBudget{chain_sms, info_.min_sms, info_.align_sms, fold}, params);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(m_);
      line_ = std::string("gnet: ") + e.what() + " (keeping the current plan)";
      return false;
    }
    if (a.chain_pps <= 0) {
      why += " " + a.explain + " (keeping the current plan)";
      std::lock_guard<std::mutex> lk(m_);
      line_ = "gnet: " + why;
      return false;
    }
    uint32_t capacity_batch = 0;
    for (const NodeAllocation& na : a.nodes) {
      sms[c].push_back(na.sms);
      capacity_batch = std::max(capacity_batch, na.batch);
    }
    // The SMs serve the highest rate they can. The batch serves the rate offered now, so a
    // lightly loaded chain does not wait to fill a batch sized for saturation; a saturated
    // chain (ingress filled most of its largest batches) takes the rounds' batch, the largest
    // of the NFs' Eq. 3 batches, or it could not grow past the rate it was measured at.
    bool largest = true;
    {
      std::lock_guard<std::mutex> lk(m_);
      largest = ingress_batch_[c] == 0 || (c < plan_saturated_.size() && plan_saturated_[c]);
    }
    const bool saturated = chain_saturated(c < full_share.size() ? full_share[c] : 0.0, largest);
    saturated_now[c] = saturated;
    RateBatch rb = batch_for_rate(nodes, a, chain_sms, in0, chain.latency_bound_us * 1e-6, params);
    if (saturated && capacity_batch > rb.batch) rb.batch = capacity_batch;
    batches[c] = rb.batch;
    why += fmt::format(" chain {} {:.1f} Mpps predicted ({} rounds), batch {} for the {:.2f} Mpps "
                       "offered{}, {:.0f} us predicted (bound {:g} us{})",
                       chain.name, a.chain_pps / 1e6, a.rounds, rb.batch, in0 / 1e6,
                       saturated ? " (saturated: the rounds' batch)" : "", rb.latency_s * 1e6, chain.latency_bound_us,
                       rb.feasible ? "" : ": NOT feasible, " + rb.why);
    plans.push_back({{"chain", chain.name}, {"offered_pps", in0}, {"capacity_pps", a.chain_pps},
                     {"batch", rb.batch}, {"predicted_latency_us", rb.latency_s * 1e6},
                     {"saturated", saturated}, {"bound_us", chain.latency_bound_us},
                     {"bound_feasible", rb.feasible},
                     {"why", rb.why}});
  }
  apply(sms, why, batches);
  std::lock_guard<std::mutex> lk(m_);
  chain_plans_ = std::move(plans);
  plan_saturated_ = std::move(saturated_now);
  return true;
}

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_CUDA
