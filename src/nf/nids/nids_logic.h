// The NIDS's per-packet logic, shared by both backends: which bytes are the payload, and the
// per-packet result record (which rules fired) in a form that is the same bit for bit however
// the matching work was split (one CPU pass, or a GPU warp's lanes over chunks).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/batch.h"
#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/iso_span.h"
#include "core/parse.h"
#include "core/word_access.h"
#include "nf/nf_drops.h"
#include "nf/nids/rule_matcher.h"

namespace gpunfv {

// Payload: the bytes after the L4 header, up to the end of the IP packet (never Ethernet
// padding, which would otherwise let |00 00| patterns match short frames):
//   TCP            after the header (data offset)
//   UDP, ICMP(v6)  after the 8-byte header (as Snort and Suricata inspect ICMP data)
//   other IP       after the IP header (GRE, ESP, ...: their bytes as they are)
//   IPv4 later fragment (no L4 header): the fragment's bytes after the IP header
//   IPv6 without a parsed L4 offset (later fragment, or headers past byte 255): none
//   non-IP         none (rules are about IP traffic; ARP and the like pass uninspected)
// There is no reassembly: a pattern split across two TCP segments or fragments is not seen.
struct PayloadRange {
  uint32_t offset = 0;  // in the frame
  uint32_t length = 0;
};

// How the GPU kernel splits one payload of `len` bytes over the `lanes` lanes that scan it:
// equal chunks of at least `min_chunk` bytes, so a short payload uses fewer lanes rather than
// slivers that would each pay the run-on past their end (AhoCorasickRef::scan_range). Lane
// `lane` scans [begin, end); lanes past the payload get an empty range. The kernel takes
// kNidsMinChunk for large batches (least run-on) and kNidsSmallBatchChunk for small ones, where
// a packet's chain of dependent table reads sets the kernel's time (nids.cu).
inline constexpr uint32_t kNidsMinChunk = 32;
inline constexpr uint32_t kNidsSmallBatchChunk = 16;
struct NidsChunk {
  uint32_t begin = 0, end = 0;
};
GPUNFV_HD inline NidsChunk nids_chunk(uint32_t len, uint32_t lanes, uint32_t lane,
                                      uint32_t min_chunk = kNidsMinChunk) {
  const uint32_t even = (len + lanes - 1) / lanes;
  const uint32_t chunk = even > min_chunk ? even : min_chunk;
  NidsChunk c;
  c.begin = lane * chunk < len ? lane * chunk : len;
  c.end = c.begin + chunk < len ? c.begin + chunk : len;
  return c;
}

GPUNFV_HD inline PayloadRange nids_payload(IsoSpan<const uint8_t> f, const PacketHeaders& h) {
  if (h.ip_version != 4 && h.ip_version != 6) return {};
  const uint32_t ip = h.l3_off;
  // parse_headers checked both lengths against the frame.
  const uint32_t ip_end = h.ip_version == 4 ? ip + load_be16(f, ip + 2)
                                            : ip + 40 + load_be16(f, ip + 4);
  uint32_t start;
  if (h.l4_off == 0) {
    if (h.ip_version != 4) return {};
    start = ip + (f[ip] & 0x0Fu) * 4u;
  } else {
    switch (h.l4_proto) {
      case kProtoTcp:
        start = h.l4_off + (f[h.l4_off + 12] >> 4) * 4u;
        break;
      case kProtoUdp:
      case kProtoIcmp:
      case kProtoIcmpV6:
        start = h.l4_off + 8u;
        break;
      default:
        start = h.l4_off;
    }
  }
  if (start >= ip_end) return {};
  return {start, ip_end - start};
}

// The result record of one packet: how many rules fired, and the lowest rule indices among
// them in ascending order (a set's lowest K are the same whatever order they were found in).
inline constexpr uint32_t kNidsRulesPerPacket = 7;
inline constexpr uint32_t kNidsResultBytes = 4 + 4 * kNidsRulesPerPacket;  // 32
inline constexpr uint32_t kNidsNoRule = 0xFFFFFFFFu;

struct NidsResult {
  uint32_t fired = 0;
  uint32_t rules[kNidsRulesPerPacket];

  GPUNFV_HD NidsResult() {
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) rules[k] = kNidsNoRule;
  }
  GPUNFV_HD uint32_t kept() const { return fired < kNidsRulesPerPacket ? fired : kNidsRulesPerPacket; }

