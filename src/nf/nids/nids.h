// NIDS NF: multi-pattern matching of packet payloads against Snort/Suricata rules (their
// `content:` strings) with an Aho-Corasick DFA; alerts logged as eve.json-like JSON lines.
//
//   - name: ids
//     type: nids
//     rules: [emerging-web_server.rules.gz, local.rules]   # or one path; plain or gzipped
//     action: alert          # alert (default): log and pass; drop: log and drop (nids_match)
//     alerts: ../out/alerts.json                           # optional alert log
//     max_rules: 200000      # more loaded rules: an error at the first extra rule's line
//     max_automaton_mb: 2048 # an automaton that would take more to build: an error at rules:
//
// The automaton takes about 1.1 KiB per distinct content byte (a state's 256-entry row); its
// size is computed from the contents before it is built. Each rule file is read up to
// settings.max_input_file_mb (decompressed).
//
// A rule fires on a packet when every one of its contents occurs in the payload (nids_logic.h
// says which bytes that is); what else rules say is not evaluated and is counted at startup
// (rules_file.h). Per packet the NF hands the host how many rules fired and the 7 lowest rule
// indices (a 32-byte results slice); collect() logs one alert per kept rule in rule order, and
// counts the firings beyond 7 as alerts_not_logged.
//
// GPU: a group of lanes per packet (8 by default, 4 packets per warp; nids.cu), its payload split
// into chunks scanned by the lanes, each running on past its chunk by at most the longest
// pattern minus one byte (AhoCorasickRef::scan_range); matched patterns meet in the group's
// bitmap in shared memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/config_node.h"
#include "nf/collect_scan.h"
#include "nf/network_function.h"
#include "nf/nids/alert_log.h"
#include "nf/nids/nids_logic.h"
#include "nf/nids/rule_matcher.h"
#include "nf/nids/rules_file.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_counters.h"
#endif

namespace gpunfv {

// collect()'s first pass: writes to out (room for end - begin indices) the packets of
// [begin, end) that reached chain node `position` and for which at least one rule fired (the
// record's `fired` word at result_offset), in packet order; returns how many. Reads 4 bytes of
// each packet's record.
uint32_t nids_alerting_packets(const BatchView& b, uint8_t position, uint32_t result_offset,
                               uint32_t begin, uint32_t end, uint32_t* out);

class Nids final : public NetworkFunction {
 public:
  enum class Action { alert, drop };
  // Defaults of max_rules and max_automaton_mb: several times the whole Emerging Threats Open
  // set (about 24k alert rules), well below a machine's or a GPU's memory.
  static constexpr uint64_t kDefaultMaxRules = 200'000;
  static constexpr uint64_t kDefaultMaxAutomatonMb = 2048;
  struct Options {
    Action action = Action::alert;
    std::string alerts_path;  // empty: no alert log
    size_t rule_files = 0;    // for describe()
    size_t max_automaton_bytes = kDefaultMaxAutomatonMb << 20;  // RuleMatcher's limit
  };

  // Throws std::invalid_argument when `rules` holds no loaded rule, std::length_error when
  // their automaton would take more than options.max_automaton_bytes.
  Nids(std::string name, RuleSet rules, Options options);
  ~Nids() override;

  // Reads `name`, `type`, `rules`, `action`, `alerts`, `max_rules`, `max_automaton_mb` (see
  // above). Throws ConfigError.
  static std::unique_ptr<Nids> from_config(const ConfigNode& node);

  std::string_view type() const override { return "nids"; }
  void prepare(Backend backend) override;
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& stream) const override;
#endif
  uint32_t result_bytes() const override { return kNidsResultBytes; }
  void collect(const BatchView& b, uint8_t position, const CollectContext& ctx) override;
  // Without an alert log collect() only counts, in any order: kCollectShards threads share it.
  static constexpr uint32_t kCollectShards = 2;
  uint32_t collect_shards() const override;
  void collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                     uint32_t begin, uint32_t end, uint32_t shard) override;
  // The plain per-packet loop collect() replaced (every packet's whole record loaded): the
  // reference tests and bench/collect_bench compare it with (same counters, same log lines).
  void collect_per_packet(const BatchView& b, uint8_t position, const CollectContext& ctx);
  // The alert log names addresses and ports read from the frames of alerted packets.
  bool collect_reads_frames() const override { return !options_.alerts_path.empty(); }
  bool collect_reads_frame(const BatchView& b, uint32_t i, uint8_t position) const override;
  // GPU backend without an alert log: alerts, packets alerted and alerts per rule counted on
  // the device (nids.cu); with a log, collect() keeps the lines in packet order on the host.
  bool count_on_device() override;
  bool collects() const override { return !device_counting_; }
  void report(nlohmann::json& j) const override;
  void finish() override;
  // "describe", "skipped" (the first skipped rule lines and why), "sid N" (a loaded rule).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;

  const RuleSet& rules() const { return rules_; }
  const RuleMatcher& matcher() const { return matcher_; }
  NidsView host_view() const { return NidsView{matcher_.ref(), result_offset(), drop_}; }

  // Totals collect() has counted so far.
  uint64_t alerts() const;
  uint64_t alerts_not_logged() const;
  uint64_t packets_alerted() const;

 private:
#if GPUNFV_HAVE_CUDA
  void prepare_gpu();  // nids.cu
#endif

  RuleSet rules_;
  Options options_;
  bool drop_;
  RuleMatcher matcher_;
  std::vector<std::string> msg_json_;  // per rule, json_quote()d once
  std::unique_ptr<AlertLog> log_;
  // Writes packet event `e` as an alert of rule index `rule` (its gid, sid, rev, msg filled in).
  void log_alert(AlertEvent& e, uint32_t rule);
  // What collect() counted, per shard (collect_range's `shard`; one writer each), summed when read.
  struct alignas(64) CollectCounts {
    uint64_t alerts = 0, not_logged = 0, packets_alerted = 0;
    std::vector<uint64_t> by_rule;  // alerts per rule index, then a slot for stray indices
    std::vector<uint32_t> alerted;  // scratch: the alerting packets of the range being collected
  };
  std::vector<CollectCounts> counts_;
  uint64_t summed(uint64_t CollectCounts::*counter) const;  // over the shards
  void count(const CollectScan& scan, CollectCounts& c, uint32_t n);
  void count_and_log(const BatchView& b, const CollectScan& scan, CollectCounts& c, uint32_t n,
                     const CollectContext& ctx);
  bool device_counting_ = false;  // count_on_device() taken
#if GPUNFV_HAVE_CUDA
  // by_rule's rules + 1 slots, then packets alerted, alerts beyond the kept ones, kept alerts.
  std::unique_ptr<DeviceCounters> device_counts_;
  NidsView device_view_{};
  size_t gpu_shared_limit_ = 0;  // dynamic shared memory a block of the kernel may use
  uint32_t gpu_group_lanes_ = 32;  // lanes of a warp that scan one packet (nids.cu)
#endif
};

}  // namespace gpunfv
