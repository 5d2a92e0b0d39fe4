// NIDS: every generated packet gets a new payload (outside timed regions): random bytes, and in
// 1 packet of 8 one of the rule set's patterns, chosen at random among those that fit, written
// at a random offset (caseless patterns in random case), so that long patterns occur too;
// checksums recomputed. Random bytes (as in encrypted or compressed payloads) already hold the
// set's 1-3 byte contents often, so most packets fire some rule whose contents are all short:
// the output counts the packets that fired a rule. Rows, over the same payload bytes the NF
// inspects (located beforehand):
//   - Hyperscan as Suricata uses it (the rule-level peer, like for like with the NF's rows,
//     which also write the results record): one fast pattern per rule in a multi-pattern
//     database, then each candidate rule's other contents verified with single-pattern
//     databases; the number of rules firing per payload is checked against our CPU backend's;
//   - gpunfv's Aho-Corasick scan alone, and Hyperscan over the full literal set (literal API,
//     block mode, one database per thread), each counting the distinct patterns per payload;
//     Hyperscan's count is checked against our automaton's.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <exception>
#include <mutex>

#include "nf_case.h"
#include "core/clock.h"
#include "nf/nids/nids.h"

#if GPUNFV_HAVE_HYPERSCAN
#include "peers/hyperscan_peer.h"
#include "peers/hyperscan_rules_peer.h"
#endif

namespace gpunfv::bench {

namespace {

constexpr uint32_t kPlantEvery = 8;

PayloadRange payload_of(const BatchView& v, uint32_t i) {
  if (v.len[i] > v.stride) return {};
  IsoSpan<const uint8_t> f = v.data.subspan(size_t(i) * v.stride, v.len[i]);
  PacketHeaders h;
  if (parse_headers(f, h) != DropReason::none) return {};
  return nids_payload(f, h);
}

using Payloads = std::vector<std::vector<std::span<const uint8_t>>>;  // per batch, per packet

// The bytes the NF inspects, per packet of each of the round's batches; `counts` sized to match.
// Returns the packets.
uint64_t locate_payloads(const RoundData& r, Payloads& text, std::vector<std::vector<uint32_t>>& counts) {
  text.resize(r.used), counts.resize(r.used);
  uint64_t n = 0;
  for (size_t b = 0; b < r.used; ++b) {
    BatchView v = r.in[b]->view();
    text[b].clear();
    for (uint32_t i = 0; i < v.count; ++i) {
      const PayloadRange pr = payload_of(v, i);
      text[b].emplace_back(v.data.framework_data() + size_t(i) * v.stride + pr.offset, pr.length);
    }
    counts[b].assign(v.count, 0);
    n += v.count;
  }
  return n;
}

void shape_batch(const std::vector<Pattern>& patterns, Batch& b, uint64_t seed) {
  Rng rng(seed);
  BatchView v = b.view();
  for (uint32_t i = 0; i < v.count; ++i) {
    const PayloadRange pr = payload_of(v, i);
    if (pr.length == 0) continue;
    uint8_t* p = frame_of(b, i) + pr.offset;
    for (uint32_t k = 0; k < pr.length; k += 8) {
      uint64_t x = rng.next();
      std::memcpy(p + k, &x, std::min<uint32_t>(8, pr.length - k));
    }
    if (rng.below(kPlantEvery) == 0)
      for (int tries = 0; tries < 16; ++tries) {
        const Pattern& pat = patterns[rng.below(uint32_t(patterns.size()))];
        const uint32_t n = uint32_t(pat.bytes.size());
        if (n > pr.length) continue;
        uint8_t* at = p + rng.below(pr.length - n + 1);
        std::memcpy(at, pat.bytes.data(), n);
        if (pat.nocase)
          for (uint32_t k = 0; k < n; ++k)
            if (at[k] >= 'a' && at[k] <= 'z' && (rng.next() & 1)) at[k] = uint8_t(at[k] - 32);
        break;
      }
    refresh_checksums(frame_of(b, i), v.len[i]);
  }
}

// The payloads of a round, per batch (one per packet; empty where the NF inspects nothing).
class PayloadRows : public Peer {
 public:
  bool repeatable() const override { return true; }
  uint64_t prepare(const RoundData& r) override { return locate_payloads(r, text_, count_); }

