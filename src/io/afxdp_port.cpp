#include "io/afxdp_port.h"

#if GPUNFV_HAVE_AFXDP_PORT

#include <fmt/core.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "io/netdev.h"

namespace gpunfv {

namespace {

constexpr uint32_t kFrameBytes = 2048;
constexpr uint32_t kRingSize = 2048;
constexpr uint32_t kTxKick = 32;

// libbpf and libxdp narrate program loading at INFO level on stderr; keep their warnings only.
int warnings_only_bpf(libbpf_print_level level, const char* fmt, va_list ap) {
  return level == LIBBPF_WARN ? std::vfprintf(stderr, fmt, ap) : 0;
}
int warnings_only_xdp(libxdp_print_level level, const char* fmt, va_list ap) {
  return level == LIBXDP_WARN ? std::vfprintf(stderr, fmt, ap) : 0;
}

// What the kernel actually bound (a shared UMEM can differ from the flags asked for).
bool bound_zero_copy(xsk_socket* xsk) {
  xdp_options opts{};
  socklen_t len = sizeof opts;
  return getsockopt(xsk_socket__fd(xsk), SOL_XDP, XDP_OPTIONS, &opts, &len) == 0 &&
         (opts.flags & XDP_OPTIONS_ZEROCOPY) != 0;
}

// The frames of one UMEM and the free list shared by every socket on it.
class Umem {
 public:
  Umem(const ConfigNode& where, uint32_t frames) : frames_(frames) {
    bytes_ = size_t(frames) * kFrameBytes;
    void* a = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) fail_errno(where, "cannot allocate the UMEM", errno, "CAP_IPC_LOCK");
    area_ = static_cast<uint8_t*>(a);
    xsk_umem_config cfg{kRingSize, kRingSize, kFrameBytes, 0, 0};
    int rc = xsk_umem__create(&umem_, area_, bytes_, &first_fill_, &first_comp_, &cfg);
    if (rc != 0) fail_errno(where, "cannot register the UMEM", -rc, "CAP_NET_ADMIN");
    free_.reserve(frames);
    for (uint32_t i = 0; i < frames; ++i) free_.push_back(uint64_t(i) * kFrameBytes);
    static std::atomic<int> counter{0};
    id_ = counter++;
  }
  ~Umem() {
    xsk_umem__delete(umem_);
    munmap(area_, bytes_);
  }

  xsk_umem* umem() const { return umem_; }
  uint8_t* data(uint64_t addr) const { return area_ + addr; }
  int id() const { return id_; }
  // The fill/completion rings xsk_umem__create made belong to the first socket bound.
  bool claim_first_rings(xsk_ring_prod*& fill, xsk_ring_cons*& comp) {
    if (first_claimed_) return false;
    first_claimed_ = true;
    fill = &first_fill_, comp = &first_comp_;
    return true;
  }

  uint32_t take(uint64_t* out, uint32_t n) {
    std::lock_guard lock(mu_);
    n = std::min<uint32_t>(n, uint32_t(free_.size()));
    for (uint32_t i = 0; i < n; ++i) out[i] = free_[free_.size() - 1 - i];
    free_.resize(free_.size() - n);
    return n;
  }
  void give(const uint64_t* addrs, uint32_t n) {
    std::lock_guard lock(mu_);
    // Aligned chunks: the chunk's start, whatever offset the kernel reported.
    for (uint32_t i = 0; i < n; ++i) free_.push_back(addrs[i] & ~uint64_t(kFrameBytes - 1));
  }
  uint32_t frames() const { return frames_; }

 private:
  uint32_t frames_;
  size_t bytes_ = 0;
  uint8_t* area_ = nullptr;
  xsk_umem* umem_ = nullptr;
  xsk_ring_prod first_fill_{};
  xsk_ring_cons first_comp_{};
  bool first_claimed_ = false;
  std::mutex mu_;
  std::vector<uint64_t> free_;
  int id_ = 0;
};

// UMEMs by the name of the port that created them, for `umem_from:`.
std::mutex g_umems_mu;
std::map<std::string, std::weak_ptr<Umem>> g_umems;

struct XskQueue {
  xsk_socket* xsk = nullptr;
  xsk_ring_cons rx{}, own_comp{};
  xsk_ring_prod tx{}, own_fill{};
  xsk_ring_prod* fill = nullptr;
  xsk_ring_cons* comp = nullptr;
  uint32_t unkicked = 0;
  uint32_t in_fill = 0;  // frames handed to the kernel on the fill ring, not yet received
};

class AfXdpPort final : public Port, public ZeroCopyIo {
 public:
  AfXdpPort(const ConfigNode& node, uint16_t id);
  ~AfXdpPort() override;

