// nf_bench's per-NF parts: how each NF's traffic is shaped from generated packets, and the peer
// library rows (and our own like-for-like "only" rows) with their agreement checks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "chain/runtime_config.h"
#include "core/splitmix64.h"

namespace gpunfv::bench {

// One round of packets, as peers see it outside timed regions.
struct RoundData {
  const Batches& in;       // the generated packets, after the case's traffic step
  const Batches& cpu_out;  // our CPU backend's output for them (all threads)
  size_t used;             // batches [0, used) hold packets
  unsigned threads;        // for work outside timed regions (copies, references, checks)
};

// A row pair (1 thread, all threads) timed over the same round as the CPU backend.
class Peer {
 public:
  virtual ~Peer() = default;
  // Row label without the thread count, e.g. "DPDK rte_acl classify".
  virtual std::string name() const = 0;
  // A library peer (a ratio baseline, checked against us); false for our own "only" rows.
  virtual bool is_peer() const { return true; }
  // Counts lookups rather than packets through the NF (no Gbit/s).
  virtual bool lookup_only() const { return false; }
  // The work a row includes, e.g. "lookup only (addresses extracted beforehand)".
  virtual std::string scope() const = 0;
  // work() may run again on its own output (it only reads the round and overwrites its
  // results): a timed pass then sweeps the round several times, so that on many cores a pass
  // is long against starting it.
  virtual bool repeatable() const { return false; }
  // Outside timed regions: takes this round's inputs; returns the units one run handles.
  virtual uint64_t prepare(const RoundData& r) = 0;
  // Outside timed regions, before every run (e.g. fresh input for a transform done in place).
  virtual void before_run(const RoundData& r) {}
  // The timed work: batch i on thread t (t below the thread count the case was made for).
  virtual void work(size_t batch, unsigned thread) = 0;
  // After a run: its results compared with ours (where checked()).
  virtual Check check(const RoundData& r) { return {}; }
  virtual bool checked() const { return is_peer(); }
  // A line for the output after the table (e.g. how often the peer found something).
  virtual std::string summary() const { return {}; }
};

struct NfCase {
  // The work gpunfv's own NF rows include (the CPU backend's and the GPU's).
  std::string nf_scope = "the whole NF: parse + its work + results record";
  std::vector<std::string> notes;            // traffic and peer lines for the output
  std::vector<std::unique_ptr<Peer>> peers;  // the first with is_peer() is the ratio baseline
  // Post-fill step over one generated batch (outside timed regions, batches in parallel):
  // rewrites packets into this NF's traffic. Deterministic in `seed`. Empty: none.
  std::function<void(Batch&, uint64_t seed)> shape;
  // After the CPU backend's run of each round (outside timed regions): reads its output, e.g.
  // to count what the NF found; `summary` says it after the table. Either may be empty.
  std::function<void(const RoundData&)> observe;
  std::function<std::string()> summary;
};

struct CaseOptions {
  unsigned threads = 1;  // the all-threads rows' thread count (per-thread peer state)
  bool peers = true;     // false: --no-peer
};

// By the type of the chain's first NF. Throws std::runtime_error for a type without a case.
NfCase make_case(RuntimeConfig& rc, const CaseOptions& o);

NfCase make_router_case(RuntimeConfig& rc, const CaseOptions& o);
NfCase make_firewall_case(RuntimeConfig& rc, const CaseOptions& o);
NfCase make_nids_case(RuntimeConfig& rc, const CaseOptions& o);
NfCase make_ipsec_case(RuntimeConfig& rc, const CaseOptions& o);

// --- traffic helpers (traffic.cpp) -----------------------------------------------------------

using Rng = SplitMix64;  // reproducible test data, the same on every platform

// Recomputes the IPv4 header checksum and the TCP or UDP checksum of an Ethernet/IPv4 frame
// whose IP header starts at byte 14 (what the generator builds).
void refresh_checksums(uint8_t* frame, uint32_t len);

// The frame bytes of packet i of a batch.
inline uint8_t* frame_of(const Batch& b, uint32_t i) {
  return b.base() + b.layout().off_data + size_t(i) * b.stride();
}

// What a case reports when a peer library is missing from this build.
std::string peer_missing(const std::string& what, const std::string& package);

}  // namespace gpunfv::bench
