// Shape and protocol settings of a set of GPU-resident NIC rings (the `type: gpuring` port's
// numbers, checked by GpuRingConfig; see gpuring_config.h).
#pragma once

#include <cstdint>

namespace gpunfv::gpuring {

struct RingParams {
  uint32_t rings = 1;            // rx/tx ring pairs, one kernel block (or CPU thread) each side
  uint32_t ring_size = 512;      // descriptors per ring, a power of two
  uint32_t slots_per_ring = 0;   // packet slots owned by one ring pair (rx armed + tx + slack)
  uint32_t slot_bytes = 2048;    // bytes per packet slot, a multiple of 64
  uint32_t queue_capacity = 0;   // entries of each per-ring queue, a power of two >= slots_per_ring
  // Tail writes: one burst of the emulator (32 frames) per write, 1 us at most. Against the FPGA
  // paper's 8 / 2500 ns, p99 on the GPU at 50% load fell from 20-24 to 15-17 us with no loss
  // (docs/decisions/gpuring-tail-defaults.md): each tail write is a system-scope fence.
  uint32_t tail_batch = 32;      // write a tail register after this many descriptors ...
  uint64_t tail_timeout_ns = 1000;  // ... or when the oldest unannounced one is this old
  bool tx_writeback = true;      // tx completion by DD write-back (RS set) or by reading TDH

  uint32_t total_slots() const { return rings * slots_per_ring; }
  uint32_t descriptors() const { return rings * ring_size; }
};

// Fills the derived fields (slots_per_ring when 0, queue_capacity).
inline RingParams finish_params(RingParams p) {
  if (p.slots_per_ring == 0) p.slots_per_ring = 3 * p.ring_size;
  uint32_t cap = 1;
  while (cap < p.slots_per_ring) cap <<= 1;
  p.queue_capacity = cap;
  return p;
}

}  // namespace gpunfv::gpuring
