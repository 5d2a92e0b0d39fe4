// Intel Hyperscan (libhs 5.4, block mode, literal API) as the independent peer of the NIDS's
// Aho-Corasick DFA: a test checks that both find the same set of patterns in every packet
// payload, and the NIDS benchmark times both over the same payloads.
//
// The patterns are compiled with hs_compile_lit_multi, one id per pattern (its index), with
// HS_FLAG_CASELESS for caseless ones and HS_FLAG_SINGLEMATCH (a set of matched ids is what is
// compared, and what a rule engine needs). Hyperscan is not involved in gpunfv itself.
//
// Built only when CMake finds libhs (cmake/hyperscan.cmake, GPUNFV_HAVE_HYPERSCAN=1). The
// header includes no Hyperscan header, so its users need none of its compile flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nf/nids/aho_corasick.h"

struct hs_database;
struct hs_scratch;

namespace gpunfv {

class HyperscanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class HyperscanPeer {
 public:
  // Compiles the patterns (ids: their indices). Throws HyperscanError.
  explicit HyperscanPeer(std::span<const Pattern> patterns);
  ~HyperscanPeer();
  HyperscanPeer(const HyperscanPeer&) = delete;
  HyperscanPeer& operator=(const HyperscanPeer&) = delete;

  // Sorted, distinct ids of the patterns occurring in `text`. Not thread-safe (one scratch).
  std::vector<uint32_t> matched_patterns(std::span<const uint8_t> text) const;
  // Number of distinct patterns occurring in `text` (what a benchmark times: no allocation).
  uint32_t count_matches(std::span<const uint8_t> text) const;

  size_t database_bytes() const;
  uint32_t pattern_count() const { return pattern_count_; }
  static std::string version();

 private:
  hs_database* db_ = nullptr;
  hs_scratch* scratch_ = nullptr;
  uint32_t pattern_count_ = 0;
};

}  // namespace gpunfv
