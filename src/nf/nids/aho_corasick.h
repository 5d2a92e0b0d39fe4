// Multi-pattern literal matching with an Aho-Corasick automaton compiled to a full DFA (Aho and
// Corasick, CACM 1975): one table read per input byte, no failure-link walks at scan time.
//
// Split as in cuCollections: PatternSet collects deduplicated patterns; AhoCorasick owns the
// tables on the host (and uploads them to the device once); AhoCorasickRef is the trivially
// copyable view both backends scan through, reading only via IsoSpan.
//
// Case. A pattern is case-sensitive or caseless (a rule's `nocase`). The automaton is built over
// case-folded bytes (ASCII A-Z -> a-z) for every pattern, and the table's columns for 'A'..'Z'
// are copies of those for 'a'..'z', so scanning needs no folding step and one pass finds both
// kinds. A match of a case-sensitive pattern that contains letters is then verified against the
// original bytes (rare: it happens only where the folded pattern occurs). This keeps one
// automaton instead of two (exact and folded), and avoids expanding a caseless pattern into its
// 2^letters spellings. Hyperscan's HS_FLAG_CASELESS has the same meaning (ASCII letters only).
//
// Layout (states numbered in breadth-first order, so the shallow states every scan visits sit
// together at the start of the table):
//   delta       states x 256 uint32: next state | kHasOutput when that state ends >= 1 pattern
//   outputs     rows of 2 uint32. Row s < states: the rows [first, last) of the state's
//               outputs. Each later row: one output, (pattern id, length | kVerify), for the
//               state's own patterns and those of its suffix states, flattened. With delta, an
//               IsoAutomaton (core/iso_walk.h): checked once where handed out.
//   depth       states uint16: length of the state's string (for chunked scans)
//   pat_len     patterns: length | kVerify when the pattern is case-sensitive with letters
//   pat_off, pat_bytes: the patterns' bytes (caseless ones lower-cased), for verification
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/compat.h"
#include "core/iso_span.h"
#include "core/iso_view.h"
#include "core/iso_walk.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

// One literal pattern in canonical form: a caseless pattern is stored lower-cased, and one
// without ASCII letters is stored as case-sensitive (caseless changes nothing for it), so two
// spellings of the same pattern get the same id.
struct Pattern {
  std::string bytes;
  bool nocase = false;
  bool operator==(const Pattern&) const = default;
};

GPUNFV_HD GPUNFV_FORCEINLINE uint8_t ascii_fold(uint8_t c) {
  return (c >= 'A' && c <= 'Z') ? uint8_t(c + ('a' - 'A')) : c;
}

Pattern canonical_pattern(std::string_view bytes, bool nocase);

// Deduplicated patterns, ids in order of first insertion.
class PatternSet {
 public:
  // The id of the pattern (added if new). Empty patterns are rejected (std::invalid_argument):
  // an empty string matches everywhere and no rule language allows one.
  uint32_t add(std::string_view bytes, bool nocase);
  const std::vector<Pattern>& patterns() const { return patterns_; }
  size_t size() const { return patterns_.size(); }
  const Pattern& operator[](uint32_t id) const { return patterns_[id]; }

 private:
  std::vector<Pattern> patterns_;
  std::unordered_map<std::string, uint32_t> id_of_;  // key: nocase flag byte + bytes
};

namespace ac {
inline constexpr uint32_t kHasOutput = 1u << 31;
inline constexpr uint32_t kStateMask = kHasOutput - 1;
inline constexpr uint32_t kVerify = 1u << 31;
inline constexpr uint32_t kLenMask = kVerify - 1;
inline constexpr uint32_t kMaxPatternBytes = 65535;  // depth is 16 bits
}  // namespace ac

