#include "io/dpdk_port.h"

#if GPUNFV_HAVE_DPDK_PORT

#include <fmt/core.h>
#include <fmt/format.h>
#include <pthread.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "io/dpdk_eal.h"
#include "io/dpdk_handle_bursts.h"

namespace gpunfv {

namespace {

constexpr uint32_t kTxQueueFrames = 32;

// The port's mbuf pool. rte_pktmbuf_pool_create keeps every object inside one page of the
// smallest page size; without hugepages (--no-huge, how we run without privileges) that is
// one 2.3 KiB mbuf per 4 KiB page, so every mbuf header sits at the same offset in its page, in
// the same L1 set: reading the lengths of a burst's frames then misses L1 on every one (a
// forward at 64 B ran at half the rate). Where IOVA is VA (vdevs, vfio with an IOMMU, and
// always without hugepages) an object spanning two pages is contiguous for the device too, so
// the pool packs objects (RTE_MEMPOOL_F_NO_IOVA_CONTIG), built as rte_pktmbuf_pool_create
// builds it otherwise. In PA mode the default pool stands.
rte_mempool* make_mbuf_pool(const std::string& name, uint32_t n, uint16_t data_room, int socket) {
  constexpr unsigned kCache = 256;
  if (rte_eal_iova_mode() != RTE_IOVA_VA)
    return rte_pktmbuf_pool_create(name.c_str(), n, kCache, 0, data_room, socket);
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  priv.mbuf_priv_size = 0;
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), n, unsigned(sizeof(rte_mbuf)) + data_room,
                                             kCache, sizeof priv, socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (!mp) return nullptr;
  if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_pktmbuf_pool_init(mp, &priv);
  if (rte_mempool_populate_default(mp) < 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

// A thread that drives dpdk ports gets an lcore id (rte_thread_register), so mempool
// operations on it use a per-lcore cache instead of the pool's shared ring. Counted per thread:
// a thread driving two ports registers once and unregisters after its last port lets go. A
// thread EAL already knows (an EAL lcore, or registered elsewhere) is left alone; where no
// lcore is free the thread runs without a cache, as before.
thread_local int t_dpdk_users = 0;
thread_local bool t_dpdk_registered = false;

void register_dpdk_thread() {
  if (t_dpdk_users++ > 0) return;
  t_dpdk_registered = rte_lcore_id() == LCORE_ID_ANY && rte_thread_register() == 0 &&
                      rte_lcore_id() != LCORE_ID_ANY;
}

void unregister_dpdk_thread() {
  if (t_dpdk_users == 0 || --t_dpdk_users > 0) return;
  if (t_dpdk_registered) rte_thread_unregister();
  t_dpdk_registered = false;
}

class DpdkPort final : public Port, public ZeroCopyIo {
 public:
  DpdkPort(const ConfigNode& node, uint16_t id);
  ~DpdkPort() override;

  std::string_view type() const override { return "dpdk"; }
  bool has_rx() const override { return true; }
  bool has_tx() const override { return true; }
  uint32_t rx_burst(Batch& b, uint32_t max) override;
  // RSS queues: rte_eth_rx_burst on different queues may run on different threads.
  uint16_t rx_queues() const override { return rx_queues_; }
  uint32_t rx_queue_burst(uint16_t q, Batch& b, uint32_t max) override;
  bool rx_done() const override { return false; }
  bool tx(const BatchView& b, uint32_t i) override;
  void tx_burst_end() override { send_queued(); }
  void flush() override { send_queued(); }
  uint32_t max_frame_bytes() const override { return mtu_ + 18; }
  std::string describe() const override;
  ZeroCopyIo* zero_copy() override { return this; }

  void io_thread_begin() override { register_dpdk_thread(); }
  void io_thread_end() override { unregister_dpdk_thread(); }

  std::string_view zc_kind() const override { return "dpdk-mbuf"; }
  uint32_t zc_rx(FrameRef* out, uint32_t max) override;
  uint32_t zc_tx(const FrameRef* frames, uint32_t n) override;
  void zc_free(const FrameRef* frames, uint32_t n) override;
  bool zc_handle_bursts() const override { return true; }
  uint32_t zc_rx_handles(void** handles, uint32_t max, uint64_t* bytes) override;
  uint32_t zc_tx_handles(void* const* handles, uint32_t n) override;
  uint64_t zc_handle_bytes(void* const* handles, uint32_t n) const override;
  void zc_free_handles(void* const* handles, uint32_t n) override;
  bool zc_port_bytes(uint64_t& rx, uint64_t& tx) override;
  int zc_ethdev_port() const override { return port_id_; }

 private:
  void send_queued();

  std::string device_;
  uint16_t port_id_ = 0;
  uint16_t rx_queues_ = 1, tx_queues_ = 1, rx_turn_ = 0;
  uint32_t mtu_ = 1500;
  bool rss_ = false, promiscuous_ = false, vdev_ = false;
  rte_mempool* pool_ = nullptr;
  std::vector<rte_mbuf*> tx_queued_;
  uint64_t lost_after_post_ = 0;
  // rte_eth_stats_get is not thread-safe in every PMD (some keep register offsets), and the
  // two forwards of a port pair both read this port's counters.
  std::mutex stats_mutex_;
};

DpdkPort::DpdkPort(const ConfigNode& node, uint16_t id) : Port(node.str("name"), id) {
  node.only_keys({"name", "type", "device", "args", "eal", "rx_queues", "tx_queues", "rx_desc",
                  "tx_desc", "mbufs", "mtu", "promiscuous"});
  device_ = node.str("device");
  if (device_.empty()) node["device"].fail("device: expected a PCI address or a vdev name");
  const std::string args = node.str_or("args", "");
  rx_queues_ = uint16_t(node.int_or("rx_queues", 1, 1, 1024));
  tx_queues_ = uint16_t(node.int_or("tx_queues", 1, 1, 1024));
  const uint16_t rx_desc = uint16_t(node.int_or("rx_desc", 1024, 32, 32768));
  const uint16_t tx_desc = uint16_t(node.int_or("tx_desc", 1024, 32, 32768));
  const uint32_t mbufs = uint32_t(node.int_or("mbufs", 16383, 1023, 1 << 24));
  bool want_promisc = true;
  if (auto p = node.get("promiscuous")) want_promisc = p->as_bool();
  init_dpdk_eal_once(node);

  if (rte_eth_dev_get_port_by_name(device_.c_str(), &port_id_) != 0) {
    // Not probed at EAL init: a vdev is created here (hot-plug), a PCI device must be bound.
    std::string devargs = args.empty() ? device_ : device_ + "," + args;
    if (rte_dev_probe(devargs.c_str()) != 0 ||
        rte_eth_dev_get_port_by_name(device_.c_str(), &port_id_) != 0)
      node["device"].fail(fmt::format(
          "DPDK device '{}' not found ({}): a PCI NIC must be bound to vfio-pci, a vdev name "
          "must start with a driver name such as net_ring, net_pcap, net_af_packet, net_memif",
          devargs, rte_strerror(rte_errno)));
  } else if (!args.empty()) {
    node["args"].fail("args: given, but device '" + device_ + "' already exists (probed by EAL)");
  }

  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port_id_, &info) != 0) node.fail("cannot query device " + device_);
  if (info.device)
    if (const rte_bus* bus = rte_dev_bus(info.device)) vdev_ = std::string_view(rte_bus_name(bus)) == "vdev";
  if (rx_queues_ > info.max_rx_queues || tx_queues_ > info.max_tx_queues)
    node.fail(fmt::format("device {} offers {} rx / {} tx queues", device_, info.max_rx_queues,
                          info.max_tx_queues));
  rte_eth_conf conf{};
  if (rx_queues_ > 1 && info.flow_type_rss_offloads != 0) {
    rss_ = true;
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & info.flow_type_rss_offloads;
  }
  if (rte_eth_dev_configure(port_id_, rx_queues_, tx_queues_, &conf) != 0)
    node.fail("rte_eth_dev_configure failed for " + device_ + ": " + rte_strerror(rte_errno));
  if (auto m = node.get("mtu")) {
    int rc = rte_eth_dev_set_mtu(port_id_, uint16_t(m->as_int(68, 9600)));
    if (rc != 0) m->fail("cannot set the MTU of " + device_ + ": " + rte_strerror(-rc));
  }
  uint16_t mtu = 1500;
  if (rte_eth_dev_get_mtu(port_id_, &mtu) == 0) mtu_ = mtu;

