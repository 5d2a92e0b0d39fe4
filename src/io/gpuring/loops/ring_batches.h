// RingBatches: batch mode of a RingSet. Instead of running an inline NF per packet, the rx loop
// of each ring hands received packets, still in their slots, to the chain as batches (metadata
// only: len, port, seq, rx_ns and slot_index, so BatchView::slot_index names the ring slot of
// each packet), and the tx loop sends the packets of each batch the host hands back, in batch
// order, or frees the slots of those an NF dropped (see ring_batch_loops.h).
//
// Per ring, batches_per_ring batches of `capacity` packets circulate through three SPSC queues:
//   free  (tx -> rx, ring memory):   batch ids rx may fill;
//   ready (rx -> host, mapped host memory): {batch, count, closed_ns} records, in ring order;
//   done  (host -> tx, mapped host memory): batch | count << 32, in the order taken.
// Batch metadata and slot indices lie in the RingSet's placement (device memory, or host memory
// for placement: host, where CPU threads run the same loops).
//
// Errors: the constructor throws std::invalid_argument for impossible shapes, GpuError when
// device or mapped memory cannot be had, std::runtime_error for device placement in a build
// without CUDA.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/batch.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

inline constexpr uint32_t kNoBatch = 0xFFFFFFFFu;
// Verdict the host writes on a packet it transmitted itself from its slot (to a port other
// than the ring's): not none, so the tx loop frees the slot instead of sending it again.
inline constexpr uint8_t kVerdictSentByHost = 0xFE;

struct ReadyRecord {
  uint32_t batch, count;
  uint64_t closed_ns;  // ring clock (globaltimer on the GPU, CLOCK_MONOTONIC on the CPU)
  uint64_t bytes;      // frame bytes of the batch (the host counts rx_bytes without reading len)
};

// Per ring, in ring memory; each group written by one side only.
struct alignas(64) RingBatchCounters {
  alignas(64) uint64_t published, packets_batched, closed_by_timeout;   // rx
  // freed_by_nf_drop: dropped by the chain, or sent by the host elsewhere (kVerdictSentByHost).
  alignas(64) uint64_t returned, queued_for_tx, freed_by_nf_drop, bad_length;  // tx
};

struct RingBatchView {
  uint32_t rings = 0, per_ring = 0, capacity = 0;
  uint32_t queue_mask = 0;       // queue entries - 1 (a power of two >= per_ring)
  uint64_t timeout_ns = 0;       // a non-empty batch closes this long after its first packet
  // Added to the ring clock for a packet's rx_ns (host CLOCK_MONOTONIC, which egress measures
  // latency against) and wire_ns (UNIX time, the capture timestamp a pcap sink writes).
  int64_t to_monotonic_ns = 0, to_unix_ns = 0;
  uint64_t batch_bytes = 0;      // one batch's metadata (BatchLayout::bytes)
  uint64_t off_len = 0, off_port = 0, off_seq = 0, off_rx_ns = 0, off_wire_ns = 0, off_verdict = 0;
  uint8_t* meta = nullptr;           // rings * per_ring batches, BatchLayout each
  uint32_t* slot_index = nullptr;    // rings * per_ring * capacity
  uint32_t* batch_count = nullptr;   // rings * per_ring: packets in the batch while it is out
  uint32_t* free_ids = nullptr;      // rings * (queue_mask + 1)
  SpscIndex* free_idx = nullptr;     // rings
  RingBatchCounters* counters = nullptr;  // rings
  ReadyRecord* ready = nullptr;      // mapped: rings * (queue_mask + 1)
  SpscIndex* ready_idx = nullptr;    // mapped
  uint64_t* done = nullptr;          // mapped: rings * (queue_mask + 1)
  SpscIndex* done_idx = nullptr;     // mapped

  GPUNFV_HD uint32_t id(uint32_t ring, uint32_t batch) const { return ring * per_ring + batch; }
  GPUNFV_HD uint8_t* batch_base(uint32_t ring, uint32_t batch) const {
    return meta + uint64_t(id(ring, batch)) * batch_bytes;
  }
  GPUNFV_HD uint32_t* slots_of(uint32_t ring, uint32_t batch) const {
    return slot_index + uint64_t(id(ring, batch)) * capacity;
  }
};
static_assert(std::is_trivially_copyable_v<RingBatchView>);

