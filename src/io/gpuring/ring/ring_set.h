// RingSet: owns the memory of a set of NIC rings placed on the GPU (device memory, with the
// NIC registers and run flags in mapped pinned host memory) or, for tests and machines without
// a GPU, all in host memory. Builds the initial state a driver sets up (every rx descriptor
// armed with a slot, RDT = ring_size - 1, the other slots in the pool) and, after the loops
// have exited, audits that every slot is accounted for.
//
// Errors: the constructor throws std::invalid_argument for impossible parameters and GpuError
// when device memory cannot be had; Placement::device throws std::runtime_error in a build
// without CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/gpuring/ring/ring_set_view.h"

namespace gpunfv::gpuring {

enum class Placement { host, device };

// Offsets in the mapped block (registers, then run flags, then one RingDone per ring). The
// flags start on a 64-byte line of their own: their alignas is what keeps host and GPU writers
// off each other's line, and the BAR's size (0xE018) is not a multiple of 64.
struct MappedLayout {
  size_t flags, done, total;
};
MappedLayout mapped_layout(uint32_t rings);

// Where every slot is at exit. A slot counted twice, never, or outside its ring's range is a
// protocol bug; ok() is what tests and the port's shutdown check.
struct SlotAudit {
  uint64_t total = 0, free = 0, armed = 0, queued_for_tx = 0, in_tx_ring = 0;
  uint64_t held_by_batches = 0;  // batch mode: slots in batches the chain has not handed back
  uint64_t duplicates = 0, missing = 0, foreign = 0;
  // Counter identities: rx packets == allocated == freed_by_drop + freed_by_tx + queued + in_tx,
  // posted == completed + in_tx.
  bool counters_agree = false;
  bool ok() const { return duplicates == 0 && missing == 0 && foreign == 0 && counters_agree; }
  std::string describe() const;
};

// Batch mode (ring_batches.h), per ring: the slots held by batches still out, and the slots tx
// freed because an NF dropped their packet (they go back through the tx side's free queue).
struct BatchHoldings {
  std::vector<std::vector<uint32_t>> held;
  std::vector<uint64_t> freed_by_nf_drop;
};

// Host copies of the per-ring counters and queue state.
struct RingSnapshot {
  std::vector<RxCounters> rx;
  std::vector<TxCounters> tx;
  std::vector<RingQueues> queues;
  std::vector<GpuLatencyHistogram> latency;  // per ring: the GPU side's own (gpu_latency.h)
};

class RingSet {
 public:
  RingSet(const RingParams& params, Placement where);
  ~RingSet();
  RingSet(const RingSet&) = delete;
  RingSet& operator=(const RingSet&) = delete;

  const RingParams& params() const { return view_.p; }
  Placement placement() const { return where_; }
  // The view the loops use (device pointers for Placement::device).
  const RingSetView& view() const { return view_; }

  // Host-side pointers to the mapped registers and flags (the NIC emulator and the host use them).
  QueueRegisters host_regs(uint32_t ring) const { return queue_registers(host_bar_, ring); }
  RunFlags* host_flags() const { return host_flags_; }
  RingDone* host_done() const { return host_done_; }
  // Drain and exit (never undoes an abort).
  void request_stop();
  // Exit now, drained or not (the watchdog's last resort; see ring_loops.h).
  void request_abort();
  // Whether both loops of every ring have exited.
  bool all_done() const;
  // What the host can see without touching device memory (safe while kernels hang): the stop
  // word, and per ring RDH/RDT/TDH/TDT and the done flags.
  std::string describe_registers() const;

  // A real NIC (dpdk_nic.h), before the loops start: the ring memory (memory(), memory_bytes())
  // is mapped for the NIC's DMA at bus address `bus_of_memory`, and `device_bar`/`host_bar` are
  // its BAR0 as the GPU and the host map it. Re-arms every rx descriptor with the slots' bus
  // addresses; programming the NIC's registers is the caller's. Device placement only
  // (std::logic_error otherwise). unbind_nic() goes back to the emulated BAR (before the BAR
  // is unmapped, so describe_registers never reads a stale mapping).
  uint8_t* memory() const { return base_; }
  size_t memory_bytes() const { return total_bytes_; }
  void bind_nic(uint64_t bus_of_memory, uint8_t* device_bar, uint8_t* host_bar);
  void unbind_nic();

  RingSnapshot snapshot() const;
  // Only meaningful once the loops have exited. In batch mode pass RingBatches::holdings().
  SlotAudit audit(const BatchHoldings* batches = nullptr) const;

  // A host copy of the ring memory before the packet slots, and where an array the view points
  // at lies in that copy (audits across two sets: forward_rings.cpp).
  std::vector<uint8_t> copy_metadata() const;
  size_t metadata_offset(const void* ring_ptr) const {
    return size_t(static_cast<const uint8_t*>(ring_ptr) - base_);
  }

 private:
  struct Layout;
  void build_initial_state(uint8_t* image, const Layout& l) const;

  Placement where_;
  RingSetView view_{};
  uint8_t* base_ = nullptr;      // the ring memory (device or host)
  size_t meta_bytes_ = 0;        // bytes before the packet slots (what snapshots copy)
  size_t total_bytes_ = 0;
  void* mapped_ = nullptr;       // registers + flags, host side
  uint8_t* host_bar_ = nullptr;
  uint8_t* emulated_bar_dev_ = nullptr;  // the emulated BAR, GPU side (what unbind_nic restores)
  RunFlags* host_flags_ = nullptr;
  RingDone* host_done_ = nullptr;
};

}  // namespace gpunfv::gpuring
