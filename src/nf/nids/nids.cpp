#include "nf/nids/nids.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.h"
#include "core/text_file.h"
#include "nf/collect_scan.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

namespace {

// alerts_by_sid in the report: the sids with the most alerts, at most this many.
constexpr size_t kReportSids = 100;

struct RuleFileRef {
  std::string path;
  ReadLimit limit;  // names the config line that named the file
};

// The files `rules:` names: one path or a list of them.
std::vector<RuleFileRef> rule_files_of(const ConfigNode& rules_node) {
  std::vector<RuleFileRef> files;
  if (rules_node.is_scalar()) {
    files.push_back({rules_node.as_input_file("rule file"), rules_node.read_limit()});
  } else if (rules_node.is_sequence()) {
    for (const ConfigNode& item : rules_node.items())
      files.push_back({item.as_input_file("rule file"), item.read_limit()});
  }
  if (files.empty()) rules_node.fail("rules: expected a rule file path or a list of them");
  return files;
}

// The rule count is checked after each file: what one file can hold is already bounded by
// max_input_file_mb, and the first rule past max_rules still has its file and line.
RuleSet read_rule_set(const std::vector<RuleFileRef>& files, uint64_t max_rules,
                      const std::string& nf_name) {
  RuleSet set;
  for (const RuleFileRef& f : files) {
    add_rules_text(set, read_text_file(f.path, "rule file", f.limit), f.path);
    if (set.rules.size() > max_rules) {
      const Rule& extra = set.rules[max_rules];
      throw ConfigError(where(extra.file, extra.line),
                        "nids " + nf_name + ": more than " + std::to_string(max_rules) +
                            " rules loaded (the NF's max_rules)");
    }
  }
  return set;
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1 << 20));
  return text;
}

}  // namespace

Nids::Nids(std::string name, RuleSet rules, Options options)
    : NetworkFunction(std::move(name)),
      rules_(std::move(rules)),
      options_(std::move(options)),
      drop_(options_.action == Action::drop),
      matcher_(rules_.rules.empty()
                   ? throw std::invalid_argument("nids: no rule to load")
                   : std::span<const Rule>(rules_.rules),
               options_.max_automaton_bytes),
      counts_(kCollectShards) {
  for (CollectCounts& c : counts_) c.by_rule.assign(rules_.rules.size() + 1, 0);
  msg_json_.reserve(rules_.rules.size());
  for (const Rule& r : rules_.rules) msg_json_.push_back(json_quote(r.msg));
}

Nids::~Nids() = default;

std::unique_ptr<Nids> Nids::from_config(const ConfigNode& node) {
  node.only_keys({"name", "type", "rules", "action", "alerts", "max_rules", "max_automaton_mb"});
  std::string name = node.str("name");
  if (auto type = node.get("type"); type && type->as_string() != "nids")
    type->fail("expected type 'nids', got '" + type->as_string() + "'");

  ConfigNode rules_node = node["rules"];
  const std::vector<RuleFileRef> files = rule_files_of(rules_node);

  Options opt;
  opt.rule_files = files.size();
  std::string action = node.str_or("action", "alert");
  if (action == "drop")
    opt.action = Action::drop;
  else if (action != "alert")
    node["action"].fail("action: expected alert or drop, got '" + action + "'");
  if (node.has("alerts")) opt.alerts_path = node.path("alerts");
  opt.max_automaton_bytes =
      size_t(node.int_or("max_automaton_mb", kDefaultMaxAutomatonMb, 1, 1 << 20)) << 20;
  const uint64_t max_rules = uint64_t(node.int_or("max_rules", kDefaultMaxRules, 1, 1 << 30));

  RuleSet set = read_rule_set(files, max_rules, name);
  if (set.rules.empty()) {
    std::string why = std::to_string(set.stats.rule_lines) + " rule lines, " +
                      std::to_string(set.stats.skipped_total()) + " skipped";
    if (!set.skip_examples.empty()) why += "; first: " + set.skip_examples.front();
    rules_node.fail("nids " + name + ": no rule could be loaded (" + why + ")");
  }
  try {
    return std::make_unique<Nids>(name, std::move(set), std::move(opt));
  } catch (const std::length_error& e) {
    rules_node.fail("nids " + name + ": " + e.what());
  }
}

