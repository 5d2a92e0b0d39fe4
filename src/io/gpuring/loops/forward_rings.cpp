#include "io/gpuring/loops/forward_rings.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#endif

namespace gpunfv::gpuring {

std::string_view forward_variant_name(ForwardVariant v) {
  switch (v) {
    case ForwardVariant::wr: return "wr";
    case ForwardVariant::rd: return "rd";
    case ForwardVariant::bn: return "bn";
  }
  return "?";
}

ForwardVariant parse_forward_variant(std::string_view s) {
  if (s == "wr") return ForwardVariant::wr;
  if (s == "rd") return ForwardVariant::rd;
  if (s == "bn") return ForwardVariant::bn;
  throw std::invalid_argument("forward variant must be wr, rd or bn, not '" + std::string(s) + "'");
}

namespace {

// The pool's arrays (slots, queues, stash) of `owner` in place of `v`'s.
RingSetView with_pool_of(RingSetView v, const RingSetView& owner) {
  v.slots = owner.slots;
  v.bus_base = owner.bus_base;
  v.to_tx = owner.to_tx;
  v.freed = owner.freed;
  v.stash = owner.stash;
  v.queues = owner.queues;
  v.slot_taken_ns = owner.slot_taken_ns;  // stamped by A's rx, read by B's tx
  return v;
}

}  // namespace

ForwardRings::ForwardRings(RingSet& from, RingSet& to, ForwardVariant variant, bool route,
                           bool integrity)
    : from_(from), to_(to), variant_(variant) {
  const RingParams& a = from.params();
  const RingParams& b = to.params();
  if (&from == &to) throw std::invalid_argument("gpuring forward: from and to are the same rings");
  if (a.rings != b.rings || a.ring_size != b.ring_size || a.slots_per_ring != b.slots_per_ring ||
      a.slot_bytes != b.slot_bytes)
    throw std::invalid_argument(
        "gpuring forward: both ports need the same rings, ring_size, slots_per_ring and slot_bytes "
        "(ring pair r of one feeds ring pair r of the other)");
  if (from.placement() != to.placement())
    throw std::invalid_argument("gpuring forward: both ports' rings must lie in the same memory");
  if (variant == ForwardVariant::bn && from.placement() != Placement::host)
    throw std::invalid_argument("gpuring forward: variant bn goes through host memory (placement: host)");

  const RingSetView& owner = pool_owner().view();
  view_.rx = with_pool_of(from.view(), owner);
  view_.tx = with_pool_of(to.view(), owner);
  view_.route = route;
  view_.integrity = integrity;
  if (from.placement() == Placement::device) {
#if GPUNFV_HAVE_CUDA
    const size_t sum_bytes = sizeof(uint32_t) * a.total_slots();
    GPUNFV_CUDA(cudaMalloc(&sums_, sum_bytes));
    GPUNFV_CUDA(cudaMemset(sums_, 0, sum_bytes));
#endif
  } else {
    sums_ = static_cast<uint32_t*>(std::calloc(a.total_slots(), sizeof(uint32_t)));
    if (!sums_) throw std::bad_alloc();
  }
  view_.sums = sums_;
  if (variant == ForwardVariant::wr) arm_rx_with_owner_slots();
}

ForwardRings::~ForwardRings() {
#if GPUNFV_HAVE_CUDA
  if (from_.placement() == Placement::device) {
    cudaFree(sums_);
    return;
  }
#endif
  std::free(sums_);
}

// A's rx descriptors were armed with A's slots when A's RingSet was built; wr re-arms the
// same slot numbers in B's memory (A's software ring keeps the numbers, now of B's pool, whose
// freed queue already holds the rest).
void ForwardRings::arm_rx_with_owner_slots() {
  const RingParams& p = from_.params();
  std::vector<RxDesc> desc(p.descriptors());
  for (uint32_t r = 0; r < p.rings; ++r)
    for (uint32_t i = 0; i < p.ring_size; ++i) {
      RxDesc& d = desc[r * p.ring_size + i];
      d.read.pkt_addr = view_.rx.slot_bus(r * p.slots_per_ring + i);
      d.read.hdr_addr = 0;
    }
  const size_t bytes = sizeof(RxDesc) * desc.size();
  if (from_.placement() == Placement::device) {
#if GPUNFV_HAVE_CUDA
    GPUNFV_CUDA(cudaMemcpy(view_.rx.rx_desc, desc.data(), bytes, cudaMemcpyHostToDevice));
#endif
  } else {
    std::memcpy(view_.rx.rx_desc, desc.data(), bytes);
  }
}

bool ForwardRings::all_done() const {
  for (uint32_t r = 0; r < from_.params().rings; ++r)
    if (!load_acquire(&from_.host_done()[r].rx) || !load_acquire(&to_.host_done()[r].tx)) return false;
  return true;
}

SlotAudit ForwardRings::audit() const {
  const RingParams& p = from_.params();
  const RingSet& owner = pool_owner();
  const std::vector<uint8_t> a_meta = from_.copy_metadata();
  const std::vector<uint8_t> b_meta = to_.copy_metadata();
  const std::vector<uint8_t>& o_meta = &owner == &from_ ? a_meta : b_meta;
  auto in = [](const std::vector<uint8_t>& meta, const RingSet& set, const auto* ring_ptr) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(ring_ptr)>>;
    return reinterpret_cast<const T*>(meta.data() + set.metadata_offset(ring_ptr));
  };
  const RingSetView& av = from_.view();
  const RingSetView& bv = to_.view();
  const RingSetView& ov = owner.view();
  const uint32_t* rx_slot = in(a_meta, from_, av.rx_slot);
  const RxCounters* rxc = in(a_meta, from_, av.rx_counters);
  const uint32_t* tx_slot = in(b_meta, to_, bv.tx_slot);
  const TxCounters* txc = in(b_meta, to_, bv.tx_counters);
  const uint64_t* to_tx = in(o_meta, owner, ov.to_tx);
  const uint32_t* freed = in(o_meta, owner, ov.freed);
  const uint32_t* stash = in(o_meta, owner, ov.stash);
  const RingQueues* queues = in(o_meta, owner, ov.queues);

