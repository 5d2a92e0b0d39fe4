#include "nf/nids/nids.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.h"
#include "core/text_file.h"
#include "nf/collect_scan.h"
#include "nf/nf_registry.h"
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

NidsTables::NidsTables(RuleSet r, size_t max_automaton_bytes, uint32_t base,
                       std::vector<std::string> f)
    : rules(std::move(r)),
      matcher(rules.rules.empty() ? throw std::invalid_argument("nids: no rule to load")
                                  : std::span<const Rule>(rules.rules),
              max_automaton_bytes),
      rule_base(base),
      files(std::move(f)) {}

Nids::Nids(std::string name, RuleSet rules, Options options)
    : NetworkFunction(std::move(name)),
      options_(std::move(options)),
      drop_(options_.action == Action::drop),
      tables_(std::make_shared<const NidsTables>(std::move(rules), options_.max_automaton_bytes, 0,
                                                 options_.rule_paths),
              0),
      counts_(kCollectShards) {
  add_to_catalog(current().rules);
  for (CollectCounts& c : counts_) fit(c, current().rules.rules.size());
}

std::shared_ptr<const Nids::Catalog> Nids::catalog() const {
  std::lock_guard<std::mutex> lk(catalog_m_);
  return catalog_;
}

void Nids::add_to_catalog(const RuleSet& rules) {
  auto next = std::make_shared<Catalog>();
  if (auto old = catalog()) *next = *old;
  next->reserve(next->size() + rules.rules.size());
  for (const Rule& r : rules.rules) next->push_back({r.gid, r.sid, r.rev, json_quote(r.msg)});
  std::lock_guard<std::mutex> lk(catalog_m_);
  catalog_ = std::move(next);
}

void Nids::fit(CollectCounts& c, size_t rules) {
  if (c.by_rule.size() >= rules + 1) return;
  const uint64_t stray = c.by_rule.empty() ? 0 : c.by_rule.back();
  if (!c.by_rule.empty()) c.by_rule.back() = 0;
  c.by_rule.resize(rules + 1, 0);
  c.by_rule.back() = stray;
}

uint64_t Nids::replace_rules(const std::vector<std::string>& files, const ReadLimit& limit,
                             std::string what) {
  if (files.empty()) throw ConfigError("", "nids " + name() + ": no rule file given");
  std::vector<RuleFileRef> refs;
  for (const std::string& f : files) refs.push_back({f, limit});
  RuleSet set = read_rule_set(refs, options_.max_rules, name());
  // At start a bad line is skipped and counted; a replacement with one is refused, so an
  // operator's typo never silently drops a rule from the live set.
  if (set.stats.skipped[int(RuleSkip::bad_syntax)])
    for (const std::string& e : set.skip_examples)
      if (e.find(": bad_syntax") != std::string::npos) throw ConfigError("", e);
  if (set.rules.empty())
    throw ConfigError("", "nids " + name() + ": no rule could be loaded from " +
                              std::to_string(files.size()) + " file(s) (" +
                              std::to_string(set.stats.rule_lines) + " rule lines, " +
                              std::to_string(set.stats.skipped_total()) + " skipped)");
  const size_t total = catalog()->size();
  if (total + set.rules.size() >= kNidsNoRule)
    throw ConfigError("", "nids " + name() + ": too many rules loaded over the run");
  std::shared_ptr<NidsTables> next;
  try {
    next = std::make_shared<NidsTables>(std::move(set), options_.max_automaton_bytes,
                                        uint32_t(total), files);
#if GPUNFV_HAVE_CUDA
    if (backend_ == Backend::gpu) upload(*next);
#endif
  } catch (const std::length_error& e) {
    throw ConfigError("", "nids " + name() + ": " + e.what());
  }
  add_to_catalog(next->rules);
  std::string change = what;
  if (change.empty()) {
    change = "nids replace";
    for (const std::string& f : files) change += " " + f;
  }
  const size_t n = next->rules.rules.size();
  auto old = tables_.publish(std::move(next), change, n);
#if GPUNFV_HAVE_CUDA
  // The old version's launches are done before its device memory goes.
  device_users_.wait(old.version);
  old.tables->device_packets.take(old.packets);
#endif
  return tables_.version();
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
  opt.max_rules = max_rules;
  for (const RuleFileRef& f : files) opt.rule_paths.push_back(f.path);

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
  backend_ = backend;
  if (backend == Backend::cpu) return;
#if GPUNFV_HAVE_CUDA
  upload(const_cast<NidsTables&>(current()));
#else
  throw std::runtime_error("nids " + name() + ": this build has no GPU backend");
#endif
}