  std::string_view type() const override { return "afxdp"; }
  bool has_rx() const override { return rx_; }
  bool has_tx() const override { return tx_; }
  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override { return false; }
  bool tx(const BatchView& b, uint32_t i) override;
  void tx_burst_end() override;
  void flush() override;
  uint32_t max_frame_bytes() const override { return std::min(mtu_ + 18, kFrameBytes); }
  std::string describe() const override;
  ZeroCopyIo* zero_copy() override { return this; }

  std::string_view zc_kind() const override { return kind_; }
  uint32_t zc_rx(FrameRef* out, uint32_t max) override;
  uint32_t zc_tx(const FrameRef* frames, uint32_t n) override;
  void zc_free(const FrameRef* frames, uint32_t n) override;

 private:
  void refill(XskQueue& q);
  void reap(XskQueue& q);
  void kick(XskQueue& q);

  std::string ifname_;
  uint32_t mtu_ = 1500;
  bool rx_ = true, tx_ = true, zerocopy_bound_ = false, promisc_set_ = false, native_ = false;
  std::shared_ptr<Umem> umem_;
  std::vector<XskQueue> queues_;
  uint32_t rx_turn_ = 0;
  std::string kind_;
  uint32_t fill_target_ = 0;
};

AfXdpPort::AfXdpPort(const ConfigNode& node, uint16_t id) : Port(node.str("name"), id) {
  node.only_keys({"name", "type", "interface", "queues", "bind", "frames", "umem_from", "mtu",
                  "promiscuous", "rx", "tx"});
  ifname_ = node.str("interface");
  if (ifname_.empty() || ifname_.size() >= IFNAMSIZ || if_nametoindex(ifname_.c_str()) == 0)
    node["interface"].fail("no network interface '" + ifname_ + "'");
  if (auto r = node.get("rx")) rx_ = r->as_bool();
  if (auto t = node.get("tx")) tx_ = t->as_bool();
  if (!rx_ && !tx_) node.fail("afxdp port '" + name() + "' has neither rx nor tx");
  const uint32_t nq = uint32_t(node.int_or("queues", 1, 1, 64));
  const std::string bind = node.str_or("bind", "auto");
  if (bind != "auto" && bind != "zerocopy" && bind != "copy")
    node["bind"].fail("bind: expected auto, zerocopy or copy, got '" + bind + "'");
  std::optional<int> set_mtu;
  if (auto m = node.get("mtu")) set_mtu = int(m->as_int(68, int(kFrameBytes) - 18));
  mtu_ = netdev_mtu(node.has("mtu") ? node["mtu"] : node, ifname_, set_mtu);
  if (mtu_ + 18 > kFrameBytes)
    node.fail(fmt::format("MTU {} of '{}' exceeds what {} B UMEM frames hold", mtu_, ifname_,
                          kFrameBytes));

  libbpf_set_print(warnings_only_bpf);
  libxdp_set_print(warnings_only_xdp);
  // Kernels before 5.11 charge BPF maps and UMEM against RLIMIT_MEMLOCK.
  rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_MEMLOCK, &unlimited);

  if (auto from = node.get("umem_from")) {
    std::lock_guard lock(g_umems_mu);
    auto it = g_umems.find(from->as_string());
    if (it == g_umems.end() || !(umem_ = it->second.lock()))
      from->fail("umem_from: no earlier afxdp port '" + from->as_string() + "'");
    if (node.has("frames")) node["frames"].fail("frames: set by the port whose UMEM is shared");
  } else {
    umem_ = std::make_shared<Umem>(node, uint32_t(node.int_or("frames", 8192, 256, 1 << 22)));
  }
  {
    std::lock_guard lock(g_umems_mu);
    g_umems[name()] = umem_;
  }
  kind_ = fmt::format("afxdp-umem:{}", umem_->id());