  const int socket = rte_eth_dev_socket_id(port_id_);
  const uint32_t buf = std::max<uint32_t>(RTE_MBUF_DEFAULT_BUF_SIZE, mtu_ + 18 + RTE_PKTMBUF_HEADROOM);
  pool_ = make_mbuf_pool("gpunfv_" + std::to_string(id), mbufs, uint16_t(std::min<uint32_t>(buf, 65535)),
                         socket < 0 ? int(SOCKET_ID_ANY) : socket);
  if (!pool_) node.fail("cannot create the mbuf pool of " + device_ + ": " + rte_strerror(rte_errno));
  for (uint16_t q = 0; q < rx_queues_; ++q)
    if (rte_eth_rx_queue_setup(port_id_, q, rx_desc, socket < 0 ? SOCKET_ID_ANY : socket,
                               nullptr, pool_) != 0)
      node.fail(fmt::format("rx queue {} setup failed for {}", q, device_));
  for (uint16_t q = 0; q < tx_queues_; ++q)
    if (rte_eth_tx_queue_setup(port_id_, q, tx_desc, socket < 0 ? SOCKET_ID_ANY : socket,
                               nullptr) != 0)
      node.fail(fmt::format("tx queue {} setup failed for {}", q, device_));
  if (rte_eth_dev_start(port_id_) != 0)
    node.fail("cannot start " + device_ + ": " + rte_strerror(rte_errno));
  if (want_promisc) promiscuous_ = rte_eth_promiscuous_enable(port_id_) == 0;
  tx_queued_.reserve(kTxQueueFrames);
}

DpdkPort::~DpdkPort() {
  send_queued();
  if (lost_after_post_)
    fmt::print(stderr, "gpunfv: port '{}': {} frames lost after tx (device did not drain)\n",
               name(), lost_after_post_);
  rte_eth_dev_stop(port_id_);
  rte_eth_dev_close(port_id_);
  rte_mempool_free(pool_);
}

uint32_t DpdkPort::rx_burst(Batch& b, uint32_t max) {
  uint32_t n = 0;
  for (uint16_t tried = 0; tried < rx_queues_ && n < max; ++tried) {
    const uint16_t q = rx_turn_;
    rx_turn_ = uint16_t((rx_turn_ + 1) % rx_queues_);
    n += rx_queue_burst(q, b, max - n);
  }
  return n;
}

uint32_t DpdkPort::rx_queue_burst(uint16_t q, Batch& b, uint32_t max) {
  if (q >= rx_queues_) return 0;
  BatchView v = b.view();
  const uint32_t first = b.count();
  uint32_t want = std::min(max, b.capacity() - first);
  uint8_t* slots = v.data.framework_data();
  uint32_t n = 0;
  rte_mbuf* mbufs[64];
  uint64_t now = 0;
  while (n < want) {
    const uint16_t got = rte_eth_rx_burst(port_id_, q, mbufs, uint16_t(std::min<uint32_t>(want - n, 64)));
    if (got == 0) break;
    if (!now) now = realtime_ns();
    for (uint16_t k = 0; k < got; ++k) {
      const uint32_t slot = first + n + k;
      const uint32_t len = rte_pktmbuf_pkt_len(mbufs[k]);
      // rte_pktmbuf_read copies only a segmented frame; a contiguous one it points into.
      uint8_t* dst = slots + size_t(slot) * v.stride;
      const uint32_t n_copy = std::min(len, v.stride);
      const void* src = rte_pktmbuf_read(mbufs[k], 0, n_copy, dst);
      if (src && src != dst) std::memcpy(dst, src, n_copy);
      v.len[slot] = uint16_t(std::min<uint32_t>(len, 0xFFFF));
      v.port[slot] = id();
      v.wire_ns[slot] = now;
    }
    rte_pktmbuf_free_bulk(mbufs, got);
    n += got;
    if (got < 64) break;  // the queue is empty for now
  }
  b.set_count(first + n);
  return n;
}

bool DpdkPort::tx(const BatchView& b, uint32_t i) {
  const uint32_t len = b.len[i];
  if (len > b.stride) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) {
    send_queued();  // frees completed mbufs in most drivers
    m = rte_pktmbuf_alloc(pool_);
    if (!m) return false;
  }
  char* dst = rte_pktmbuf_append(m, uint16_t(len));
  if (!dst) {
    rte_pktmbuf_free(m);
    return false;
  }
  std::memcpy(dst, b.data.subspan(slot_offset(b, i), len).framework_data(), len);
  tx_queued_.push_back(m);
  if (tx_queued_.size() >= kTxQueueFrames) send_queued();
  return true;
}