void Nids::prepare(Backend backend) {
  if (!options_.alerts_path.empty() && !log_) log_ = std::make_unique<AlertLog>(options_.alerts_path);
  if (backend == Backend::cpu) return;
#if GPUNFV_HAVE_CUDA
  prepare_gpu();
#else
  throw std::runtime_error("nids " + name() + ": this build has no GPU backend");
#endif
}

void Nids::process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const {
  NidsScratch scratch(matcher_.automaton().pattern_count());
  run_per_packet_cpu(b, begin, end, position, host_view(),
                     [&scratch](const NidsView& v, PacketRef p) {
                       return nids_packet_cpu(v, p, scratch);
                     });
}

uint32_t nids_alerting_packets(const BatchView& b, uint8_t position, uint32_t result_offset,
                               uint32_t begin, uint32_t end, uint32_t* out) {
  const CollectScan scan(b, result_offset, kNidsResultBytes);
  if (begin > end || end > scan.count()) iso_violation(end, scan.count());
  uint32_t n = 0;
  // Branch-free: ~40% of generator packets alert, at random, which a branch mispredicts.
  for (uint32_t i = begin; i < end; ++i) {
    out[n] = i;
    n += scan.reached(i, position) & (scan.word(i, 0) != 0);
  }
  return n;
}

uint32_t Nids::collect_shards() const { return options_.alerts_path.empty() ? kCollectShards : 1; }

void Nids::collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  collect_range(b, position, ctx, 0, b.count, 0);
}

void Nids::collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                         uint32_t begin, uint32_t end, uint32_t shard) {
  CollectCounts& c = counts_[shard];
  if (c.alerted.size() < end - begin) c.alerted.resize(end - begin);
  const uint32_t n = nids_alerting_packets(b, position, result_offset(), begin, end, c.alerted.data());
  const CollectScan scan(b, result_offset(), kNidsResultBytes);
  c.packets_alerted += n;
  if (log_)
    count_and_log(b, scan, c, n, ctx);
  else
    count(scan, c, n);
}

// Per alerting packet: its kept rules' counters. A rule index past the rules (which neither
// backend writes) lands in a last slot that is never reported, instead of a branch.
void Nids::count(const CollectScan& scan, CollectCounts& c, uint32_t n) {
  const uint32_t rules = uint32_t(rules_.rules.size());
  uint64_t* by_rule = c.by_rule.data();
  const uint64_t stray_before = by_rule[rules];
  uint64_t kept_total = 0, not_logged = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t i = c.alerted[j];
    const uint32_t fired = scan.word(i, 0);
    const uint32_t kept = fired < kNidsRulesPerPacket ? fired : kNidsRulesPerPacket;
    not_logged += fired - kept;
    kept_total += kept;
    for (uint32_t k = 0; k < kept; ++k) {
      const uint32_t rule = scan.word(i, 1 + k);
      ++by_rule[rule < rules ? rule : rules];
    }
  }
  c.alerts += kept_total - (by_rule[rules] - stray_before);
  c.not_logged += not_logged;
}

// With an alert log: one line per kept rule, in packet order then rule order.
void Nids::count_and_log(const BatchView& b, const CollectScan& scan, CollectCounts& c, uint32_t n,
                         const CollectContext& ctx) {
  const uint32_t rules = uint32_t(rules_.rules.size());
  AlertEvent e;
  e.blocked = drop_;
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t i = c.alerted[j];
    const uint32_t fired = scan.word(i, 0);
    const uint32_t kept = fired < kNidsRulesPerPacket ? fired : kNidsRulesPerPacket;
    c.not_logged += fired - kept;
    e.wire_ns = b.wire_ns[i];
    if (ctx.from_pcap) e.pcap_cnt = b.seq[i] + 1;
    e.frame = b.data.subspan(slot_offset(b, i), std::min<uint32_t>(b.len[i], b.stride));
    e.headers = b.headers[i];
    for (uint32_t k = 0; k < kept; ++k) {
      const uint32_t rule = scan.word(i, 1 + k);
      if (rule >= rules) continue;  // cannot happen: both backends write indices
      ++c.alerts;
      ++c.by_rule[rule];
      log_alert(e, rule);
    }
  }
}

