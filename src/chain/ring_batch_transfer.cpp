#include "chain/ring_batch_transfer.h"

namespace gpunfv {

std::array<ByteRange, 2> metadata_download_ranges(const BatchLayout& l) {
  // BatchLayout puts every array the device writes in front of the data area, and seq, rx_ns
  // and wire_ns (the last arrays) behind it.
  return {ByteRange{0, l.off_data}, ByteRange{l.off_seq, l.bytes - l.off_seq}};
}

void frames_needed_on_host(const BatchView& b, const Chain& chain, uint16_t ring_port,
                           size_t port_count, uint32_t frame_nodes, const CollectReadsFrame& reads,
                           std::vector<uint32_t>& out) {
  out.clear();
  for (uint32_t i = 0; i < b.count; ++i) {
    bool read = false;
    for (uint32_t bits = b.visited[i] & frame_nodes; bits && !read; bits &= bits - 1)
      read = reads(static_cast<uint8_t>(__builtin_ctz(bits)), i);
    if (read) {
      out.push_back(i);
      continue;
    }
    if (b.verdict[i] != static_cast<uint8_t>(DropReason::none)) continue;
    const uint16_t eg = b.out_port[i] != kNoPort ? b.out_port[i] : chain.to;
    if (eg != kNoPort && eg < port_count && eg != ring_port) out.push_back(i);
  }
}

}  // namespace gpunfv