  SlotAudit a;
  a.total = p.total_slots();
  a.counters_agree = true;
  std::vector<uint8_t> seen(p.total_slots(), 0);
  for (uint32_t ring = 0; ring < p.rings; ++ring) {
    auto note = [&](uint32_t slot, uint64_t& bucket) {
      ++bucket;
      const uint32_t first = ring * p.slots_per_ring;
      if (slot < first || slot >= first + p.slots_per_ring) {
        ++a.foreign;
        return;
      }
      if (seen[slot]++) ++a.duplicates;
    };
    const RingQueues& q = queues[ring];
    const uint32_t qmask = p.queue_capacity - 1;
    for (uint32_t i = 0; i < p.ring_size; ++i) note(rx_slot[ring * p.ring_size + i], a.armed);
    for (uint32_t i = q.freed.head; i != q.freed.tail; ++i)
      note(freed[uint64_t(ring) * p.queue_capacity + (i & qmask)], a.free);
    for (uint32_t i = 0; i < q.stash_count && i < p.slots_per_ring; ++i)
      note(stash[uint64_t(ring) * p.slots_per_ring + i], a.free);
    uint64_t queued = 0;
    for (uint32_t i = q.to_tx.head; i != q.to_tx.tail; ++i)
      note(static_cast<uint32_t>(to_tx[uint64_t(ring) * p.queue_capacity + (i & qmask)]), queued);
    a.queued_for_tx += queued;
    const TxCounters& t = txc[ring];
    const uint64_t in_tx = t.posted - t.completed;
    for (uint64_t k = t.completed; k != t.posted; ++k)
      note(tx_slot[ring * p.ring_size + (k & (p.ring_size - 1))], a.in_tx_ring);
    const RxCounters& r = rxc[ring];
    uint64_t drops = 0;
    for (uint64_t d : r.drops) drops += d;
    // A packet waiting in the queue has not yet been admitted (passed) nor dropped.
    a.counters_agree = a.counters_agree && r.packets == q.allocated &&
                       r.packets == r.passed + drops + queued && q.freed_by_drop == drops &&
                       q.freed_by_tx == t.completed && r.passed == t.posted &&
                       r.packets == q.freed_by_drop + q.freed_by_tx + queued + in_tx;
  }
  for (uint8_t s : seen) a.missing += s == 0;
  return a;
}

}  // namespace gpunfv::gpuring