// SPSC queue whose indices and entries lie in mapped host memory, shared by the host and a
// kernel: the system-scope variant of SpscQueue (ring_set_view.h).
template <typename T>
class SysSpscQueue {
 public:
  GPUNFV_HD SysSpscQueue(T* entries, SpscIndex* idx, uint32_t mask)
      : entries_(entries), idx_(idx), mask_(mask), tail_(load_acquire_sys(&idx->tail)),
        head_(load_acquire_sys(&idx->head)) {}
  GPUNFV_HD bool push(const T& v) {
    if (tail_ - head_ > mask_) {
      head_ = load_acquire_sys(&idx_->head);
      if (tail_ - head_ > mask_) return false;
    }
    entries_[tail_ & mask_] = v;
    store_release_sys(&idx_->tail, ++tail_);
    return true;
  }
  GPUNFV_HD bool pop(T& v) {
    if (tail_ == head_) {
      tail_ = load_acquire_sys(&idx_->tail);
      if (tail_ == head_) return false;
    }
    v = entries_[head_ & mask_];
    store_release_sys(&idx_->head, ++head_);
    return true;
  }

 private:
  T* entries_;
  SpscIndex* idx_;
  uint32_t mask_;
  uint32_t tail_, head_;
};

GPUNFV_HD inline SpscQueue<uint32_t> batch_free_queue(const RingBatchView& b, uint32_t r) {
  return {b.free_ids + uint64_t(r) * (b.queue_mask + 1), &b.free_idx[r], b.queue_mask};
}
GPUNFV_HD inline SysSpscQueue<ReadyRecord> batch_ready_queue(const RingBatchView& b, uint32_t r) {
  return {b.ready + uint64_t(r) * (b.queue_mask + 1), &b.ready_idx[r], b.queue_mask};
}
GPUNFV_HD inline SysSpscQueue<uint64_t> batch_done_queue(const RingBatchView& b, uint32_t r) {
  return {b.done + uint64_t(r) * (b.queue_mask + 1), &b.done_idx[r], b.queue_mask};
}

class RingBatches {
 public:
  // Batches of `capacity` packets (the chain's batch size), `per_ring` of them per ring, each
  // with `result_stride` bytes of NF results per packet. A batch closes when full or
  // `timeout_ns` after its first packet.
  RingBatches(const RingSet& rings, uint32_t capacity, uint32_t per_ring, uint64_t timeout_ns,
              uint32_t result_stride = 0);
  ~RingBatches();
  RingBatches(const RingBatches&) = delete;
  RingBatches& operator=(const RingBatches&) = delete;

  const RingBatchView& view() const { return view_; }
  const BatchLayout& layout() const { return layout_; }

  struct Ready {
    uint32_t ring = 0, batch = 0, count = 0;
    uint64_t closed_ns = 0;  // ring clock
    uint64_t bytes = 0;      // frame bytes
  };
  // How the ring clock maps to the host's clocks (ring_clock.h); set before the loops start.
  void set_clock_offsets(int64_t to_monotonic_ns, int64_t to_unix_ns) {
    view_.to_monotonic_ns = to_monotonic_ns;
    view_.to_unix_ns = to_unix_ns;
  }
  // The next ready batch of any ring (rings taken in turn); false if none. One consumer thread.
  bool take_ready(Ready& r);
  // Hands a batch taken by take_ready to its ring's tx side. Per ring, in the order taken; one
  // producer thread.
  void hand_done(const Ready& r);
  // The batch's arrays in the placement's memory (device pointers for Placement::device),
  // packet bytes in the ring slots through slot_index.
  BatchView batch_view(const Ready& r) const;
  uint8_t* batch_base(const Ready& r) const { return view_.batch_base(r.ring, r.batch); }

  std::vector<RingBatchCounters> counters() const;
  // Slots held by batches that have not come back to the free queue (after the loops exited),
  // and the slots tx freed for NF drops: what RingSet::audit needs in batch mode.
  BatchHoldings holdings() const;

 private:
  const RingSet& rings_;
  Placement where_;
  BatchLayout layout_;
  RingBatchView view_;
  size_t placed_bytes_ = 0;
  uint8_t* placed_ = nullptr;   // ring-memory part
  uint8_t* mapped_ = nullptr;   // mapped part (host pointer)
  std::vector<SysSpscQueue<ReadyRecord>> ready_;
  std::vector<SysSpscQueue<uint64_t>> done_;
  uint32_t next_ring_ = 0;
};

}  // namespace gpunfv::gpuring
