// Compiled only with GPUNFV_HAVE_HYPERSCAN (cmake/hyperscan.cmake).
#if GPUNFV_HAVE_HYPERSCAN

#include "peers/hyperscan_rules_peer.h"

#include <hs/hs.h>

#include <string>

#include "peers/hyperscan_peer.h"

namespace gpunfv {

struct HyperscanRulesPeer::Thread {
  hs_scratch* scratch = nullptr;
  std::vector<uint32_t> anchors;  // fast patterns found in the payload being scanned
  ~Thread() { hs_free_scratch(scratch); }
};

namespace {

hs_database* compile(const std::vector<const Pattern*>& pats, const std::vector<unsigned>& ids) {
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags;
  for (const Pattern* p : pats) {
    exprs.push_back(p->bytes.data());
    lens.push_back(p->bytes.size());
    flags.push_back(HS_FLAG_SINGLEMATCH | (p->nocase ? HS_FLAG_CASELESS : 0));
  }
  hs_database* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           unsigned(pats.size()), HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    std::string what = "hyperscan: compile failed";
    if (err) {
      what += std::string(": ") + err->message;
      hs_free_compile_error(err);
    }
    throw HyperscanError(what);
  }
  return db;
}

int on_anchor(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  static_cast<std::vector<uint32_t>*>(ctx)->push_back(id);
  return 0;
}

int on_found(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  *static_cast<bool*>(ctx) = true;
  return 1;  // one occurrence is enough: stop scanning
}

}  // namespace

HyperscanRulesPeer::HyperscanRulesPeer(const RuleMatcher& rules, unsigned threads)
    : rules_(rules.index()) {
  const auto& patterns = rules.patterns().patterns();
  const uint32_t n = uint32_t(patterns.size());
  std::vector<const Pattern*> fast;
  std::vector<unsigned> fast_ids;
  std::vector<bool> verified(n, false);
  for (uint32_t p = 0; p < n; ++p)
    if (rules_.anchor_begin[p + 1] > rules_.anchor_begin[p]) {
      fast.push_back(&patterns[p]);
      fast_ids.push_back(p);
    }
  for (uint32_t j = 0; j < rules_.rule_others.size(); ++j) verified[rules_.rule_others[j]] = true;
  if (fast.empty()) throw HyperscanError("hyperscan: no rules");
  fast_patterns_ = uint32_t(fast.size());
  mpm_ = compile(fast, fast_ids);
  spm_.assign(n, nullptr);
  try {
    for (uint32_t p = 0; p < n; ++p)
      if (verified[p]) {
        spm_[p] = compile({&patterns[p]}, {0u});
        ++verify_patterns_;
      }
    for (unsigned t = 0; t < std::max(1u, threads); ++t) {
      auto th = std::make_unique<Thread>();
      if (hs_alloc_scratch(mpm_, &th->scratch) != HS_SUCCESS)
        throw HyperscanError("hyperscan: cannot allocate scratch");
      for (hs_database* db : spm_)
        if (db && hs_alloc_scratch(db, &th->scratch) != HS_SUCCESS)
          throw HyperscanError("hyperscan: cannot allocate scratch");
      threads_.push_back(std::move(th));
    }
  } catch (...) {
    for (hs_database* db : spm_) hs_free_database(db);
    hs_free_database(mpm_);
    throw;
  }
}

HyperscanRulesPeer::~HyperscanRulesPeer() {
  threads_.clear();
  for (hs_database* db : spm_) hs_free_database(db);
  hs_free_database(mpm_);
}

uint32_t HyperscanRulesPeer::rules_fired(std::span<const uint8_t> payload, unsigned thread) const {
  if (payload.empty()) return 0;
  Thread& t = *threads_[thread];
  const char* text = reinterpret_cast<const char*>(payload.data());
  const unsigned len = unsigned(payload.size());
  t.anchors.clear();
  if (hs_scan(mpm_, text, len, 0, t.scratch, on_anchor, &t.anchors) != HS_SUCCESS)
    throw HyperscanError("hyperscan: scan failed");
  uint32_t fired = 0;
  for (uint32_t p : t.anchors)
    for (uint32_t k = rules_.anchor_begin[p]; k < rules_.anchor_begin[p + 1]; ++k) {
      const uint32_t r = rules_.anchored_rules[k];
      bool all = true;
      for (uint32_t j = rules_.rule_begin[r]; all && j < rules_.rule_begin[r + 1]; ++j) {
        bool found = false;
        const hs_error_t e = hs_scan(spm_[rules_.rule_others[j]], text, len, 0, t.scratch,
                                     on_found, &found);
        if (e != HS_SUCCESS && e != HS_SCAN_TERMINATED)
          throw HyperscanError("hyperscan: scan failed");
        all = found;
      }
      fired += all;
    }
  return fired;
}

size_t HyperscanRulesPeer::database_bytes() const {
  size_t total = 0, bytes = 0;
  if (hs_database_size(mpm_, &bytes) == HS_SUCCESS) total += bytes;
  for (hs_database* db : spm_)
    if (db && hs_database_size(db, &bytes) == HS_SUCCESS) total += bytes;
  return total;
}

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_HYPERSCAN
