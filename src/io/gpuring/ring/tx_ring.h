// The tx half of the ring protocol, one ring, one thread: take processed packets from the rx
// side's queue, post a descriptor for each (advanced data descriptor, EOP|IFCS, RS in
// write-back mode), write TDT after tail_batch descriptors or tail_timeout_ns, and reclaim
// sent descriptors, returning their slots to the pool:
//   - write-back mode (the FPGA paper's congestion control): the NIC writes DD back into each
//     descriptor it sent; the driver reuses a descriptor only after seeing DD;
//   - head mode: no write-back; the driver reads the NIC's TDH register (a read across PCIe)
//     and reclaims everything before it.
// Either way at most ring_size - 1 descriptors are outstanding, so tx never overruns the ring.
#pragma once

#include <cstdint>

#include "io/gpuring/ring/internal/slot_pool.h"
#include "io/gpuring/ring/team.h"

namespace gpunfv::gpuring {

struct AdmitAll {
  GPUNFV_HD bool operator()(uint32_t, uint32_t) const { return true; }
};

class TxRing {
 public:
  GPUNFV_HD TxRing(const RingSetView& v, uint32_t ring)
      : v_(v), latency_(v.latency[ring]), announce_ns_(v.tx_announce_ns + uint64_t(ring) * v.p.ring_size),
        desc_(v.tx_desc + uint64_t(ring) * v.p.ring_size),
        sw_(v.tx_slot + uint64_t(ring) * v.p.ring_size), regs_(queue_registers(v.bar, ring)),
        counters_(v.tx_counters[ring]), done_(v.done[ring]), pool_(v, ring, SlotPool::Side::tx),
        queue_(to_tx_queue(v, ring)), posted_(&counters_.posted), completed_(&counters_.completed),
        tail_writes_(&counters_.tail_writes), head_reads_(&counters_.head_reads),
        dd_polls_(&counters_.dd_polls) {}

  GPUNFV_HD uint32_t outstanding() const { return (next_to_use_ - next_to_clean_) & mask(); }

  // Returns sent descriptors' slots to the pool; how many.
  GPUNFV_HD uint32_t reclaim() {
    measure(SoloTeam{});
    if (next_to_clean_ == next_to_use_) return 0;
    uint32_t n = 0;
    if (v_.p.tx_writeback) {
      while (next_to_clean_ != next_to_use_) {
        dd_polls_.add();
        if (!tx_upper_done(load_acquire(&desc_[next_to_clean_].qword[1]))) break;
        release(next_to_clean_);
        ++n;
      }
    } else {
      head_reads_.add();
      const uint32_t head = load_acquire_sys(regs_.tdh);
      while (next_to_clean_ != head) {
        release(next_to_clean_);
        ++n;
      }
    }
    return n;
  }

  // The same for a team of lanes (team.h): in write-back mode each lane looks at the DD of one
  // outstanding descriptor (one memory round trip for the whole team) and the leader reclaims
  // the leading run of done ones; head mode reads TDH as reclaim() does. One release for the
  // slots freed. Team-wide call; every lane gets the count.
  template <typename Team>
  GPUNFV_HD uint32_t reclaim(const Team& team) {
    measure(team);
    if (!v_.p.tx_writeback) {
      uint32_t n = 0;
      if (team.leader()) n = reclaim();
      return team.share(n);
    }
    const uint32_t first = team.share(next_to_clean_);
    const uint32_t outstanding_now = team.share(outstanding());
    if (outstanding_now == 0) return 0;
    const uint32_t lane = team.lane();
    bool done = false;
    if (lane < outstanding_now) done = tx_upper_done(load_acquire(&desc_[(first + lane) & mask()].qword[1]));
    const uint32_t n = team.leading(done);
    team.sync();
    if (team.leader()) {
      dd_polls_.add(n < outstanding_now ? n + 1 : n);
      for (uint32_t i = 0; i < n; ++i) {
        pool_.free_by_tx_unpublished(sw_[next_to_clean_]);
        completed_.add();
        next_to_clean_ = (next_to_clean_ + 1) & mask();
      }
      if (n) pool_.publish_frees();
    }
    return n;
  }