void DpdkPort::send_queued() {
  uint32_t sent = 0;
  const uint32_t n = uint32_t(tx_queued_.size());
  const uint64_t give_up = n ? monotonic_ns() + 1'000'000'000ull : 0;
  while (sent < n) {
    sent += rte_eth_tx_burst(port_id_, 0, tx_queued_.data() + sent, uint16_t(n - sent));
    if (sent < n && monotonic_ns() > give_up) {
      rte_pktmbuf_free_bulk(tx_queued_.data() + sent, n - sent);
      lost_after_post_ += n - sent;
      break;
    }
  }
  tx_queued_.clear();
}

uint32_t DpdkPort::zc_rx(FrameRef* out, uint32_t max) {
  rte_mbuf* mbufs[64];
  const uint16_t got = rte_eth_rx_burst(port_id_, 0, mbufs, uint16_t(std::min<uint32_t>(max, 64)));
  const uint64_t now = 0;  // the forwarder keeps its own times; no clock read per burst
  for (uint16_t k = 0; k < got; ++k)
    out[k] = FrameRef{rte_pktmbuf_mtod(mbufs[k], uint8_t*), rte_pktmbuf_data_len(mbufs[k]), now,
                      reinterpret_cast<uintptr_t>(mbufs[k])};
  return got;
}

