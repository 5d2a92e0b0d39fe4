// Packet batches: struct-of-arrays, packet bytes in fixed-stride slots, per-packet metadata in
// parallel arrays. BatchView is the framework's trivially copyable view (host or device
// memory); an NF's kernels see a batch only through NfPackets (nf/nf_packets.h), its per-packet
// functions one packet through PacketReader or PacketRef. Batch owns host memory and is
// allocated once from a BatchPool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/iso_span.h"
#include "core/iso_view.h"
#include "core/packet_headers.h"

namespace gpunfv {

inline constexpr uint16_t kNoPort = 0xFFFF;
// next_nf value of a packet that finished its chain (or never entered one).
inline constexpr uint8_t kChainDone = 0xFF;
// Most NFs one chain may hold: `visited` keeps one bit per chain node.
inline constexpr uint32_t kMaxChainNodes = 32;

struct BatchView {
  uint32_t count = 0;     // packets in the batch
  uint32_t capacity = 0;  // slots
  uint32_t stride = 0;    // bytes per slot
  IsoSpan<uint8_t> data;  // capacity * stride bytes
  IsoSpan<uint16_t> len;  // frame length in bytes (may exceed stride: then dropped as oversize)
  IsoSpan<uint16_t> port;      // ingress port id
  IsoSpan<uint16_t> out_port;  // egress port id, kNoPort until an NF chooses one
  IsoSpan<uint8_t> next_nf;    // chain node of the next NF to run (kChainDone: finished)
  IsoSpan<uint32_t> visited;   // bit k: the packet was sent to chain node k (so node k saw it)
  IsoSpan<uint8_t> verdict;    // DropReason; none while the packet is alive
  IsoSpan<PacketHeaders> headers;
  IsoSpan<uint32_t> flow_hash;
  IsoSpan<uint64_t> seq;       // sequence number per ingress port
  IsoSpan<uint64_t> rx_ns;     // ingress time (monotonic clock, ns) for latency
  IsoSpan<uint64_t> wire_ns;   // capture timestamp (UNIX ns), written back on tx
  // Packets sent to each chain node (kMaxChainNodes counters), written by the framework's
  // switch so the host knows every NF queue's occupancy in packets.
  IsoSpan<uint32_t> node_packets;
  // Per-packet results NFs hand back to the host (e.g. NIDS matches, firewall rule index):
  // result_stride bytes per packet, each NF owning a slice at its own offset.
  uint32_t result_stride = 0;
  IsoSpan<uint8_t> results;
  // Slot indirection: packet i's bytes lie in slot slot_index[i] of `data`, so a batch can name
  // packets that sit in GPU ring slots without copying them (the switch moves indices, not
  // packets). Empty (every host batch): packet i is in slot i.
  IsoSpan<uint32_t> slot_index;
};
// NF code never holds the whole batch (core/iso_view.h).
template <>
inline constexpr bool framework_only<BatchView> = true;
static_assert(std::is_trivially_copyable_v<BatchView>);

// Byte offset in b.data of packet i's slot. Every `i * stride` on a BatchView goes through here.
GPUNFV_HD inline size_t slot_offset(const BatchView& b, uint32_t i) {
  const uint32_t slot = b.slot_index.empty() ? i : b.slot_index[i];
  return size_t(slot) * b.stride;
}

// Whether packet i was sent to chain node `node` (so the NF there saw it), and whether that
// NF dropped it (NFs leave a dropped packet's next_nf at their node, with the reason).
GPUNFV_HD inline bool reached_node(const BatchView& b, uint32_t i, uint8_t node) {
  return (b.visited[i] >> node) & 1u;
}
GPUNFV_HD inline bool dropped_at_node(const BatchView& b, uint32_t i, uint8_t node) {
  return b.verdict[i] != static_cast<uint8_t>(DropReason::none) && b.next_nf[i] == node;
}

// What the framework hands an NF's per-packet function with each packet besides the packet:
// the code of the NF's first own drop reason (nf/nf_drops.h) and where the NF's slice of the
// packet's results record lies (NetworkFunction::result_offset, result_bytes).
struct NfSlot {
  uint8_t first_drop = 0;
  uint32_t result_offset = 0;
  uint32_t result_bytes = 0;
  constexpr NfSlot() = default;
  GPUNFV_HD constexpr NfSlot(uint8_t first) : first_drop(first) {}
  GPUNFV_HD constexpr NfSlot(uint8_t first, uint32_t offset, uint32_t bytes)
      : first_drop(first), result_offset(offset), result_bytes(bytes) {}
};

// A view whose per-packet arrays each hold at least `count` entries (slot_index too, where the
// view has one) and whose results hold `count` records: a BatchView with its count lowered to
// what its arrays hold. An index below count then needs no check per array.
class CountedView {
 public:
  CountedView() = default;
  GPUNFV_HD explicit CountedView(const BatchView& b) : b_(b) {
    size_t n = b.count;
    auto hold = [&n](size_t entries) { n = entries < n ? entries : n; };
    hold(b.len.size());
    hold(b.port.size());
    hold(b.out_port.size());
    hold(b.next_nf.size());
    hold(b.visited.size());
    hold(b.verdict.size());
    hold(b.headers.size());
    hold(b.flow_hash.size());
    if (!b.slot_index.empty()) hold(b.slot_index.size());
    if (b.result_stride != 0) hold(b.results.size() / b.result_stride);
    b_.count = uint32_t(n);
  }
  GPUNFV_HD const BatchView& view() const { return b_; }

