#include "chain/host_batch_transfer.h"

#include <algorithm>

namespace gpunfv {

HostBatchUpload plan_host_batch_upload(const BatchLayout& l, uint32_t count, uint32_t longest) {
  HostBatchUpload u;
  // len, port and node_packets lie together, right in front of the slots (BatchLayout::make).
  u.metadata = {l.off_len, l.off_node_packets + kMaxChainNodes * sizeof(uint32_t) - l.off_len};
  u.data_offset = l.off_data;
  u.rows = count;
  u.pitch = l.stride;
  const size_t row = std::min<size_t>((size_t(longest) + 63) / 64 * 64, l.stride);
  // Strided when it saves at least a quarter of the slot bytes on rows the copy engine moves
  // well: on an H200 a strided upload of 1536 of 1600 bytes per slot ran about 10% slower per
  // byte than one run, so saving 4% of the bytes gained nothing (S_d at 1518 B).
  const bool worth = row >= kMinStridedRowBytes && (l.stride - row) * 4 >= l.stride;
  u.row_bytes = worth && count > 1 ? row : l.stride;
  return u;
}

HostBatchUpload plan_host_batch_upload(const BatchLayout& l, const BatchView& host) {
  const bool could_pay = size_t(l.stride) * 3 / 4 >= kMinStridedRowBytes;
  return plan_host_batch_upload(l, host.count, could_pay ? longest_frame(host) : l.stride);
}

ByteRange plan_host_batch_download(const BatchLayout& l, uint32_t count, bool egress_only) {
  if (!egress_only) return {0, l.device_prefix_bytes(count)};
  // BatchLayout::make: headers, flow_hash and results first, then egress's arrays from out_port
  // on, then the slots.
  return {l.off_out_port, l.device_prefix_bytes(count) - l.off_out_port};
}

uint32_t longest_frame(const BatchView& b) {
  uint16_t m = 0;
  const uint16_t* len = b.len.framework_data();
  for (uint32_t i = 0; i < b.count; ++i) m = std::max(m, len[i]);
  return m;
}

}  // namespace gpunfv