void Nids::process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const {
  // One rule set for the whole batch, held until it is scanned.
  const auto t = tables_.pin();
  NidsScratch scratch(t->matcher.automaton().pattern_count());
  t.count(run_per_packet_cpu(b, begin, end, position, view_of(*t),
                             [&scratch](const NidsView& v, PacketReader p) {
                               return nids_packet_cpu(v, p, scratch);
                             },
                             NfSlot(first_drop_code<NidsDrop>(), result_offset(), kNidsResultBytes)));
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
  // Taken after the batch was scanned: it holds every rule index the batch can name.
  const std::shared_ptr<const Catalog> catalog = this->catalog();
  fit(c, catalog->size());
  if (c.alerted.size() < end - begin) c.alerted.resize(end - begin);
  const uint32_t n = nids_alerting_packets(b, position, result_offset(), begin, end, c.alerted.data());
  const CollectScan scan(b, result_offset(), kNidsResultBytes);
  c.packets_alerted += n;
  if (log_)
    count_and_log(b, scan, c, n, ctx, *catalog);
  else
    count(scan, c, n);
}

// Per alerting packet: its kept rules' counters. A rule index past the rules (which neither
// backend writes) lands in a last slot that is never reported, instead of a branch.
void Nids::count(const CollectScan& scan, CollectCounts& c, uint32_t n) {
  const uint32_t rules = uint32_t(c.by_rule.size() - 1);
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
                         const CollectContext& ctx, const Catalog& catalog) {
  const uint32_t rules = uint32_t(catalog.size());
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
      log_alert(e, catalog[rule]);
    }
  }
}

void Nids::log_alert(AlertEvent& e, const NidsRuleInfo& rule) {
  e.gid = rule.gid;
  e.sid = rule.sid;
  e.rev = rule.rev;
  e.msg_json = rule.msg_json;
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
  const std::shared_ptr<const Catalog> catalog = this->catalog();
  fit(c, catalog->size());
  const CollectScan scan(b, result_offset(), kNidsResultBytes);
  for (uint32_t i = 0; i < b.count; ++i) {
    if (!scan.reached(i, position)) continue;
    const NidsResult r = NidsResult::load(scan.slice(i));
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
      if (rule >= catalog->size()) continue;  // cannot happen: both backends write indices
      ++c.alerts;
      ++c.by_rule[rule];
      if (!log_) continue;
      log_alert(e, (*catalog)[rule]);
    }
  }
}

bool Nids::collect_reads_frame(const BatchView& b, uint32_t i, uint8_t position) const {
  return NidsResult::load(CollectScan(b, result_offset(), kNidsResultBytes).slice(i)).fired != 0;
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
  device_users_.clear();
  const auto live = tables_.pin();
  live->device_packets.take(live.packets);
  std::lock_guard<std::mutex> lk(device_counts_m_);
  CollectCounts& c = counts_[0];
  fit(c, catalog()->size());
  for (auto& [base, counters] : device_counts_) {
    const std::vector<uint64_t> taken = counters->take();
    const size_t rules = taken.size() - 4;
    for (size_t r = 0; r < rules; ++r) c.by_rule[base + r] += taken[r];
    c.by_rule.back() += taken[rules];
    c.packets_alerted += taken[rules + 1];
    c.not_logged += taken[rules + 2];
    c.alerts += taken[rules + 3] - taken[rules];  // kept alerts less stray indices, as count()
  }
#endif
}

