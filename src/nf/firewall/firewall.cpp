#include "nf/firewall/firewall.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "nf/collect_scan.h"
#include "nf/nf_registry.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

namespace {

std::vector<uint8_t> drops_of(const std::vector<ClassBenchRule>& rules, FirewallAction dflt) {
  std::vector<uint8_t> out;
  out.reserve(rules.size());
  for (const ClassBenchRule& r : rules)
    out.push_back(r.action.value_or(dflt) == FirewallAction::drop ? 1 : 0);
  return out;
}

std::vector<long> lines_of(const std::vector<ClassBenchRule>& rules) {
  std::vector<long> out;
  out.reserve(rules.size());
  for (const ClassBenchRule& r : rules) out.push_back(r.file_line);
  return out;
}

FirewallAction action_setting(const ConfigNode& node, const std::string& key,
                              FirewallAction dflt) {
  auto n = node.get(key);
  if (!n) return dflt;
  std::string word = n->as_string();
  auto a = parse_firewall_action(word);
  if (!a) n->fail(key + ": unknown action '" + word + "' (expected accept or drop)");
  return *a;
}

}  // namespace

FirewallTables::FirewallTables(std::vector<ClassBenchRule> r, FirewallAction rule_action, std::string f)
    : rules(match_parts(r)), lines(lines_of(r)), drops(drops_of(r, rule_action)), file(std::move(f)),
      classifier(rules) {}

Firewall::Firewall(std::string name, std::vector<ClassBenchRule> rules, FirewallAction rule_action,
                   FirewallAction no_match_action, std::string rules_file, size_t max_rules)
    : NetworkFunction(std::move(name)),
      tables_(std::make_shared<const FirewallTables>(std::move(rules), rule_action, rules_file),
              0),
      rule_action_(rule_action),
      no_match_action_(no_match_action),
      max_rules_(std::max(max_rules, tables_.pin()->rules.size())),
      config_file_(std::move(rules_file)),
      counts_(kCollectShards, kFirstRuleSlot + max_rules_) {}

uint64_t Firewall::replace_rules(const std::string& file, const ReadLimit& limit, std::string what) {
  std::vector<ClassBenchRule> rules = read_classbench_file(file, limit, max_rules_);
  auto next = std::make_shared<FirewallTables>(std::move(rules), rule_action_, file);
#if GPUNFV_HAVE_CUDA
  if (backend_ == Backend::gpu) next->upload();
#endif
  const size_t n = next->rules.size();
  auto old = tables_.publish(std::move(next), what.empty() ? "firewall replace " + file : what, n);
#if GPUNFV_HAVE_CUDA
  retire(std::move(old));
#endif
  return tables_.version();
}

std::unique_ptr<Firewall> Firewall::from_config(const ConfigNode& node) {
  node.only_keys({"name", "type", "rules", "action", "default", "max_rules"});
  std::string name = node.str("name");
  if (auto type = node.get("type"); type && type->as_string() != "firewall")
    type->fail("expected type 'firewall', got '" + type->as_string() + "'");
  FirewallAction rule_action = action_setting(node, "action", FirewallAction::drop);
  FirewallAction no_match = action_setting(node, "default", FirewallAction::accept);
  const size_t max_rules =
      size_t(node.int_or("max_rules", kMaxFirewallRules, 1, int64_t(kMaxFirewallRules)));
  std::string file = node.input_file("rules", "rule file");
  std::vector<ClassBenchRule> rules = read_classbench_file(file, node["rules"].read_limit(), max_rules);
  try {
    return std::make_unique<Firewall>(name, std::move(rules), rule_action, no_match, file, max_rules);
  } catch (const std::length_error& e) {
    node["rules"].fail("firewall " + name + ": " + e.what());
  }
}

FirewallView Firewall::view_of(const FirewallTables& t) const {
  return FirewallView{t.classifier.ref(), IsoSpan<const uint8_t>(t.drops.data(), t.drops.size()),
                      result_offset(), no_match_action_ == FirewallAction::drop};
}

void Firewall::prepare(Backend backend) {
  backend_ = backend;
  if (backend == Backend::cpu) return;
#if GPUNFV_HAVE_CUDA
  const_cast<FirewallTables&>(*tables_.pin().tables).upload();
  if (device_counting_) device_counts_ = std::make_unique<DeviceCounters>(counts_.slots());
#else
  throw std::runtime_error("firewall " + name() + ": this build has no GPU backend");
#endif
}

void Firewall::process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const {
  // One rule set for the whole batch, held until it is classified.
  const auto t = tables_.pin();
  t.count(run_per_packet_cpu(b, begin, end, position, view_of(*t), FirewallLogic{}, slot(first_drop_code<FirewallDrop>())));
}

void Firewall::collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  collect_range(b, position, ctx, 0, b.count, 0);
}

void Firewall::collect_range(const BatchView& b, uint8_t position, const CollectContext&,
                             uint32_t begin, uint32_t end, uint32_t shard) {
  const CollectScan scan(b, result_offset(), kFirewallResultBytes);
  if (begin > end || end > scan.count()) iso_violation(end, scan.count());
  // One counter per result word: rules, then no match, then not IPv4.
  const uint32_t rules = uint32_t(counts_.slots() - kFirstRuleSlot);
  counts_.count_packets(shard, begin, end, [&](uint32_t i) {
    const uint32_t rule = scan.word(i, 0);
    const uint32_t slot = rule < rules ? kFirstRuleSlot + rule : rule == kNoRule ? kNoMatchSlot : kNotIpv4Slot;
    return PacketCount{slot, scan.reached(i, position)};
  });
}

