// SM and batch allocation for the NFs of one chain (G-NET NSDI'18, section 5.3, Eq. 3-4), and
// the baselines G-NET compares with (section 7.3-7.4):
//   temporal  every NF gets the whole GPU, one NF at a time (Allocation::serialize),
//   fair      equal SM partitions,
//   unco      every NF launches on the whole GPU at once, uncoordinated (sms = 0),
//   gnet      per NF the fewest SMs and the batch that reach a common target throughput within
//             the latency bound, the target raised by P each round until the SMs run out.
// Pure host code over the performance model (perf_model.h); no GPU needed.
//
// Errors: parse_scheduler_policy and allocate throw std::invalid_argument (unknown policy, a
// child index out of range, a node reached twice or never from the root, shares of children
// above their parent's, a budget without SMs). An allocation that cannot be met (latency bound
// too tight, too few SMs for the NFs) is not an error: chain_pps = 0 and `explain` says why.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/perf_model.h"

namespace gpunfv {

enum class SchedulerPolicy { temporal, fair, unco, gnet };
SchedulerPolicy parse_scheduler_policy(std::string_view name);
std::string_view scheduler_policy_name(SchedulerPolicy p);

struct SchedNode {            // one NF of one chain
  std::string name;
  NfModel model;              // already for the chain's packet size
  std::vector<int> children;  // successor nodes (branches: several)
  double share = 1.0;         // fraction of the chain's input that reaches this node
};

// SMs in the units partitions can have: min_sms, then steps of align_sms (green contexts on an
// H100: 8 then 8; the block-cap fallback: 1 then 1).
struct GpuBudget {
  int total_sms;
  int min_sms;
  int align_sms;
  // gnet, beyond G-NET: the SMs left below one partition step (132 - 128 on an H200 with
  // steps of 8) join the partition of the NF that limits the chain, which is then off the
  // granularity (SmPartitions builds it last from what the others leave). Only where the
  // budget is the whole device and one partition may take the rest.
  bool fold_remainder = false;
};

struct SchedParams {
  double latency_bound_s = 1e-3;  // L: per NF, one batch's transfer + kernel time (Eq. 4)
  double P = 0.1;                 // target growth per round
  double C_s = 20e-6;             // allowance for launch overhead, DMA contention, model error
  uint32_t max_batch = 65536;     // packets per NF batch (B0 * sms), at most
  // gnet, beyond G-NET: after the last round, bisect between its target and the failed one.
  bool refine = true;
  // Beyond G-NET: in G-NET every NF copies its batch in and out; our executor copies a chain's
  // batch to the device once and back once, on the copy engines, beside the NFs' kernels. With
  // transfer_once, Eq. 1-4 per NF leave L_m out, and the chain's rate is bounded by its
  // transfers instead: the profiler's L_m is one copy in plus one copy out, which the pipeline
  // overlaps, so a batch of max_batch packets takes L_m / 2 to cross (the largest L_m of the
  // chain's NFs). gnet stops giving SMs once the chain reaches that rate.
  bool transfer_once = false;
};

struct NodeAllocation {
  int sms = 0;               // 0 = the whole GPU, shared
  uint32_t batch = 0;        // packets per launch: B0 * sms (B0 per SM)
  double throughput_pps = 0; // the model's rate for this NF at (sms, batch), Eq. 2 with C
  double latency_s = 0;      // Eq. 4
};

struct Allocation {
  std::vector<NodeAllocation> nodes;  // indexed like the input nodes
  double chain_pps = 0;  // chain input rate the allocation sustains: min over nodes of rate/share
  int rounds = 0;        // gnet: rounds that succeeded
  std::string explain;
  bool serialize = false;  // temporal: the executor runs one NF's kernel at a time
  int sms_used = 0;
  int folded_sms = 0;  // gnet with fold_remainder: SMs added to the limiting NF's partition
  double transfer_cap_pps = 0;  // transfer_once: the chain's transfer-bound rate (0: no cap)
};

Allocation allocate(SchedulerPolicy policy, const std::vector<SchedNode>& nodes, int root,
                    const GpuBudget& budget, const SchedParams& params);

// Beyond G-NET's rounds, whose batches serve the highest rate the SMs allow: the chain batch for
// the rate the chain is offered. Per node, Eq. 3's smallest per-SM batch that sustains its share
// of input_pps x (1 + P) on the SMs the allocation gave it (0: the whole GPU, total_sms); every
// node runs on the ingress batch, so the chain's is the largest of them. Its latency as the
// model predicts it: the wait to fill the batch at input_pps, one transfer in and out (the
// largest L_m of the nodes, as the executor copies a chain's batch once) and each node's kernel
// (Eq. 1 without L_m, plus C). `feasible`: every node sustains its share and the prediction
// is within chain_bound_s; `why` says what failed.
struct RateBatch {
  uint32_t batch = 0;         // packets per ingress batch (at least 1, at most max_batch)
  double fill_s = 0;          // the first packet's wait for the batch to fill
  double latency_s = 0;       // fill + transfer + kernels
  bool feasible = false;
  std::string why;
};
RateBatch batch_for_rate(const std::vector<SchedNode>& nodes, const Allocation& a, int total_sms,
                         double input_pps, double chain_bound_s, const SchedParams& p);

// Whether a chain's source offers more than the chain takes: ingress closed most of its batches
// full (full_share > 0.5) while they were the largest gnet would give the chain (before any plan,
// settings.batch_size; after a saturated plan, its rounds' batch): `largest_batch`. A batch
// sized for the offered rate (batch_for_rate) closes full by design and says nothing about it.
bool chain_saturated(double full_share, bool largest_batch);

// The partitions a plan of per-node SMs (by chain, then node; 0 the whole GPU) asks for: one per
// node, or with `per_chain` one per chain, the sum of its nodes' SMs (0 if any node has the
// whole GPU), for pipelines that run a batch's whole chain on one stream.
std::vector<int> partition_request(const std::vector<std::vector<int>>& sms, bool per_chain);

// Helpers the policies share, public for tests and the executor's re-planning.
// The largest per-SM batch B0 that keeps Eq. 4 within the bound on n_sms SMs (0: none does).
uint32_t max_per_sm_batch(const NfModel& m, int n_sms, const SchedParams& p);
// Eq. 3: the smallest B0 that reaches target_pps on n_sms SMs; 0 if no batch can.
uint32_t min_per_sm_batch(const NfModel& m, int n_sms, double target_pps, const SchedParams& p);

}  // namespace gpunfv
