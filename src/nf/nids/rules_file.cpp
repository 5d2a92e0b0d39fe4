#include "nf/nids/rules_file.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "core/text_file.h"

namespace gpunfv {

namespace {

constexpr size_t kMaxSkipExamples = 8;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_action(std::string_view w) {
  static constexpr std::string_view kActions[] = {
      "alert", "drop", "pass", "reject", "rejectsrc", "rejectdst", "rejectboth",
      "log", "sdrop", "activate", "dynamic"};
  return std::find(std::begin(kActions), std::end(kActions), w) != std::end(kActions);
}

// The first whitespace-separated word of `s`.
std::string_view first_word(std::string_view s) {
  size_t end = 0;
  while (end < s.size() && !is_space(s[end])) ++end;
  return s.substr(0, end);
}

// Text after '#' that reads as a rule: "# alert tcp ... (...)".
bool looks_like_rule(std::string_view s) {
  std::string_view w = first_word(s);
  return is_action(w) && w.size() < s.size() && s.find('(') != std::string_view::npos;
}

std::optional<uint32_t> parse_u32(std::string_view s) {
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// A quoted option value (msg) with its backslash escapes removed.
std::optional<std::string> unquote(std::string_view v) {
  v = trim(v);
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::nullopt;
  v = v.substr(1, v.size() - 2);
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    out.push_back(v[i]);
  }
  return out;
}

// Keywords that only describe the rule, or change nothing about matching raw payload bytes
// (rawbytes and pkt_data select the raw payload).
bool is_neutral(std::string_view k) {
  static constexpr std::string_view kNeutral[] = {
      "msg", "reference", "metadata", "classtype", "sid", "rev", "gid", "priority", "target",
      "rawbytes", "pkt_data", "tag"};
  return std::find(std::begin(kNeutral), std::end(kNeutral), k) != std::end(kNeutral);
}

bool is_position_modifier(std::string_view k) {
  static constexpr std::string_view kPosition[] = {"offset", "depth", "distance", "within",
                                                   "startswith", "endswith"};
  return std::find(std::begin(kPosition), std::end(kPosition), k) != std::end(kPosition);
}

// Sticky buffers (http.uri; ...), Snort's buffer modifiers (http_uri, ...) and transforms
// (dotprefix, to_lowercase, ...): they say which bytes a content is searched in.
bool is_buffer_or_transform(std::string_view k) {
  static constexpr std::string_view kNames[] = {
      "file_data", "dns_query", "tls_sni", "tls_cert_issuer", "tls_cert_subject",
      "tls_cert_serial", "tls_cert_fingerprint", "ja3_hash", "ja3_string", "ja3s_hash",
      "ja3s_string", "ssh_proto", "ssh_software", "base64_data", "dotprefix", "to_lowercase",
      "to_uppercase", "strip_whitespace", "compress_whitespace", "url_decode", "to_md5",
      "to_sha1", "to_sha256", "pcrexform", "xor", "header_lowercase", "strip_pseudo_headers",
      "uricontent"};
  if (k.find('.') != std::string_view::npos) return true;
  if (k.substr(0, 5) == "http_") return true;
  return std::find(std::begin(kNames), std::end(kNames), k) != std::end(kNames);
}

// Splits "key:value" options at unescaped ';' (as Suricata does: quotes do not protect one).
void split_options(std::string_view body, std::vector<std::string_view>& out) {
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\') {
      ++i;
      continue;
    }
    if (body[i] == ';') {
      std::string_view opt = trim(body.substr(start, i - start));
      if (!opt.empty()) out.push_back(opt);
      start = i + 1;
    }
  }
  std::string_view rest = trim(body.substr(std::min(start, body.size())));
  if (!rest.empty()) out.push_back(rest);  // a last option without ';' (Snort accepts it)
}

}  // namespace

std::string_view rule_skip_name(RuleSkip r) {
  switch (r) {
#define GPUNFV_X(id, desc) \
  case RuleSkip::id:       \
    return #id;
    GPUNFV_RULE_SKIPS(GPUNFV_X)
#undef GPUNFV_X
    default:
      return "unknown";
  }
}

std::string_view rule_feature_name(int bit_index) {
  static constexpr std::string_view kNames[kRuleFeatureCount] = {
      "position_modifiers", "pcre", "buffers", "negated_content", "other_conditions"};
  return bit_index >= 0 && bit_index < kRuleFeatureCount ? kNames[bit_index] : "unknown";
}

uint64_t RulesStats::skipped_total() const {
  uint64_t n = 0;
  for (uint64_t s : skipped) n += s;
  return n;
}

