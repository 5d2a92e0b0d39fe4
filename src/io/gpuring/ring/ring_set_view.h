// RingSetView: the trivially copyable view of everything a set of GPU-resident NIC rings uses,
// handed by value to the persistent kernels (or to CPU threads in tests). All arrays lie in one
// memory placement (device memory, or host memory for the CPU variant) except the NIC
// registers and the run flags, which lie in host memory the GPU writes through a mapping: they
// stand for the NIC's BAR, which the GPU would write across PCIe.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/compat.h"
#include "core/drop_reason.h"
#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/ring/gpu_latency.h"
#include "io/gpuring/ring/ring_params.h"
#include "io/gpuring/ring/ring_sync.h"

namespace gpunfv::gpuring {

// The 82599's queue registers, at their BAR0 offsets (datasheet 8.2.3.8 and 8.2.3.9; queues
// 0x40 apart; rx queues 64..127 in a second bank at 0x0D000). The emulated BAR is host memory
// laid out the same way, so the GPU side writes a real NIC's BAR0, mapped into its address
// space (dpdk_nic.h), unchanged. nic_82599_plan.h holds the full register map.
inline constexpr uint32_t kRegRdh = 0x01010;  // rx head: next descriptor the NIC fills
inline constexpr uint32_t kRegRdt = 0x01018;  // rx tail: the NIC owns descriptors [RDH, RDT)
inline constexpr uint32_t kRegTdh = 0x06010;  // tx head: next descriptor the NIC sends
inline constexpr uint32_t kRegTdt = 0x06018;  // tx tail: one past the last descriptor posted
inline constexpr uint32_t kRxHighBank = 0x0D000 - 0x01000;  // rx queues 64.. : their bank's distance
inline constexpr uint32_t kQueueRegStride = 0x40;
inline constexpr uint32_t kMaxQueues = 128;
inline constexpr size_t kBarBytes = kRegRdt + kRxHighBank + kQueueRegStride * (kMaxQueues - 64);

// Pointers to one queue pair's head and tail registers.
struct QueueRegisters {
  uint32_t* rdh;
  uint32_t* rdt;
  uint32_t* tdh;
  uint32_t* tdt;
};
GPUNFV_HD inline QueueRegisters queue_registers(uint8_t* bar, uint32_t queue) {
  const uint32_t rx = queue < 64 ? kQueueRegStride * queue : kRxHighBank + kQueueRegStride * (queue - 64);
  const uint32_t tx = kQueueRegStride * queue;
  auto at = [&](uint32_t reg) { return reinterpret_cast<uint32_t*>(bar + reg); };
  return {at(kRegRdh + rx), at(kRegRdt + rx), at(kRegTdh + tx), at(kRegTdt + tx)};
}

// Flags the host and the kernels exchange (mapped host memory).
// RunFlags::stop: kRunGo, then kStopDrain (the NIC delivered its last frame: drain and exit),
// or kStopAbort (the host's watchdog gave up on the drain: exit now, whatever is in flight).
// One word, so a poller pays one PCIe read for both.
inline constexpr uint32_t kRunGo = 0, kStopDrain = 1, kStopAbort = 2;
struct alignas(64) RunFlags {
  uint32_t stop;  // host -> GPU
  uint32_t pad[15];
};

// Per ring pair, written by one side only (owner named per field group).
struct alignas(64) RxCounters {  // rx block
  uint64_t packets, bytes, passed, alloc_waits, tail_writes;
  uint64_t drops[kMaxDropReasons];  // NF (and classify) verdicts; slot freed by the drop
};
struct alignas(64) TxCounters {  // tx block
  uint64_t posted, completed, tail_writes, head_reads, dd_polls;
};

// Per ring pair, mapped host memory: set by each side when it has exited (1: drained, 2: aborted).
struct alignas(64) RingDone {
  uint32_t rx, tx;
};

// Single-producer single-consumer queue indices, producer and consumer on separate lines.
struct alignas(64) SpscIndex {
  alignas(64) uint32_t tail;  // producer: entries written
  alignas(64) uint32_t head;  // consumer: entries taken
};

// Per ring pair: the queue of processed packets (rx -> tx) and the slots tx returns (tx -> rx).
struct alignas(64) RingQueues {
  SpscIndex to_tx;  // entries: slot | length << 32
  SpscIndex freed;  // entries: slot ids freed by tx after the NIC sent them
  alignas(64) uint32_t stash_count;  // rx-only stack of slots freed by drops
  alignas(64) uint64_t allocated, freed_by_drop;  // rx
  alignas(64) uint64_t freed_by_tx;                // tx
};

struct RingSetView {
  RingParams p;
  RxDesc* rx_desc;     // rings * ring_size, ring r at r * ring_size
  TxDesc* tx_desc;     // rings * ring_size
  uint8_t* slots;      // total_slots * slot_bytes
  uint64_t bus_base;   // the address the NIC uses for slot 0 (slot i at bus_base + i * slot_bytes)
  uint32_t* rx_slot;   // slot armed in each rx descriptor (the driver's software ring)
  uint32_t* tx_slot;   // slot posted in each tx descriptor
  uint64_t* to_tx;     // rings * queue_capacity
  uint32_t* freed;     // rings * queue_capacity
  uint32_t* stash;     // rings * slots_per_ring
  RingQueues* queues;  // rings
  RxCounters* rx_counters;
  TxCounters* tx_counters;
  uint8_t* bar;        // the NIC's BAR0 (emulated: mapped host memory), kBarBytes
  RunFlags* flags;     // mapped host memory
  RingDone* done;      // mapped host memory, rings
  uint64_t* slot_taken_ns;       // per slot: when rx took its packet (gpu_latency.h)
  GpuLatencyHistogram* latency;  // per ring, written by its tx side
  uint64_t* tx_announce_ns;      // per tx descriptor: when its tail write happened