bool Firewall::count_on_device() {
#if GPUNFV_HAVE_CUDA
  device_counting_ = true;
#endif
  return device_counting_;
}

void Firewall::finish() {
#if GPUNFV_HAVE_CUDA
  if (device_counts_) counts_.add(device_counts_->take());
  // The run is over: every launch is complete.
  device_users_.clear();
  const auto live = tables_.pin();
  live->device_packets.take(live.packets);
#endif
}

std::vector<uint64_t> Firewall::rule_hits() const {
  // Up to the highest rule index any version matched, at least the live rule count.
  size_t n = rule_count();
  for (size_t r = n; r < max_rules_; ++r)
    if (counted(kFirstRuleSlot + r)) n = r + 1;
  std::vector<uint64_t> hits(n);
  for (size_t r = 0; r < hits.size(); ++r) hits[r] = counted(kFirstRuleSlot + r);
  return hits;
}

void Firewall::collect_per_packet(const BatchView& b, uint8_t position) {
  for (uint32_t i = 0; i < b.count; ++i) {
    if (!reached_node(b, i, position)) continue;
    IsoSpan<uint8_t> r = PacketReader(b, i, slot(first_drop_code<FirewallDrop>())).results();
    const uint32_t rule = uint32_t(r[0]) | (uint32_t(r[1]) << 8) | (uint32_t(r[2]) << 16) |
                          (uint32_t(r[3]) << 24);
    uint64_t* counts = counts_.shard(0);
    if (rule < max_rules_)
      ++counts[kFirstRuleSlot + rule];
    else if (rule == kNoRule)
      ++counts[kNoMatchSlot];
    else
      ++counts[kNotIpv4Slot];
  }
}

void Firewall::report(nlohmann::json& j) const {
  nlohmann::json hits = nlohmann::json::object();
  const std::vector<uint64_t> rule_hit_counts = rule_hits();
  for (size_t i = 0; i < rule_hit_counts.size(); ++i)
    if (rule_hit_counts[i] != 0) hits[std::to_string(i)] = rule_hit_counts[i];
  j["rules"] = rule_count();
  j["rule_hits"] = std::move(hits);
  j["no_match"] = no_match();
  j["not_ipv4"] = not_ipv4();
  j["table_version"] = tables_.version();
  j["table_versions"] = tables_.log().json();
}

std::string Firewall::command(std::string_view cmd) const {
  constexpr std::string_view kMatch = "match ";
  if (cmd.substr(0, kMatch.size()) != kMatch) {
    if (cmd == "describe") return describe();
    return "unknown command '" + std::string(cmd) +
           "' (try: describe, match SRC DST PROTO SPORT DPORT)";
  }
  const char* usage = "usage: match SRC DST PROTO SPORT DPORT (e.g. match 10.0.0.1 10.0.0.2 6 1234 80)";
  std::vector<std::string_view> words;
  std::string_view rest = cmd.substr(kMatch.size());
  while (!rest.empty()) {
    size_t sp = rest.find(' ');
    if (sp != 0) words.push_back(rest.substr(0, sp));
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
  }
  if (words.size() != 5) return usage;
  auto number = [](std::string_view s, uint32_t max) -> std::optional<uint32_t> {
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v > max) return std::nullopt;
    return v;
  };
  auto src = parse_ipv4(words[0]), dst = parse_ipv4(words[1]);
  auto proto = number(words[2], 255), sport = number(words[3], 65535), dport = number(words[4], 65535);
  if (!src || !dst || !proto || !sport || !dport) return usage;
  FiveTuple t{*src, *dst, uint16_t(*sport), uint16_t(*dport), uint8_t(*proto)};
  const auto tables = tables_.pin();
  uint32_t rule = tables->classifier.ref().classify(t);
  if (rule == kNoRule)
    return "no rule matches: " + std::string(firewall_action_name(no_match_action_)) + " (default)";
  const std::string line = std::to_string(tables->lines[rule]);
  return "rule " + std::to_string(rule) + " (" +
         (tables->file.empty() ? "line " + line : tables->file + ":" + line) + "): " +
         std::string(firewall_action_name(tables->drops[rule] ? FirewallAction::drop : FirewallAction::accept));
}

std::string Firewall::describe() const {
  const auto tables = tables_.pin();
  const BitVectorClassifier& classifier_ = tables->classifier;
  size_t drops = 0;
  for (uint8_t d : tables->drops) drops += d;
  return "firewall " + name() + ": " + std::to_string(tables->rules.size()) + " rules (" +
         std::to_string(drops) + " drop, " + std::to_string(tables->rules.size() - drops) +
         " accept), no match: " + std::string(firewall_action_name(no_match_action_)) + "; " +
         std::to_string(classifier_.vector_count()) + " distinct bit vectors of " +
         std::to_string(classifier_.vector_bytes()) + " B, tables " +
         std::to_string((classifier_.table_bytes() + 1023) / 1024) + " KiB";
}

GPUNFV_REGISTER_NF("firewall", Firewall);

}  // namespace gpunfv