RulesStats& RulesStats::operator+=(const RulesStats& o) {
  rule_lines += o.rule_lines;
  commented_rules += o.commented_rules;
  content_options += o.content_options;
  negated_content_options += o.negated_content_options;
  loaded += o.loaded;
  for (int i = 0; i < kRuleSkipCount; ++i) skipped[i] += o.skipped[i];
  for (int i = 0; i < kRuleFeatureCount; ++i) loaded_with[i] += o.loaded_with[i];
  return *this;
}

std::optional<RuleContent> parse_content_value(std::string_view value, std::string& error) {
  RuleContent c;
  std::string_view v = trim(value);
  if (!v.empty() && v.front() == '!') {
    c.negated = true;
    v = trim(v.substr(1));
  }
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') {
    error = "content must be a quoted string";
    return std::nullopt;
  }
  v = v.substr(1, v.size() - 2);
  bool hex = false;
  int nibble = -1;  // first hex digit of a byte in progress
  for (size_t i = 0; i < v.size(); ++i) {
    const char ch = v[i];
    if (hex) {
      if (ch == '|') {
        if (nibble >= 0) {
          error = "odd number of hex digits in |...|";
          return std::nullopt;
        }
        hex = false;
      } else if (ch == ' ' || ch == '\t') {
        // spaces separate hex bytes
      } else if (int h = hex_value(ch); h >= 0) {
        if (nibble < 0) {
          nibble = h;
        } else {
          c.bytes.push_back(char((nibble << 4) | h));
          nibble = -1;
        }
      } else {
        error = std::string("'") + ch + "' in a |hex| block";
        return std::nullopt;
      }
    } else if (ch == '|') {
      hex = true;
    } else if (ch == '\\') {
      if (i + 1 == v.size() || (v[i + 1] != '\\' && v[i + 1] != '"' && v[i + 1] != ';' &&
                                v[i + 1] != ':')) {
        error = "bad escape in content (only \\\\ \\\" \\; \\: are allowed)";
        return std::nullopt;
      }
      c.bytes.push_back(v[++i]);
    } else if (ch == '"') {
      error = "unescaped '\"' in content";
      return std::nullopt;
    } else {
      c.bytes.push_back(ch);
    }
  }
  if (hex) {
    error = "unterminated |hex| block in content";
    return std::nullopt;
  }
  if (c.bytes.empty()) {
    error = "empty content";
    return std::nullopt;
  }
  return c;
}

std::optional<Rule> parse_rule(std::string_view text, std::string& error) {
  text = trim(text);
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    error = "no (options) in parentheses";
    return std::nullopt;
  }
  if (!trim(text.substr(close + 1)).empty()) {
    error = "text after the closing parenthesis";
    return std::nullopt;
  }
  Rule r;
  std::string_view header = trim(text.substr(0, open));
  std::vector<std::string_view> words;
  for (size_t i = 0; i < header.size();) {
    while (i < header.size() && is_space(header[i])) ++i;
    size_t start = i;
    while (i < header.size() && !is_space(header[i])) ++i;
    if (i > start) words.push_back(header.substr(start, i - start));
  }
  if (words.empty() || !is_action(words[0])) {
    error = "unknown action '" + std::string(words.empty() ? "" : words[0]) + "'";
    return std::nullopt;
  }
  if (words.size() < 2 ||
      std::none_of(words.begin(), words.end(), [](auto w) { return w == "->" || w == "<>"; })) {
    error = "header needs: action proto src sport -> dst dport";
    return std::nullopt;
  }
  r.action = std::string(words[0]);
  r.proto = std::string(words[1]);

  std::vector<std::string_view> options;
  split_options(text.substr(open + 1, close - open - 1), options);
  bool have_sid = false;
  for (std::string_view opt : options) {
    const size_t colon = opt.find(':');
    const std::string_view key = trim(opt.substr(0, colon));
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view() : trim(opt.substr(colon + 1));
    if (key == "content" || key == "uricontent") {
      auto c = parse_content_value(value, error);
      if (!c) return std::nullopt;
      if (key == "uricontent") r.unevaluated |= kBuffers;
      if (c->negated) r.unevaluated |= kNegatedContent;
      r.contents.push_back(std::move(*c));
    } else if (key == "nocase") {
      if (r.contents.empty()) {
        error = "nocase before any content";
        return std::nullopt;
      }
      r.contents.back().nocase = true;
    } else if (key == "fast_pattern") {
      // Snort's `fast_pattern:only` and `fast_pattern:OFFSET,LENGTH` pick the same content; the
      // whole content is the prefilter string here.
      if (r.contents.empty()) {
        error = "fast_pattern before any content";
        return std::nullopt;
      }
      r.contents.back().fast_pattern = true;
    } else if (key == "msg") {
      auto m = unquote(value);
      if (!m) {
        error = "msg must be a quoted string";
        return std::nullopt;
      }
      r.msg = std::move(*m);
    } else if (key == "sid" || key == "rev" || key == "gid") {
      auto n = parse_u32(value);
      if (!n) {
        error = "bad " + std::string(key) + " '" + std::string(value) + "'";
        return std::nullopt;
      }
      (key == "sid" ? r.sid : key == "rev" ? r.rev : r.gid) = *n;
      have_sid |= key == "sid";
    } else if (key == "classtype") {
      r.classtype = std::string(value);
    } else if (key == "noalert" || (key == "flowbits" && value == "noalert")) {
      r.noalert = true;
    } else if (key == "pcre") {
      r.unevaluated |= kPcre;
    } else if (is_position_modifier(key)) {
      r.unevaluated |= kPositionModifiers;
    } else if (is_buffer_or_transform(key)) {
      r.unevaluated |= kBuffers;
    } else if (!is_neutral(key)) {
      r.unevaluated |= kOtherConditions;
    }
  }
  if (!have_sid) {
    error = "no sid";
    return std::nullopt;
  }
  return r;
}

