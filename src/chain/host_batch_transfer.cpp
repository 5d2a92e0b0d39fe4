#include "chain/host_batch_transfer.h"

#include <algorithm>

namespace gpunfv {

HostBatchUpload plan_host_batch_upload(const BatchLayout& l, uint32_t count, uint32_t longest) {
  HostBatchUpload u;
  // len and port are the layout's first two arrays (BatchLayout::make); out_port follows.
  u.metadata = {l.off_len, l.off_out_port - l.off_len};
  u.data_offset = l.off_data;
  u.rows = count;
  u.pitch = l.stride;
  const size_t row = std::min<size_t>((size_t(longest) + 63) / 64 * 64, l.stride);
  // Strided when it saves at least 1/32 of the slot bytes on rows the copy engine moves well.
  const bool worth = row >= kMinStridedRowBytes && (l.stride - row) * 32 >= l.stride;
  u.row_bytes = worth && count > 1 ? row : l.stride;
  return u;
}

uint32_t longest_frame(const BatchView& b) {
  uint16_t m = 0;
  const uint16_t* len = b.len.framework_data();
  for (uint32_t i = 0; i < b.count; ++i) m = std::max(m, len[i]);
  return m;
}

}  // namespace gpunfv
