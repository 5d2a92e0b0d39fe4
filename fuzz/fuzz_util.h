// Shared by the fuzz targets (fuzz_*.cpp): a private scratch folder, a byte reader over the
// input, host batches of arbitrary frames run through a one-NF chain, and FUZZ_CHECK, the one
// way a target reports a finding (a trap, which libFuzzer and the replay driver both catch).
// Expected outcomes of bad input (ConfigError and the like) are never findings.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "chain/processing_stage.h"
#include "config/config.h"
#include "core/batch.h"

#define FUZZ_CHECK(cond)                                                                     \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);    \
      __builtin_trap();                                                                      \
    }                                                                                        \
  } while (0)

namespace gpunfv::fuzz {

// A folder of this process's own under the system temp folder, removed at exit. Inputs name
// files in it only (targets that write files refuse inputs with a path separator).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpunfv-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    static std::string keep = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

inline std::string write_file(const std::string& name, const void* data, size_t size) {
  std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
  return path;
}
inline std::string write_file(const std::string& name, const std::string& text) {
  return write_file(name, text.data(), text.size());
}

// Reads fixed-size fields from the front of the input; past the end it yields zeros.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  size_t left() const { return left_; }
  uint8_t u8() { return left_ ? (--left_, *p_++) : 0; }
  uint16_t u16() { return uint16_t(u8() | u8() << 8); }
  uint32_t u32() { return uint32_t(u16()) | uint32_t(u16()) << 16; }
  std::vector<uint8_t> bytes(size_t n) {
    n = std::min(n, left_);
    std::vector<uint8_t> out(p_, p_ + n);
    p_ += n, left_ -= n;
    return out;
  }

 private:
  const uint8_t* p_;
  size_t left_;
};

// The rest of the input as frames: each a 2-byte little-endian length (taken modulo
// `max_len + 1`) and that many bytes (fewer at the end), at most `max_frames`.
inline std::vector<std::vector<uint8_t>> read_frames(Reader& in, size_t max_frames,
                                                     uint32_t max_len) {
  std::vector<std::vector<uint8_t>> frames;
  while (in.left() > 0 && frames.size() < max_frames)
    frames.push_back(in.bytes(in.u16() % (max_len + 1)));
  return frames;
}

// A host batch holding `frames` as a port's rx leaves them (len, port, seq, wire_ns), slots of
// `stride` bytes (a longer frame keeps its length and is cut to the slot, as ports do).
inline std::unique_ptr<Batch> make_batch(const std::vector<std::vector<uint8_t>>& frames,
                                         uint32_t stride, uint32_t result_stride) {
  auto b = std::make_unique<Batch>(uint32_t(std::max<size_t>(frames.size(), 1)), stride,
                                   MemoryKind::host, result_stride);
  b->set_count(uint32_t(frames.size()));
  BatchView v = b->view();
  for (uint32_t i = 0; i < frames.size(); ++i) {
    if (!frames[i].empty())
      std::memcpy(v.data.framework_data() + size_t(i) * stride, frames[i].data(),
                  std::min<size_t>(frames[i].size(), stride));
    v.len[i] = uint16_t(frames[i].size());
    v.port[i] = 0;
    v.seq[i] = i;
    v.wire_ns[i] = 1'000'000'000ull + i;
  }
  return b;
}

// One chain from port 0 through `nf` alone (result record at offset 0), as the executor builds
// it; run() classifies a batch and runs the NF over it (run_chain_cpu).
struct OneNfChain {
  RuntimeConfig rc;
  explicit OneNfChain(std::unique_ptr<NetworkFunction> nf) {
    nf->set_result_offset(0);
    nf->prepare(Backend::cpu);
    rc.nfs.push_back(std::move(nf));
    Chain c;
    c.name = "fuzz";
    c.set_path({0});
    rc.chains.push_back(std::move(c));
  }
  void run(const BatchView& b) const { run_chain_cpu(rc, rc.chains[0], b); }
};

// Every packet accounted for: dropped with a reason (classification leaves next_nf at
// kChainDone, an NF at its node), or passed on past the NF.
inline void check_accounted(const BatchView& b) {
  for (uint32_t i = 0; i < b.count; ++i) {
    const bool dropped = b.verdict[i] != uint8_t(DropReason::none);
    FUZZ_CHECK(dropped || b.next_nf[i] == kChainDone);
    FUZZ_CHECK(int(b.verdict[i]) < drop_reason_count());  // a declared reason
  }
}

inline uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t be32(const uint8_t* p) { return uint32_t(be16(p)) << 16 | be16(p + 2); }

}  // namespace gpunfv::fuzz
