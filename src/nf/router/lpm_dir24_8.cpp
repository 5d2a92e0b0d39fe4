#include "nf/router/lpm_dir24_8.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

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
      const uint32_t entry = lpm::kValid | r.next_hop;
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
  uint32_t group = tbl8_groups_used();
  if (group >= max_tbl8_groups_)
    throw std::length_error("DIR-24-8: out of tbl8 groups (capacity " +
                            std::to_string(max_tbl8_groups_) +
                            "): too many /24 blocks hold prefixes longer than /24");
  tbl8_.resize(tbl8_.size() + lpm::kTbl8GroupEntries, fill);
  return group;
}

Dir24_8Ref Dir24_8::ref() const {
  return Dir24_8Ref(IsoSpan<const uint32_t>(tbl24_.data(), tbl24_.size()),
                    IsoSpan<const uint32_t>(tbl8_.data(), tbl8_.size()));
}

#if GPUNFV_HAVE_CUDA
void Dir24_8::upload_to_device() {
  if (on_device()) return;
  device_tbl24_.upload(tbl24_);
  device_tbl8_.upload(tbl8_);
}

Dir24_8Ref Dir24_8::device_ref() const {
  return Dir24_8Ref(device_tbl24_.span(), device_tbl8_.span());
}
#endif

}  // namespace gpunfv