void Nids::report(nlohmann::json& j) const {
  const auto t = tables_.pin();
  const RulesStats& st = t->rules.stats;
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
  j["patterns"] = t->matcher.patterns().size();
  j["dfa_states"] = t->matcher.automaton().state_count();
  j["table_bytes"] = t->matcher.table_bytes();
  j["alerts"] = alerts();
  j["alerts_not_logged"] = alerts_not_logged();
  j["packets_alerted"] = packets_alerted();

  j["table_version"] = tables_.version();
  j["table_versions"] = tables_.log().json();

  // The sids with the most alerts (ties: lower sid first), over every version's rules.
  const std::shared_ptr<const Catalog> catalog = this->catalog();
  std::map<uint32_t, uint64_t> per_sid;
  for (uint32_t r = 0; r < catalog->size(); ++r) {
    uint64_t n = 0;
    for (const CollectCounts& c : counts_) n += r + 1 < c.by_rule.size() ? c.by_rule[r] : 0;
    if (n) per_sid[(*catalog)[r].sid] += n;
  }
  std::vector<std::pair<uint64_t, uint32_t>> by_sid;  // (count, sid)
  for (const auto& [sid, n] : per_sid) by_sid.emplace_back(n, sid);
  std::sort(by_sid.begin(), by_sid.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  });
  nlohmann::json sids = nlohmann::json::object();
  for (size_t k = 0; k < by_sid.size() && k < kReportSids; ++k)
    sids[std::to_string(by_sid[k].second)] = by_sid[k].first;
  j["alerts_by_sid"] = sids;
  if (by_sid.size() > kReportSids) j["alerts_by_sid_omitted"] = by_sid.size() - kReportSids;
  if (log_) j["alert_log"] = log_->path();
}

std::string Nids::command(std::string_view cmd) const {
  if (cmd == "describe") return describe();
  const auto t = tables_.pin();
  const RuleSet& set = t->rules;
  if (cmd == "skipped") {
    std::string out = std::to_string(set.stats.skipped_total()) + " rule lines skipped";
    for (const std::string& e : set.skip_examples) out += "\n  " + e;
    return out;
  }
  if (cmd.substr(0, 4) == "sid ") {
    for (const Rule& r : set.rules)
      if (std::to_string(r.sid) == cmd.substr(4))
        return "sid " + std::to_string(r.sid) + " (" + r.file + ":" + std::to_string(r.line) +
               "): " + r.msg + ", " + std::to_string(r.contents.size()) + " contents";
    return std::string(cmd) + ": no such loaded rule";
  }
  return "unknown command '" + std::string(cmd) + "' (try: describe, skipped, sid N)";
}

std::string Nids::describe() const {
  const auto t = tables_.pin();
  const RuleSet& set = t->rules;
  const RuleMatcher& m = t->matcher;
  const size_t files = t->files.empty() ? options_.rule_files : t->files.size();
  const RulesStats& st = set.stats;
  std::string s = "nids " + name() + ": " + std::to_string(st.loaded) + " rules loaded from " +
                  std::to_string(files) + " file" + (files == 1 ? "" : "s") + ", " +
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
  const AhoCorasick& ac = m.automaton();
  s += "; " + std::to_string(ac.pattern_count()) + " patterns (longest " +
       std::to_string(ac.max_pattern_length()) + " B), DFA " + std::to_string(ac.state_count()) +
       " states, " + mib(m.table_bytes()) + "; action " + (drop_ ? "drop" : "alert");
  if (!options_.alerts_path.empty()) s += ", alerts to " + options_.alerts_path;
  if (st.skipped[int(RuleSkip::bad_syntax)])
    for (const std::string& e : set.skip_examples)
      if (e.find(": bad_syntax") != std::string::npos) {
        s += "; first bad line: " + e;
        break;
      }
  return s;
}

GPUNFV_REGISTER_NF("nids", Nids);

}  // namespace gpunfv
