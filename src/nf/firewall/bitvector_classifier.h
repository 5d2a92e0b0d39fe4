// 5-tuple packet classification by bit-vector search (Lakshman & Stiliadis, SIGCOMM 1998), the
// algorithm of G-NET's firewall, with Baboescu & Varghese's aggregated bit vectors (SIGCOMM
// 2001) to skip words that cannot match.
//
// Each of the five fields splits its value space into elementary intervals at the rules' range
// ends (a prefix is the range of addresses it covers); every value inside one interval is
// matched by the same set of rules, kept as a bit vector of N bits, bit i = rule i. A lookup
// finds each field's interval, ANDs the five vectors word by word, and the lowest set bit is the
// first (highest-priority) matching rule. Each vector carries a summary word per 64 rule words,
// bit k set when rule word k is non-zero; ANDing the summaries first visits only the words that
// are non-zero in all five fields.
//
// Lookup structures per field:
//   addresses  sorted interval starts (at most 2N+1), searched by binary search inside the range
//              of intervals that a 16-bit index of the address's top half points to
//   ports      a table of the 65536 values
//   protocol   a table of the 256 values
// Identical bit vectors are stored once (many intervals share one: e.g. the gaps between
// prefixes that only wildcard rules cover), so a table holds an interval -> vector id map and a
// pool of distinct vectors.
//
// Split as in cuCollections: BitVectorClassifier owns and builds the tables on the host (and
// uploads them to the device once); BitVectorClassifierRef is the trivially copyable view
// classify() runs on, on either backend, reading only through IsoSpans.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/compat.h"
#include "core/iso_span.h"
#include "core/iso_view.h"
#include "nf/firewall/five_tuple.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

namespace bitvector {

GPUNFV_HD GPUNFV_FORCEINLINE uint32_t lowest_set_bit(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__ffsll(static_cast<long long>(x)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctzll(x));
#endif
}

// Rule words per vector for `rules` rules, and the summary words that cover them.
constexpr uint32_t rule_words(size_t rules) { return uint32_t((rules + 63) / 64); }
constexpr uint32_t summary_words(size_t rules) { return (rule_words(rules) + 63) / 64; }

// Entries of an address field's index: one per value of the top 16 bits, plus one.
inline constexpr size_t kBlockIndexEntries = (size_t(1) << 16) + 1;

}  // namespace bitvector

// An address field's intervals. block_first[b] is the interval holding address b << 16, and
// block_first[65536] the last interval, so an address a lies in one of the intervals
// block_first[a >> 16] .. block_first[(a >> 16) + 1].
struct AddressFieldRef {
  IsoSpan<const uint32_t> starts;       // ascending, starts[0] == 0
  IsoSpan<const uint32_t> vector_of;    // bit vector id of each interval
  IsoSpan<const uint32_t> block_first;  // bitvector::kBlockIndexEntries entries

  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t vector_id(uint32_t addr) const {
    const uint32_t block = addr >> 16;
    uint32_t lo = block_first[block];
    uint32_t n = block_first[block + 1] - lo + 1;
    // The last interval in [lo, lo + n) whose start is <= addr (starts[lo] <= addr holds);
    // at most log2(n) + 1 steps.
    while (n > 1) {
      const uint32_t half = n / 2;
      if (starts[lo + half] <= addr) {
        lo += half;
        n -= half;
      } else {
        n = half;
      }
    }
    return vector_of[lo];
  }
};

// A port or protocol field: the bit vector id of every value.
struct ValueFieldRef {
  IsoSpan<const uint32_t> vector_of;
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t vector_id(uint32_t value) const { return vector_of[value]; }
};

class BitVectorClassifierRef {
 public:
  using iso_fields = IsoFields<AddressFieldRef, AddressFieldRef, ValueFieldRef, ValueFieldRef,
                               ValueFieldRef, IsoSpan<const uint64_t>, uint32_t, uint32_t,
                               uint32_t>;  // core/iso_view.h
  BitVectorClassifierRef() = default;
  BitVectorClassifierRef(AddressFieldRef src, AddressFieldRef dst, ValueFieldRef src_port,
                         ValueFieldRef dst_port, ValueFieldRef proto,
                         IsoSpan<const uint64_t> vectors, uint32_t rule_count)
      : src_(src),
        dst_(dst),
        src_port_(src_port),
        dst_port_(dst_port),
        proto_(proto),
        vectors_(vectors),
        rule_count_(rule_count),
        rule_words_(bitvector::rule_words(rule_count)),
        summary_words_(bitvector::summary_words(rule_count)) {}

