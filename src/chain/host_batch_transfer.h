// What a host batch (filled by ingress in pinned host memory) uploads before the chain on the
// GPU backend, decided here as a plain function so `make test` checks it without a GPU.
// Only what ingress wrote and the device reads goes up: len and port, the per-node counts
// zeroed on the host (three adjacent arrays: one copy, and no zeroing launch), and the first
// `count` slots; classify and enter_chain write every other array the chain reads (out_port,
// next_nf, visited, verdict, headers, flow_hash), NFs write their own results, and seq, rx_ns,
// wire_ns stay on the host. The same holds
// for a GPU ring's device-resident batch (chain/ring_batch_transfer.h), which uploads nothing.
// Slots go up as rows of `row_bytes` (the batch's longest frame rounded up to 64 bytes) out of
// `stride` when that saves a quarter of the bytes or more and the rows are long enough for the
// copy engine's strided copy to run well (a second copy after len, port and the counts); else
// with len, port and the counts as one run (BatchLayout puts the slots right behind them).
// Errors: none (a frame longer than the slot is dropped by classify as `oversize`: its row is
// clamped to the slot).
#pragma once

#include <cstddef>
#include <cstdint>

#include "chain/ring_batch_transfer.h"
#include "core/batch.h"

namespace gpunfv {

struct HostBatchUpload {
  ByteRange metadata;     // len, port and node_packets
  size_t data_offset = 0;  // first slot
  size_t rows = 0;         // slots (the batch's count)
  size_t row_bytes = 0;    // bytes of each slot that go up
  size_t pitch = 0;        // the slot stride
  bool strided() const { return row_bytes != pitch; }
  // Not strided: the one copy, from len to the last slot's end (with the few bytes of alignment
  // between the counts and the first slot).
  ByteRange run() const { return {metadata.offset, data_offset + rows * pitch - metadata.offset}; }
  size_t bytes() const { return strided() ? metadata.bytes + rows * row_bytes : run().bytes; }
};

// What a host batch downloads after the chain, in one copy:
// - whole: the device prefix (every array the device wrote, then the first `count` slots);
// - egress only, where no NF of the batch's chain reads results on the host (each counts on the
//   device, NetworkFunction::count_on_device, or collects nothing): what egress reads, the
//   arrays from out_port on (out_port, next_nf, visited, verdict, len, port, node_packets) and
//   the slots; not the headers, flow hashes and NF results in front of them (S_d: 56 of the 196
//   bytes a 64-byte packet brought back).
ByteRange plan_host_batch_download(const BatchLayout& l, uint32_t count, bool egress_only);

// Rows shorter than this go up whole (the strided copy is slow on short rows).
inline constexpr size_t kMinStridedRowBytes = 512;

// `longest_frame` is the largest len[i] of the batch's `count` packets.
HostBatchUpload plan_host_batch_upload(const BatchLayout& l, uint32_t count, uint32_t longest_frame);
// The same for host batch `host` (its count and lengths): its frames are scanned for the
// longest only where a strided upload could pay (a row of 3/4 of a slot still 512 bytes or
// more), so short slots cost no pass over the lengths.
HostBatchUpload plan_host_batch_upload(const BatchLayout& l, const BatchView& host);
// The largest len of the first `count` packets of host view `b`.
uint32_t longest_frame(const BatchView& b);

}  // namespace gpunfv
