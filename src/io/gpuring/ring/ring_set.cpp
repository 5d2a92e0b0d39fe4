#include "io/gpuring/ring/ring_set.h"

#include <fmt/core.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#endif

namespace gpunfv::gpuring {

namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

void* aligned_zeroed(size_t bytes) {
  void* p = std::aligned_alloc(4096, align_up(bytes, 4096));
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return p;
}

}  // namespace

MappedLayout mapped_layout(uint32_t rings) {
  static_assert(alignof(RunFlags) == 64 && alignof(RingDone) == 64);
  MappedLayout m;
  m.flags = align_up(kBarBytes, alignof(RunFlags));
  m.done = align_up(m.flags + sizeof(RunFlags), alignof(RingDone));
  m.total = m.done + sizeof(RingDone) * rings;
  return m;
}

// Offsets of the arrays inside the ring memory; packet slots come last so snapshots copy only
// the part before them.
struct RingSet::Layout {
  size_t rx_desc, tx_desc, rx_slot, tx_slot, to_tx, freed, stash, queues, rx_counters,
      tx_counters, slot_taken_ns, latency, tx_announce_ns, slots, meta_bytes, total;

  explicit Layout(const RingParams& p) {
    size_t off = 0;
    auto take = [&](size_t bytes) {
      size_t at = off;
      off = align_up(off + bytes, 256);
      return at;
    };
    rx_desc = take(sizeof(RxDesc) * p.descriptors());
    tx_desc = take(sizeof(TxDesc) * p.descriptors());
    rx_slot = take(sizeof(uint32_t) * p.descriptors());
    tx_slot = take(sizeof(uint32_t) * p.descriptors());
    to_tx = take(sizeof(uint64_t) * p.rings * p.queue_capacity);
    freed = take(sizeof(uint32_t) * p.rings * p.queue_capacity);
    stash = take(sizeof(uint32_t) * p.total_slots());
    queues = take(sizeof(RingQueues) * p.rings);
    rx_counters = take(sizeof(RxCounters) * p.rings);
    tx_counters = take(sizeof(TxCounters) * p.rings);
    slot_taken_ns = take(sizeof(uint64_t) * p.total_slots());
    latency = take(sizeof(GpuLatencyHistogram) * p.rings);
    tx_announce_ns = take(sizeof(uint64_t) * p.descriptors());
    meta_bytes = off;
    slots = take(size_t(p.slot_bytes) * p.total_slots());
    total = off;
  }
};

std::string SlotAudit::describe() const {
  return fmt::format(
      "slots={} free={} armed={} queued={} in_tx={} held_by_batches={} duplicates={} missing={} "
      "foreign={} counters_agree={}",
      total, free, armed, queued_for_tx, in_tx_ring, held_by_batches, duplicates, missing, foreign,
      counters_agree);
}