 private:
  BatchView b_;
};
static_assert(std::is_trivially_copyable_v<CountedView>);

// One packet of a batch, as an NF sees it, through the batch's IsoSpans. A PacketReader is the
// packet as an NF that does not rewrite packets sees it: its bytes and headers read-only, its
// NF's results slice writable. A per-packet function that takes a PacketReader instead of a
// PacketRef declares so, and is handed no way to change the packet (nf/run_per_packet.h).
class PacketReader {
 public:
  GPUNFV_HD PacketReader(const BatchView& b, uint32_t i, NfSlot slot = {})
      : b_(b), i_(i), result_offset_(slot.result_offset), result_bytes_(slot.result_bytes) {}
  // A packet of a CountedView: its entries are checked against count alone, which the NF's
  // loop over its packets has checked already, so the compiler drops these checks.
  GPUNFV_HD PacketReader(const CountedView& c, uint32_t i, NfSlot slot = {})
      : b_(c.view()), i_(i), result_offset_(slot.result_offset), result_bytes_(slot.result_bytes),
        counted_(true) {}
  GPUNFV_HD uint32_t index() const { return i_; }
  GPUNFV_HD uint16_t length() const { return entry(b_.len); }
  GPUNFV_HD IsoSpan<const uint8_t> frame() const { return b_.data.subspan(offset(), length()); }
  GPUNFV_HD const PacketHeaders& headers() const { return entry(b_.headers); }
  GPUNFV_HD uint16_t ingress_port() const { return entry(b_.port); }
  GPUNFV_HD uint32_t flow_hash() const { return entry(b_.flow_hash); }
  // The NF's own slice of this packet's results record (empty for an NF without results).
  GPUNFV_HD IsoSpan<uint8_t> results() const {
    return b_.results.subspan(size_t(i_) * b_.result_stride + result_offset_, result_bytes_);
  }

 protected:
  // This packet's entry of the per-packet array `a`.
  template <typename T>
  GPUNFV_HD GPUNFV_FORCEINLINE T& entry(const IsoSpan<T>& a) const {
#if GPUNFV_CHECKED
    if (counted_) {
      if (i_ >= b_.count) return *static_cast<T*>(iso_refuse(i_, b_.count));
      return a.framework_data()[i_];
    }
#endif
    return a[i_];
  }
  GPUNFV_HD size_t offset() const {
    const uint32_t slot = b_.slot_index.empty() ? i_ : entry(b_.slot_index);
    return size_t(slot) * b_.stride;
  }

