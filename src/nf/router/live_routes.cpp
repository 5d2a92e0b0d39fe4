#include "nf/router/live_routes.h"

#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_set>

namespace gpunfv {

LiveRouteTable::LiveRouteTable(const std::vector<Route>& routes, uint32_t max_tbl8_groups)
    : routes_(routes) {
  Dir24_8 first(routes, max_tbl8_groups);
  Dir24_8 second = first.clone();
  slots_[0] = std::make_unique<Slot>(std::move(first));
  slots_[1] = std::make_unique<Slot>(std::move(second));
  slots_[0]->version = next_version_++;
  slots_[0]->packets = log_.record(slots_[0]->version, "start", routes_.size()).get();
}

LiveRouteTable::Pin LiveRouteTable::pin() const {
  // Announce the use, then check the copy is still live: an update that switched copies in
  // between either sees this use (and waits for it) or is seen here (and the pin moves on).
  for (;;) {
    const int s = live_.load(std::memory_order_seq_cst);
    Slot* slot = slots_[s].get();
    slot->users.fetch_add(1, std::memory_order_seq_cst);
    if (live_.load(std::memory_order_seq_cst) == s) return Pin(slot);
    slot->users.fetch_sub(1, std::memory_order_release);
  }
}

void LiveRouteTable::check(const std::vector<Change>& changes) const {
  // What this transaction has done so far, so a delete after an add of the same prefix passes.
  std::set<std::pair<uint8_t, uint32_t>> added, deleted;
  std::unordered_set<uint32_t> new_blocks;
  for (const Change& c : changes) {
    const Ipv4Prefix& p = c.prefix;
    const uint32_t mask = p.len == 0 ? 0 : ~uint32_t(0) << (32 - p.len);
    if (p.len > 32 || (p.addr & ~mask) != 0)
      throw std::invalid_argument(format_prefix(p) + ": host bits set");
    const auto key = std::make_pair(p.len, p.addr);
    if (c.next_hop) {
      if (*c.next_hop > lpm::kMaxNextHop)
        throw std::invalid_argument(format_prefix(p) + ": next hop index out of range");
      added.insert(key);
      deleted.erase(key);
      if (p.len > 24) new_blocks.insert(p.addr >> 8);
    } else {
      const bool present = (routes_.find(p).has_value() || added.count(key)) && !deleted.count(key);
      if (!present) throw std::invalid_argument(format_prefix(p) + ": no such route");
      deleted.insert(key);
      added.erase(key);
    }
  }
  // Room for a tbl8 group per /24 block that may need a new one in the copy written now: this
  // transaction's longer prefixes and those of earlier ones still in the table that the copy
  // has not had written yet.
  const Slot& shadow = *slots_[1 - live_.load()];
  const Dir24_8& t = shadow.table;
  std::unordered_set<uint32_t> blocks = new_blocks;
  for (const Ipv4Prefix& p : shadow.dirty) {
    const auto key = std::make_pair(p.len, p.addr);
    const bool present = (routes_.find(p).has_value() && !deleted.count(key)) || added.count(key);
    if (p.len > 24 && present) blocks.insert(p.addr >> 8);
  }
  size_t needed = 0;
  for (uint32_t block : blocks) needed += !t.has_group(block);
  if (t.tbl8_groups_used() + needed > t.max_tbl8_groups())
    throw std::invalid_argument("out of tbl8 groups: " + std::to_string(t.tbl8_groups_used()) +
                                " of " + std::to_string(t.max_tbl8_groups()) + " in use, " +
                                std::to_string(needed) + " more /24 blocks with longer prefixes");
}

void LiveRouteTable::render(Slot& s, Dir24_8::Touched& touched) {
  for (const Ipv4Prefix& p : s.dirty) {
    if (auto hop = routes_.find(p))
      s.table.add(Route{p, *hop}, &touched);
    else
      s.table.remove(p, routes_.covering(p), &touched);
  }
  s.dirty.clear();
}

uint64_t LiveRouteTable::apply(const std::vector<Change>& changes, const std::string& what) {
  std::lock_guard<std::mutex> lk(writer_);
  check(changes);
  for (const Change& c : changes) {
    if (c.next_hop)
      routes_.set(Route{c.prefix, *c.next_hop});
    else
      routes_.erase(c.prefix);
    for (auto& s : slots_) s->dirty.push_back(c.prefix);
  }
  const int live = live_.load();
  Slot& shadow = *slots_[1 - live];
  // The batches that pinned this copy while it was live are done with it before it changes.
  while (shadow.users.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  if (before_write) before_write(1 - live);
  Dir24_8::Touched touched;
  render(shadow, touched);
  if (after_write) after_write(1 - live, touched);
  shadow.version = next_version_++;
  shadow.packets = log_.record(shadow.version, what, routes_.size()).get();
  live_.store(1 - live, std::memory_order_seq_cst);
  return shadow.version;
}

std::vector<LiveRouteTable::Change> LiveRouteTable::diff_to(const std::vector<Route>& routes) const {
  std::lock_guard<std::mutex> lk(writer_);
  RouteSet wanted(routes);
  std::vector<Change> out;
  for (const Route& r : routes_.routes())
    if (!wanted.find(r.prefix)) out.push_back(Change{r.prefix, std::nullopt});
  for (const Route& r : wanted.routes()) {
    auto hop = routes_.find(r.prefix);
    if (!hop || *hop != r.next_hop) out.push_back(Change{r.prefix, r.next_hop});
  }
  return out;
}

std::vector<Route> LiveRouteTable::routes() const {
  std::lock_guard<std::mutex> lk(writer_);
  return routes_.routes();
}

size_t LiveRouteTable::route_count() const {
  std::lock_guard<std::mutex> lk(writer_);
  return routes_.size();
}

std::optional<uint32_t> LiveRouteTable::find(const Ipv4Prefix& p) const {
  std::lock_guard<std::mutex> lk(writer_);
  return routes_.find(p);
}

}  // namespace gpunfv
