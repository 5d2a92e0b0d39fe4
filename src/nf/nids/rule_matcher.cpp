#include "nf/nids/rule_matcher.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpunfv {

namespace {

std::string mib(size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

RuleMatcher::Compiled RuleMatcher::compile(std::span<const Rule> rules,
                                           size_t max_automaton_bytes) {
  Compiled c;
  c.rule_patterns.reserve(rules.size());
  for (const Rule& r : rules) {
    std::vector<uint32_t> ids;
    uint32_t fast = kNone;
    for (const RuleContent& content : r.contents) {
      if (content.negated) continue;
      ids.push_back(c.patterns.add(content.bytes, content.nocase));
      if (content.fast_pattern && fast == kNone) fast = ids.back();
    }
    c.fast_pattern.push_back(fast);
    if (ids.empty())
      throw std::invalid_argument("rule sid " + std::to_string(r.sid) +
                                  " has no content that is not negated");
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    c.rule_patterns.push_back(std::move(ids));
  }
  const std::span<const Pattern> patterns(c.patterns.patterns());
  if (max_automaton_bytes != SIZE_MAX) {
    const size_t need = AhoCorasick::build_bytes_of(patterns);
    if (need > max_automaton_bytes)
      throw std::length_error(
          "the rules' " + std::to_string(patterns.size()) + " distinct contents make an automaton of " +
          std::to_string(AhoCorasick::state_count_of(patterns)) + " states, about " + mib(need) +
          " to build, more than max_automaton_mb (" + mib(max_automaton_bytes) + ")");
  }
  return c;
}

RuleMatcher::RuleMatcher(std::span<const Rule> rules, size_t max_automaton_bytes)
    : RuleMatcher(compile(rules, max_automaton_bytes)) {}

RuleMatcher::RuleMatcher(Compiled c)
    : patterns_(std::move(c.patterns)), ac_(std::span<const Pattern>(patterns_.patterns())) {
  const uint32_t n_patterns = uint32_t(patterns_.size());
  const uint32_t n_rules = uint32_t(c.rule_patterns.size());
  // Anchor: the rule's fast_pattern content, else its longest pattern (ties: the lowest id), as
  // the rarest to occur.
  std::vector<uint32_t>& anchor = anchor_;
  anchor.resize(n_rules);
  for (uint32_t r = 0; r < n_rules; ++r) {
    const auto& ids = c.rule_patterns[r];
    anchor[r] = c.fast_pattern[r] != kNone
                    ? c.fast_pattern[r]
                    : *std::max_element(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
                        return patterns_[a].bytes.size() < patterns_[b].bytes.size();
                      });
  }
  // Rules grouped by anchor (counting sort keeps rule order within a group: ascending).
  std::vector<uint32_t> anchor_begin(n_patterns + 1, 0), anchored_rules(n_rules), rule_begin, rule_others;
  for (uint32_t r = 0; r < n_rules; ++r) ++anchor_begin[anchor[r] + 1];
  for (uint32_t p = 0; p < n_patterns; ++p) anchor_begin[p + 1] += anchor_begin[p];
  std::vector<uint32_t> fill(anchor_begin.begin(), anchor_begin.end() - 1);
  for (uint32_t r = 0; r < n_rules; ++r) anchored_rules[fill[anchor[r]]++] = r;

  rule_begin.reserve(n_rules + 1);
  rule_begin.push_back(0);
  for (uint32_t r = 0; r < n_rules; ++r) {
    for (uint32_t p : c.rule_patterns[r])
      if (p != anchor[r]) rule_others.push_back(p);
    rule_begin.push_back(uint32_t(rule_others.size()));
  }
  // Tables a walk reads hold a row (core/iso_walk.h): an entry past the ranges, never read.
  if (anchored_rules.empty()) anchored_rules.push_back(0);
  if (rule_others.empty()) rule_others.push_back(0);
  anchored_at_ = uint32_t(anchor_begin.size());
  rule_begin_at_ = anchored_at_ + uint32_t(anchored_rules.size());
  others_at_ = rule_begin_at_ + uint32_t(rule_begin.size());
  for (const auto* t : {&anchor_begin, &anchored_rules, &rule_begin, &rule_others})
    index_.insert(index_.end(), t->begin(), t->end());
}

RuleMatcherRef RuleMatcher::ref_of(IsoSpan<const uint32_t> index, AhoCorasickRef ac) const {
  RuleMatcherRef r;
  r.ac = ac;
  r.index = IsoRows<const uint32_t, 0>(index);
  r.anchored_at = anchored_at_;
  r.rule_begin_at = rule_begin_at_;
  r.others_at = others_at_;
  return r;
}

RuleMatcherRef RuleMatcher::ref() const {
  return ref_of(IsoSpan<const uint32_t>(index_.data(), index_.size()), ac_.ref());
}

size_t RuleMatcher::table_bytes() const {
  return ac_.table_bytes() + index_.size() * sizeof(uint32_t);
}

std::vector<uint32_t> RuleMatcher::fired_rules(std::span<const uint8_t> payload) const {
  std::vector<uint32_t> matched = ac_.matched_patterns(payload);
  std::vector<uint32_t> fired;
  auto is_matched = [&](uint32_t p) { return std::binary_search(matched.begin(), matched.end(), p); };
  const RuleMatcherRef m = ref();
  for (uint32_t p : matched) m.rules_fired_by(p, is_matched, [&](uint32_t r) { fired.push_back(r); });
  std::sort(fired.begin(), fired.end());
  return fired;
}

#if GPUNFV_HAVE_CUDA
void RuleMatcher::upload_to_device() {
  if (uploaded_) return;
  ac_.upload_to_device();
  d_index_.upload(index_);
  uploaded_ = true;
}

RuleMatcherRef RuleMatcher::device_ref() const { return ref_of(d_index_.span(), ac_.device_ref()); }
#endif

}  // namespace gpunfv
