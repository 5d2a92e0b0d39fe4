// Router: generated traffic as it is (destinations drawn from the table by the generator).
// Rows: our DIR-24-8 lookup alone, and DPDK's rte_lpm as its users run it: rte_lpm_lookupx4
// (four addresses per call, as DPDK's l3fwd does) and rte_lpm_lookup_bulk, over the same
// destination addresses (extracted per batch beforehand, so these rows are lookups only, where
// the NF's rows also parse and rewrite); every rte_lpm result is checked against our table's.
#include <fmt/format.h>

#include "nf_case.h"
#include "router_lookup.h"
#include "core/clock.h"

#if GPUNFV_HAVE_DPDK
#include "peers/rte_lpm_peer.h"
#endif

namespace gpunfv::bench {

namespace {

// Destination addresses of one round, one array per batch, and a lookup word per address.
class LookupRows : public Peer {
 public:
  bool repeatable() const override { return true; }
  bool lookup_only() const override { return true; }
  std::string scope() const override {
    return "lookup only (destinations extracted beforehand)";
  }
  uint64_t prepare(const RoundData& r) override {
    dst_.resize(r.used), out_.resize(r.used);
    uint64_t n = 0;
    for (size_t i = 0; i < r.used; ++i) {
      extract_destinations(*r.in[i], dst_[i]);
      out_[i].resize(dst_[i].size());
      n += dst_[i].size();
    }
    return n;
  }

 protected:
  std::vector<std::vector<uint32_t>> dst_, out_;
};

class OursLookup final : public LookupRows {
 public:
  explicit OursLookup(Dir24_8Ref ref) : ref_(ref) {}
  std::string name() const override { return "gpunfv DIR-24-8 lookup only"; }
  bool is_peer() const override { return false; }
  void work(size_t i, unsigned) override {
    lookup_ours(ref_, dst_[i].data(), out_[i].data(), dst_[i].size());
  }

 private:
  Dir24_8Ref ref_;
};

#if GPUNFV_HAVE_DPDK
class RteLpmLookup final : public LookupRows {
 public:
  // x4: rte_lpm_lookupx4, else rte_lpm_lookup_bulk. Shares `lpm` with the other row.
  RteLpmLookup(std::shared_ptr<const RteLpmPeer> lpm, Dir24_8Ref ours, bool x4)
      : lpm_(std::move(lpm)), ours_(ours), x4_(x4) {}
  std::string name() const override {
    return x4_ ? "DPDK rte_lpm lookupx4" : "DPDK rte_lpm lookup_bulk";
  }
  void work(size_t i, unsigned) override {
    if (x4_)
      lpm_->lookupx4(dst_[i].data(), out_[i].data(), dst_[i].size());
    else
      lpm_->lookup_bulk_raw(dst_[i].data(), out_[i].data(), dst_[i].size());
  }
  Check check(const RoundData&) override {
    Check c;
    uint32_t mine = 0;
    for (size_t i = 0; i < dst_.size(); ++i)
      for (size_t k = 0; k < dst_[i].size(); ++k) {
        lookup_ours(ours_, &dst_[i][k], &mine, 1);
        ++c.compared;
        uint32_t theirs = out_[i][k];
        if (x4_) theirs = theirs == RteLpmPeer::kX4Miss ? 0 : theirs | kFoundBit;
        if (!same_lookup(mine, theirs) && c.mismatches++ == 0)
          c.first = fmt::format("{}: gpunfv {:#x}, rte_lpm {:#x}", format_ipv4(dst_[i][k]),
                                mine & kLookupMask, theirs & kLookupMask);
      }
    return c;
  }

 private:
  std::shared_ptr<const RteLpmPeer> lpm_;
  Dir24_8Ref ours_;
  bool x4_;
};
#endif

}  // namespace

NfCase make_router_case(RuntimeConfig& rc, const CaseOptions& o) {
  NfCase c;
  c.nf_scope = "the whole NF: parse + checksum check + lookup + TTL rewrite";
  const Router& router = *find_router(rc);
  const Dir24_8Ref ours = router.table().ref();
  touch_tbl24([&](const uint32_t* a, uint32_t* out, size_t n) { lookup_ours(ours, a, out, n); });
  c.notes.push_back(fmt::format(
      "traffic: generated UDP/IPv4, destinations drawn from the table's {} prefixes", router.route_count()));
  c.peers.push_back(std::make_unique<OursLookup>(ours));
  if (!o.peers) return c;
#if GPUNFV_HAVE_DPDK
  uint64_t t0 = monotonic_ns();
  auto lpm = std::make_shared<const RteLpmPeer>(router.routes());
  touch_tbl24([&](const uint32_t* a, uint32_t* out, size_t n) { lpm->lookup_bulk_raw(a, out, n); });
  c.notes.push_back(fmt::format(
      "peer: {} rte_lpm ({} routes), built in {:.1f} s, {} tbl8 groups; rows: rte_lpm_lookupx4 "
      "four addresses a call, rte_lpm_lookup_bulk in bursts of {}; EAL {}",
      dpdk_version(), lpm->route_count(), (monotonic_ns() - t0) / 1e9, lpm->tbl8_groups(),
      RteLpmPeer::kBurst, dpdk_eal_args()));
  c.peers.push_back(std::make_unique<RteLpmLookup>(lpm, ours, true));
  c.peers.push_back(std::make_unique<RteLpmLookup>(lpm, ours, false));
#else
  c.notes.push_back(peer_missing("DPDK rte_lpm", "libdpdk-dev"));
#endif
  return c;
}

}  // namespace gpunfv::bench
