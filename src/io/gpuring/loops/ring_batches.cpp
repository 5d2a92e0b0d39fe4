#include "io/gpuring/loops/ring_batches.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#endif

namespace gpunfv::gpuring {

namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Offsets inside the two allocations: ring memory (placement) and mapped host memory.
struct Offsets {
  size_t meta, slot_index, batch_count, free_ids, free_idx, counters, placed;
  size_t ready, ready_idx, done, done_idx, mapped;
  Offsets(uint32_t rings, uint32_t per_ring, uint32_t capacity, uint32_t entries, size_t batch_bytes) {
    size_t off = 0;
    auto take = [&](size_t bytes) {
      const size_t at = off;
      off = align_up(off + bytes, 256);
      return at;
    };
    const size_t batches = size_t(rings) * per_ring;
    meta = take(batches * batch_bytes);
    slot_index = take(batches * capacity * sizeof(uint32_t));
    batch_count = take(batches * sizeof(uint32_t));
    free_ids = take(size_t(rings) * entries * sizeof(uint32_t));
    free_idx = take(rings * sizeof(SpscIndex));
    counters = take(rings * sizeof(RingBatchCounters));
    placed = off;
    off = 0;
    ready = take(size_t(rings) * entries * sizeof(ReadyRecord));
    ready_idx = take(rings * sizeof(SpscIndex));
    done = take(size_t(rings) * entries * sizeof(uint64_t));
    done_idx = take(rings * sizeof(SpscIndex));
    mapped = off;
  }
};

Offsets offsets_of(const RingBatchView& v) {
  return Offsets(v.rings, v.per_ring, v.capacity, v.queue_mask + 1, v.batch_bytes);
}

}  // namespace

RingBatches::RingBatches(const RingSet& rings, uint32_t capacity, uint32_t per_ring,
                         uint64_t timeout_ns, uint32_t result_stride)
    : rings_(rings), where_(rings.placement()),
      // The packet bytes stay in the ring slots; the layout's own data area is the smallest.
      layout_(BatchLayout::make(capacity, 64, result_stride)) {
  const RingParams& p = rings.params();
  if (capacity == 0 || per_ring == 0)
    throw std::invalid_argument("gpuring batches: capacity and batches per ring must be > 0");
  if (capacity > p.slots_per_ring - p.ring_size)
    throw std::invalid_argument("gpuring batches: a batch of " + std::to_string(capacity) +
                                " packets needs more slots than a ring has beyond its descriptors (" +
                                std::to_string(p.slots_per_ring - p.ring_size) + ")");
  uint32_t entries = 1;
  while (entries < per_ring) entries <<= 1;
  view_.rings = p.rings;
  view_.per_ring = per_ring;
  view_.capacity = capacity;
  view_.queue_mask = entries - 1;
  view_.timeout_ns = timeout_ns;
  view_.batch_bytes = layout_.bytes;
  view_.off_len = layout_.off_len;
  view_.off_port = layout_.off_port;
  view_.off_seq = layout_.off_seq;
  view_.off_rx_ns = layout_.off_rx_ns;
  view_.off_wire_ns = layout_.off_wire_ns;
  view_.off_verdict = layout_.off_verdict;
  const Offsets o = offsets_of(view_);
  placed_bytes_ = o.placed;

  // Initial image of the ring-memory part: every batch in its ring's free queue.
  std::vector<uint8_t> image(o.placed, 0);
  for (uint32_t r = 0; r < p.rings; ++r) {
    auto* ids = reinterpret_cast<uint32_t*>(image.data() + o.free_ids) + size_t(r) * entries;
    for (uint32_t b = 0; b < per_ring; ++b) ids[b] = b;
    reinterpret_cast<SpscIndex*>(image.data() + o.free_idx)[r].tail = per_ring;
  }
  uint8_t* mapped_dev = nullptr;
  if (where_ == Placement::device) {
#if GPUNFV_HAVE_CUDA
    GPUNFV_CUDA(cudaMalloc(reinterpret_cast<void**>(&placed_), o.placed));
    GPUNFV_CUDA(cudaMemcpy(placed_, image.data(), o.placed, cudaMemcpyHostToDevice));
    GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&mapped_), o.mapped, cudaHostAllocMapped));
    std::memset(mapped_, 0, o.mapped);
    GPUNFV_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_dev), mapped_, 0));
#else
    throw std::runtime_error("gpuring batches: placement device needs a build with CUDA");