  // Counts rule r (each firing rule is added once) and keeps it if among the lowest: r moves
  // up the sorted list, each slot keeping the smaller of itself and what comes up, and the
  // largest falls off the end. Fixed indices and no branch, so that a GPU thread keeps the list
  // in registers (a data-dependent index puts an array in local memory).
  GPUNFV_HD GPUNFV_FORCEINLINE void add(uint32_t r) {
    ++fired;
    uint32_t up = r;
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) {
      const uint32_t low = rules[k] < up ? rules[k] : up;
      up = rules[k] < up ? up : rules[k];
      rules[k] = low;
    }
  }
  // Takes the lowest kept rule off the front (the others move down one), by fixed indices as
  // add() does; `take` false leaves the list as it is.
  GPUNFV_HD GPUNFV_FORCEINLINE void pop_front(bool take) {
    for (uint32_t k = 0; k + 1 < kNidsRulesPerPacket; ++k) rules[k] = take ? rules[k + 1] : rules[k];
    if (take) rules[kNidsRulesPerPacket - 1] = kNidsNoRule;
  }

  // Rule indices of the version's rule set made global (NidsView::rule_base), order kept.
  GPUNFV_HD void rebase(uint32_t base) {
    for (uint32_t k = 0; k < kept(); ++k) rules[k] += base;
  }

  // Little-endian words, so the host reads the same record from either backend; one bounds
  // check for the record (a check per byte stored doubled the GPU kernel's instructions).
  GPUNFV_HD void store(IsoSpan<uint8_t> out) const {
    uint32_t w[1 + kNidsRulesPerPacket];
    w[0] = fired;
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) w[1 + k] = rules[k];
    words::store_le_words(out, 0, w);
  }
  static NidsResult load(const uint8_t* in) {
    NidsResult r;
    r.fired = load_word(in);
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) r.rules[k] = load_word(in + 4 + 4 * k);
    return r;
  }

 private:
  static uint32_t load_word(const uint8_t* in) {
    return uint32_t(in[0]) | uint32_t(in[1]) << 8 | uint32_t(in[2]) << 16 | uint32_t(in[3]) << 24;
  }
};

#define GPUNFV_NIDS_DROPS(X) X(nids_match, "dropped by a NIDS rule (action: drop)")
GPUNFV_NF_DROP_REASONS(NidsDrop, "nids", GPUNFV_NIDS_DROPS);

// What both backends' per-packet code reads.
struct NidsView {
  RuleMatcherRef matcher;
  uint32_t result_offset = 0;  // this NF's slice of the results record
  bool drop = false;           // action: drop
  uint32_t rule_base = 0;      // added to the rule indices a result stores (nids.h: versions)
};
static_assert(iso_view<NidsView>, GPUNFV_ISO_VIEW_MESSAGE);

// The verdict for a packet with result r.
GPUNFV_HD GPUNFV_FORCEINLINE NfVerdict nids_verdict(const NidsView& v, const NidsResult& r) {
  return v.drop && r.fired != 0 ? NfVerdict(NidsDrop::nids_match) : DropReason::none;
}

// The CPU backend's per-packet evaluation: one pass over the whole payload, matched patterns in
// a bitmap (cleared again sparsely through the list of what was set). One scratch per thread.
class NidsScratch {
 public:
  // A word at least: the bitmap is walked (core/iso_walk.h), and a walk's table holds a row.
  explicit NidsScratch(uint32_t patterns) : bits_((patterns + 63) / 64 + (patterns == 0), 0) {}

  NidsResult evaluate(const RuleMatcherRef& m, IsoSpan<const uint8_t> payload) {
    matched_.clear();
    // Indexed by the pattern ids the automaton gives: kept inside the bitmap (core/iso_walk.h).
    IsoWalk<uint64_t, 0> bits(IsoSpan<uint64_t>(bits_.data(), bits_.size()));
    m.ac.scan(payload, [&](uint32_t p, uint32_t) {
      uint64_t& word = bits.at(p >> 6);
      const uint64_t bit = uint64_t(1) << (p & 63);
      if (!(word & bit)) {
        word |= bit;
        matched_.push_back(p);
      }
    });
    NidsResult r;
    if (matched_.empty()) return r;
    auto is_matched = [&](uint32_t p) { return (bits.at(p >> 6) >> (p & 63)) & 1; };
    RuleMatcherRef::Walk rules = m.walk();
    for (uint32_t p : matched_) m.rules_fired_by(rules, p, is_matched, [&r](uint32_t rule) { r.add(rule); });
    for (uint32_t p : matched_) bits.at(p >> 6) = 0;
    return r;
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> matched_;
};

// One packet on the CPU: payload, rules, result slice, verdict.
inline NfVerdict nids_packet_cpu(const NidsView& v, PacketReader p, NidsScratch& scratch) {
  IsoSpan<const uint8_t> frame = p.frame();
  const PayloadRange pr = nids_payload(frame, p.headers());
  NidsResult r = scratch.evaluate(v.matcher, frame.subspan(pr.offset, pr.length));
  r.rebase(v.rule_base);
  r.store(p.results());
  return nids_verdict(v, r);
}

}  // namespace gpunfv
