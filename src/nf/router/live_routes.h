// A router's routes as a live table: two DIR-24-8 copies, one that batches read and one that
// updates are written into beside it (on the packet path nothing waits). A batch pins the live
// copy once, at its start, and keeps it until its work there is done; an update is rendered
// into the other copy (incrementally: only the changed prefixes' ranges), which then becomes
// live in one atomic store. Before a copy is written again, the update waits until no batch
// still holds it, so every packet is looked up in exactly one whole table version.
//
// Each published update is a version (nf/table_versions.h); pins count their packets against it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nf/router/lpm_dir24_8.h"
#include "nf/router/route_set.h"
#include "nf/table_versions.h"

namespace gpunfv {

class LiveRouteTable {
  struct Slot {
    explicit Slot(Dir24_8 t) : table(std::move(t)) {}
    Dir24_8 table;
    std::atomic<int64_t> users{0};
    std::atomic<uint64_t>* packets = nullptr;  // the version's counter (kept by the log)
    uint64_t version = 0;
    std::vector<Ipv4Prefix> dirty;  // changed since this copy was last written
  };

 public:
  // One change of a transaction: a route to set, or (no next hop) a prefix to delete.
  struct Change {
    Ipv4Prefix prefix;
    std::optional<uint32_t> next_hop;
  };

  LiveRouteTable(const std::vector<Route>& routes, uint32_t max_tbl8_groups);

  // The live copy, held by a batch while it is looked up in.
  class Pin {
   public:
    explicit Pin(Slot* s) : s_(s) {}
    ~Pin() {
      if (s_) s_->users.fetch_sub(1, std::memory_order_release);
    }
    Pin(Pin&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;
    const Dir24_8& table() const { return s_->table; }
    uint64_t version() const { return s_->version; }
    void count(uint64_t packets) const { s_->packets->fetch_add(packets, std::memory_order_relaxed); }
    std::atomic<uint64_t>* counter() const { return s_->packets; }  // kept for the run

   private:
    Slot* s_;
    friend class LiveRouteTable;
  };
  Pin pin() const;
  int slot_index(const Pin& p) const { return p.s_ == slots_[0].get() ? 0 : 1; }

  // Applies `changes` as one version (`what` names it in the report). Checked whole first:
  // a prefix with host bits set, a delete of a prefix not in the table, a next hop above
  // lpm::kMaxNextHop, or more /24 blocks with longer prefixes than tbl8 groups throws
  // std::invalid_argument and changes nothing (the group count is checked against the copy
  // written now, counting the groups earlier deletes free there only once it has had them: near
  // the limit an update may be refused until the next one). Returns the new version. One
  // writer at a time.
  uint64_t apply(const std::vector<Change>& changes, const std::string& what);
  // The changes that turn the current routes into `routes` (deletes, then sets).
  std::vector<Change> diff_to(const std::vector<Route>& routes) const;

  std::vector<Route> routes() const;
  size_t route_count() const;
  std::optional<uint32_t> find(const Ipv4Prefix& p) const;
  const Dir24_8& live_table() const { return slots_[live_.load()]->table; }
  const Dir24_8& slot_table(int s) const { return slots_[s]->table; }
  const TableVersionLog& log() const { return log_; }
  // The packet counter of the version copy `s` holds now (for counts made elsewhere, e.g. on
  // the device, added once no batch can still add to them).
  std::atomic<uint64_t>* slot_counter(int s) const { return slots_[s]->packets; }

  // Device twins (the GPU backend sets both before packets flow): before_write(slot) returns
  // once no device work reads that copy; after_write(slot, touched) copies what changed.
  std::function<void(int)> before_write;
  std::function<void(int, const Dir24_8::Touched&)> after_write;

 private:
  void render(Slot& s, Dir24_8::Touched& touched);
  void check(const std::vector<Change>& changes) const;

  std::array<std::unique_ptr<Slot>, 2> slots_;
  std::atomic<int> live_{0};
  mutable std::mutex writer_;
  RouteSet routes_;
  TableVersionLog log_;
  uint64_t next_version_ = 1;
};

}  // namespace gpunfv
