#include "core/batch.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/host_memory.h"
#include "core/shared_arena.h"

namespace gpunfv {

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace

BatchLayout BatchLayout::make(uint32_t capacity, uint32_t stride, uint32_t result_stride) {
  if (capacity == 0 || stride == 0 || stride % 64 != 0)
    throw std::invalid_argument("batch capacity must be > 0 and stride a multiple of 64");
  if (result_stride % 4 != 0) throw std::invalid_argument("result stride must be a multiple of 4");
  BatchLayout l;
  l.capacity = capacity;
  l.stride = stride;
  l.result_stride = result_stride;
  size_t at = 0;
  auto place = [&](size_t elem) {
    size_t off = align_up(at, 256);
    at = off + elem * capacity;
    return off;
  };
  // Arrays the device reads or writes first, then the packet bytes, then host-only arrays:
  // one contiguous copy each way moves a batch (device_prefix_bytes). Nearest the packet
  // bytes: len, port and node_packets (what a host batch uploads, the counts zeroed on the
  // host), so they and the slots go up as one run; in front of them out_port, next_nf, visited
  // and verdict, so what egress reads comes back as one run too (chain/host_batch_transfer.h).
  l.off_headers = place(sizeof(PacketHeaders));
  l.off_flow_hash = place(sizeof(uint32_t));
  l.off_results = place(result_stride);
  l.off_out_port = place(sizeof(uint16_t));
  l.off_next_nf = place(sizeof(uint8_t));
  l.off_visited = place(sizeof(uint32_t));
  l.off_verdict = place(sizeof(uint8_t));
  l.off_len = place(sizeof(uint16_t));
  l.off_port = place(sizeof(uint16_t));
  l.off_node_packets = align_up(at, 256);
  at = l.off_node_packets + kMaxChainNodes * sizeof(uint32_t);
  l.off_data = place(stride);
  l.off_seq = place(sizeof(uint64_t));
  l.off_rx_ns = place(sizeof(uint64_t));
  l.off_wire_ns = place(sizeof(uint64_t));
  l.bytes = align_up(at, 256);
  return l;
}

BatchView BatchLayout::view(uint8_t* base, uint32_t count) const {
  BatchView v;
  v.count = count;
  v.capacity = capacity;
  v.stride = stride;
  auto span = [&](auto* type_tag, size_t off) {
    using T = std::remove_pointer_t<decltype(type_tag)>;
    return IsoSpan<T>(reinterpret_cast<T*>(base + off), capacity);
  };
  v.data = IsoSpan<uint8_t>(base + off_data, size_t(capacity) * stride);
  v.len = span((uint16_t*)nullptr, off_len);
  v.port = span((uint16_t*)nullptr, off_port);
  v.out_port = span((uint16_t*)nullptr, off_out_port);
  v.next_nf = span((uint8_t*)nullptr, off_next_nf);
  v.verdict = span((uint8_t*)nullptr, off_verdict);
  v.visited = span((uint32_t*)nullptr, off_visited);
  v.node_packets = IsoSpan<uint32_t>(reinterpret_cast<uint32_t*>(base + off_node_packets),
                                     kMaxChainNodes);
  v.headers = span((PacketHeaders*)nullptr, off_headers);
  v.flow_hash = span((uint32_t*)nullptr, off_flow_hash);
  v.seq = span((uint64_t*)nullptr, off_seq);
  v.rx_ns = span((uint64_t*)nullptr, off_rx_ns);
  v.wire_ns = span((uint64_t*)nullptr, off_wire_ns);
  v.result_stride = result_stride;
  v.results = IsoSpan<uint8_t>(base + off_results, size_t(capacity) * result_stride);
  return v;
}

Batch::Batch(uint32_t capacity, uint32_t stride, MemoryKind kind, uint32_t result_stride)
    : layout_(BatchLayout::make(capacity, stride, result_stride)), kind_(kind) {
  if (kind_ == MemoryKind::host_pinned) {
    base_ = static_cast<uint8_t*>(host_alloc_pinned(layout_.bytes));
    if (!base_) kind_ = MemoryKind::host;  // no device: ordinary memory works for the CPU
  }
  if (kind_ == MemoryKind::host_shared || kind_ == MemoryKind::host_shared_pinned)
    base_ = static_cast<uint8_t*>(SharedArena::instance().allocate(layout_.bytes));
  if (kind_ == MemoryKind::host_shared_pinned && !host_register_pinned(base_, layout_.bytes))
    kind_ = MemoryKind::host_shared;  // no device: the CPU backend needs none
  if (!base_) base_ = static_cast<uint8_t*>(std::aligned_alloc(256, layout_.bytes));
  if (!base_) throw std::bad_alloc();
  std::memset(base_, 0, layout_.bytes);
}

Batch::~Batch() {
  if (kind_ == MemoryKind::host_pinned)
    host_free_pinned(base_);
  else if (kind_ == MemoryKind::host)
    std::free(base_);  // shared memory is the arena's for the whole run
}

}  // namespace gpunfv