#endif
  } else {
    placed_ = static_cast<uint8_t*>(std::aligned_alloc(4096, align_up(o.placed, 4096)));
    mapped_ = static_cast<uint8_t*>(std::aligned_alloc(4096, align_up(o.mapped, 4096)));
    if (!placed_ || !mapped_) {
      std::free(placed_);
      std::free(mapped_);
      throw std::bad_alloc();
    }
    std::memcpy(placed_, image.data(), o.placed);
    std::memset(mapped_, 0, o.mapped);
    mapped_dev = mapped_;
  }
  view_.meta = placed_ + o.meta;
  view_.slot_index = reinterpret_cast<uint32_t*>(placed_ + o.slot_index);
  view_.batch_count = reinterpret_cast<uint32_t*>(placed_ + o.batch_count);
  view_.free_ids = reinterpret_cast<uint32_t*>(placed_ + o.free_ids);
  view_.free_idx = reinterpret_cast<SpscIndex*>(placed_ + o.free_idx);
  view_.counters = reinterpret_cast<RingBatchCounters*>(placed_ + o.counters);
  view_.ready = reinterpret_cast<ReadyRecord*>(mapped_dev + o.ready);
  view_.ready_idx = reinterpret_cast<SpscIndex*>(mapped_dev + o.ready_idx);
  view_.done = reinterpret_cast<uint64_t*>(mapped_dev + o.done);
  view_.done_idx = reinterpret_cast<SpscIndex*>(mapped_dev + o.done_idx);
  // The host's ends of the mapped queues, through host pointers.
  for (uint32_t r = 0; r < p.rings; ++r) {
    ready_.emplace_back(reinterpret_cast<ReadyRecord*>(mapped_ + o.ready) + size_t(r) * entries,
                        reinterpret_cast<SpscIndex*>(mapped_ + o.ready_idx) + r, view_.queue_mask);
    done_.emplace_back(reinterpret_cast<uint64_t*>(mapped_ + o.done) + size_t(r) * entries,
                       reinterpret_cast<SpscIndex*>(mapped_ + o.done_idx) + r, view_.queue_mask);
  }
}

RingBatches::~RingBatches() {
  if (where_ == Placement::device) {
#if GPUNFV_HAVE_CUDA
    cudaFree(placed_);
    cudaFreeHost(mapped_);
#endif
    return;
  }
  std::free(placed_);
  std::free(mapped_);
}

bool RingBatches::take_ready(Ready& r) {
  for (uint32_t k = 0; k < view_.rings; ++k) {
    const uint32_t ring = (next_ring_ + k) % view_.rings;
    ReadyRecord rec;
    if (!ready_[ring].pop(rec)) continue;
    next_ring_ = ring + 1;
    r = Ready{ring, rec.batch, rec.count, rec.closed_ns, rec.bytes};
    return true;
  }
  return false;
}

void RingBatches::hand_done(const Ready& r) {
  // Holds every batch of the ring, so never full.
  done_[r.ring].push(uint64_t(r.batch) | (uint64_t(r.count) << 32));
}

BatchView RingBatches::batch_view(const Ready& r) const {
  BatchView b = layout_.view(batch_base(r), r.count);
  const RingSetView& rv = rings_.view();
  b.stride = rv.p.slot_bytes;
  b.data = IsoSpan<uint8_t>(rv.slots, size_t(rv.p.total_slots()) * rv.p.slot_bytes);
  b.slot_index = IsoSpan<uint32_t>(view_.slots_of(r.ring, r.batch), view_.capacity);
  return b;
}

namespace {
// A host copy of the ring-memory part.
std::vector<uint8_t> copy_placed(const uint8_t* placed, size_t bytes, Placement where) {
  std::vector<uint8_t> out(bytes);
  if (where == Placement::device) {
#if GPUNFV_HAVE_CUDA
    GPUNFV_CUDA(cudaMemcpy(out.data(), placed, bytes, cudaMemcpyDeviceToHost));
#endif
  } else {
    std::memcpy(out.data(), placed, bytes);
  }
  return out;
}
}  // namespace

std::vector<RingBatchCounters> RingBatches::counters() const {
  const std::vector<uint8_t> m = copy_placed(placed_, placed_bytes_, where_);
  const auto* c = reinterpret_cast<const RingBatchCounters*>(
      m.data() + (reinterpret_cast<const uint8_t*>(view_.counters) - placed_));
  return {c, c + view_.rings};
}

BatchHoldings RingBatches::holdings() const {
  const std::vector<uint8_t> m = copy_placed(placed_, placed_bytes_, where_);
  auto at = [&](const void* p) { return m.data() + (static_cast<const uint8_t*>(p) - placed_); };
  const auto* ids = reinterpret_cast<const uint32_t*>(at(view_.free_ids));
  const auto* idx = reinterpret_cast<const SpscIndex*>(at(view_.free_idx));
  const auto* count = reinterpret_cast<const uint32_t*>(at(view_.batch_count));
  const auto* slots = reinterpret_cast<const uint32_t*>(at(view_.slot_index));
  const auto* c = reinterpret_cast<const RingBatchCounters*>(at(view_.counters));
  BatchHoldings h;
  h.held.resize(view_.rings);
  for (uint32_t r = 0; r < view_.rings; ++r) {
    std::vector<bool> is_free(view_.per_ring, false);
    for (uint32_t i = idx[r].head; i != idx[r].tail; ++i)
      is_free[ids[size_t(r) * (view_.queue_mask + 1) + (i & view_.queue_mask)] % view_.per_ring] = true;
    for (uint32_t b = 0; b < view_.per_ring; ++b) {
      if (is_free[b]) continue;
      const uint32_t id = view_.id(r, b);
      for (uint32_t i = 0; i < count[id] && i < view_.capacity; ++i)
        h.held[r].push_back(slots[size_t(id) * view_.capacity + i]);
    }
    h.freed_by_nf_drop.push_back(c[r].freed_by_nf_drop + c[r].bad_length);
  }
  return h;
}

}  // namespace gpunfv::gpuring