RingSet::RingSet(const RingParams& params, Placement where) : where_(where) {
  const RingParams p = finish_params(params);
  if (p.rings == 0 || p.ring_size < 8 || (p.ring_size & (p.ring_size - 1)) != 0)
    throw std::invalid_argument("ring_size must be a power of two >= 8, rings >= 1");
  if (p.slots_per_ring <= p.ring_size)
    throw std::invalid_argument("slots_per_ring must exceed ring_size (rx re-arms before it frees)");
  if (p.slot_bytes < 64 || p.slot_bytes % 64 != 0)
    throw std::invalid_argument("slot_bytes must be a multiple of 64");
  if (p.tail_batch == 0) throw std::invalid_argument("tail_batch must be >= 1");

  const Layout l(p);
  meta_bytes_ = l.meta_bytes;
  total_bytes_ = l.total;

  // Registers and flags: mapped pinned memory on the GPU path, plain memory otherwise.
  if (p.rings > kMaxQueues) throw std::invalid_argument("at most 128 rings (the 82599's queue registers)");
  const MappedLayout ml = mapped_layout(p.rings);
  const size_t mapped_bytes = ml.total;
  uint8_t* dev_bar = nullptr;
  RunFlags* dev_flags = nullptr;
  RingDone* dev_done = nullptr;
  if (where == Placement::device) {
#if GPUNFV_HAVE_CUDA
    GPUNFV_CUDA(cudaHostAlloc(&mapped_, mapped_bytes, cudaHostAllocMapped));
    std::memset(mapped_, 0, mapped_bytes);
    void* dev_mapped = nullptr;
    GPUNFV_CUDA(cudaHostGetDevicePointer(&dev_mapped, mapped_, 0));
    dev_bar = static_cast<uint8_t*>(dev_mapped);
    dev_flags = reinterpret_cast<RunFlags*>(dev_bar + ml.flags);
    dev_done = reinterpret_cast<RingDone*>(dev_bar + ml.done);
#else
    throw std::runtime_error("gpuring: device placement needs a build with CUDA");
#endif
  } else {
    mapped_ = aligned_zeroed(mapped_bytes);
  }
  host_bar_ = static_cast<uint8_t*>(mapped_);
  host_flags_ = reinterpret_cast<RunFlags*>(host_bar_ + ml.flags);
  host_done_ = reinterpret_cast<RingDone*>(host_bar_ + ml.done);
  if (where == Placement::host) {
    dev_bar = host_bar_;
    dev_flags = host_flags_;
    dev_done = host_done_;
  }

  // The ring memory's initial image is built on the host, then copied to the device.
  uint8_t* image = static_cast<uint8_t*>(aligned_zeroed(where == Placement::host ? l.total : l.meta_bytes));
  uint8_t* mem = image;
  if (where == Placement::device) {
#if GPUNFV_HAVE_CUDA
    try {
      GPUNFV_CUDA(cudaMalloc(&base_, l.total));
    } catch (...) {
      std::free(image);
      throw;
    }
    mem = base_;
#endif
  } else {
    base_ = image;
  }

  RingSetView& v = view_;
  v.p = p;
  v.rx_desc = reinterpret_cast<RxDesc*>(mem + l.rx_desc);
  v.tx_desc = reinterpret_cast<TxDesc*>(mem + l.tx_desc);
  v.rx_slot = reinterpret_cast<uint32_t*>(mem + l.rx_slot);
  v.tx_slot = reinterpret_cast<uint32_t*>(mem + l.tx_slot);
  v.to_tx = reinterpret_cast<uint64_t*>(mem + l.to_tx);
  v.freed = reinterpret_cast<uint32_t*>(mem + l.freed);
  v.stash = reinterpret_cast<uint32_t*>(mem + l.stash);
  v.queues = reinterpret_cast<RingQueues*>(mem + l.queues);
  v.rx_counters = reinterpret_cast<RxCounters*>(mem + l.rx_counters);
  v.tx_counters = reinterpret_cast<TxCounters*>(mem + l.tx_counters);
  v.slot_taken_ns = reinterpret_cast<uint64_t*>(mem + l.slot_taken_ns);
  v.latency = reinterpret_cast<GpuLatencyHistogram*>(mem + l.latency);
  v.tx_announce_ns = reinterpret_cast<uint64_t*>(mem + l.tx_announce_ns);
  v.slots = mem + l.slots;
  // The emulator's copy engine addresses slots by their (device or host) virtual address; a
  // real NIC would get the bus address the GPU memory was pinned at (docs/architecture.md).
  v.bus_base = reinterpret_cast<uint64_t>(v.slots);
  v.bar = emulated_bar_dev_ = dev_bar;
  v.flags = dev_flags;
  v.done = dev_done;

  build_initial_state(image, l);
  for (uint32_t r = 0; r < p.rings; ++r) *host_regs(r).rdt = p.ring_size - 1;

#if GPUNFV_HAVE_CUDA
  if (where == Placement::device) {
    cudaError_t e = cudaMemcpy(base_, image, l.meta_bytes, cudaMemcpyHostToDevice);
    std::free(image);
    GPUNFV_CUDA(e);
  }
#endif
}

void RingSet::bind_nic(uint64_t bus_of_memory, uint8_t* device_bar, uint8_t* host_bar) {
  if (where_ != Placement::device) throw std::logic_error("RingSet::bind_nic: a NIC DMAs into device placement only");
#if GPUNFV_HAVE_CUDA
  const Layout l(view_.p);
  view_.bus_base = bus_of_memory + l.slots;
  view_.bar = device_bar;
  host_bar_ = host_bar;
  uint8_t* image = static_cast<uint8_t*>(aligned_zeroed(l.meta_bytes));
  build_initial_state(image, l);
  cudaError_t e = cudaMemcpy(base_, image, l.meta_bytes, cudaMemcpyHostToDevice);
  std::free(image);
  GPUNFV_CUDA(e);
#endif
}