  const BatchView& b_;
  uint32_t i_;
  uint32_t result_offset_, result_bytes_;
  bool counted_ = false;
};

// A packet as an NF that rewrites packets or chooses their port sees it: a PacketReader whose
// bytes, length, headers and egress port it may also change.
class PacketRef : public PacketReader {
 public:
  GPUNFV_HD PacketRef(const BatchView& b, uint32_t i, NfSlot slot = {}) : PacketReader(b, i, slot) {}
  GPUNFV_HD PacketRef(const CountedView& c, uint32_t i, NfSlot slot = {}) : PacketReader(c, i, slot) {}
  GPUNFV_HD void set_length(uint16_t n) { entry(b_.len) = n; }
  // The frame's bytes (length() of them).
  GPUNFV_HD IsoSpan<uint8_t> frame() const { return b_.data.subspan(offset(), length()); }
  // The whole slot, for NFs that grow the packet (encapsulation).
  GPUNFV_HD IsoSpan<uint8_t> slot() const { return b_.data.subspan(offset(), b_.stride); }
  // Both overloads: the non-const one alone would hide the reader's.
  GPUNFV_HD const PacketHeaders& headers() const { return entry(b_.headers); }
  GPUNFV_HD PacketHeaders& headers() { return entry(b_.headers); }
  GPUNFV_HD uint16_t egress_port() const { return entry(b_.out_port); }
  GPUNFV_HD void set_egress_port(uint16_t p) { entry(b_.out_port) = p; }
};

// Memory of one batch's arrays, laid out in one allocation. The same layout is used for host
// and device copies, so a transfer is one copy of the allocation's device prefix.
struct BatchLayout {
  uint32_t capacity = 0;
  uint32_t stride = 0;
  uint32_t result_stride = 0;
  size_t off_results = 0, off_data = 0, off_len = 0, off_port = 0, off_out_port = 0, off_next_nf = 0,
         off_visited = 0, off_node_packets = 0,
         off_verdict = 0, off_headers = 0, off_flow_hash = 0, off_seq = 0, off_rx_ns = 0,
         off_wire_ns = 0, bytes = 0;

  static BatchLayout make(uint32_t capacity, uint32_t stride, uint32_t result_stride = 0);
  // Bytes from the start of the allocation that hold everything the device needs for a batch
  // of `count` packets (metadata arrays, then the first `count` slots).
  size_t device_prefix_bytes(uint32_t count) const { return off_data + size_t(count) * stride; }
  BatchView view(uint8_t* base, uint32_t count) const;
};

// host_shared: in the memory shared with NF processes (core/shared_arena.h); host_shared_pinned:
// the same, page-locked for the GPU backend.
enum class MemoryKind { host, host_pinned, host_shared, host_shared_pinned };

// Owning host batch. Pinned memory when the GPU backend will copy it.
class Batch {
 public:
  Batch(uint32_t capacity, uint32_t stride, MemoryKind kind, uint32_t result_stride = 0);
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  const BatchLayout& layout() const { return layout_; }
  uint32_t capacity() const { return layout_.capacity; }
  uint32_t stride() const { return layout_.stride; }
  uint32_t result_stride() const { return layout_.result_stride; }
  uint32_t count() const { return count_; }
  void set_count(uint32_t n) { count_ = n; }
  BatchView view() const {
    if (external_) {  // arrays and packet bytes elsewhere (a GPU ring's batch, slot indirection)
      BatchView v = *external_;
      v.count = count_;
      return v;
    }
    return layout_.view(base_, count_);
  }
  // Makes this batch a handle for arrays it does not own (chain/gpuring_feed.h): view() then
  // returns `v` with count(). The owner's memory must outlive its use through this batch.
  void set_external(const BatchView& v) { external_ = v; }
  bool is_external() const { return external_.has_value(); }
  uint8_t* base() const { return base_; }
  // host_pinned only where pinning succeeded (ordinary memory is the fallback without a device).
  MemoryKind memory_kind() const { return kind_; }
  // Page-locked: the GPU copies it, and may read it in place (zero copy).
  bool page_locked() const {
    return kind_ == MemoryKind::host_pinned || kind_ == MemoryKind::host_shared_pinned;
  }
  // GPU backend: a batch whose metadata and packets already lie in device memory (a GPU ring's
  // batch: arrays at device_base in this batch's layout, packet bytes in the ring's slots).
  // The GPU stage then uploads nothing and downloads only metadata into base() (see
  // chain/ring_batch_transfer.h); `dv` is the device view, its count replaced by count().
  void set_device_resident(const BatchView& dv) { device_view_ = dv; }
  bool device_resident() const { return device_view_.has_value(); }
  BatchView device_view() const {
    BatchView v = *device_view_;
    v.count = count_;
    return v;
  }

  // Batch-level bookkeeping used by executors.
  uint64_t batch_seq = 0;   // order of the batch at ingress (egress restores it)
  uint16_t chain = 0;       // chain the batch belongs to
  uint64_t ingress_ns = 0;  // when the batch was handed to processing
  uint8_t* device_base = nullptr;  // GPU backend: the batch's device twin (same layout)
  bool verdicts_changed = false;   // egress rewrote a verdict (a GPU ring's batch: upload them)

 private:
  BatchLayout layout_;
  MemoryKind kind_;
  uint8_t* base_ = nullptr;
  uint32_t count_ = 0;
  std::optional<BatchView> external_;
  std::optional<BatchView> device_view_;
};

}  // namespace gpunfv
