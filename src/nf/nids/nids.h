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
// Live update (`gpunfv ctl SOCKET nids replace FILE...`, SIGHUP): a new rule set and automaton
// are built beside the live ones and swapped in between batches (nf/live_snapshot.h). Rule
// indices in the results are global over the run (each version's rules follow the previous
// versions'), so a packet's alerts name the rules of the version that scanned it.
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
#include "nf/live_snapshot.h"
#include "nf/network_function.h"
#include "nf/nids/alert_log.h"
#include "nf/nids/nids_logic.h"
#include "nf/nids/rule_matcher.h"
#include "nf/nids/rules_file.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_counters.h"
#include "gpu/device_users.h"
#include "nf/device_packet_count.h"
#endif

namespace gpunfv {

// One version of a NIDS's rules and automaton (replaced whole by a live update).
struct NidsTables {
  // Throws std::invalid_argument without a loaded rule, std::length_error as RuleMatcher.
  NidsTables(RuleSet rules, size_t max_automaton_bytes, uint32_t rule_base,
             std::vector<std::string> files);
  RuleSet rules;
  RuleMatcher matcher;
  uint32_t rule_base;              // global index of rules.rules[0] (see above)
  std::vector<std::string> files;  // the rule files it was read from
#if GPUNFV_HAVE_CUDA
  NidsView device_view{};        // set by Nids::upload()
  size_t shared_limit = 0;       // dynamic shared memory a block of the kernel may use
  uint32_t group_lanes = 32;     // lanes of a warp that scan one packet (nids.cu)
  uint32_t chunk_bytes = 0;      // GPUNFV_NIDS_CHUNK (0: by batch size, nids.cu)
  // Device counting: rules + 4 slots (Nids::finish() adds them up); shared with the NF so the
  // counts outlive the version.
  std::shared_ptr<DeviceCounters> device_counts;
  DevicePacketCount device_packets;  // under gpu_pipeline: fused
#endif
};

// What an alert names of a rule, kept for every version's rules (global rule index).
struct NidsRuleInfo {
  uint32_t gid = 1, sid = 0, rev = 0;
  std::string msg_json;  // json_quote()d
};

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
    uint64_t max_rules = kDefaultMaxRules;  // for replace_rules()
    std::vector<std::string> rule_paths;    // the configuration's rule files (reload)
  };

  // Throws std::invalid_argument when `rules` holds no loaded rule, std::length_error when
  // their automaton would take more than options.max_automaton_bytes.
  Nids(std::string name, RuleSet rules, Options options);
  ~Nids() override;

  // Reads `name`, `type`, `rules`, `action`, `alerts`, `max_rules`, `max_automaton_mb` (see
  // above). Throws ConfigError.
  static std::unique_ptr<Nids> from_config(const ConfigNode& node);

  // Live update: reads `files` (with this NF's max_rules and max_automaton_mb, each up to
  // `limit`), builds the automaton beside the live one and swaps it in between batches.
  // Returns the new table version (`what` names it in the report; default "nids replace
  // FILE..."). A file that cannot be read, a rule line with bad syntax, no loadable rule, too
  // many rules or too large an automaton throw ConfigError (file:line where there is one),
  // changing nothing.
  uint64_t replace_rules(const std::vector<std::string>& files, const ReadLimit& limit,
                         std::string what = {});
  const std::vector<std::string>& rule_files() const { return options_.rule_paths; }
  const TableVersionLog* table_versions() const override { return &tables_.log(); }
  uint64_t table_version() const { return tables_.version(); }

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

  // The live version's (valid until the next replace_rules()).
  const RuleSet& rules() const { return current().rules; }
  const RuleMatcher& matcher() const { return current().matcher; }
  NidsView host_view() const { return view_of(current()); }

  // Totals collect() has counted so far.
  uint64_t alerts() const;
  uint64_t alerts_not_logged() const;
  uint64_t packets_alerted() const;

 private:
  using Catalog = std::vector<NidsRuleInfo>;
  const NidsTables& current() const { return *tables_.pin().tables; }
  NidsView view_of(const NidsTables& t) const {
    return NidsView{t.matcher.ref(), result_offset(), drop_, t.rule_base};
  }
  std::shared_ptr<const Catalog> catalog() const;
  void add_to_catalog(const RuleSet& rules);  // before the version that has them goes live
#if GPUNFV_HAVE_CUDA
  void upload(NidsTables& t);  // nids.cu: device automaton, launch shape, counters
#endif

  Options options_;
  bool drop_;
  LiveSnapshot<NidsTables> tables_;
  Backend backend_ = Backend::cpu;
  mutable std::mutex catalog_m_;
  std::shared_ptr<const Catalog> catalog_;  // every version's rules, by global index
  std::unique_ptr<AlertLog> log_;
  // Writes packet event `e` as an alert of global rule index `rule` (gid, sid, rev, msg filled in).
  void log_alert(AlertEvent& e, const NidsRuleInfo& rule);
  // What collect() counted, per shard (collect_range's `shard`; one writer each), summed when read.
  struct alignas(64) CollectCounts {
    uint64_t alerts = 0, not_logged = 0, packets_alerted = 0;
    // Alerts per global rule index, then a slot for stray indices; grown by its one writer as
    // versions are added (fit()).
    std::vector<uint64_t> by_rule;
    std::vector<uint32_t> alerted;  // scratch: the alerting packets of the range being collected
  };
  std::vector<CollectCounts> counts_;
  uint64_t summed(uint64_t CollectCounts::*counter) const;  // over the shards
  static void fit(CollectCounts& c, size_t rules);  // by_rule for `rules` global indices
  void count(const CollectScan& scan, CollectCounts& c, uint32_t n);
  void count_and_log(const BatchView& b, const CollectScan& scan, CollectCounts& c, uint32_t n,
                     const CollectContext& ctx, const Catalog& catalog);
  bool device_counting_ = false;  // count_on_device() taken
#if GPUNFV_HAVE_CUDA
  // Every version's device counters (the version's rules + 1 slots, then packets alerted,
  // alerts beyond the kept ones, kept alerts) with its rule base, added up by finish().
  mutable std::mutex device_counts_m_;
  std::vector<std::pair<uint32_t, std::shared_ptr<DeviceCounters>>> device_counts_;
  // The streams that launched over each version (by version number), waited for before the
  // version's device memory goes.
  mutable DeviceUsers device_users_;
 public:
  void release_gpu_lane(cudaStream_t stream) override { device_users_.forget_stream(stream); }
#endif
};

}  // namespace gpunfv
