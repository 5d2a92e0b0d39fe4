#include "nf/router/lpm_dir24_8.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#if GPUNFV_HAVE_CUDA
#include "gpu/gpu_calls.h"
#endif

namespace gpunfv {

namespace {

uint32_t prefix_mask(uint8_t len) { return len == 0 ? 0 : ~uint32_t(0) << (32 - len); }

void check_route(const Route& r) {
  if (r.prefix.len > 32 || (r.prefix.addr & ~prefix_mask(r.prefix.len)) != 0)
    throw std::invalid_argument("DIR-24-8: invalid prefix " + format_prefix(r.prefix));
  if (r.next_hop > lpm::kMaxNextHop)
    throw std::invalid_argument("DIR-24-8: next hop index " + std::to_string(r.next_hop) +
                                " of " + format_prefix(r.prefix) + " exceeds " +
                                std::to_string(lpm::kMaxNextHop));
}

}  // namespace

Dir24_8::Dir24_8(std::span<const Route> routes, uint32_t max_tbl8_groups)
    : tbl24_(lpm::kTbl24Entries, 0),
      max_tbl8_groups_(std::min(max_tbl8_groups, lpm::kIndexMask + 1)),
      route_count_(routes.size()) {
  for (const Route& r : routes) check_route(r);

  // Insert shortest prefixes first, so every later (longer) prefix simply overwrites the part
  // of the range it covers; ties keep input order, so a repeated prefix's last route wins.
  // All prefixes up to /24 are in tbl24 before any tbl8 group is made, so a new group can be
  // filled with the tbl24 entry it replaces (the longest covering prefix of length <= 24).
  std::array<std::vector<uint32_t>, 33> by_length;
  for (uint32_t i = 0; i < routes.size(); ++i) by_length[routes[i].prefix.len].push_back(i);

  for (int len = 0; len <= 32; ++len) {
    for (uint32_t i : by_length[len]) {
      const Route& r = routes[i];
      const uint32_t entry = lpm::kValid | (uint32_t(len) << lpm::kDepthShift) | r.next_hop;
      if (len <= 24) {
        size_t first = r.prefix.addr >> 8;
        size_t count = size_t(1) << (24 - len);
        std::fill_n(tbl24_.begin() + first, count, entry);
        continue;
      }
      uint32_t& slot = tbl24_[r.prefix.addr >> 8];
      if (!(slot & lpm::kExtended)) slot = lpm::kExtended | allocate_tbl8_group(slot);
      size_t group_base = size_t(slot & lpm::kIndexMask) * lpm::kTbl8GroupEntries;
      size_t first = group_base + (r.prefix.addr & 0xFF);
      size_t count = size_t(1) << (32 - len);
      std::fill_n(tbl8_.begin() + first, count, entry);
    }
  }
}

uint32_t Dir24_8::allocate_tbl8_group(uint32_t fill) {
  if (!free_groups_.empty()) {
    const uint32_t group = free_groups_.back();
    free_groups_.pop_back();
    std::fill_n(tbl8_.begin() + size_t(group) * lpm::kTbl8GroupEntries, lpm::kTbl8GroupEntries, fill);
    return group;
  }
  uint32_t group = uint32_t(tbl8_.size() / lpm::kTbl8GroupEntries);
  if (group >= max_tbl8_groups_)
    throw std::length_error("DIR-24-8: out of tbl8 groups (capacity " +
                            std::to_string(max_tbl8_groups_) +
                            "): too many /24 blocks hold prefixes longer than /24");
  tbl8_.resize(tbl8_.size() + lpm::kTbl8GroupEntries, fill);
  return group;
}

namespace {

uint32_t depth_of(uint32_t e) { return (e & lpm::kDepthMask) >> lpm::kDepthShift; }

// An entry belongs to a prefix of length `len` or shorter (or to none): a route of length
// `len` covering it takes it over.
bool taken_by(uint32_t e, uint32_t len) { return !(e & lpm::kValid) || depth_of(e) <= len; }

uint32_t entry_of(const std::optional<Route>& r) {
  if (!r) return 0;
  return lpm::kValid | (uint32_t(r->prefix.len) << lpm::kDepthShift) | r->next_hop;
}

}  // namespace

void Dir24_8::add(const Route& r, Touched* touched) {
  check_route(r);
  const uint32_t len = r.prefix.len;
  const uint32_t entry = entry_of(r);
  if (len <= 24) {
    const size_t first = r.prefix.addr >> 8, count = size_t(1) << (24 - len);
    for (size_t i = first; i < first + count; ++i) {
      uint32_t& slot = tbl24_[i];
      if (slot & lpm::kExtended) {
        uint32_t* g = tbl8_.data() + size_t(slot & lpm::kIndexMask) * lpm::kTbl8GroupEntries;
        for (size_t k = 0; k < lpm::kTbl8GroupEntries; ++k)
          if (taken_by(g[k], len)) g[k] = entry;
        if (touched) touched->groups.push_back(slot & lpm::kIndexMask);
      } else if (taken_by(slot, len)) {
        slot = entry;
        if (touched) touched->tbl24.push_back(uint32_t(i));
      }
    }
    return;
  }
  uint32_t& slot = tbl24_[r.prefix.addr >> 8];
  if (!(slot & lpm::kExtended)) {
    slot = lpm::kExtended | allocate_tbl8_group(slot);
    if (touched) touched->tbl24.push_back(r.prefix.addr >> 8);
  }
  const uint32_t group = slot & lpm::kIndexMask;
  uint32_t* g = tbl8_.data() + size_t(group) * lpm::kTbl8GroupEntries;
  const size_t first = r.prefix.addr & 0xFF, count = size_t(1) << (32 - len);
  for (size_t k = first; k < first + count; ++k)
    if (taken_by(g[k], len)) g[k] = entry;
  if (touched) touched->groups.push_back(group);
}

void Dir24_8::remove(const Ipv4Prefix& p, const std::optional<Route>& covering, Touched* touched) {
  check_route(Route{p, 0});
  if (covering && (covering->prefix.len >= p.len ||
                   (p.addr & prefix_mask(covering->prefix.len)) != covering->prefix.addr))
    throw std::invalid_argument("DIR-24-8: " + format_prefix(covering->prefix) +
                                " does not cover " + format_prefix(p));
  const uint32_t len = p.len;
  const uint32_t entry = entry_of(covering);
  auto owned = [len](uint32_t e) { return (e & lpm::kValid) && depth_of(e) == len; };
  if (len <= 24) {
    const size_t first = p.addr >> 8, count = size_t(1) << (24 - len);
    for (size_t i = first; i < first + count; ++i) {
      uint32_t& slot = tbl24_[i];
      if (slot & lpm::kExtended) {
        uint32_t* g = tbl8_.data() + size_t(slot & lpm::kIndexMask) * lpm::kTbl8GroupEntries;
        for (size_t k = 0; k < lpm::kTbl8GroupEntries; ++k)
          if (owned(g[k])) g[k] = entry;
        if (touched) touched->groups.push_back(slot & lpm::kIndexMask);
      } else if (owned(slot)) {
        slot = entry;
        if (touched) touched->tbl24.push_back(uint32_t(i));
      }
    }
    return;
  }
  uint32_t& slot = tbl24_[p.addr >> 8];
  if (!(slot & lpm::kExtended)) return;  // the prefix was never in the table
  const uint32_t group = slot & lpm::kIndexMask;
  uint32_t* g = tbl8_.data() + size_t(group) * lpm::kTbl8GroupEntries;
  const size_t first = p.addr & 0xFF, count = size_t(1) << (32 - len);
  for (size_t k = first; k < first + count; ++k)
    if (owned(g[k])) g[k] = entry;
  if (touched) touched->groups.push_back(group);
  fold_group_if_plain(p.addr >> 8, touched);
}

// A group whose entries all come from routes of /24 or shorter holds one value (the longest
// such route covering the /24, or none): the tbl24 entry takes it and the group is reused.
void Dir24_8::fold_group_if_plain(uint32_t tbl24_index, Touched* touched) {
  uint32_t& slot = tbl24_[tbl24_index];
  const uint32_t group = slot & lpm::kIndexMask;
  const uint32_t* g = tbl8_.data() + size_t(group) * lpm::kTbl8GroupEntries;
  for (size_t k = 0; k < lpm::kTbl8GroupEntries; ++k)
    if ((g[k] & lpm::kValid) && depth_of(g[k]) > 24) return;
  slot = g[0];
  free_groups_.push_back(group);
  if (touched) touched->tbl24.push_back(tbl24_index);
}

bool Dir24_8::same_lookups(const Dir24_8& o) const {
  auto group = [](const Dir24_8& t, uint32_t e) {
    return t.tbl8_.data() + size_t(e & lpm::kIndexMask) * lpm::kTbl8GroupEntries;
  };
  auto value = [](uint32_t e) { return (e & lpm::kValid) ? (e & (lpm::kValid | lpm::kIndexMask)) : 0; };
  for (size_t i = 0; i < lpm::kTbl24Entries; ++i) {
    const uint32_t a = tbl24_[i], b = o.tbl24_[i];
    const bool ea = a & lpm::kExtended, eb = b & lpm::kExtended;
    if (!ea && !eb) {
      if (value(a) != value(b)) return false;
      continue;
    }
    for (size_t k = 0; k < lpm::kTbl8GroupEntries; ++k) {
      const uint32_t x = ea ? group(*this, a)[k] : a, y = eb ? group(o, b)[k] : b;
      if (value(x) != value(y)) return false;
    }
  }
  return true;
}

Dir24_8 Dir24_8::clone() const {
  Dir24_8 t;
  t.tbl24_ = tbl24_;
  t.tbl8_ = tbl8_;
  t.free_groups_ = free_groups_;
  t.max_tbl8_groups_ = max_tbl8_groups_;
  t.route_count_ = route_count_;
  return t;
}

Dir24_8Ref Dir24_8::ref() const {
  return Dir24_8Ref(IsoSpan<const uint32_t>(tbl24_.data(), tbl24_.size()),
                    IsoSpan<const uint32_t>(tbl8_.data(), tbl8_.size()));
}

#if GPUNFV_HAVE_CUDA
void Dir24_8::upload_to_device() {
  if (on_device()) return;
  device_tbl24_.upload(tbl24_);
  device_tbl8_.allocate(size_t(max_tbl8_groups_) * lpm::kTbl8GroupEntries);
  if (!tbl8_.empty())
    gpu::copy_to_device(device_tbl8_.data(), tbl8_.data(), tbl8_.size() * sizeof(uint32_t));
}

Dir24_8Ref Dir24_8::device_ref() const {
  return Dir24_8Ref(device_tbl24_.span(), device_tbl8_.span());
}
#endif

}  // namespace gpunfv