void Nids::log_alert(AlertEvent& e, uint32_t rule) {
  const Rule& rr = rules_.rules[rule];
  e.gid = rr.gid;
  e.sid = rr.sid;
  e.rev = rr.rev;
  e.msg_json = msg_json_[rule];
  log_->write(e);
}

uint64_t Nids::summed(uint64_t CollectCounts::*counter) const {
  uint64_t n = 0;
  for (const CollectCounts& c : counts_) n += c.*counter;
  return n;
}
uint64_t Nids::alerts() const { return summed(&CollectCounts::alerts); }
uint64_t Nids::alerts_not_logged() const { return summed(&CollectCounts::not_logged); }
uint64_t Nids::packets_alerted() const { return summed(&CollectCounts::packets_alerted); }

void Nids::collect_per_packet(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  CollectCounts& c = counts_[0];
  for (uint32_t i = 0; i < b.count; ++i) {
    if (!reached_node(b, i, position)) continue;
    const NidsResult r = NidsResult::load(b.results.framework_data() +
                                          size_t(i) * b.result_stride + result_offset());
    if (r.fired == 0) continue;
    ++c.packets_alerted;
    c.not_logged += r.fired - r.kept();
    AlertEvent e;
    if (log_) {
      e.wire_ns = b.wire_ns[i];
      if (ctx.from_pcap) e.pcap_cnt = b.seq[i] + 1;
      e.frame = b.data.subspan(slot_offset(b, i), std::min<uint32_t>(b.len[i], b.stride));
      e.headers = b.headers[i];
      e.blocked = drop_;
    }
    for (uint32_t k = 0; k < r.kept(); ++k) {
      const uint32_t rule = r.rules[k];
      if (rule >= rules_.rules.size()) continue;  // cannot happen: both backends write indices
      ++c.alerts;
      ++c.by_rule[rule];
      if (!log_) continue;
      log_alert(e, rule);
    }
  }
}

bool Nids::collect_reads_frame(const BatchView& b, uint32_t i, uint8_t position) const {
  return NidsResult::load(b.results.framework_data() + size_t(i) * b.result_stride + result_offset()).fired != 0;
}

bool Nids::count_on_device() {
#if GPUNFV_HAVE_CUDA
  device_counting_ = options_.alerts_path.empty();
#endif
  return device_counting_;
}

void Nids::finish() {
  if (log_) log_->flush();
#if GPUNFV_HAVE_CUDA
  if (!device_counts_) return;
  const std::vector<uint64_t> taken = device_counts_->take();
  const size_t rules = rules_.rules.size();
  CollectCounts& c = counts_[0];
  for (size_t r = 0; r <= rules; ++r) c.by_rule[r] += taken[r];
  c.packets_alerted += taken[rules + 1];
  c.not_logged += taken[rules + 2];
  c.alerts += taken[rules + 3] - taken[rules];  // kept alerts less stray indices, as count()
#endif
}