 protected:
  Payloads text_;
  std::vector<std::vector<uint32_t>> count_;
};

// Our automaton alone: distinct patterns per payload, as the Hyperscan literal row counts them.
class OursScan final : public PayloadRows {
 public:
  OursScan(const Nids& nids, unsigned threads)
      : ac_(nids.matcher().automaton().ref()), seen_(threads), stamps_(threads) {
    for (auto& s : seen_) s.assign(ac_.pattern_count(), 0);
  }
  std::string name() const override { return "gpunfv Aho-Corasick scan only"; }
  std::string scope() const override {
    return "literal matching only: distinct patterns per payload (payloads located beforehand)";
  }
  bool is_peer() const override { return false; }
  void work(size_t b, unsigned t) override {
    std::vector<uint64_t>& seen = seen_[t];
    for (size_t k = 0; k < text_[b].size(); ++k) {
      const std::span<const uint8_t> p = text_[b][k];
      const uint64_t stamp = ++stamps_[t].v;
      uint32_t n = 0;
      ac_.scan(IsoSpan<const uint8_t>(p.data(), p.size()), [&](uint32_t id, uint32_t) {
        if (seen[id] != stamp) seen[id] = stamp, ++n;
      });
      count_[b][k] = n;
    }
  }

 private:
  struct alignas(64) Stamp {
    uint64_t v = 0;  // payloads this thread scanned
  };
  AhoCorasickRef ac_;
  std::vector<std::vector<uint64_t>> seen_;  // per thread: the payload stamp a pattern was seen at
  std::vector<Stamp> stamps_;
};

#if GPUNFV_HAVE_HYPERSCAN
// Suricata's way: fast patterns in one MPM database, other contents verified per rule.
class HyperscanRules final : public PayloadRows {
 public:
  HyperscanRules(const Nids& nids, unsigned threads)
      : hs_(nids.matcher(), threads), offset_(nids.result_offset()) {}
  std::string name() const override { return "Hyperscan MPM + verify, as Suricata"; }
  std::string scope() const override {
    return "rule matching: fast pattern per rule, then its other contents (payloads located "
           "beforehand; no results record)";
  }
  const HyperscanRulesPeer& peer() const { return hs_; }
  void work(size_t b, unsigned t) override {
    for (size_t k = 0; k < text_[b].size(); ++k) count_[b][k] = hs_.rules_fired(text_[b][k], t);
  }
  // Rules fired per packet against the count our CPU backend wrote into its results record.
  Check check(const RoundData& r) override {
    Check c;
    for (size_t b = 0; b < text_.size(); ++b) {
      BatchView v = r.cpu_out[b]->view();
      for (size_t k = 0; k < text_[b].size(); ++k) {
        const NidsResult res =
            NidsResult::load(v.results.framework_data() + k * v.result_stride + offset_);
        ++c.compared;
        if (count_[b][k] != res.fired && c.mismatches++ == 0)
          c.first = fmt::format("batch {} packet {}: gpunfv {} rules, Hyperscan {}", b, k,
                                res.fired, count_[b][k]);
      }
    }
    return c;
  }

 private:
  HyperscanRulesPeer hs_;
  uint32_t offset_;
};

class HyperscanScan final : public Peer {
 public:
  bool repeatable() const override { return true; }
  HyperscanScan(const Nids& nids, unsigned threads) : ac_(nids.matcher().automaton()) {
    const std::vector<Pattern>& patterns = nids.matcher().patterns().patterns();
    hs_.resize(threads);
    std::exception_ptr error;
    std::mutex m;
    run_batches(threads, threads, [&](size_t t) {
      try {
        hs_[t] = std::make_unique<HyperscanPeer>(patterns);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m);
        error = std::current_exception();
      }
    });
    if (error) std::rethrow_exception(error);
  }
  std::string name() const override { return "Hyperscan literal set"; }
  std::string scope() const override {
    return "literal matching only: distinct patterns per payload (payloads located beforehand)";
  }
  size_t database_bytes() const { return hs_[0]->database_bytes(); }

  uint64_t prepare(const RoundData& r) override {
    const uint64_t n = locate_payloads(r, text_, count_);
    expect_.resize(r.used);
    for (size_t b = 0; b < r.used; ++b) expect_[b].resize(count_[b].size());
    // Our automaton's answer per payload (the reference for check()), on all threads.
    run_batches(r.used, r.threads, [&](size_t b) {
      for (size_t k = 0; k < text_[b].size(); ++k)
        expect_[b][k] = uint32_t(ac_.matched_patterns(text_[b][k]).size());
    });
    for (size_t b = 0; b < r.used; ++b)
      for (uint32_t e : expect_[b]) with_match_ += e != 0;
    payloads_ += n;
    return n;
  }
  void work(size_t b, unsigned t) override {
    const HyperscanPeer& hs = *hs_[t];
    for (size_t k = 0; k < text_[b].size(); ++k) count_[b][k] = hs.count_matches(text_[b][k]);
  }
  Check check(const RoundData&) override {
    Check c;
    for (size_t b = 0; b < text_.size(); ++b)
      for (size_t k = 0; k < text_[b].size(); ++k) {
        ++c.compared;
        if (count_[b][k] != expect_[b][k] && c.mismatches++ == 0)
          c.first = fmt::format("batch {} packet {}: gpunfv {} patterns, Hyperscan {}", b, k,
                                expect_[b][k], count_[b][k]);
      }
    return c;
  }
  std::string summary() const override {
    return fmt::format("payloads holding at least one pattern: {} of {} ({:.1f}%)", with_match_,
                       payloads_, payloads_ ? 100.0 * with_match_ / payloads_ : 0);
  }

