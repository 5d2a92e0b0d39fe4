// Compiled only with GPUNFV_HAVE_HYPERSCAN (cmake/hyperscan.cmake). The DPDK peers library
// globs bench/peers/*.cpp too; there this file compiles to nothing.
#if GPUNFV_HAVE_HYPERSCAN

#include "peers/hyperscan_peer.h"

#include <hs/hs.h>

#include <algorithm>

namespace gpunfv {

namespace {

struct Collect {
  std::vector<uint32_t>* ids;
};

int on_match_collect(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  static_cast<Collect*>(ctx)->ids->push_back(id);
  return 0;
}

int on_match_count(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<uint32_t*>(ctx);
  return 0;
}

}  // namespace

HyperscanPeer::HyperscanPeer(std::span<const Pattern> patterns)
    : pattern_count_(uint32_t(patterns.size())) {
  if (patterns.empty()) throw HyperscanError("hyperscan: no patterns");
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags, ids;
  for (size_t i = 0; i < patterns.size(); ++i) {
    exprs.push_back(patterns[i].bytes.data());
    lens.push_back(patterns[i].bytes.size());
    flags.push_back(HS_FLAG_SINGLEMATCH | (patterns[i].nocase ? HS_FLAG_CASELESS : 0));
    ids.push_back(unsigned(i));
  }
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           unsigned(patterns.size()), HS_MODE_BLOCK, nullptr, &db_,
                           &err) != HS_SUCCESS) {
    std::string what = "hyperscan: compile failed";
    if (err) {
      what += std::string(": ") + err->message + " (pattern " + std::to_string(err->expression) + ")";
      hs_free_compile_error(err);
    }
    throw HyperscanError(what);
  }
  if (hs_alloc_scratch(db_, &scratch_) != HS_SUCCESS) {
    hs_free_database(db_);
    throw HyperscanError("hyperscan: cannot allocate scratch");
  }
}

HyperscanPeer::~HyperscanPeer() {
  hs_free_scratch(scratch_);
  hs_free_database(db_);
}

std::vector<uint32_t> HyperscanPeer::matched_patterns(std::span<const uint8_t> text) const {
  std::vector<uint32_t> ids;
  if (text.empty()) return ids;  // hs_scan rejects a null pointer; no pattern is empty
  Collect ctx{&ids};
  if (hs_error_t e = hs_scan(db_, reinterpret_cast<const char*>(text.data()),
                             unsigned(text.size()), 0, scratch_, on_match_collect, &ctx);
      e != HS_SUCCESS)
    throw HyperscanError("hyperscan: scan failed (" + std::to_string(e) + ")");
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

uint32_t HyperscanPeer::count_matches(std::span<const uint8_t> text) const {
  uint32_t n = 0;
  if (text.empty()) return 0;
  if (hs_error_t e = hs_scan(db_, reinterpret_cast<const char*>(text.data()),
                             unsigned(text.size()), 0, scratch_, on_match_count, &n);
      e != HS_SUCCESS)
    throw HyperscanError("hyperscan: scan failed (" + std::to_string(e) + ")");
  return n;
}

size_t HyperscanPeer::database_bytes() const {
  size_t bytes = 0;
  hs_database_size(db_, &bytes);
  return bytes;
}

std::string HyperscanPeer::version() { return hs_version(); }

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_HYPERSCAN