  queues_.resize(nq);
  for (uint32_t qi = 0; qi < nq; ++qi) {
    XskQueue& q = queues_[qi];
    xsk_socket_config cfg{};
    cfg.rx_size = rx_ ? kRingSize : 0;
    cfg.tx_size = tx_ ? kRingSize : 0;
    cfg.bind_flags = XDP_USE_NEED_WAKEUP;
    int rc = -EINVAL;
    // auto: zero-copy first, then copy; libxdp attaches its program natively, else generic.
    for (const char* try_bind : {"zerocopy", "copy"}) {
      if (bind != "auto" && bind != try_bind) continue;
      cfg.bind_flags = uint16_t(XDP_USE_NEED_WAKEUP |
                                (try_bind == std::string("zerocopy") ? XDP_ZEROCOPY : XDP_COPY));
      if (umem_->claim_first_rings(q.fill, q.comp)) {
        rc = xsk_socket__create(&q.xsk, ifname_.c_str(), qi, umem_->umem(), rx_ ? &q.rx : nullptr,
                                tx_ ? &q.tx : nullptr, &cfg);
        if (rc != 0) q.fill = nullptr, q.comp = nullptr;
      } else {
        q.fill = &q.own_fill, q.comp = &q.own_comp;
        rc = xsk_socket__create_shared(&q.xsk, ifname_.c_str(), qi, umem_->umem(),
                                       rx_ ? &q.rx : nullptr, tx_ ? &q.tx : nullptr, q.fill,
                                       q.comp, &cfg);
      }
      if (rc == 0) {
        zerocopy_bound_ = bound_zero_copy(q.xsk);
        break;
      }
    }
    if (rc != 0) {
      const int e = -rc;
      fail_errno(node, fmt::format("cannot bind an AF_XDP socket to {} queue {} (bind: {})",
                                   ifname_, qi, bind),
                 e, "CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW");
    }
  }
  fill_target_ = std::min<uint32_t>(kRingSize, umem_->frames() / 2 / nq);
  for (XskQueue& q : queues_) refill(q);
  bool want_promisc = true;
  if (auto p = node.get("promiscuous")) want_promisc = p->as_bool();
  if (want_promisc) promisc_set_ = netdev_set_promiscuous(node, ifname_, true);
}

AfXdpPort::~AfXdpPort() {
  for (XskQueue& q : queues_) {
    if (!q.xsk) continue;
    // Frames the kernel dropped before gpunfv saw them (live-port loss under overload).
    xdp_statistics st{};
    socklen_t len = sizeof st;
    if (rx_ && getsockopt(xsk_socket__fd(q.xsk), SOL_XDP, XDP_STATISTICS, &st, &len) == 0 &&
        (st.rx_dropped || st.rx_ring_full || st.rx_fill_ring_empty_descs))
      fmt::print(stderr,
                 "gpunfv: port '{}' ({}): the kernel dropped frames before rx: {} dropped, {} rx "
                 "ring full, {} with the fill ring empty\n",
                 name(), ifname_, st.rx_dropped, st.rx_ring_full, st.rx_fill_ring_empty_descs);
    xsk_socket__delete(q.xsk);
  }
  if (promisc_set_) {
    ConfigNode none(YAML::Node(), "");
    try {
      netdev_set_promiscuous(none, ifname_, false);
    } catch (...) {
    }
  }
}

// Keeps the fill ring stocked from the free list, so the kernel always has frames to receive
// into (an empty fill ring makes the kernel drop: rx_fill_ring_empty_descs in XDP_STATISTICS).
void AfXdpPort::refill(XskQueue& q) {
  if (!rx_ || !q.fill) return;
  while (q.in_fill < fill_target_) {
    uint64_t addrs[256];
    const uint32_t got = umem_->take(addrs, std::min<uint32_t>(fill_target_ - q.in_fill, 256));
    uint32_t idx = 0;
    if (got == 0) return;
    if (xsk_ring_prod__reserve(q.fill, got, &idx) != got) {
      umem_->give(addrs, got);
      return;
    }
    for (uint32_t i = 0; i < got; ++i) *xsk_ring_prod__fill_addr(q.fill, idx + i) = addrs[i];
    xsk_ring_prod__submit(q.fill, got);
    q.in_fill += got;
  }
}

// Frames whose transmission completed go back to the free list.
void AfXdpPort::reap(XskQueue& q) {
  if (!q.comp) return;
  uint32_t idx = 0;
  const uint32_t n = xsk_ring_cons__peek(q.comp, 256, &idx);
  if (!n) return;
  uint64_t addrs[256];
  for (uint32_t i = 0; i < n; ++i) addrs[i] = *xsk_ring_cons__comp_addr(q.comp, idx + i);
  xsk_ring_cons__release(q.comp, n);
  umem_->give(addrs, n);
}

void AfXdpPort::kick(XskQueue& q) {
  // Copy mode always needs the syscall to transmit; zero-copy only when the driver asks.
  if (!zerocopy_bound_ || xsk_ring_prod__needs_wakeup(&q.tx))
    sendto(xsk_socket__fd(q.xsk), nullptr, 0, MSG_DONTWAIT, nullptr, 0);
  q.unkicked = 0;
}

uint32_t AfXdpPort::zc_rx(FrameRef* out, uint32_t max) {
  if (!rx_) return 0;
  uint32_t n = 0;
  const uint64_t now = realtime_ns();
  for (uint32_t tried = 0; tried < queues_.size() && n < max; ++tried) {
    XskQueue& q = queues_[rx_turn_];
    rx_turn_ = (rx_turn_ + 1) % uint32_t(queues_.size());
    uint32_t idx = 0;
    const uint32_t got = xsk_ring_cons__peek(&q.rx, max - n, &idx);
    for (uint32_t i = 0; i < got; ++i) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(&q.rx, idx + i);
      out[n + i] = FrameRef{umem_->data(d->addr), d->len, now, uintptr_t(d->addr)};
    }
    if (got) xsk_ring_cons__release(&q.rx, got);
    q.in_fill -= got;
    n += got;
    if (got == 0 && xsk_ring_prod__needs_wakeup(q.fill))
      recvfrom(xsk_socket__fd(q.xsk), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    refill(q);
  }
  return n;
}

