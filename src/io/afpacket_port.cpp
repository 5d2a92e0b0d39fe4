#include "io/afpacket_port.h"

#include "io/netdev.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpunfv {

namespace {

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

AfPacketPort::AfPacketPort(const ConfigNode& node, uint16_t id) : Port(node.str("name"), id) {
  node.only_keys({"name", "type", "interface", "rx", "tx", "queues", "promiscuous", "mtu",
                  "ring_blocks", "block_bytes", "retire_us", "tx_frames", "tx_kick"});
  ifname_ = node.str("interface");
  if (ifname_.empty() || ifname_.size() >= IFNAMSIZ)
    node["interface"].fail("interface: expected a Linux interface name");
  ifindex_ = int(if_nametoindex(ifname_.c_str()));
  if (ifindex_ == 0) node["interface"].fail("no network interface '" + ifname_ + "'");
  bool want_rx = true, want_tx = true;
  if (auto r = node.get("rx")) want_rx = r->as_bool();
  if (auto t = node.get("tx")) want_tx = t->as_bool();
  if (!want_rx && !want_tx) node.fail("afpacket port '" + name() + "' has neither rx nor tx");
  const uint32_t queues = uint32_t(node.int_or("queues", 1, 1, 64));
  if (auto p = node.get("promiscuous")) promiscuous_ = p->as_bool();
  ring_blocks_ = uint32_t(node.int_or("ring_blocks", ring_blocks_, 2, 1 << 16));
  block_bytes_ = uint32_t(node.int_or("block_bytes", block_bytes_, 4096, 1 << 28));
  if (block_bytes_ % uint32_t(getpagesize()) != 0)
    node["block_bytes"].fail("block_bytes must be a multiple of the page size");
  retire_us_ = uint32_t(node.int_or("retire_us", retire_us_, 1000, 10'000'000));
  tx_frames_ = uint32_t(node.int_or("tx_frames", tx_frames_, 16, 1 << 20));
  tx_kick_ = uint32_t(node.int_or("tx_kick", tx_kick_, 1, 1 << 20));

  // MTU: set it first when the config asks (the rings are sized from it).
  std::optional<int> set_mtu;
  if (auto m = node.get("mtu")) set_mtu = int(m->as_int(68, 65535));
  mtu_ = netdev_mtu(node.has("mtu") ? node["mtu"] : node, ifname_, set_mtu);
  if (mtu_ + 18 > block_bytes_ - 128)
    node.fail(fmt::format("MTU {} of '{}' does not fit in block_bytes {}", mtu_, ifname_,
                          block_bytes_));

  if (want_rx) {
    rx_.resize(queues);
    const int fanout_id = int((uint32_t(getpid()) * 31u + id) & 0xFFFF);
    for (RxQueue& q : rx_) open_rx_queue(node, q, queues > 1 ? fanout_id : -1);
  }
  if (want_tx) open_tx(node);
}

void AfPacketPort::open_rx_queue(const ConfigNode& node, RxQueue& q, int fanout_id) {
  // Protocol 0 until the ring exists: the socket receives nothing before bind().
  q.fd = socket(AF_PACKET, SOCK_RAW, 0);
  if (q.fd < 0) fail_errno(node, "cannot open an AF_PACKET socket", errno, "CAP_NET_RAW");
  int v3 = TPACKET_V3;
  if (setsockopt(q.fd, SOL_PACKET, PACKET_VERSION, &v3, sizeof v3) != 0)
    fail_errno(node, "TPACKET_V3 not available", errno, "CAP_NET_RAW");
  tpacket_req3 req{};
  req.tp_block_size = block_bytes_;
  req.tp_block_nr = ring_blocks_;
  req.tp_frame_size = 2048;  // only a sanity bound for V3; frames are packed in blocks
  req.tp_frame_nr = uint32_t(uint64_t(block_bytes_) * ring_blocks_ / req.tp_frame_size);
  req.tp_retire_blk_tov = std::max(1u, retire_us_ / 1000);  // the kernel counts in ms
  if (setsockopt(q.fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
    fail_errno(node, "rx ring refused (ring_blocks x block_bytes too large?)", errno,
               "CAP_NET_RAW");
  q.ring_bytes = size_t(block_bytes_) * ring_blocks_;
  void* ring = mmap(nullptr, q.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, q.fd, 0);
  if (ring == MAP_FAILED)
    ring = mmap(nullptr, q.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, q.fd, 0);
  if (ring == MAP_FAILED) fail_errno(node, "cannot map the rx ring", errno, "CAP_IPC_LOCK");
  q.ring = static_cast<uint8_t*>(ring);
  int one = 1;
  // Frames this process sends on the interface would otherwise come back as rx.
  setsockopt(q.fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = ifindex_;
  if (bind(q.fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0)
    fail_errno(node, "cannot bind to '" + ifname_ + "'", errno, "CAP_NET_RAW");
  if (fanout_id >= 0) {
    int arg = fanout_id | (PACKET_FANOUT_HASH << 16);
    if (setsockopt(q.fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) != 0)
      fail_errno(node["queues"], "PACKET_FANOUT_HASH refused", errno, "CAP_NET_RAW");
  }
  if (promiscuous_ && &q == &rx_.front()) {
    packet_mreq mr{};
    mr.mr_ifindex = ifindex_;
    mr.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(q.fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0)
      fail_errno(node, "cannot set promiscuous mode on '" + ifname_ + "'", errno, "CAP_NET_RAW");
  }
}

void AfPacketPort::open_tx(const ConfigNode& node) {
  tx_fd_ = socket(AF_PACKET, SOCK_RAW, 0);  // protocol 0: this socket receives nothing
  if (tx_fd_ < 0) fail_errno(node, "cannot open an AF_PACKET socket", errno, "CAP_NET_RAW");
  int v2 = TPACKET_V2;
  if (setsockopt(tx_fd_, SOL_PACKET, PACKET_VERSION, &v2, sizeof v2) != 0)
    fail_errno(node, "TPACKET_V2 not available", errno, "CAP_NET_RAW");
  tx_frame_bytes_ = round_up_pow2(uint32_t(TPACKET2_HDRLEN) + mtu_ + 18);
  const uint32_t block = std::max<uint32_t>(tx_frame_bytes_, uint32_t(getpagesize()));
  const uint32_t per_block = block / tx_frame_bytes_;
  tpacket_req req{};
  req.tp_block_size = block;
  req.tp_frame_size = tx_frame_bytes_;
  req.tp_block_nr = (tx_frames_ + per_block - 1) / per_block;
  req.tp_frame_nr = req.tp_block_nr * per_block;
  tx_frames_ = req.tp_frame_nr;
  if (setsockopt(tx_fd_, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) != 0)
    fail_errno(node, "tx ring refused (tx_frames too large?)", errno, "CAP_NET_RAW");
  tx_ring_bytes_ = size_t(block) * req.tp_block_nr;
  void* ring = mmap(nullptr, tx_ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, tx_fd_, 0);
  if (ring == MAP_FAILED) fail_errno(node, "cannot map the tx ring", errno, "CAP_NET_RAW");
  tx_ring_ = static_cast<uint8_t*>(ring);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = 0;
  sll.sll_ifindex = ifindex_;
  if (bind(tx_fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0)
    fail_errno(node, "cannot bind to '" + ifname_ + "'", errno, "CAP_NET_RAW");
}

AfPacketPort::~AfPacketPort() {
  if (tx_fd_ >= 0) {
    flush();
    munmap(tx_ring_, tx_ring_bytes_);
    close(tx_fd_);
  }
  for (RxQueue& q : rx_) {
    if (q.ring) munmap(q.ring, q.ring_bytes);
    if (q.fd >= 0) close(q.fd);
  }
}

uint32_t AfPacketPort::rx_burst(Batch& b, uint32_t max) {
  uint32_t n = 0;
  for (uint32_t tried = 0; tried < rx_.size() && n < max; ++tried) {
    const auto q = static_cast<uint16_t>(rx_turn_);
    rx_turn_ = (rx_turn_ + 1) % uint32_t(rx_.size());
    n += rx_queue_burst(q, b, max - n);
  }
  return n;
}

uint32_t AfPacketPort::rx_queue_burst(uint16_t queue, Batch& b, uint32_t max) {
  if (queue >= rx_.size()) return 0;
  BatchView v = b.view();
  const uint32_t first = b.count();
  const uint32_t want = std::min(max, b.capacity() - first);
  uint8_t* slots = v.data.framework_data();
  uint32_t n = 0;
  RxQueue& q = rx_[queue];
  while (n < want) {
    auto* desc = reinterpret_cast<tpacket_block_desc*>(q.ring + size_t(q.block) * block_bytes_);
    if (q.left == 0) {
      if ((__atomic_load_n(&desc->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) == 0)
        break;
      q.left = desc->hdr.bh1.num_pkts;
      q.next = reinterpret_cast<uint8_t*>(desc) + desc->hdr.bh1.offset_to_first_pkt;
    }
    while (q.left > 0 && n < want) {
      auto* h = reinterpret_cast<tpacket3_hdr*>(q.next);
      const uint32_t slot = first + n;
      // A frame cut short by the ring is reported longer than any slot: dropped as oversize.
      uint32_t len = h->tp_snaplen == h->tp_len ? h->tp_len : std::max(h->tp_len, v.stride + 1);
      std::memcpy(slots + size_t(slot) * v.stride, q.next + h->tp_mac,
                  std::min({h->tp_snaplen, v.stride}));
      v.len[slot] = uint16_t(std::min<uint32_t>(len, 0xFFFF));
      v.port[slot] = id();
      v.wire_ns[slot] = uint64_t(h->tp_sec) * 1'000'000'000ull + h->tp_nsec;
      ++n;
      --q.left;
      q.next += h->tp_next_offset;
    }
    if (q.left == 0) {
      __atomic_store_n(&desc->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
      q.block = (q.block + 1) % ring_blocks_;
    }
  }
  b.set_count(first + n);
  return n;
}

void AfPacketPort::kick() {
  if (tx_fd_ < 0 || tx_unkicked_ == 0) return;
  // EAGAIN/ENOBUFS: the kernel keeps the frames and sends them at the next kick.
  send(tx_fd_, nullptr, 0, MSG_DONTWAIT);
  tx_unkicked_ = 0;
}

bool AfPacketPort::tx(const BatchView& b, uint32_t i) {
  if (tx_fd_ < 0) return false;
  const uint32_t len = b.len[i];
  const uint32_t data_off = uint32_t(TPACKET2_HDRLEN - sizeof(sockaddr_ll));
  if (len > b.stride || data_off + len > tx_frame_bytes_) return false;
  auto* h = reinterpret_cast<tpacket2_hdr*>(tx_ring_ + size_t(tx_head_) * tx_frame_bytes_);
  // A full ring: hand it to the kernel and wait a little for it to drain.
  for (int attempt = 0; __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE;
       ++attempt) {
    if (attempt == 100) return false;
    tx_unkicked_ = std::max(tx_unkicked_, 1u);
    kick();
    pollfd p{tx_fd_, POLLOUT, 0};
    poll(&p, 1, 1);
  }
  std::memcpy(reinterpret_cast<uint8_t*>(h) + data_off,
              b.data.subspan(slot_offset(b, i), len).framework_data(), len);
  h->tp_len = len;
  __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
  tx_head_ = (tx_head_ + 1) % tx_frames_;
  if (++tx_unkicked_ >= tx_kick_) kick();
  return true;
}

void AfPacketPort::flush() {
  if (tx_fd_ < 0) return;
  tx_unkicked_ = std::max(tx_unkicked_, 1u);
  kick();
  // Wait (bounded) until the kernel has sent what is in the ring, so a run's end loses nothing.
  for (int wait = 0; wait < 1000; ++wait) {
    bool pending = false;
    for (uint32_t s = 0; s < tx_frames_ && !pending; ++s) {
      auto* h = reinterpret_cast<tpacket2_hdr*>(tx_ring_ + size_t(s) * tx_frame_bytes_);
      pending = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE;
    }
    if (!pending) return;
    send(tx_fd_, nullptr, 0, MSG_DONTWAIT);
    pollfd p{tx_fd_, POLLOUT, 0};
    poll(&p, 1, 1);
  }
}

std::string AfPacketPort::describe() const {
  std::string s = "afpacket " + ifname_ + fmt::format(" mtu={}", mtu_);
  if (has_rx()) s += fmt::format(" rx=TPACKET_V3 queues={}{}", rx_.size(), promiscuous_ ? " promisc" : "");
  if (has_tx()) s += fmt::format(" tx=TPACKET_V2 ring={} kick={}", tx_frames_, tx_kick_);
  return s;
}

}  // namespace gpunfv
