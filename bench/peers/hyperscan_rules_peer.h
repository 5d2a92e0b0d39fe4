// Hyperscan the way Suricata's detection engine uses it, as the rule-level peer of the NIDS: a
// multi-pattern matcher (MPM) over one fast pattern per rule, then, for each rule whose fast
// pattern occurred, the rule's other contents verified one by one with a single-pattern
// matcher (SPM), as Suricata does with `mpm-algo: hs` and `spm-algo: hs`. A rule fires when all
// its contents occur anywhere in the payload (the NIDS's rule semantics, rules_file.h).
//
// The fast pattern of a rule is the anchor the NIDS's RuleMatcher chose: the content the rule
// marks `fast_pattern`, else its longest content (Suricata's choice where a rule names none). One MPM database (literal API,
// block mode, single match per pattern), one SPM database per other content; databases are
// shared, scratch space is per thread.
//
// Compiled only with GPUNFV_HAVE_HYPERSCAN; elsewhere (the DPDK peers library globs
// bench/peers/*.cpp) this compiles to nothing.
#pragma once

#if GPUNFV_HAVE_HYPERSCAN

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nf/nids/rule_matcher.h"

struct hs_database;
struct hs_scratch;

namespace gpunfv {

class HyperscanRulesPeer {
 public:
  // From the NIDS's compiled rules (its pattern ids, anchors and other contents), with scratch
  // space for `threads` threads. Throws HyperscanError (hyperscan_peer.h).
  HyperscanRulesPeer(const RuleMatcher& rules, unsigned threads);
  ~HyperscanRulesPeer();
  HyperscanRulesPeer(const HyperscanRulesPeer&) = delete;
  HyperscanRulesPeer& operator=(const HyperscanRulesPeer&) = delete;

  // Number of rules that fire on `payload`, on thread `thread`'s scratch.
  uint32_t rules_fired(std::span<const uint8_t> payload, unsigned thread) const;

  uint32_t fast_patterns() const { return fast_patterns_; }
  uint32_t verify_patterns() const { return verify_patterns_; }
  size_t database_bytes() const;

 private:
  struct Thread;
  RuleMatcher::Index rules_;
  hs_database* mpm_ = nullptr;
  std::vector<hs_database*> spm_;  // by pattern id; null for patterns only ever fast patterns
  std::vector<std::unique_ptr<Thread>> threads_;
  uint32_t fast_patterns_ = 0, verify_patterns_ = 0;
};

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_HYPERSCAN