  GPUNFV_HD uint8_t* slot_ptr(uint32_t slot) const { return slots + uint64_t(slot) * p.slot_bytes; }
  GPUNFV_HD uint64_t slot_bus(uint32_t slot) const { return bus_base + uint64_t(slot) * p.slot_bytes; }
  GPUNFV_HD uint32_t slot_of_bus(uint64_t addr) const {
    return static_cast<uint32_t>((addr - bus_base) / p.slot_bytes);
  }
  GPUNFV_HD uint32_t first_slot(uint32_t ring) const { return ring * p.slots_per_ring; }
};
static_assert(std::is_trivially_copyable_v<RingSetView>);

// SPSC queue over one ring pair's slice of a queue array. Producer and consumer are each one
// thread with its own SpscQueue object (an object is used for push or for pop, not both); the
// capacity is a power of two and indices run freely (wrapping at 2^32). Each side keeps its own
// index in a register and re-reads the other's only when the queue looks full (or empty).
template <typename T>
class SpscQueue {
 public:
  GPUNFV_HD SpscQueue(T* entries, SpscIndex* idx, uint32_t mask)
      : entries_(entries), idx_(idx), mask_(mask), tail_(load_acquire(&idx->tail)),
        head_(load_acquire(&idx->head)) {}

  GPUNFV_HD bool push(T v) {
    if (tail_ - head_ > mask_) {
      head_ = load_acquire(&idx_->head);
      if (tail_ - head_ > mask_) return false;
    }
    entries_[tail_ & mask_] = v;
    store_release(&idx_->tail, ++tail_);
    return true;
  }
  GPUNFV_HD bool pop(T& v) {
    if (tail_ == head_) {
      tail_ = load_acquire(&idx_->tail);
      if (tail_ == head_) return false;
    }
    v = entries_[head_ & mask_];
    store_release(&idx_->head, ++head_);
    return true;
  }
  // Consumer side: nothing queued.
  GPUNFV_HD bool empty() {
    tail_ = load_acquire(&idx_->tail);
    return tail_ == head_;
  }

  // Batched use: several pushes (or pops), then one publish, so a burst pays one release
  // (a fence on the GPU) instead of one per entry. Until published, the other side sees the
  // queue as it was: for a producer, entries not yet there; for a consumer, entries still
  // taking room (the queues here hold every slot of their ring, so that never fills them).
  GPUNFV_HD bool push_unpublished(T v) {
    if (tail_ - head_ > mask_) {
      head_ = load_acquire(&idx_->head);
      if (tail_ - head_ > mask_) return false;
    }
    entries_[tail_ & mask_] = v;
    ++tail_;
    return true;
  }
  GPUNFV_HD void publish_tail() { store_release(&idx_->tail, tail_); }
  GPUNFV_HD bool pop_unpublished(T& v) {
    if (tail_ == head_) {
      tail_ = load_acquire(&idx_->tail);
      if (tail_ == head_) return false;
    }
    v = entries_[head_ & mask_];
    ++head_;
    return true;
  }
  GPUNFV_HD void publish_head() { store_release(&idx_->head, head_); }

  // Consumer side, for a team (team.h): how many entries are queued; the index of the first;
  // the entry at an index (any lane may read it once the consumer has seen it queued and the
  // team has synchronised); then consume(n) takes the first n (one release).
  GPUNFV_HD uint32_t available() {
    tail_ = load_acquire(&idx_->tail);
    return tail_ - head_;
  }
  GPUNFV_HD uint32_t head_index() const { return head_; }
  GPUNFV_HD T at(uint32_t index) const { return entries_[index & mask_]; }
  GPUNFV_HD void consume(uint32_t n) {
    head_ += n;
    store_release(&idx_->head, head_);
  }

 private:
  T* entries_;
  SpscIndex* idx_;
  uint32_t mask_;
  uint32_t tail_, head_;
};

GPUNFV_HD inline SpscQueue<uint64_t> to_tx_queue(const RingSetView& v, uint32_t r) {
  return {v.to_tx + uint64_t(r) * v.p.queue_capacity, &v.queues[r].to_tx, v.p.queue_capacity - 1};
}
GPUNFV_HD inline SpscQueue<uint32_t> freed_queue(const RingSetView& v, uint32_t r) {
  return {v.freed + uint64_t(r) * v.p.queue_capacity, &v.queues[r].freed, v.p.queue_capacity - 1};
}

}  // namespace gpunfv::gpuring
