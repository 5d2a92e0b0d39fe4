// How a chain's NFs share the GPU (G-NET section 5): each NF node launches on a lane, a stream
// inside its SM partition (green context, or the block-cap fallback), sized by the policy:
//   temporal  whole GPU, one NF kernel at a time (serialize() is true: the pipeline holds a
//             token while an NF's batch runs), the time-sharing baseline;
//   fair      equal SM partitions;
//   unco      every NF on the whole GPU at once;
//   gnet      G-NET's model-based allocation (sched/allocator.h) from the profiled model
//             (settings.model), re-planned when an NF's input rate moves by more than 10%;
//             when a chain is saturated, each new plan is measured against unco's whole-GPU
//             lanes and stays only if it carried clearly more (sched/plan_trial.h).
// Lanes are handed out as shared pointers: a stage keeps its old lane until its work in
// flight is done, so a re-plan never reorders packets inside a stage.
// Under gnet with a whole-chain pipeline (gpu_pipeline fused or persistent), where a batch's NFs
// run one after another on one stream, a chain has one partition, the sum of its NFs' SMs in
// the plan: every node of the chain gets that lane (chain_lanes()).
// While a persistent kernel spins (gpu_pipeline: persistent, a GPU ring port's loops) a plan
// changes the batches only, never the partitions: a context made beside the kernel could wait
// for it for ever (gpu/persistent_kernel_guard.h).
//
// Errors: the constructor throws ConfigError (gnet without a usable model file) or GpuError.
#pragma once

#if GPUNFV_HAVE_CUDA

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chain/runtime_config.h"
#include "gpu/sm_partition.h"
#include "gpu/stream.h"
#include "sched/allocator.h"
#include "sched/perf_model.h"
#include "sched/plan_trial.h"
#include "sched/replan_trigger.h"

namespace gpunfv {

struct Lane {
  std::shared_ptr<SmPartitions> owner;
  size_t index = 0;
  GpuStream gs;
  int sms = 0;  // 0: whole GPU
  void make_current() const { (*owner)[index].make_current(); }
};

class GpuSharing {
 public:
  explicit GpuSharing(const RuntimeConfig& rc);
  std::shared_ptr<const Lane> lane(size_t chain, size_t node) const;
  bool serialize() const { return policy_ == SchedulerPolicy::temporal; }
  SchedulerPolicy policy() const { return policy_; }
  // One partition per chain (see above); lane(c, k) is then the same for every node k.
  bool chain_lanes() const { return chain_lanes_; }
  // Packets per second into each node of each chain, and the mean frame size, as measured;
  // gnet re-plans when a rate moved by more than 10% since the last plan.
  // full_share: per chain, the share of batches ingress closed full in the same window (the
  // source had more than the batch took: saturated).
  void observe(const std::vector<std::vector<double>>& node_pps, double mean_frame_bytes,
               const std::vector<double>& full_share = {});
  // Tests: applies a different plan now (the SM sizes rotated among each chain's NFs, or, where
  // that changes nothing, the first NF shrunk to the smallest partition; with chain lanes, the
  // first NF one step smaller, then back), so the switch-over can be exercised under load
  // whatever the policy.
  void debug_replan();
  // Chain c's ingress batch under the current plan (0: settings.batch_size).
  uint32_t ingress_batch(size_t chain) const;
  std::string line() const;
  void report(nlohmann::json& j) const;
  // Per chain and node: the share of the device's SMs its lane may use now (a whole-GPU lane
  // inside a gpu_sms budget: the budget's share).
  std::vector<std::vector<double>> sm_shares() const;

 private:
  using Lanes = std::vector<std::vector<std::shared_ptr<const Lane>>>;  // [chain][node]
  // Makes `sms` the plan; a plan with the current SM split keeps the partitions it has.
  void apply(const std::vector<std::vector<int>>& sms, const std::string& why,
             const std::vector<uint32_t>& batches = {});
  Lanes make_lanes(const std::vector<std::vector<int>>& sms) const;
  bool plan_gnet(const std::vector<std::vector<double>>& node_pps, double frame_bytes,
                 const std::vector<double>& full_share);
  // A trial in progress (sched/plan_trial.h): switches lanes between its arms.
  void step_trial(const std::vector<std::vector<double>>& node_pps, uint64_t now);

  const RuntimeConfig& rc_;
  SchedulerPolicy policy_;
  bool chain_lanes_ = false;
  SmInfo info_;
  int budget_sms_ = 0;
  std::string device_name_;
  ModelStore models_;
  mutable std::mutex m_;
  Lanes lanes_;
  uint64_t partition_builds_ = 0;  // SmPartitions made: the first plan and each changed split
  nlohmann::json chain_plans_ = nlohmann::json::array();  // gnet: per chain, the last plan's batch and bound
  std::vector<uint32_t> ingress_batch_;
  std::vector<bool> plan_saturated_;  // gnet: per chain, whether the last plan found it saturated
  std::vector<std::vector<int>> current_sms_;  // the plan applied last
  // debug_replan with chain lanes: the plan it made smaller, and the plan before.
  std::vector<std::vector<int>> debug_smaller_, debug_before_;
  ReplanTrigger replan_;
  PlanTrial trial_;
  std::vector<std::vector<int>> model_sms_;  // the plan a trial measures against the whole GPU
  nlohmann::json trials_ = nlohmann::json::array();
  std::string line_;
  nlohmann::json history_ = nlohmann::json::array();
};

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_CUDA
