// Firewall rule files in ClassBench format (Taylor & Turner's filter sets), one rule per line,
// fields separated by tabs or spaces:
//
//   @srcIP/len  dstIP/len  sportLo : sportHi  dportLo : dportHi  proto/mask  [flags/mask]  [action]
//   @10.0.0.0/8 0.0.0.0/0  0 : 65535          80 : 80            0x06/0xFF   0x0000/0x0000 drop
//
// - Prefixes must have their host bits zero (a set host bit is almost always a typo).
// - proto/mask: mask 0xFF matches exactly that protocol, mask 0x00 any protocol; other masks are
//   rejected (no ClassBench seed produces them). Numbers are hex with 0x, or decimal.
// - flags/mask is ClassBench's TCP-flags field: checked for form, then ignored (the firewall
//   classifies on the 5-tuple, as G-NET's and rte_acl's 5-tuple classifiers do).
// - The optional last word is the rule's action, `accept` or `drop`; a rule without one takes
//   the firewall's `action:` setting.
// - Rule index: the rule's position among the file's rule lines, from 0. Blank lines and '#'
//   comment lines are not rules and are not counted, so in a plain ClassBench file (every line a
//   rule) the index is the 0-based line number, as in ClassBench traces' rule column. The first
//   rule has the highest priority: the first rule that matches wins.
//
// The file may be gzipped (read through zlib). Every error is a ConfigError "file:line: what",
// the line being the 1-based physical line. At most `max_rules` rules (the firewall's
// max_rules:, kMaxFirewallRules at most).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_file.h"
#include "nf/firewall/five_tuple.h"

namespace gpunfv {

// Bit vectors grow with the rule count (N bits per elementary interval, up to 2N+1 intervals per
// field): 64Ki rules keeps a worst-case table within a GPU's memory and rule indices in 16 bits.
inline constexpr size_t kMaxFirewallRules = 65536;

enum class FirewallAction : uint8_t { accept, drop };

std::optional<FirewallAction> parse_firewall_action(std::string_view word);
std::string_view firewall_action_name(FirewallAction a);

struct ClassBenchRule {
  FiveTupleRule match;
  std::optional<FirewallAction> action;  // none: the firewall's `action:` applies
  long file_line = 0;                    // 1-based physical line, for messages
};

// Reads a rule file (plain or gzipped), at most limit.max_bytes of it (core/text_file.h).
// Throws ConfigError.
std::vector<ClassBenchRule> read_classbench_file(const std::string& path, const ReadLimit& limit = {},
                                                 size_t max_rules = kMaxFirewallRules);

// Parses rule text; `source` names it in errors (normally the file path). A rule past the
// first `max_rules` is an error at its line.
std::vector<ClassBenchRule> parse_classbench(std::string_view text, const std::string& source,
                                             size_t max_rules = kMaxFirewallRules);

// The rules' match parts, in order (what classifiers are built from).
std::vector<FiveTupleRule> match_parts(const std::vector<ClassBenchRule>& rules);

}  // namespace gpunfv
