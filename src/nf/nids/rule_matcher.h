// Rules compiled for matching: their contents as one deduplicated pattern set in an
// Aho-Corasick DFA, and the rules indexed by pattern so that a packet's matched patterns lead
// straight to the rules that may fire.
//
// A rule fires when all of its patterns occur. Each rule is filed under one of its patterns,
// its anchor (the content the rule marks `fast_pattern`, as Suricata's and Snort's prefilter
// takes it; else the longest: long patterns occur rarely, so rules are looked at rarely); the
// choice changes which rules are looked at, never which fire. When the
// anchor occurs, the rule's other patterns are tested in the packet's matched-pattern set. Each
// rule is thus examined at most once per packet, by whoever handles its anchor, which lets the
// GPU kernel split that work over a warp's lanes without duplicates.
//
// Owning object RuleMatcher (host tables, device copies) + trivially copyable RuleMatcherRef.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/compat.h"
#include "core/iso_span.h"
#include "nf/nids/aho_corasick.h"
#include "nf/nids/rules_file.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

struct RuleMatcherRef {
  AhoCorasickRef ac;
  IsoSpan<const uint32_t> anchor_begin;   // patterns + 1: CSR offsets into anchored_rules
  IsoSpan<const uint32_t> anchored_rules; // rule indices, grouped by anchor pattern, ascending
  IsoSpan<const uint32_t> rule_begin;     // rules + 1: CSR offsets into rule_others
  IsoSpan<const uint32_t> rule_others;    // each rule's patterns other than its anchor

  GPUNFV_HD uint32_t pattern_count() const { return ac.pattern_count(); }
  GPUNFV_HD uint32_t rule_count() const { return uint32_t(rule_begin.size()) - 1; }

  // Calls on_fire(rule) for each rule anchored at pattern `p` whose other patterns are all in
  // the matched set (`is_matched(pattern) -> bool`). Call it once per matched pattern.
  template <typename IsMatched, typename OnFire>
  GPUNFV_HD void rules_fired_by(uint32_t p, IsMatched is_matched, OnFire on_fire) const {
    const auto anchored = anchor_begin.template read<2>(p);  // CSR ranges: one check each
    for (uint32_t k = anchored[0]; k < anchored[1]; ++k) {
      const uint32_t r = anchored_rules[k];
      const auto others = rule_begin.template read<2>(r);
      bool all = true;
      for (uint32_t j = others[0]; all && j < others[1]; ++j)
        all = is_matched(rule_others[j]);
      if (all) on_fire(r);
    }
  }
};
static_assert(std::is_trivially_copyable_v<RuleMatcherRef>);

class RuleMatcher {
 public:
  // Rule index = position in `rules`; each must have a content that is not negated (negated
  // contents are ignored). Throws std::length_error for a content the automaton cannot hold,
  // or, before building it, for an automaton whose build would take more than
  // `max_automaton_bytes` (AhoCorasick::build_bytes_of).
  explicit RuleMatcher(std::span<const Rule> rules, size_t max_automaton_bytes = SIZE_MAX);

  RuleMatcher(const RuleMatcher&) = delete;
  RuleMatcher& operator=(const RuleMatcher&) = delete;

  RuleMatcherRef ref() const;
  const PatternSet& patterns() const { return patterns_; }
  const AhoCorasick& automaton() const { return ac_; }
  uint32_t rule_count() const { return uint32_t(rule_begin_.size() - 1); }
  // Sorted, distinct pattern ids of rule r (anchor included).
  std::vector<uint32_t> rule_patterns(uint32_t r) const;
  uint32_t anchor(uint32_t r) const { return anchor_[r]; }  // rule r's anchor pattern id
  size_t table_bytes() const;  // automaton and rule index

  // Sorted indices of the rules that fire on `payload` (tests; the NF's paths are nids_logic.h).
  std::vector<uint32_t> fired_rules(std::span<const uint8_t> payload) const;

#if GPUNFV_HAVE_CUDA
  void upload_to_device();  // once; later calls do nothing
  RuleMatcherRef device_ref() const;
#endif

 private:
  struct Compiled {
    PatternSet patterns;
    std::vector<std::vector<uint32_t>> rule_patterns;  // sorted, distinct, per rule
    std::vector<uint32_t> fast_pattern;  // per rule: its fast_pattern content's id, or kNone
  };
  static constexpr uint32_t kNone = UINT32_MAX;
  static Compiled compile(std::span<const Rule> rules, size_t max_automaton_bytes);
  explicit RuleMatcher(Compiled c);

  PatternSet patterns_;
  AhoCorasick ac_;
  std::vector<uint32_t> anchor_, anchor_begin_, anchored_rules_, rule_begin_, rule_others_;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint32_t> d_anchor_begin_, d_anchored_rules_, d_rule_begin_, d_rule_others_;
  bool uploaded_ = false;
#endif
};

}  // namespace gpunfv