uint32_t AfXdpPort::zc_tx(const FrameRef* frames, uint32_t n) {
  if (!tx_) return 0;
  XskQueue& q = queues_[0];
  reap(q);
  uint32_t idx = 0;
  n = xsk_ring_prod__reserve(&q.tx, n, &idx);
  for (uint32_t i = 0; i < n; ++i) {
    xdp_desc* d = xsk_ring_prod__tx_desc(&q.tx, idx + i);
    d->addr = frames[i].handle;
    d->len = frames[i].len;
    d->options = 0;
  }
  if (n) {
    xsk_ring_prod__submit(&q.tx, n);
    kick(q);  // one post: the descriptor batch
  }
  return n;
}

void AfXdpPort::zc_free(const FrameRef* frames, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t addr = frames[i].handle;
    umem_->give(&addr, 1);
  }
}

uint32_t AfXdpPort::rx_burst(Batch& b, uint32_t max) {
  BatchView v = b.view();
  const uint32_t first = b.count();
  FrameRef frames[64];
  const uint32_t n = zc_rx(frames, std::min({max, b.capacity() - first, 64u}));
  uint8_t* slots = v.data.framework_data();
  uint64_t addrs[64];
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t slot = first + i;
    std::memcpy(slots + size_t(slot) * v.stride, frames[i].data, std::min(frames[i].len, v.stride));
    v.len[slot] = uint16_t(frames[i].len);
    v.port[slot] = id();
    v.wire_ns[slot] = frames[i].wire_ns;
    addrs[i] = frames[i].handle;
  }
  umem_->give(addrs, n);
  b.set_count(first + n);
  return n;
}

bool AfXdpPort::tx(const BatchView& b, uint32_t i) {
  if (!tx_) return false;
  const uint32_t len = b.len[i];
  if (len > b.stride || len > kFrameBytes) return false;
  XskQueue& q = queues_[0];
  uint64_t addr = 0;
  for (int attempt = 0; umem_->take(&addr, 1) == 0; ++attempt) {
    if (attempt == 1000) return false;
    kick(q);
    reap(q);
  }
  std::memcpy(umem_->data(addr), b.data.subspan(slot_offset(b, i), len).framework_data(), len);
  const FrameRef f{umem_->data(addr), len, 0, uintptr_t(addr)};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    uint32_t idx = 0;
    reap(q);
    if (xsk_ring_prod__reserve(&q.tx, 1, &idx) == 1) {
      xdp_desc* d = xsk_ring_prod__tx_desc(&q.tx, idx);
      d->addr = f.handle, d->len = len, d->options = 0;
      xsk_ring_prod__submit(&q.tx, 1);
      if (++q.unkicked >= kTxKick) kick(q);
      return true;
    }
    kick(q);
  }
  umem_->give(&addr, 1);
  return false;
}

void AfXdpPort::tx_burst_end() {
  for (XskQueue& q : queues_)
    if (q.unkicked) kick(q);
}

void AfXdpPort::flush() {
  if (!tx_) return;
  // Wait (bounded) until every frame in flight has completed.
  for (int wait = 0; wait < 2000; ++wait) {
    for (XskQueue& q : queues_) {
      kick(q);
      reap(q);
    }
    uint32_t outstanding = 0;
    for (XskQueue& q : queues_) outstanding += kRingSize - xsk_prod_nb_free(&q.tx, kRingSize);
    if (outstanding == 0) return;
    const uint64_t until = monotonic_ns() + 500'000;
    while (monotonic_ns() < until) {
    }
  }
}

std::string AfXdpPort::describe() const {
  return fmt::format("afxdp {} queues={} bind={} umem={}{} mtu={}{}", ifname_, queues_.size(),
                     zerocopy_bound_ ? "zero-copy" : "copy", umem_->id(),
                     umem_.use_count() > 1 ? " (shared)" : "", mtu_, promisc_set_ ? " promisc" : "");
}

}  // namespace

std::unique_ptr<Port> make_afxdp_port(const ConfigNode& node, uint16_t id) {
  return std::make_unique<AfXdpPort>(node, id);
}

}  // namespace gpunfv

#else

namespace gpunfv {

std::unique_ptr<Port> make_afxdp_port(const ConfigNode& node, uint16_t) {
  node["type"].fail("this build has no afxdp port (libxdp/libbpf were not found at build time; "
                    "install libxdp-dev and libbpf-dev and re-run cmake)");
}

}  // namespace gpunfv

#endif
