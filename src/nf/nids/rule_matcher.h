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
#include "core/iso_view.h"
#include "core/iso_walk.h"
#include "nf/nids/aho_corasick.h"
#include "nf/nids/rules_file.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

struct RuleMatcherRef {
  using iso_fields = IsoFields<AhoCorasickRef, IsoRows<const uint32_t, 0>, uint32_t, uint32_t,
                               uint32_t>;  // core/iso_view.h
  AhoCorasickRef ac;
  // The rule index, one table walked by the ids it holds (core/iso_walk.h), in four sections:
  //   [0, anchored_at)             anchor_begin: patterns + 1 CSR offsets into anchored rules
  //   [anchored_at, rule_begin_at) rule indices, grouped by anchor pattern, ascending
  //   [rule_begin_at, others_at)   rule_begin: rules + 1 CSR offsets into the others
  //   [others_at, end)             each rule's patterns other than its anchor
  // One table is one walk: a packet's rule work holds one base, not four. An id that strays
  // past its section reads another section of the same table, never outside it.
  IsoRows<const uint32_t, 0> index;
  uint32_t anchored_at = 0, rule_begin_at = 0, others_at = 0;

  GPUNFV_HD uint32_t pattern_count() const { return ac.pattern_count(); }
  GPUNFV_HD uint32_t rule_count() const { return others_at - rule_begin_at - 1; }

  // The index as one packet's walk.
  using Walk = IsoWalk<const uint32_t, 0>;
  GPUNFV_HD Walk walk() const { return Walk(index); }

  // Calls on_fire(rule) for each rule anchored at pattern `p` whose other patterns are all in
  // the matched set (`is_matched(pattern) -> bool`). Call it once per matched pattern.
  template <typename IsMatched, typename OnFire>
  GPUNFV_HD void rules_fired_by(Walk& w, uint32_t p, IsMatched is_matched, OnFire on_fire) const {
    const auto anchored = w.pair(p);  // the pattern's rules: [first, end)
    for (uint32_t k = anchored[0]; k < anchored[1]; ++k) {
      const uint32_t r = w.at(anchored_at + k);
      const auto others = w.pair(rule_begin_at + r);
      bool all = true;
      for (uint32_t j = others[0]; all && j < others[1]; ++j)
        all = is_matched(w.at(others_at + j));
      if (all) on_fire(r);
    }
  }
  template <typename IsMatched, typename OnFire>
  GPUNFV_HD void rules_fired_by(uint32_t p, IsMatched is_matched, OnFire on_fire) const {
    Walk w = walk();
    rules_fired_by(w, p, is_matched, on_fire);
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
  // The rule index as the host holds it (see RuleMatcherRef), for peers matching the same rules.
  struct Index {
    std::span<const uint32_t> anchor_begin, anchored_rules, rule_begin, rule_others;
  };
  Index index() const {
    const auto anchor_begin = section(0, anchored_at_), rule_begin = section(rule_begin_at_, others_at_);
    return {anchor_begin, section(anchored_at_, anchored_at_ + anchor_begin.back()), rule_begin,
            section(others_at_, others_at_ + rule_begin.back())};
  }
  const PatternSet& patterns() const { return patterns_; }
  const AhoCorasick& automaton() const { return ac_; }
  uint32_t rule_count() const { return others_at_ - rule_begin_at_ - 1; }
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
  std::vector<uint32_t> anchor_;
  // The rule index's four tables one after another, from these starts (RuleMatcherRef::index).
  std::vector<uint32_t> index_;
  uint32_t anchored_at_ = 0, rule_begin_at_ = 0, others_at_ = 0;
  std::span<const uint32_t> section(uint32_t from, uint32_t to) const {
    return std::span<const uint32_t>(index_).subspan(from, to - from);
  }
  RuleMatcherRef ref_of(IsoSpan<const uint32_t> index, AhoCorasickRef ac) const;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint32_t> d_index_;
  bool uploaded_ = false;
#endif
};

}  // namespace gpunfv