void Nids::report(nlohmann::json& j) const {
  const RulesStats& st = rules_.stats;
  j["rules_loaded"] = st.loaded;
  nlohmann::json skipped = nlohmann::json::object();
  for (int i = 0; i < kRuleSkipCount; ++i)
    if (st.skipped[i]) skipped[std::string(rule_skip_name(RuleSkip(i)))] = st.skipped[i];
  skipped["total"] = st.skipped_total();
  j["rules_skipped"] = skipped;
  nlohmann::json unevaluated = nlohmann::json::object();
  for (int b = 0; b < kRuleFeatureCount; ++b)
    unevaluated[std::string(rule_feature_name(b))] = st.loaded_with[b];
  j["rules_not_evaluated"] = unevaluated;
  j["patterns"] = matcher_.patterns().size();
  j["dfa_states"] = matcher_.automaton().state_count();
  j["table_bytes"] = matcher_.table_bytes();
  j["alerts"] = alerts();
  j["alerts_not_logged"] = alerts_not_logged();
  j["packets_alerted"] = packets_alerted();

  // The sids with the most alerts (ties: lower sid first).
  std::vector<std::pair<uint64_t, uint32_t>> by_sid;  // (count, rule)
  for (uint32_t r = 0; r < rules_.rules.size(); ++r) {
    uint64_t n = 0;
    for (const CollectCounts& c : counts_) n += c.by_rule[r];
    if (n) by_sid.emplace_back(n, r);
  }
  std::sort(by_sid.begin(), by_sid.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return rules_.rules[a.second].sid < rules_.rules[b.second].sid;
  });
  nlohmann::json sids = nlohmann::json::object();
  for (size_t k = 0; k < by_sid.size() && k < kReportSids; ++k)
    sids[std::to_string(rules_.rules[by_sid[k].second].sid)] = by_sid[k].first;
  j["alerts_by_sid"] = sids;
  if (by_sid.size() > kReportSids) j["alerts_by_sid_omitted"] = by_sid.size() - kReportSids;
  if (log_) j["alert_log"] = log_->path();
}

std::string Nids::command(std::string_view cmd) const {
  if (cmd == "describe") return describe();
  if (cmd == "skipped") {
    std::string out = std::to_string(rules_.stats.skipped_total()) + " rule lines skipped";
    for (const std::string& e : rules_.skip_examples) out += "\n  " + e;
    return out;
  }
  if (cmd.substr(0, 4) == "sid ") {
    for (const Rule& r : rules_.rules)
      if (std::to_string(r.sid) == cmd.substr(4))
        return "sid " + std::to_string(r.sid) + " (" + r.file + ":" + std::to_string(r.line) +
               "): " + r.msg + ", " + std::to_string(r.contents.size()) + " contents";
    return std::string(cmd) + ": no such loaded rule";
  }
  return "unknown command '" + std::string(cmd) + "' (try: describe, skipped, sid N)";
}

std::string Nids::describe() const {
  const RulesStats& st = rules_.stats;
  std::string s = "nids " + name() + ": " + std::to_string(st.loaded) + " rules loaded from " +
                  std::to_string(options_.rule_files) + " file" +
                  (options_.rule_files == 1 ? "" : "s") + ", " +
                  std::to_string(st.skipped_total()) + " skipped";
  std::string reasons;
  for (int i = 0; i < kRuleSkipCount; ++i)
    if (st.skipped[i])
      reasons += (reasons.empty() ? "" : ", ") + std::string(rule_skip_name(RuleSkip(i))) + " " +
                 std::to_string(st.skipped[i]);
  if (!reasons.empty()) s += " (" + reasons + ")";
  s += "; not evaluated, rules with: position modifiers " +
       std::to_string(st.loaded_with[0]) + ", pcre " + std::to_string(st.loaded_with[1]) +
       ", buffers " + std::to_string(st.loaded_with[2]) + ", negated content " +
       std::to_string(st.loaded_with[3]) + ", other conditions " +
       std::to_string(st.loaded_with[4]);
  const AhoCorasick& ac = matcher_.automaton();
  s += "; " + std::to_string(ac.pattern_count()) + " patterns (longest " +
       std::to_string(ac.max_pattern_length()) + " B), DFA " + std::to_string(ac.state_count()) +
       " states, " + mib(matcher_.table_bytes()) + "; action " + (drop_ ? "drop" : "alert");
  if (!options_.alerts_path.empty()) s += ", alerts to " + options_.alerts_path;
  if (st.skipped[int(RuleSkip::bad_syntax)])
    for (const std::string& e : rules_.skip_examples)
      if (e.find(": bad_syntax") != std::string::npos) {
        s += "; first bad line: " + e;
        break;
      }
  return s;
}

}  // namespace gpunfv