uint32_t DpdkPort::zc_tx(const FrameRef* frames, uint32_t n) {
  rte_mbuf* mbufs[256];
  n = std::min<uint32_t>(n, 256);
  for (uint32_t k = 0; k < n; ++k) mbufs[k] = reinterpret_cast<rte_mbuf*>(frames[k].handle);
  return rte_eth_tx_burst(port_id_, 0, mbufs, uint16_t(n));
}

void DpdkPort::zc_free(const FrameRef* frames, uint32_t n) {
  for (uint32_t k = 0; k < n; ++k) rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(frames[k].handle));
}

// rte_mbuf** and void** name the same pointer array: DPDK's own net_ring hands mbuf arrays to
// rte_ring as void** the same way.
uint32_t DpdkPort::zc_rx_handles(void** handles, uint32_t max, uint64_t* bytes) {
  return dpdk_bursts::rx(port_id_, handles, max, bytes);
}

uint32_t DpdkPort::zc_tx_handles(void* const* handles, uint32_t n) {
  return dpdk_bursts::tx(port_id_, handles, n);
}

uint64_t DpdkPort::zc_handle_bytes(void* const* handles, uint32_t n) const {
  uint64_t b = 0;
  for (uint32_t k = 0; k < n; ++k) b += rte_pktmbuf_pkt_len(static_cast<const rte_mbuf*>(handles[k]));
  return b;
}

void DpdkPort::zc_free_handles(void* const* handles, uint32_t n) {
  rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(const_cast<void**>(handles)), n);
}

// Only a virtual device's: it counts in software, in rx/tx burst on the calling thread (net_pcap
// counts bytes; net_ring counts none in DPDK 22.11: the forwarder's check tells them apart). A NIC's counters may
// include frames not yet polled or the CRC, and reading them costs register or firmware
// accesses; there the per-frame sum reads headers the driver has just written anyway.
bool DpdkPort::zc_port_bytes(uint64_t& rx, uint64_t& tx) {
  rx = tx = 0;
  if (!vdev_) return false;
  rte_eth_stats stats{};
  std::lock_guard<std::mutex> lock(stats_mutex_);
  if (rte_eth_stats_get(port_id_, &stats) != 0) return false;
  rx = stats.ibytes, tx = stats.obytes;
  return true;
}

std::string DpdkPort::describe() const {
  rte_eth_dev_info info{};
  rte_eth_dev_info_get(port_id_, &info);
  return fmt::format("dpdk {} (driver {}, port {}) rxq={}{} txq={} mtu={}{}", device_,
                     info.driver_name ? info.driver_name : "?", port_id_, rx_queues_,
                     rss_ ? " rss" : "", tx_queues_, mtu_, promiscuous_ ? " promisc" : "");
}

}  // namespace

std::unique_ptr<Port> make_dpdk_port(const ConfigNode& node, uint16_t id) {
  return std::make_unique<DpdkPort>(node, id);
}

}  // namespace gpunfv

#else  // no DPDK at build time

namespace gpunfv {

std::unique_ptr<Port> make_dpdk_port(const ConfigNode& node, uint16_t) {
  node["type"].fail("this build has no DPDK port (libdpdk was not found at build time; install "
                    "libdpdk-dev and re-run cmake)");
}

}  // namespace gpunfv

#endif