void RingSet::unbind_nic() {
  view_.bus_base = reinterpret_cast<uint64_t>(view_.slots);
  view_.bar = emulated_bar_dev_;
  host_bar_ = static_cast<uint8_t*>(mapped_);
}

void RingSet::build_initial_state(uint8_t* image, const Layout& l) const {
  const RingParams& p = view_.p;
  auto* rx_desc = reinterpret_cast<RxDesc*>(image + l.rx_desc);
  auto* rx_slot = reinterpret_cast<uint32_t*>(image + l.rx_slot);
  auto* freed = reinterpret_cast<uint32_t*>(image + l.freed);
  auto* queues = reinterpret_cast<RingQueues*>(image + l.queues);
  for (uint32_t r = 0; r < p.rings; ++r) {
    const uint32_t first = r * p.slots_per_ring;
    for (uint32_t i = 0; i < p.ring_size; ++i) {
      const uint32_t slot = first + i;
      rx_desc[r * p.ring_size + i].read.pkt_addr = view_.slot_bus(slot);
      rx_desc[r * p.ring_size + i].read.hdr_addr = 0;
      rx_slot[r * p.ring_size + i] = slot;
    }
    uint32_t n = 0;
    for (uint32_t slot = first + p.ring_size; slot < first + p.slots_per_ring; ++slot)
      freed[uint64_t(r) * p.queue_capacity + n++] = slot;
    queues[r].freed.tail = n;
  }
}

RingSet::~RingSet() {
#if GPUNFV_HAVE_CUDA
  if (where_ == Placement::device) {
    if (base_) cudaFree(base_);
    if (mapped_) cudaFreeHost(mapped_);
    return;
  }
#endif
  std::free(base_);
  std::free(mapped_);
}

void RingSet::request_stop() {
  uint32_t expected = kRunGo;
  __atomic_compare_exchange_n(&host_flags_->stop, &expected, kStopDrain, false, __ATOMIC_RELEASE,
                              __ATOMIC_RELAXED);
}

void RingSet::request_abort() { store_release(&host_flags_->stop, kStopAbort); }

std::string RingSet::describe_registers() const {
  std::string s = fmt::format("stop={}", load_acquire(&host_flags_->stop));
  for (uint32_t r = 0; r < view_.p.rings; ++r) {
    const QueueRegisters q = host_regs(r);
    s += fmt::format("; ring {}: RDH={} RDT={} TDH={} TDT={} done rx={} tx={}", r, load_acquire(q.rdh),
                     load_acquire(q.rdt), load_acquire(q.tdh), load_acquire(q.tdt),
                     load_acquire(&host_done_[r].rx), load_acquire(&host_done_[r].tx));
  }
  return s;
}

bool RingSet::all_done() const {
  for (uint32_t r = 0; r < view_.p.rings; ++r)
    if (!load_acquire(&host_done_[r].rx) || !load_acquire(&host_done_[r].tx)) return false;
  return true;
}

namespace {

// A host copy of the ring memory before the slots, for snapshots and audits.
struct MetaCopy {
  std::vector<uint8_t> bytes;
  template <typename T>
  const T* at(const void* dev_ptr, const void* dev_base) const {
    return reinterpret_cast<const T*>(bytes.data() + (static_cast<const uint8_t*>(dev_ptr) -
                                                      static_cast<const uint8_t*>(dev_base)));
  }
};

}  // namespace

static MetaCopy copy_meta(const uint8_t* base, size_t bytes, Placement where) {
  MetaCopy m;
  m.bytes.resize(bytes);
  if (where == Placement::device) {
#if GPUNFV_HAVE_CUDA
    GPUNFV_CUDA(cudaMemcpy(m.bytes.data(), base, bytes, cudaMemcpyDeviceToHost));
#endif
  } else {
    std::memcpy(m.bytes.data(), base, bytes);
  }
  return m;
}

std::vector<uint8_t> RingSet::copy_metadata() const { return copy_meta(base_, meta_bytes_, where_).bytes; }

