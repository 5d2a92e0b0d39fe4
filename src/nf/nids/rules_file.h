// Snort/Suricata rule files (Emerging Threats, Snort community), reduced to what the NIDS
// evaluates: a rule's `content:` strings, each exact or `nocase`. A loaded rule fires on a
// packet when every one of its (not negated) contents occurs anywhere in the payload.
//
//   alert http $HOME_NET any -> $EXTERNAL_NET any (msg:"ET ..."; flow:established,to_server;
//     http.uri; content:"/gate.php"; nocase; content:"|0d 0a|id="; distance:0; sid:2012345; rev:2;)
//
// Syntax, as Suricata parses it: options end at an unescaped ';' (quotes do not protect one,
// which is why rules write `\;`); in a quoted string `\"`, `\;`, `\:` and `\\` stand for the
// character after the backslash, `|41 42|` are hex bytes. A line ending in '\' continues on the
// next. Lines starting with '#' are comments; a commented-out rule ("# alert ...") is counted
// (it is how ET disables rules) but not loaded.
//
// Loaded: `alert` rules with at least one content that is not negated. Everything else a rule
// says is NOT evaluated, and counted per loaded rule (RuleFeature), so the startup line can say
// how far the rule set is approximated:
//   - the header (protocol, addresses, ports, direction)
//   - position modifiers (offset, depth, distance, within, startswith, endswith)
//   - pcre
//   - buffers and transforms (http.uri, http_header, uricontent, dns.query, file.data, ...):
//     their contents are searched in the whole payload instead
//   - negated contents (content:!"..."): ignored; the rule's other contents decide
//   - other conditions (flow, flowbits, byte_test, dsize, threshold, ...)
// Skipped, and counted by reason (RuleSkip): other actions (drop, pass, reject: a `drop` rule
// only makes sense with the NF's own `action: drop`), no content, only negated contents,
// `noalert` rules (noalert; or flowbits:noalert: they set flowbits for other rules), a repeated
// (gid, sid), and lines that do not parse (the first few kept as "file:line: reason").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpunfv {

#define GPUNFV_RULE_SKIPS(X)                                      \
  X(not_alert, "action other than alert")                         \
  X(no_content, "no content: option")                             \
  X(only_negated_content, "only negated content: options")        \
  X(noalert, "noalert rule (sets flowbits only)")                 \
  X(duplicate_sid, "gid:sid already loaded")                      \
  X(bad_syntax, "line does not parse as a rule")

enum class RuleSkip : uint8_t {
#define GPUNFV_X(id, desc) id,
  GPUNFV_RULE_SKIPS(GPUNFV_X)
#undef GPUNFV_X
      count_
};
inline constexpr int kRuleSkipCount = int(RuleSkip::count_);
std::string_view rule_skip_name(RuleSkip r);

// What a loaded rule has that the NIDS does not evaluate (bits of Rule::unevaluated).
enum RuleFeature : uint8_t {
  kPositionModifiers = 1,
  kPcre = 2,
  kBuffers = 4,
  kNegatedContent = 8,
  kOtherConditions = 16,
};
inline constexpr int kRuleFeatureCount = 5;
std::string_view rule_feature_name(int bit_index);  // "position_modifiers", ...

struct RuleContent {
  std::string bytes;
  bool nocase = false;
  bool negated = false;
  bool fast_pattern = false;  // `fast_pattern;` (any arguments): the rule's prefilter string
};

struct Rule {
  std::string action;  // first header word: alert, drop, ...
  std::string proto;   // second header word: tcp, http, dns, ...
  uint32_t gid = 1, sid = 0, rev = 0;
  std::string msg;     // unescaped
  std::string classtype;
  std::vector<RuleContent> contents;  // in rule order, negated ones included
  uint8_t unevaluated = 0;            // RuleFeature bits
  bool noalert = false;
  std::string file;  // where it came from, for messages
  long line = 0;
};

// Parses one rule (the text of a line, without a leading '#'). On a syntax error returns
// nullopt with the reason in `error`.
std::optional<Rule> parse_rule(std::string_view text, std::string& error);

// Decodes a content string's value (what follows `content:`, e.g. `!"a|0d 0a|b\;"`) into
// bytes; nullopt with the reason in `error` if malformed. Exposed for tests.
std::optional<RuleContent> parse_content_value(std::string_view value, std::string& error);

struct RulesStats {
  uint64_t rule_lines = 0;       // active (not commented-out) rule lines
  uint64_t commented_rules = 0;  // "# alert ..." and the like
  // content:/uricontent: options that are not negated, in active and commented-out rules
  // (what a rule-set inventory counts), and negated ones.
  uint64_t content_options = 0;
  uint64_t negated_content_options = 0;
  uint64_t loaded = 0;
  std::array<uint64_t, kRuleSkipCount> skipped{};
  std::array<uint64_t, kRuleFeatureCount> loaded_with{};  // loaded rules having each feature
  uint64_t skipped_total() const;
  RulesStats& operator+=(const RulesStats& o);
};

struct RuleSet {
  std::vector<Rule> rules;  // loaded rules, in file order, files in the order given
  RulesStats stats;
  std::vector<std::string> skip_examples;  // "file:line: reason" for the first few bad lines
};

// Reads rule files (each plain or gzipped) into one set; sids must be unique across them.
// Throws ConfigError only for a file that cannot be read: bad rule lines are skipped.
RuleSet read_rules_files(const std::vector<std::string>& paths);
// The same over rule text; `source` names it in skip examples.
void add_rules_text(RuleSet& set, std::string_view text, const std::string& source);

}  // namespace gpunfv