  // Posts queued packets while the ring has room; how many.
  GPUNFV_HD uint32_t post() { return post(AdmitAll{}); }

  // The same, asking `admit(slot, len)` first for each packet: one it refuses is not posted and
  // belongs to the caller from then on (the forwarder's integrity check drops it).
  template <typename Admit>
  GPUNFV_HD uint32_t post(Admit&& admit) {
    uint32_t n = 0, taken = 0;
    uint64_t entry;
    while (take_queued(entry)) {
      ++taken;
      const auto slot = static_cast<uint32_t>(entry);
      const auto len = static_cast<uint32_t>(entry >> 32);
      if (!admit(slot, len)) continue;
      post_slot(slot, len);
      ++n;
    }
    if (taken) publish_taken();
    return n;
  }

  // post() for a team: each lane reads one queued entry (one memory round trip for up to a
  // team's worth; a lone leader waits for each entry in turn, about half a microsecond apiece
  // on the GPU), then the leader posts them in queue order. Team-wide call; every lane gets
  // the count.
  template <typename Team>
  GPUNFV_HD uint32_t post_team(const Team& team) {
    uint32_t posted = 0;
    for (;;) {
      const uint32_t n = team.share(team.leader() ? postable(team.size()) : 0u);
      if (n == 0) break;
      const uint32_t first = team.share(team.leader() ? queue_head() : 0u);
      team.sync();  // the leader has seen them queued: the lanes may read the entries
      const uint64_t entry = team.lane() < n ? queued_entry(first + team.lane()) : 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t e = team.from(i, entry);
        if (team.leader()) post_slot(static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32));
      }
      if (team.leader()) consume_queued(n);
      posted += n;
      if (n < team.size()) break;
    }
    return posted;
  }

  // post() in two halves, for a caller that admits a packet with work of its own in between
  // (the forward loop's team-wide integrity check): take the next queued packet (slot | len
  // << 32) if the ring has room for it; then post it, or keep it (it is the caller's). After a
  // burst of takes, publish_taken() hands their queue entries back (one release for all).
  GPUNFV_HD bool take_queued(uint64_t& entry) {
    return outstanding() < v_.p.ring_size - 1 && queue_.pop_unpublished(entry);
  }
  GPUNFV_HD void publish_taken() { queue_.publish_head(); }

  // The same for a team (the forward loop's admission, several packets at once): the leader
  // asks how many queued packets could be posted now (at most `max`) and where they start;
  // any lane reads entry i with queued_entry(first + i); the leader then posts or keeps each,
  // in order, and consume_queued(n) takes them off the queue.
  GPUNFV_HD uint32_t postable(uint32_t max) {
    const uint32_t room = v_.p.ring_size - 1 - outstanding();
    const uint32_t queued = queue_.available();
    const uint32_t n = room < queued ? room : queued;
    return n < max ? n : max;
  }
  GPUNFV_HD uint32_t queue_head() const { return queue_.head_index(); }
  GPUNFV_HD uint64_t queued_entry(uint32_t index) const { return queue_.at(index); }
  GPUNFV_HD void consume_queued(uint32_t n) { queue_.consume(n); }
  GPUNFV_HD void post_slot(uint32_t slot, uint32_t len) {
    TxDesc* d = desc_ + next_to_use_;
    d->read.buffer_addr = v_.slot_bus(slot);
    d->read.cmd_type_len = tx_cmd_type_len(len, v_.p.tx_writeback);
    d->read.olinfo_status = len << kTxPaylenShift;  // also clears a stale DD
    sw_[next_to_use_] = slot;
    next_to_use_ = (next_to_use_ + 1) & mask();
    posted_.add();
    if (unannounced_++ == 0) first_unannounced_ns_ = ring_now_ns();
    if (unannounced_ >= v_.p.tail_batch) write_tail();
  }

  GPUNFV_HD void flush_tail(bool force) {
    if (unannounced_ == 0) return;
    if (force || ring_now_ns() - first_unannounced_ns_ >= v_.p.tail_timeout_ns) write_tail();
  }

  GPUNFV_HD bool queue_empty() { return queue_.empty(); }
  // Batch mode (ring_batch_loops.h): a packet the chain dropped never reaches the ring; its slot
  // goes back through this side's free queue (the one producer of it).
  GPUNFV_HD void free_dropped(uint32_t slot) { pool_.free_by_tx(slot); }
  // The same for a burst: free_dropped_unpublished for each, then publish_dropped once (one
  // release for the burst instead of one per slot).
  GPUNFV_HD void free_dropped_unpublished(uint32_t slot) { pool_.free_by_tx_unpublished(slot); }
  GPUNFV_HD void publish_dropped() { pool_.publish_frees(); }
  GPUNFV_HD void finish(uint32_t how = 1u) {
    measure(SoloTeam{});
    store_release_sys(&done_.tx, how);
  }

  // Adds the descriptors announced since the last call to the ring's latency histogram
  // (gpu_latency.h): each one's tail-write time less the time rx took its packet. Called at the
  // start of every reclaim, before any of their slots can be freed and taken again, so the
  // tail writes themselves only store a time per descriptor. Lanes take descriptors in groups
  // of kMeasurePerLane, loading a group's slots and times before using any (a lone thread
  // thus waits for memory once per group, not once per packet). Team-wide call.
  template <typename Team>
  GPUNFV_HD void measure(const Team& team) {
    const uint32_t n = team.share(measure_count_);
    if (n == 0) return;
    team.sync();  // the leader's announce times and slot ids, visible to every lane
    const uint32_t from = team.share(measure_from_);
    constexpr uint32_t kMeasurePerLane = 4;
    for (uint32_t base = team.lane() * kMeasurePerLane; base < n; base += team.size() * kMeasurePerLane) {
      uint64_t at[kMeasurePerLane], taken[kMeasurePerLane];
      uint32_t slot[kMeasurePerLane];
      for (uint32_t k = 0; k < kMeasurePerLane; ++k) {
        const uint32_t d = (from + base + k) & mask();
        at[k] = base + k < n ? announce_ns_[d] : 0;
        slot[k] = base + k < n ? sw_[d] : 0;
      }
      for (uint32_t k = 0; k < kMeasurePerLane; ++k) taken[k] = base + k < n ? v_.slot_taken_ns[slot[k]] : 0;
      for (uint32_t k = 0; k < kMeasurePerLane; ++k)
        if (base + k < n) latency_.add(at[k] > taken[k] ? at[k] - taken[k] : 0);
    }
    team.sync();
    if (team.leader()) measure_count_ = 0;
  }

 private:
  GPUNFV_HD uint32_t mask() const { return v_.p.ring_size - 1; }
  GPUNFV_HD void release(uint32_t i) {
    pool_.free_by_tx(sw_[i]);
    completed_.add();
    next_to_clean_ = (i + 1) & mask();
  }
  GPUNFV_HD void write_tail() {
    // The time each descriptor was announced, for measure(): stores only, nothing waited for.
    const uint64_t now = ring_now_ns();
    for (uint32_t k = unannounced_; k > 0; --k) announce_ns_[(next_to_use_ - k) & mask()] = now;
    if (measure_count_ == 0) measure_from_ = (next_to_use_ - unannounced_) & mask();
    measure_count_ += unannounced_;
    store_release_sys(regs_.tdt, next_to_use_);
    tail_writes_.add();
    unannounced_ = 0;
  }

  const RingSetView& v_;
  GpuLatencyHistogram& latency_;
  uint64_t* announce_ns_;  // per descriptor: when its tail write happened
  uint32_t measure_from_ = 0, measure_count_ = 0;  // announced, not yet in the histogram
  TxDesc* desc_;
  uint32_t* sw_;
  QueueRegisters regs_;
  TxCounters& counters_;
  RingDone& done_;
  SlotPool pool_;
  SpscQueue<uint64_t> queue_;
  OwnedWord<uint64_t> posted_, completed_, tail_writes_, head_reads_, dd_polls_;
  uint32_t next_to_use_ = 0;
  uint32_t next_to_clean_ = 0;
  uint32_t unannounced_ = 0;
  uint64_t first_unannounced_ns_ = 0;
};

}  // namespace gpunfv::gpuring
