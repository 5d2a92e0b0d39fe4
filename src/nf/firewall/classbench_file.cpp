#include "nf/firewall/classbench_file.h"

#include <charconv>

#include "core/error.h"
#include "core/text_file.h"

namespace gpunfv {

namespace {

// Parses the whole text as an unsigned number in `base`.
std::optional<uint32_t> parse_in_base(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Hex with a 0x/0X prefix, decimal otherwise.
std::optional<uint32_t> parse_number(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return parse_in_base(s.substr(2), 16);
  return parse_in_base(s, 10);
}

// "value/mask", both numbers.
std::optional<std::pair<uint32_t, uint32_t>> parse_value_mask(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto value = parse_number(s.substr(0, slash));
  auto mask = parse_number(s.substr(slash + 1));
  if (!value || !mask) return std::nullopt;
  return std::make_pair(*value, *mask);
}

class LineParser {
 public:
  LineParser(const std::string& source, long line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(where(source_, line_), what);
  }

  ClassBenchRule parse(const std::vector<std::string_view>& f) {
    // Fields: src dst lo : hi lo : hi proto [flags] [action]  (':' split off by the caller).
    if (f.size() < 9)
      fail("expected '@src/len dst/len lo : hi lo : hi proto/mask [flags/mask] [accept|drop]', "
           "got " + std::to_string(f.size()) + " fields");
    ClassBenchRule r;
    r.file_line = line_;
    std::string_view src = f[0];
    if (src.front() == '@') src.remove_prefix(1);
    r.match.src = prefix(src, "source");
    r.match.dst = prefix(f[1], "destination");
    port_range(f[2], f[3], f[4], "source", r.match.src_port_lo, r.match.src_port_hi);
    port_range(f[5], f[6], f[7], "destination", r.match.dst_port_lo, r.match.dst_port_hi);
    protocol(f[8], r.match);
    size_t next = 9;
    if (next < f.size() && f[next].find('/') != std::string_view::npos) flags(f[next++]);
    if (next < f.size()) {
      r.action = parse_firewall_action(f[next]);
      if (!r.action)
        fail("unknown action '" + std::string(f[next]) + "' (expected accept or drop)");
      ++next;
    }
    if (next < f.size()) fail("unexpected '" + std::string(f[next]) + "' after the rule");
    return r;
  }

 private:
  Ipv4Prefix prefix(std::string_view text, const char* which) {
    if (auto p = parse_ipv4_prefix(text)) return *p;
    size_t slash = text.find('/');
    auto addr = slash == std::string_view::npos ? std::nullopt : parse_ipv4(text.substr(0, slash));
    auto len = slash == std::string_view::npos ? std::nullopt : parse_in_base(text.substr(slash + 1), 10);
    if (addr && len && *len <= 32) {
      uint32_t mask = *len == 0 ? 0 : ~uint32_t(0) << (32 - *len);
      fail(std::string(which) + " prefix '" + std::string(text) +
           "' has host bits set (did you mean " +
           format_prefix(Ipv4Prefix{*addr & mask, uint8_t(*len)}) + "?)");
    }
    if (addr && len) fail(std::string(which) + " prefix '" + std::string(text) +
                          "' has length " + std::to_string(*len) + ", above 32");
    fail("bad " + std::string(which) + " prefix '" + std::string(text) +
         "', expected a.b.c.d/len");
  }

  void port_range(std::string_view lo_s, std::string_view colon, std::string_view hi_s,
                  const char* which, uint16_t& lo, uint16_t& hi) {
    std::string text = std::string(lo_s) + " " + std::string(colon) + " " + std::string(hi_s);
    auto l = parse_number(lo_s), h = parse_number(hi_s);
    if (colon != ":" || !l || !h)
      fail("bad " + std::string(which) + " port range '" + text + "', expected lo : hi");
    if (*l > 65535 || *h > 65535)
      fail(std::string(which) + " port range '" + text + "' goes above 65535");
    if (*l > *h)
      fail(std::string(which) + " port range '" + text + "' has its low end above its high end");
    lo = uint16_t(*l);
    hi = uint16_t(*h);
  }

  void protocol(std::string_view text, FiveTupleRule& r) {
    auto vm = parse_value_mask(text);
    if (!vm || vm->first > 0xFF || vm->second > 0xFF)
      fail("bad protocol '" + std::string(text) + "', expected proto/mask such as 0x06/0xFF");
    if (vm->second == 0xFF) {
      r.proto = uint8_t(vm->first);
      r.any_proto = false;
    } else if (vm->second == 0x00) {
      r.proto = 0;
      r.any_proto = true;
    } else {
      fail("protocol mask in '" + std::string(text) +
           "' is not supported (0xFF: exactly this protocol, 0x00: any protocol)");
    }
  }

  void flags(std::string_view text) {
    auto vm = parse_value_mask(text);
    if (!vm || vm->first > 0xFFFF || vm->second > 0xFFFF)
      fail("bad TCP flags field '" + std::string(text) + "', expected flags/mask such as "
           "0x0000/0x0000");
  }

  const std::string& source_;
  long line_;
};

}  // namespace

std::optional<FirewallAction> parse_firewall_action(std::string_view word) {
  if (word == "accept") return FirewallAction::accept;
  if (word == "drop") return FirewallAction::drop;
  return std::nullopt;
}

std::string_view firewall_action_name(FirewallAction a) {
  return a == FirewallAction::drop ? "drop" : "accept";
}

std::vector<ClassBenchRule> parse_classbench(std::string_view text, const std::string& source,
                                             size_t max_rules) {
  std::vector<ClassBenchRule> rules;
  std::string spaced;
  for_each_line(text, [&](long line_no, std::string_view line) {
    // ClassBench writes port ranges as "lo : hi"; spacing out every ':' accepts "lo:hi" too.
    spaced.clear();
    for (char c : line) {
      if (c == ':') spaced += " : ";
      else spaced += c;
    }
    std::vector<std::string_view> fields = split_fields(spaced);
    if (fields.empty()) return;
    LineParser parser(source, line_no);
    if (rules.size() == max_rules)
      parser.fail("more than " + std::to_string(max_rules) + " rules (the firewall's max_rules" +
                  (max_rules == kMaxFirewallRules ? ", at its highest" : "") + ")");
    rules.push_back(parser.parse(fields));
  });
  return rules;
}

std::vector<ClassBenchRule> read_classbench_file(const std::string& path, const ReadLimit& limit,
                                                 size_t max_rules) {
  return parse_classbench(read_text_file(path, "rule file", limit), path, max_rules);
}

std::vector<FiveTupleRule> match_parts(const std::vector<ClassBenchRule>& rules) {
  std::vector<FiveTupleRule> out;
  out.reserve(rules.size());
  for (const ClassBenchRule& r : rules) out.push_back(r.match);
  return out;
}

}  // namespace gpunfv