 private:
  const AhoCorasick& ac_;
  std::vector<std::unique_ptr<HyperscanPeer>> hs_;  // one per thread (one scratch each)
  Payloads text_;
  std::vector<std::vector<uint32_t>> count_, expect_;
  uint64_t with_match_ = 0, payloads_ = 0;
};
#endif

}  // namespace

NfCase make_nids_case(RuntimeConfig& rc, const CaseOptions& o) {
  NfCase c;
  const auto& nids = dynamic_cast<const Nids&>(*rc.nfs[rc.chains[0].path[0]]);
  const std::vector<Pattern>* patterns = &nids.matcher().patterns().patterns();
  c.notes.push_back(fmt::format(
      "traffic: generated frames, payloads rewritten: random bytes, and in 1 packet of {} one of "
      "the {} patterns (random, among those that fit; caseless ones in random case) at a random "
      "offset",
      kPlantEvery, patterns->size()));
  c.shape = [patterns](Batch& b, uint64_t seed) { shape_batch(*patterns, b, seed); };
  // How many packets fired at least one rule, from the results records of our CPU output.
  auto fired = std::make_shared<std::array<uint64_t, 3>>();  // packets, fired, rule firings
  const uint32_t offset = nids.result_offset();
  c.observe = [fired, offset](const RoundData& r) {
    for (size_t b = 0; b < r.used; ++b) {
      BatchView v = r.cpu_out[b]->view();
      for (uint32_t i = 0; i < v.count; ++i) {
        const NidsResult res =
            NidsResult::load(v.results.framework_data() + size_t(i) * v.result_stride + offset);
        (*fired)[0] += 1, (*fired)[1] += res.fired != 0, (*fired)[2] += res.fired;
      }
    }
  };
  c.summary = [fired] {
    const auto& f = *fired;
    return fmt::format("packets that fired at least one rule: {} of {} ({:.1f}%), {:.2f} rules per "
                       "packet", f[1], f[0], f[0] ? 100.0 * f[1] / f[0] : 0,
                       f[0] ? double(f[2]) / f[0] : 0);
  };
  c.nf_scope = "the whole NF: parse + matching + rule evaluation + results record";
  if (!o.peers) {
    c.peers.push_back(std::make_unique<OursScan>(nids, o.threads));
    return c;
  }
#if GPUNFV_HAVE_HYPERSCAN
  uint64_t t0 = monotonic_ns();
  auto rules = std::make_unique<HyperscanRules>(nids, o.threads);
  c.notes.push_back(fmt::format(
      "peer: Hyperscan {} as Suricata's detection uses it (mpm-algo hs, spm-algo hs): {} fast "
      "patterns (one per rule: its fast_pattern content, else its longest) in one database, {} other contents in "
      "single-pattern databases, {} KiB in all, built in {:.1f} s; scratch per thread",
      HyperscanPeer::version(), rules->peer().fast_patterns(), rules->peer().verify_patterns(),
      rules->peer().database_bytes() / 1024, (monotonic_ns() - t0) / 1e9));
  c.peers.push_back(std::move(rules));
  c.peers.push_back(std::make_unique<OursScan>(nids, o.threads));
  t0 = monotonic_ns();
  auto hs = std::make_unique<HyperscanScan>(nids, o.threads);
  c.notes.push_back(fmt::format(
      "peer: Hyperscan {} literal API (hs_compile_lit_multi, block mode, HS_FLAG_SINGLEMATCH), "
      "{} patterns, database {} KiB, compiled once per thread in {:.1f} s; scans the bytes the NF "
      "inspects, matching only (no rule evaluation)",
      HyperscanPeer::version(), patterns->size(), hs->database_bytes() / 1024,
      (monotonic_ns() - t0) / 1e9));
  c.peers.push_back(std::move(hs));
#else
  c.peers.push_back(std::make_unique<OursScan>(nids, o.threads));
  c.notes.push_back(peer_missing("Hyperscan", "libhyperscan-dev"));
#endif
  return c;
}

}  // namespace gpunfv::bench