class AhoCorasickRef {
 public:
  using Transitions = IsoDfa<8, ac::kStateMask>;              // core/iso_walk.h
  using Automaton = IsoAutomaton<8, ac::kStateMask>;          // transitions and outputs
  using iso_fields = IsoFields<Automaton, IsoSpan<const uint16_t>, IsoSpan<const uint32_t>,
                               IsoSpan<const uint32_t>, IsoSpan<const uint8_t>, uint32_t>;  // core/iso_view.h
  AhoCorasickRef() = default;
  GPUNFV_HD AhoCorasickRef(Automaton automaton, IsoSpan<const uint16_t> depth,
                           IsoSpan<const uint32_t> pat_len, IsoSpan<const uint32_t> pat_off,
                           IsoSpan<const uint8_t> pat_bytes, uint32_t max_len)
      : automaton_(automaton), depth_(depth), pat_len_(pat_len), pat_off_(pat_off),
        pat_bytes_(pat_bytes), max_len_(max_len) {}

  GPUNFV_HD uint32_t pattern_count() const { return uint32_t(pat_len_.size()); }
  GPUNFV_HD uint32_t max_pattern_length() const { return max_len_; }

  // Reports on_match(pattern, end) for every occurrence in `text` (end: index of its last
  // byte); a pattern occurring several times is reported each time.
  template <typename OnMatch>
  GPUNFV_HD void scan(IsoSpan<const uint8_t> text, OnMatch on_match) const {
    scan_range(text, 0, uint32_t(text.size()), on_match);
  }

  // Reports exactly the occurrences that START in [begin, end), reading text from `begin` on:
  // the automaton starts at the root at `begin` (so it finds every occurrence starting there or
  // later) and reads past `end` only while an occurrence starting before `end` can still be in
  // progress: while the current state's string starts before `end`, and never more than
  // (longest pattern - 1) bytes past it. Chunks [b0,b1), [b1,b2), ... of a text thus report
  // every occurrence once, each thread overlapping the next chunk by at most the longest
  // pattern minus one byte (usually by a few bytes: most states are shallow).
  template <typename OnMatch>
  GPUNFV_HD void scan_range(IsoSpan<const uint8_t> text, uint32_t begin, uint32_t end,
                            OnMatch on_match) const {
    const uint32_t n = uint32_t(text.size());
    if (begin >= end || max_len_ == 0) return;
    // An occurrence starting at end - 1 ends by end + max_len - 2 at the latest.
    const uint32_t hard_stop = end + max_len_ - 1 < n ? end + max_len_ - 1 : n;
    // What the loop reads: the automaton as a walk (its transitions and each state's output
    // range were checked when the tables were handed out, so a step and a state's outputs cost
    // no check), the depths' span in registers (read through `this`, the kernel's parameter
    // memory, it would be read again every byte, as the checks' refusals store), and the text
    // up to hard_stop, whose bounds check is then the loop's own condition.
    IsoAutomatonWalk<8, ac::kStateMask> walk(automaton_);
    const IsoSpan<const uint16_t> depth = depth_;
    const IsoSpan<const uint8_t> window = text.subspan(0, hard_stop);
    for (uint32_t i = begin; i < window.size(); ++i) {
      // Before byte i the state's string is text[i - depth, i): once it starts at or after
      // `end`, every occurrence still in progress starts there too and is the next chunk's.
      if (i >= end && depth[walk.row()] <= i - end) break;
      const uint32_t e = walk.step(window[i]);
      if (e & ac::kHasOutput) report(walk, text, i, end, on_match);
    }
  }

 private:
  // Whether pattern p, `len` bytes, occurs in `text` ending at `end` (for case-sensitive
  // patterns with letters: the automaton matched its folded form). Byte by byte, each read
  // checked: two sub-views would hold two more pointers live inside the scan loop, and this
  // runs only where a folded pattern ended.
  GPUNFV_HD bool verify(IsoSpan<const uint8_t> text, uint32_t p, uint32_t len, uint32_t end) const {
    const uint32_t from = end + 1 - len, off = pat_off_[p];
    for (uint32_t k = 0; k < len; ++k)
      if (text[from + k] != pat_bytes_[off + k]) return false;
    return true;
  }
  // The outputs of the walk's state, which text[i] ended.
  template <typename OnMatch>
  GPUNFV_HD void report(const IsoAutomatonWalk<8, ac::kStateMask>& walk, IsoSpan<const uint8_t> text,
                        uint32_t i, uint32_t end, OnMatch& on_match) const {
    walk.for_each_output([&](uint32_t p, uint32_t len_flags) {
      // Occurrence text[i + 1 - len, i]: the next chunk's if it starts at or after `end`.
      if (i + 1 - (len_flags & ac::kLenMask) >= end) return;
      if ((len_flags & ac::kVerify) && !verify(text, p, len_flags & ac::kLenMask, i)) return;
      on_match(p, i);
    });
  }

