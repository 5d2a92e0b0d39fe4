#include "peers/rte_lpm_peer.h"

#include <rte_errno.h>
#include <rte_lpm.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <unordered_set>
#include <vector>

namespace gpunfv {

static_assert(RteLpmPeer::kFound == RTE_LPM_LOOKUP_SUCCESS);
static_assert(RteLpmPeer::kNextHopMask == lpm::kMaxNextHop);

namespace {

uint32_t host_mask(uint8_t len) { return len == 32 ? 0 : ~uint32_t(0) >> len; }

}  // namespace

RteLpmPeer::RteLpmPeer(std::span<const Route> routes) : RteLpmPeer(routes, 0, 0) {}

void RteLpmPeer::add(const Route& r) {
  const int rc = rte_lpm_add(lpm_, r.prefix.addr, r.prefix.len, r.next_hop);
  if (rc < 0)
    throw DpdkError("rte_lpm_add(" + format_prefix(r.prefix) + ") failed: " + dpdk_errno_text(-rc), -rc);
}

void RteLpmPeer::remove(const Ipv4Prefix& p) {
  const int rc = rte_lpm_delete(lpm_, p.addr, p.len);
  if (rc < 0)
    throw DpdkError("rte_lpm_delete(" + format_prefix(p) + ") failed: " + dpdk_errno_text(-rc), -rc);
}

RteLpmPeer::RteLpmPeer(std::span<const Route> routes, uint32_t max_rules, uint32_t tbl8_groups) {
  ensure_dpdk_eal();
  // tbl8 groups: one per /24 block that holds a prefix longer than /24 (as in Dir24_8).
  std::unordered_set<uint32_t> long_blocks;
  size_t defaults = 0;
  for (const Route& r : routes) {
    if (r.next_hop > lpm::kMaxNextHop)
      throw std::invalid_argument("rte_lpm peer: next hop " + std::to_string(r.next_hop) +
                                  " of " + format_prefix(r.prefix) + " above " +
                                  std::to_string(lpm::kMaxNextHop));
    if (r.prefix.len > 32 || (r.prefix.addr & host_mask(r.prefix.len)) != 0)
      throw std::invalid_argument("rte_lpm peer: bad prefix " + format_prefix(r.prefix));
    if (r.prefix.len > 24) long_blocks.insert(r.prefix.addr >> 8);
    if (r.prefix.len == 0) ++defaults;
  }
  tbl8_groups_ = std::max<uint32_t>({1, uint32_t(long_blocks.size()), tbl8_groups});

  static std::atomic<unsigned> serial{0};
  std::string name = "gpunfv_lpm_" + std::to_string(serial.fetch_add(1));
  rte_lpm_config config{};
  config.max_rules = uint32_t(std::max<size_t>({1, routes.size() + 2 * defaults, size_t(max_rules)}));
  config.number_tbl8s = tbl8_groups_;
  config.flags = 0;
  lpm_ = rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &config);
  if (lpm_ == nullptr)
    throw DpdkError("rte_lpm_create(" + std::to_string(config.max_rules) + " rules, " +
                        std::to_string(config.number_tbl8s) +
                        " tbl8 groups) failed: " + dpdk_errno_text(rte_errno),
                    rte_errno);

  auto add = [&](uint32_t addr, uint8_t depth, uint32_t next_hop) {
    // -EEXIST: the same prefix with the same next hop is already there (nothing to change).
    int rc = rte_lpm_add(lpm_, addr, depth, next_hop);
    if (rc < 0 && rc != -EEXIST) {
      rte_lpm_free(lpm_);
      lpm_ = nullptr;
      throw DpdkError("rte_lpm_add(" + format_prefix(Ipv4Prefix{addr, depth}) + ", " +
                          std::to_string(next_hop) + ") failed: " + dpdk_errno_text(-rc),
                      -rc);
    }
  };
  // Default routes first, as their two /1 halves (rte_lpm rejects depth 0).
  for (const Route& r : routes)
    if (r.prefix.len == 0) {
      add(0x00000000u, 1, r.next_hop);
      add(0x80000000u, 1, r.next_hop);
    }
  for (const Route& r : routes)
    if (r.prefix.len != 0) add(r.prefix.addr, r.prefix.len, r.next_hop);
  route_count_ = routes.size();
}

RteLpmPeer::~RteLpmPeer() {
  if (lpm_) rte_lpm_free(lpm_);
}

void RteLpmPeer::lookup_bulk_raw(const uint32_t* addrs, uint32_t* out, size_t n) const {
  for (size_t i = 0; i < n; i += kBurst) {
    unsigned burst = unsigned(std::min<size_t>(kBurst, n - i));
    rte_lpm_lookup_bulk(lpm_, addrs + i, out + i, burst);
  }
}

void RteLpmPeer::lookupx4(const uint32_t* addrs, uint32_t* hops, size_t n) const {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const xmm_t ip = _mm_loadu_si128(reinterpret_cast<const __m128i*>(addrs + i));
    rte_lpm_lookupx4(lpm_, ip, hops + i, kX4Miss);
  }
  for (; i < n; ++i)
    if (rte_lpm_lookup(lpm_, addrs[i], &hops[i]) != 0) hops[i] = kX4Miss;
}

void RteLpmPeer::lookup_bulk(const uint32_t* addrs, uint32_t* next_hops, bool* found,
                             size_t n) const {
  lookup_bulk_raw(addrs, next_hops, n);
  for (size_t i = 0; i < n; ++i) {
    found[i] = (next_hops[i] & kFound) != 0;
    next_hops[i] = found[i] ? next_hops[i] & kNextHopMask : 0;
  }
}

}  // namespace gpunfv
