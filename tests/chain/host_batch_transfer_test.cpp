// What a host batch uploads before the chain (chain/host_batch_transfer.h): ingress's len and
// port arrays, the zeroed per-node counts and the slots, nothing the device writes itself; slots as strided rows only when
// rows are long and the saving is real. (That the GPU's output still equals the CPU's with this
// upload is checked by the GPU stage and chain tests on a device.)
#include <gtest/gtest.h>

#include <vector>

#include "chain/host_batch_transfer.h"
#include "core/batch.h"

namespace gpunfv {
namespace {

bool overlaps(size_t a, size_t an, size_t b, size_t bn) { return a < b + bn && b < a + an; }

TEST(HostBatchTransfer, UploadsLenPortCountsAndSlotsOnly) {
  const BatchLayout l = BatchLayout::make(8192, 1600, 72);
  const HostBatchUpload u = plan_host_batch_upload(l, 8000, 1000);
  EXPECT_EQ(u.metadata.offset, l.off_len);
  EXPECT_GE(u.metadata.offset + u.metadata.bytes, l.off_port + 8192 * sizeof(uint16_t));
  // The per-node counts, zeroed on the host, go up with them.
  EXPECT_GE(u.metadata.offset + u.metadata.bytes, l.off_node_packets + kMaxChainNodes * sizeof(uint32_t));
  // Nothing classify, enter_chain or the NFs write, and no host-only array.
  for (size_t off : {l.off_out_port, l.off_next_nf, l.off_visited, l.off_verdict,
                     l.off_headers, l.off_flow_hash, l.off_results, l.off_seq, l.off_rx_ns, l.off_wire_ns})
    EXPECT_FALSE(overlaps(u.metadata.offset, u.metadata.bytes, off, 1)) << off;
  EXPECT_EQ(u.data_offset, l.off_data);
  EXPECT_EQ(u.rows, 8000u);
  EXPECT_EQ(u.pitch, 1600u);
  EXPECT_EQ(u.row_bytes, 1024u);  // 1000 rounded up to 64
  EXPECT_TRUE(u.strided());
  EXPECT_EQ(u.bytes(), u.metadata.bytes + 8000u * 1024u);
  EXPECT_LT(u.bytes(), l.device_prefix_bytes(8000));
}

// Short frames: len, port, the counts and the slots go up as one copy, and that run holds
// nothing the device writes.
TEST(HostBatchTransfer, UnstridedUploadIsOneRunFromLenToTheLastSlot) {
  const BatchLayout l = BatchLayout::make(8192, 192, 72);
  const HostBatchUpload u = plan_host_batch_upload(l, 1000, 64);
  ASSERT_FALSE(u.strided());
  const ByteRange r = u.run();
  EXPECT_EQ(r.offset, l.off_len);
  EXPECT_EQ(r.offset + r.bytes, l.off_data + 1000u * 192u);
  EXPECT_EQ(u.bytes(), r.bytes);
  EXPECT_LT(r.bytes, 1000u * 192u + 8192u * 4u + 1024u);  // slots, len and port, alignment
  for (size_t off : {l.off_out_port, l.off_next_nf, l.off_visited, l.off_verdict,
                     l.off_headers, l.off_flow_hash, l.off_results, l.off_seq, l.off_rx_ns, l.off_wire_ns})
    EXPECT_FALSE(overlaps(r.offset, r.bytes, off, 1)) << off;
}

TEST(HostBatchTransfer, ShortRowsAndSmallSavingsGoUpWhole) {
  const BatchLayout small = BatchLayout::make(4096, 192, 72);
  EXPECT_FALSE(plan_host_batch_upload(small, 4096, 64).strided());  // 64-byte rows: too short
  EXPECT_EQ(plan_host_batch_upload(small, 4096, 64).row_bytes, 192u);
  const BatchLayout big = BatchLayout::make(1024, 1600, 0);
  EXPECT_FALSE(plan_host_batch_upload(big, 1024, 1590).strided());  // 1600 of 1600
  EXPECT_FALSE(plan_host_batch_upload(big, 1024, 1550).strided());  // rounds up to the slot
  EXPECT_FALSE(plan_host_batch_upload(big, 1024, 1518).strided());  // 1536: saves only 4%
  EXPECT_FALSE(plan_host_batch_upload(big, 1024, 1153).strided());  // 1216: saves 24%
  EXPECT_TRUE(plan_host_batch_upload(big, 1024, 1152).strided());   // 1152: saves 28%
}

TEST(HostBatchTransfer, OversizeFrameRowIsClampedToTheSlot) {
  const BatchLayout l = BatchLayout::make(64, 1536, 0);
  const HostBatchUpload u = plan_host_batch_upload(l, 64, 9000);
  EXPECT_EQ(u.row_bytes, 1536u);
  EXPECT_FALSE(u.strided());
}

TEST(HostBatchTransfer, LongestFrameReadsOnlyTheBatchsPackets) {
  Batch b(16, 128, MemoryKind::host);
  b.set_count(3);
  BatchView v = b.view();
  v.len[0] = 60;
  v.len[1] = 1000;
  v.len[2] = 64;
  v.len[3] = 9000;  // beyond count
  EXPECT_EQ(longest_frame(v), 1000u);
  b.set_count(0);
  EXPECT_EQ(longest_frame(b.view()), 0u);
}

TEST(HostBatchTransfer, PlanFromAHostBatchMatchesThePlanFromItsLongestFrame) {
  for (uint32_t stride : {128u, 192u, 640u, 704u, 1600u}) {
    Batch b(64, stride, MemoryKind::host, 8);
    b.set_count(40);
    BatchView v = b.view();
    for (uint32_t i = 0; i < 40; ++i) v.len[i] = uint16_t(60 + (i * 37) % (stride / 2));
    const HostBatchUpload a = plan_host_batch_upload(b.layout(), v);
    const HostBatchUpload e = plan_host_batch_upload(b.layout(), 40, longest_frame(v));
    EXPECT_EQ(a.row_bytes, e.row_bytes) << stride;
    EXPECT_EQ(a.bytes(), e.bytes()) << stride;
  }
}

TEST(HostBatchTransfer, DownloadsWholePrefixOrWhatEgressReads) {
  const BatchLayout l = BatchLayout::make(8192, 128, 48);
  const ByteRange whole = plan_host_batch_download(l, 8000, false);
  EXPECT_EQ(whole.offset, 0u);
  EXPECT_EQ(whole.bytes, l.device_prefix_bytes(8000));

  // One copy each way; the lean one holds what egress reads.
  const ByteRange lean = plan_host_batch_download(l, 8000, true);
  auto covered = [&](size_t off, size_t n) { return off >= lean.offset && off + n <= lean.offset + lean.bytes; };
  // Every array egress reads, whole, and the first 8000 slots.
  EXPECT_TRUE(covered(l.off_len, 8192 * sizeof(uint16_t)));
  EXPECT_TRUE(covered(l.off_port, 8192 * sizeof(uint16_t)));
  EXPECT_TRUE(covered(l.off_out_port, 8192 * sizeof(uint16_t)));
  EXPECT_TRUE(covered(l.off_next_nf, 8192));
  EXPECT_TRUE(covered(l.off_visited, 8192 * sizeof(uint32_t)));
  EXPECT_TRUE(covered(l.off_node_packets, kMaxChainNodes * sizeof(uint32_t)));
  EXPECT_TRUE(covered(l.off_verdict, 8192));
  EXPECT_TRUE(covered(l.off_data, size_t(8000) * 128));
  EXPECT_FALSE(covered(l.off_data + size_t(8000) * 128, 1));
  // Not the headers, flow hashes or results, nor host-only arrays.
  for (size_t off : {l.off_headers, l.off_flow_hash, l.off_results, l.off_seq, l.off_rx_ns, l.off_wire_ns})
    EXPECT_FALSE(overlaps(lean.offset, lean.bytes, off, 1)) << off;
  EXPECT_LT(lean.bytes, whole.bytes);
}

}  // namespace
}  // namespace gpunfv
