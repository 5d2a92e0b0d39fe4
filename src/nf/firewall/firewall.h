// Firewall NF: 5-tuple classification of IPv4 packets against an ordered rule list, the first
// matching rule's action applied (G-NET's firewall: bit-vector search).
//
//   - name: fw
//     type: firewall
//     rules: firewall/example.rules   # ClassBench format (optionally .gz), see classbench_file.h
//     action: drop                    # action of rules without an action word (default drop)
//     default: accept                 # action when no rule matches (default accept)
//     max_rules: 65536                # more rules is an error at the first extra rule's line
//                                     # (default and highest 65536: rule indices are 16-bit)
//
// The rule file is read up to settings.max_input_file_mb (decompressed).
// Drops: firewall_rule (a matching rule says drop), firewall_default (no rule matched and the
// default is drop). Non-IPv4 packets pass unclassified (see firewall_logic.h).
// Per-packet result (4 bytes): the matched rule's index, kNoRule, or kNotIpv4.
// Report: `rules` (count), `rule_hits` {"rule index": packets} for rules that matched at least
// one packet (the index counts rule lines only, from 0; see classbench_file.h), `no_match`
// (IPv4 packets no rule matched), `not_ipv4` (packets passed unclassified).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "nf/firewall/bitvector_classifier.h"
#include "nf/firewall/classbench_file.h"
#include "nf/firewall/firewall_logic.h"
#include "nf/live_snapshot.h"
#include "nf/network_function.h"
#include "nf/shard_counters.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#include "gpu/device_counters.h"
#include "gpu/device_users.h"
#include "nf/device_packet_count.h"
#endif

namespace gpunfv {

// One version of a firewall's rule set and its tables (replaced whole by a live update).
struct FirewallTables {
  FirewallTables(std::vector<ClassBenchRule> rules, FirewallAction rule_action, std::string file);
  std::vector<FiveTupleRule> rules;
  std::vector<long> lines;     // file line of each rule, for messages
  std::vector<uint8_t> drops;  // 1: the rule's action is drop
  std::string file;
  BitVectorClassifier classifier;
#if GPUNFV_HAVE_CUDA
  void upload();
  DeviceBuffer<uint8_t> device_drops;
  BitVectorClassifierRef device_classifier{};
  DevicePacketCount device_packets;  // under gpu_pipeline: fused
#endif
};

class Firewall final : public NetworkFunction {
 public:
  // `rule_action`: the action of rules without their own; `no_match_action`: when none matches.
  // Throws std::length_error when the rules' bit-vector tables grow past the classifier's limit.
  Firewall(std::string name, std::vector<ClassBenchRule> rules, FirewallAction rule_action,
           FirewallAction no_match_action, std::string rules_file = {},
           size_t max_rules = kMaxFirewallRules);

  // Reads `name`, `type`, `rules`, `action`, `default`, `max_rules` (see above). Throws
  // ConfigError.
  static std::unique_ptr<Firewall> from_config(const ConfigNode& node);

  // Live update: reads `file` (as the `rules:` file, with this NF's action and max_rules),
  // builds its tables beside the live ones and swaps them in between batches. Returns the new
  // table version (`what` names it in the report; default "firewall replace FILE"). Throws
  // ConfigError (file:line) or std::length_error, changing nothing.
  uint64_t replace_rules(const std::string& file, const ReadLimit& limit, std::string what = {});
  const std::string& rules_file() const { return config_file_; }

  std::string_view type() const override { return "firewall"; }
  void prepare(Backend backend) override;
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& stream) const override;
  DevicePacketFnKind device_packet_kind() const override { return DevicePacketFnKind::firewall; }
  // Pins the live rule set until the batch is back, so a replacement waits for it.
  DevicePacketUse device_packet_use() const override;
#endif
  uint32_t result_bytes() const override { return kFirewallResultBytes; }
  void collect(const BatchView& b, uint8_t position, const CollectContext& ctx) override;
  // collect() only counts: kCollectShards threads share it (nf/shard_counters.h).
  static constexpr uint32_t kCollectShards = 2;
  uint32_t collect_shards() const override { return kCollectShards; }
  void collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                     uint32_t begin, uint32_t end, uint32_t shard) override;
  // The plain per-packet loop collect() replaced (one bounds-checked record read and one
  // counter increment per packet): the reference tests and bench/collect_bench compare it with.
  void collect_per_packet(const BatchView& b, uint8_t position);
  // GPU backend: rule hits, no match and not IPv4 counted on the device (firewall.cu).
  bool count_on_device() override;
  bool collects() const override { return !device_counting_; }
  void finish() override;
  void report(nlohmann::json& j) const override;
  const TableVersionLog* table_versions() const override { return &tables_.log(); }
  // "describe", or "match SRC DST PROTO SPORT DPORT" (the rule a 5-tuple matches).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;

  // The live rule set's (tests and benchmarks; valid until the next replace_rules()).
  size_t rule_count() const { return tables_.pin()->rules.size(); }
  const std::vector<FiveTupleRule>& rules() const { return current().rules; }
  FirewallAction action_of(uint32_t rule) const {
    return current().drops[rule] ? FirewallAction::drop : FirewallAction::accept;
  }
  const BitVectorClassifier& classifier() const { return current().classifier; }
  // View of the host tables, as process() uses it.
  FirewallView host_view() const { return view_of(current()); }

  // Counted by collect(): hits per rule index of the rule set each packet was classified by.
  std::vector<uint64_t> rule_hits() const;
  uint64_t no_match() const { return counted(kNoMatchSlot); }
  uint64_t not_ipv4() const { return counted(kNotIpv4Slot); }

  // Counter slots: no match, not IPv4, then one per rule index up to max_rules (fixed, so
  // rule sets of any size up to it share them).
  static constexpr uint32_t kNoMatchSlot = 0, kNotIpv4Slot = 1, kFirstRuleSlot = 2;

 private:
  uint64_t counted(size_t slot) const { return counts_.total(slot); }
  const FirewallTables& current() const { return *tables_.pin().tables; }
  FirewallView view_of(const FirewallTables& t) const;
#if GPUNFV_HAVE_CUDA
  // Waits for the launches over a replaced version, takes its device packet count, frees it.
  void retire(LiveSnapshot<FirewallTables>::Pinned old);
#endif

  LiveSnapshot<FirewallTables> tables_;
  FirewallAction rule_action_;
  FirewallAction no_match_action_;
  size_t max_rules_;
  std::string config_file_;
  Backend backend_ = Backend::cpu;
  // What collect() counted, per shard and lane (slots above).
  ShardCounters counts_;
  bool device_counting_ = false;  // count_on_device() taken
#if GPUNFV_HAVE_CUDA
  std::unique_ptr<DeviceCounters> device_counts_;  // the same slots as counts_' lanes
  // The streams that launched over each version (by version number).
  mutable DeviceUsers device_users_;

 public:
  void release_gpu_lane(cudaStream_t stream) override { device_users_.forget_stream(stream); }
#endif
};

}  // namespace gpunfv