RingSnapshot RingSet::snapshot() const {
  const MetaCopy m = copy_meta(base_, meta_bytes_, where_);
  const RingParams& p = view_.p;
  RingSnapshot s;
  const auto* rx = m.at<RxCounters>(view_.rx_counters, base_);
  const auto* tx = m.at<TxCounters>(view_.tx_counters, base_);
  const auto* q = m.at<RingQueues>(view_.queues, base_);
  s.rx.assign(rx, rx + p.rings);
  s.tx.assign(tx, tx + p.rings);
  s.queues.assign(q, q + p.rings);
  const auto* lat = m.at<GpuLatencyHistogram>(view_.latency, base_);
  s.latency.assign(lat, lat + p.rings);
  return s;
}

SlotAudit RingSet::audit(const BatchHoldings* batches) const {
  const MetaCopy m = copy_meta(base_, meta_bytes_, where_);
  const RingParams& p = view_.p;
  const auto* rx_slot = m.at<uint32_t>(view_.rx_slot, base_);
  const auto* tx_slot = m.at<uint32_t>(view_.tx_slot, base_);
  const auto* to_tx = m.at<uint64_t>(view_.to_tx, base_);
  const auto* freed = m.at<uint32_t>(view_.freed, base_);
  const auto* stash = m.at<uint32_t>(view_.stash, base_);
  const auto* queues = m.at<RingQueues>(view_.queues, base_);
  const auto* rxc = m.at<RxCounters>(view_.rx_counters, base_);
  const auto* txc = m.at<TxCounters>(view_.tx_counters, base_);

  SlotAudit a;
  a.total = p.total_slots();
  std::vector<uint8_t> seen(p.total_slots(), 0);
  uint32_t ring = 0;
  auto note = [&](uint32_t slot, uint64_t& bucket) {
    ++bucket;
    const uint32_t first = ring * p.slots_per_ring;
    if (slot < first || slot >= first + p.slots_per_ring) {
      ++a.foreign;
      return;
    }
    if (seen[slot]++) ++a.duplicates;
  };
  a.counters_agree = true;
  for (ring = 0; ring < p.rings; ++ring) {
    const RingQueues& q = queues[ring];
    for (uint32_t i = 0; i < p.ring_size; ++i) note(rx_slot[ring * p.ring_size + i], a.armed);
    for (uint32_t i = q.freed.head; i != q.freed.tail; ++i)
      note(freed[uint64_t(ring) * p.queue_capacity + (i & (p.queue_capacity - 1))], a.free);
    for (uint32_t i = 0; i < q.stash_count && i < p.slots_per_ring; ++i)
      note(stash[uint64_t(ring) * p.slots_per_ring + i], a.free);
    uint64_t queued = 0;
    for (uint32_t i = q.to_tx.head; i != q.to_tx.tail; ++i)
      note(static_cast<uint32_t>(to_tx[uint64_t(ring) * p.queue_capacity + (i & (p.queue_capacity - 1))]),
           queued);
    a.queued_for_tx += queued;
    // Tx descriptors are used in order from 0: the outstanding ones are [completed, posted).
    const TxCounters& t = txc[ring];
    const uint64_t in_tx = t.posted - t.completed;
    for (uint64_t k = t.completed; k != t.posted; ++k)
      note(tx_slot[ring * p.ring_size + (k & (p.ring_size - 1))], a.in_tx_ring);
    uint64_t held = 0, nf_freed = 0;
    if (batches) {
      for (uint32_t slot : batches->held[ring]) note(slot, held);
      nf_freed = batches->freed_by_nf_drop[ring];
    }
    a.held_by_batches += held;
    const RxCounters& r = rxc[ring];
    uint64_t drops = 0;
    for (uint64_t d : r.drops) drops += d;
    a.counters_agree = a.counters_agree && r.packets == q.allocated &&
                       r.packets == r.passed + drops && q.freed_by_drop == drops &&
                       q.freed_by_tx == t.completed + nf_freed &&
                       r.packets == q.freed_by_drop + q.freed_by_tx + queued + in_tx + held;
  }
  for (uint8_t s : seen) a.missing += s == 0;
  return a;
}

}  // namespace gpunfv::gpuring