  Automaton automaton_;
  IsoSpan<const uint16_t> depth_;
  IsoSpan<const uint32_t> pat_len_;
  IsoSpan<const uint32_t> pat_off_;
  IsoSpan<const uint8_t> pat_bytes_;
  uint32_t max_len_ = 0;
};
static_assert(std::is_trivially_copyable_v<AhoCorasickRef>);

class AhoCorasick {
 public:
  // Builds the DFA. Pattern ids are indices into `patterns`, which must be canonical (see
  // Pattern) and non-empty; duplicates are allowed (both ids are reported). Throws
  // std::length_error for a pattern longer than ac::kMaxPatternBytes or more than 2^31 states.
  explicit AhoCorasick(std::span<const Pattern> patterns);

  // States the automaton of `patterns` has (the distinct prefixes of their folded forms, the
  // root included), counted without building it.
  static size_t state_count_of(std::span<const Pattern> patterns);
  // Peak bytes building it takes (the tables plus the trie and scratch beside them): about
  // 1.1 KiB per state, most of it the state's 256-entry row. Lets a caller refuse a rule set
  // before any of that is allocated.
  static size_t build_bytes_of(std::span<const Pattern> patterns);

  AhoCorasick(const AhoCorasick&) = delete;
  AhoCorasick& operator=(const AhoCorasick&) = delete;
  AhoCorasick(AhoCorasick&&) = default;
  AhoCorasick& operator=(AhoCorasick&&) = default;

  // View of the host tables (CPU backend, tests).
  AhoCorasickRef ref() const;

  uint32_t state_count() const { return uint32_t(depth_.size()); }
  // The table entry for `state` reading `byte`: next state (ac::kStateMask) | ac::kHasOutput.
  uint32_t transition(uint32_t state, uint8_t byte) const { return delta_[(size_t(state) << 8) | byte]; }
  uint32_t pattern_count() const { return uint32_t(pat_len_.size()); }
  uint32_t max_pattern_length() const { return max_len_; }
  size_t output_entries() const { return outputs_.size() / 2 - depth_.size(); }
  // Bytes of all tables (what the device holds too).
  size_t table_bytes() const;

  // Sorted, distinct ids of the patterns occurring in `text` (tests, peers' checks).
  std::vector<uint32_t> matched_patterns(std::span<const uint8_t> text) const;

#if GPUNFV_HAVE_CUDA
  // Copies the tables to device memory (once; later calls do nothing).
  void upload_to_device();
  // View of the device tables; valid after upload_to_device().
  AhoCorasickRef device_ref() const;
#endif

 private:
  std::vector<uint32_t> delta_;
  AhoCorasickRef::Automaton host_automaton_;  // delta_ and outputs_, checked once
  std::vector<uint32_t> outputs_;
  std::vector<uint16_t> depth_;
  std::vector<uint32_t> pat_len_;
  std::vector<uint32_t> pat_off_;
  std::vector<uint8_t> pat_bytes_;
  uint32_t max_len_ = 0;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint32_t> d_delta_, d_outputs_, d_pat_len_, d_pat_off_;
  DeviceBuffer<uint16_t> d_depth_;
  AhoCorasickRef::Automaton device_automaton_;  // d_delta_ and d_outputs_, checked once
  DeviceBuffer<uint8_t> d_pat_bytes_;
#endif
};

}  // namespace gpunfv