void add_rules_text(RuleSet& set, std::string_view text, const std::string& source) {
  std::unordered_set<uint64_t> ids;  // (gid, sid) of the rules loaded so far
  for (const Rule& r : set.rules) ids.insert((uint64_t(r.gid) << 32) | r.sid);
  RulesStats& st = set.stats;
  auto skip = [&](RuleSkip why, long line, const std::string& detail) {
    ++st.skipped[int(why)];
    if (set.skip_examples.size() < kMaxSkipExamples)
      set.skip_examples.push_back(source + ":" + std::to_string(line) + ": " +
                                  std::string(rule_skip_name(why)) +
                                  (detail.empty() ? "" : ": " + detail));
  };
  auto count_contents = [&](const Rule& r) {
    for (const RuleContent& c : r.contents) ++(c.negated ? st.negated_content_options
                                                         : st.content_options);
  };

  std::string logical;  // a rule continued over lines ending in '\'
  long logical_line = 0;
  for_each_line(text, [&](long line_no, std::string_view raw) {
    std::string_view line = trim(raw);
    if (logical.empty()) logical_line = line_no;
    if (!line.empty() && line.back() == '\\' && (line.size() < 2 || line[line.size() - 2] != '\\')) {
      logical.append(line.substr(0, line.size() - 1));
      return;
    }
    std::string joined;
    if (!logical.empty()) {
      joined = std::move(logical);
      joined.append(line);
      logical.clear();
      line = joined;
    }
    if (line.empty()) return;
    std::string error;
    if (line.front() == '#') {
      std::string_view rest = line;
      while (!rest.empty() && (rest.front() == '#' || is_space(rest.front()))) rest.remove_prefix(1);
      if (!looks_like_rule(rest)) return;  // an ordinary comment
      ++st.commented_rules;
      if (auto r = parse_rule(rest, error)) count_contents(*r);
      return;
    }
    ++st.rule_lines;
    auto r = parse_rule(line, error);
    if (!r) return skip(RuleSkip::bad_syntax, logical_line, error);
    count_contents(*r);
    if (r->action != "alert") return skip(RuleSkip::not_alert, logical_line, r->action);
    if (r->noalert) return skip(RuleSkip::noalert, logical_line, "sid " + std::to_string(r->sid));
    if (r->contents.empty())
      return skip(RuleSkip::no_content, logical_line, "sid " + std::to_string(r->sid));
    if (std::all_of(r->contents.begin(), r->contents.end(), [](auto& c) { return c.negated; }))
      return skip(RuleSkip::only_negated_content, logical_line, "sid " + std::to_string(r->sid));
    if (!ids.insert((uint64_t(r->gid) << 32) | r->sid).second)
      return skip(RuleSkip::duplicate_sid, logical_line, "sid " + std::to_string(r->sid));
    r->file = source;
    r->line = logical_line;
    ++st.loaded;
    for (int b = 0; b < kRuleFeatureCount; ++b)
      if (r->unevaluated & (1u << b)) ++st.loaded_with[b];
    set.rules.push_back(std::move(*r));
  });
}

RuleSet read_rules_files(const std::vector<std::string>& paths) {
  RuleSet set;
  for (const std::string& path : paths) add_rules_text(set, read_text_file(path, "rule file"), path);
  return set;
}

}  // namespace gpunfv