  // Index of the first rule that matches `t`, or kNoRule.
  GPUNFV_HD uint32_t classify(const FiveTuple& t) const {
    if (rule_count_ == 0) return kNoRule;
    // A vector is its summary words, then its rule words.
    const size_t stride = size_t(summary_words_) + rule_words_;
    const size_t a = stride * src_.vector_id(t.src_addr);
    const size_t b = stride * dst_.vector_id(t.dst_addr);
    const size_t c = stride * src_port_.vector_id(t.src_port);
    const size_t d = stride * dst_port_.vector_id(t.dst_port);
    const size_t e = stride * proto_.vector_id(t.proto);
    for (uint32_t s = 0; s < summary_words_; ++s) {
      uint64_t candidates =
          vectors_[a + s] & vectors_[b + s] & vectors_[c + s] & vectors_[d + s] & vectors_[e + s];
      while (candidates != 0) {
        const size_t w = size_t(s) * 64 + bitvector::lowest_set_bit(candidates);
        const size_t off = summary_words_ + w;
        const uint64_t rules = vectors_[a + off] & vectors_[b + off] & vectors_[c + off] &
                               vectors_[d + off] & vectors_[e + off];
        if (rules != 0) return uint32_t(w * 64 + bitvector::lowest_set_bit(rules));
        candidates &= candidates - 1;
      }
    }
    return kNoRule;
  }

  GPUNFV_HD uint32_t rule_count() const { return rule_count_; }

 private:
  AddressFieldRef src_, dst_;
  ValueFieldRef src_port_, dst_port_, proto_;
  IsoSpan<const uint64_t> vectors_;
  uint32_t rule_count_ = 0;
  uint32_t rule_words_ = 0;
  uint32_t summary_words_ = 0;
};
static_assert(std::is_trivially_copyable_v<BitVectorClassifierRef>);

enum class TupleField { src_addr, dst_addr, src_port, dst_port, proto };
inline constexpr size_t kTupleFields = 5;

class BitVectorClassifier {
 public:
  // Bit vectors of a set whose distinct intervals all hold different rule sets grow as N^2:
  // the build stops with std::length_error past this many table bytes.
  static constexpr size_t kDefaultMaxTableBytes = size_t(1) << 30;

  // Builds the tables; rule i has priority over rule i + 1. Throws std::length_error for more
  // than kMaxFirewallRules rules or a table above `max_table_bytes`, std::invalid_argument for
  // a prefix with host bits set or a port range with lo > hi.
  explicit BitVectorClassifier(std::span<const FiveTupleRule> rules,
                               size_t max_table_bytes = kDefaultMaxTableBytes);

  BitVectorClassifier(const BitVectorClassifier&) = delete;
  BitVectorClassifier& operator=(const BitVectorClassifier&) = delete;
  BitVectorClassifier(BitVectorClassifier&&) = default;
  BitVectorClassifier& operator=(BitVectorClassifier&&) = default;

  // View of the host tables (CPU backend, tests).
  BitVectorClassifierRef ref() const;

  size_t rule_count() const { return rule_count_; }
  // Elementary intervals of a field (for ports and protocol: before expansion to a value table).
  size_t interval_count(TupleField f) const { return intervals_[size_t(f)]; }
  // Distinct bit vectors stored, and the bytes of one (summary words included).
  size_t vector_count() const { return vector_count_; }
  size_t vector_bytes() const { return (size_t(summary_words_) + rule_words_) * sizeof(uint64_t); }
  // All table memory: vectors, interval starts, id maps, address indexes, value tables.
  size_t table_bytes() const;

#if GPUNFV_HAVE_CUDA
  // Copies the tables to device memory (once; later calls do nothing).
  void upload_to_device();
  bool on_device() const { return on_device_; }
  // View of the device tables; valid after upload_to_device().
  BitVectorClassifierRef device_ref() const;
#endif

 private:
  struct AddressField {
    std::vector<uint32_t> starts, vector_of, block_first;
  };

  size_t rule_count_ = 0;
  size_t vector_count_ = 0;
  uint32_t rule_words_ = 0, summary_words_ = 0;
  std::array<size_t, kTupleFields> intervals_{};
  AddressField src_, dst_;
  std::vector<uint32_t> src_port_, dst_port_, proto_;  // vector id per value
  std::vector<uint64_t> vectors_;                      // distinct vectors, summary words first

#if GPUNFV_HAVE_CUDA
  struct DeviceAddressField {
    DeviceBuffer<uint32_t> starts, vector_of, block_first;
  };
  DeviceAddressField device_src_, device_dst_;
  DeviceBuffer<uint32_t> device_src_port_, device_dst_port_, device_proto_;
  DeviceBuffer<uint64_t> device_vectors_;
  bool on_device_ = false;
#endif
};

}  // namespace gpunfv
