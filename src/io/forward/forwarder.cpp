#include "io/forward/forwarder.h"

#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "core/batch.h"
#include "core/clock.h"
#include "core/parse.h"
#include "io/forward/sampled_integrity.h"
#include "nf/router/router.h"

namespace gpunfv {

namespace {

// Runs the router's per-packet logic on one frame in place, through a one-packet batch view
// over the frame's own buffer (an mbuf, a UMEM frame or a batch slot).
DropReason route_frame(const RouterView& rv, uint8_t* frame, uint32_t len) {
  PacketHeaders h{};
  IsoSpan<uint8_t> data(frame, len);
  DropReason r = parse_headers(IsoSpan<const uint8_t>(frame, len), h);
  if (r != DropReason::none) return r;
  uint16_t len16 = uint16_t(len), out = kNoPort, port = 0;
  BatchView v{};
  v.count = v.capacity = 1;
  v.stride = len;
  v.data = data;
  v.len = IsoSpan<uint16_t>(&len16, 1);
  v.port = IsoSpan<uint16_t>(&port, 1);
  v.out_port = IsoSpan<uint16_t>(&out, 1);
  v.headers = IsoSpan<PacketHeaders>(&h, 1);
  return RouterLogic{}(rv, PacketRef(v, 0));
}

}  // namespace

Forwarder::Forwarder(const ForwardSpec& spec, Port& from, Port& to, PortCounters& from_pc,
                     PortCounters& to_pc)
    : spec_(spec), from_(from), to_(to), from_pc_(from_pc), to_pc_(to_pc) {
  if (spec_.mode == ForwardMode::zerocopy) {
    ZeroCopyIo* a = from_.zero_copy();
    ZeroCopyIo* b = to_.zero_copy();
    if (!a || !b)
      fallback_reason_ = fmt::format("{} port '{}' cannot hand buffers over",
                                     (!a ? from_ : to_).type(), (!a ? from_ : to_).name());
    else if (a->zc_kind() != b->zc_kind())
      fallback_reason_ = fmt::format("buffers of kind {} and {} cannot be exchanged",
                                     a->zc_kind(), b->zc_kind());
    else
      zc_from_ = a, zc_to_ = b;
    if (!zc_from_)
      fmt::print(stderr, "gpunfv: forward {}: zero-copy not possible ({}), copying instead\n",
                 spec_.name, fallback_reason_);
  }
}

Forwarder::~Forwarder() = default;

std::string Forwarder::describe() const {
  std::string s = fmt::format("forward {} {}", spec_.name, zero_copy() ? "zero-copy" : "copy");
  if (!fallback_reason_.empty()) s += " (zerocopy asked: " + fallback_reason_ + ")";
  s += fmt::format(", descriptor_batch {}", spec_.descriptor_batch);
  if (spec_.route) s += ", routed";
  if (spec_.integrity) s += ", sampled integrity";
  return s;
}

bool Forwarder::on_rx(uint8_t* frame, uint32_t len, uint32_t& sum, DropReason& why) const {
  if (spec_.route) {
    why = route_frame(spec_.route->host_view(), frame, len);
    if (why != DropReason::none) return false;
  }
  // After routing: the checksum covers the bytes that are meant to leave.
  if (spec_.integrity) sum = sampled_integrity(frame, len);
  return true;
}

void Forwarder::count_rx(uint32_t n, uint64_t bytes) {
  from_pc_.rx_packets.fetch_add(n, std::memory_order_relaxed);
  from_pc_.rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void Forwarder::count_drop(DropReason r) {
  result_.drops.add(r);
  from_pc_.dropped_total.fetch_add(1, std::memory_order_relaxed);
}

void Forwarder::count_tx(uint32_t n, uint64_t bytes) {
  to_pc_.tx_packets.fetch_add(n, std::memory_order_relaxed);
  to_pc_.tx_bytes.fetch_add(bytes, std::memory_order_relaxed);
  from_pc_.forwarded.fetch_add(n, std::memory_order_relaxed);
}

void Forwarder::run(const std::function<bool()>& stop) {
  if (zero_copy())
    run_zero_copy(stop);
  else
    run_copy(stop);
}

// Zero-copy: frames stay in the rx port's buffers; a post hands up to descriptor_batch of them
// to the tx port in one zc_tx call (one descriptor tail update).
void Forwarder::run_zero_copy(const std::function<bool()>& stop) {
  const uint32_t db = spec_.descriptor_batch;
  const uint64_t flush_ns = uint64_t(spec_.flush_us) * 1000;
  std::vector<FrameRef> rx(spec_.burst), pending;
  std::vector<uint64_t> rx_ns;
  std::vector<uint32_t> sums;
  pending.reserve(spec_.burst + db);

  size_t head = 0;  // pending[head..) are not posted yet
  auto post = [&](uint32_t count) {
    // Verify first: a frame whose sampled bytes changed is not sent.
    uint32_t keep = 0;
    for (uint32_t k = 0; k < count; ++k) {
      const size_t at = head + k, to = head + keep;
      if (spec_.integrity && sampled_integrity(pending[at].data, pending[at].len) != sums[at]) {
        zc_from_->zc_free(&pending[at], 1);
        count_drop(DropReason::integrity_mismatch);
        continue;
      }
      pending[to] = pending[at], rx_ns[to] = rx_ns[at];
      ++keep;
    }
    FrameRef* group = pending.data() + head;
    uint32_t sent = 0;
    for (int tries = 0; sent < keep && tries < 1000; ++tries)
      sent += zc_to_->zc_tx(group + sent, keep - sent);
    ++result_.posts;
    const uint64_t now = monotonic_ns();
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < sent; ++k) {
      bytes += group[k].len;
      result_.latency.record(now - rx_ns[head + k]);
    }
    count_tx(sent, bytes);
    if (sent < keep) {
      zc_to_->zc_free(group + sent, keep - sent);
      for (uint32_t k = sent; k < keep; ++k) count_drop(DropReason::port_tx_error);
    }
    head += count;
    if (head == pending.size()) {
      pending.clear(), rx_ns.clear(), sums.clear();
      head = 0;
    }
  };

  for (;;) {
    const bool stopping = stop() || from_.rx_done();
    const uint32_t n = stopping ? 0 : zc_from_->zc_rx(rx.data(), spec_.burst);
    const uint64_t now = monotonic_ns();
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < n; ++k) bytes += rx[k].len;
    if (n) count_rx(n, bytes);
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t sum = 0;
      DropReason why = DropReason::none;
      if (!on_rx(rx[k].data, rx[k].len, sum, why)) {
        zc_from_->zc_free(&rx[k], 1);
        count_drop(why);
        continue;
      }
      if (between_rx_and_tx) between_rx_and_tx(rx[k].data, rx[k].len);
      pending.push_back(rx[k]);
      rx_ns.push_back(now);
      sums.push_back(sum);
    }
    while (pending.size() - head >= db) post(db);
    if (pending.size() > head && (stopping || now - rx_ns[head] >= flush_ns))
      post(uint32_t(pending.size() - head));
    if (stopping) break;
    if (n == 0) std::this_thread::yield();
  }
}

// Copy: rx_burst copies frames into a batch of our own, tx copies them out again; posts are
// tx_burst_end() calls every descriptor_batch frames.
void Forwarder::run_copy(const std::function<bool()>& stop) {
  const uint32_t db = spec_.descriptor_batch;
  const uint64_t flush_ns = uint64_t(spec_.flush_us) * 1000;
  const uint32_t capacity = std::max(spec_.burst, db) * 2;
  const uint32_t stride = (std::max<uint32_t>(from_.max_frame_bytes(), 64) + 63) / 64 * 64;
  Batch batch(capacity, stride, MemoryKind::host);
  std::vector<uint64_t> rx_ns(capacity);
  std::vector<uint32_t> sums(capacity);
  std::vector<uint8_t> alive(capacity);
  uint32_t posted = 0;

  auto post = [&](uint32_t count) {
    BatchView v = batch.view();
    const uint64_t now = monotonic_ns();
    uint32_t sent = 0;
    uint64_t bytes = 0;
    for (uint32_t i = posted; i < posted + count; ++i) {
      if (!alive[i]) continue;
      uint8_t* frame = v.data.framework_data() + size_t(i) * v.stride;
      if (spec_.integrity && sampled_integrity(frame, v.len[i]) != sums[i]) {
        count_drop(DropReason::integrity_mismatch);
        continue;
      }
      if (!to_.tx(v, i)) {
        count_drop(DropReason::port_tx_error);
        continue;
      }
      ++sent;
      bytes += v.len[i];
      result_.latency.record(now - rx_ns[i]);
    }
    to_.tx_burst_end();
    ++result_.posts;
    count_tx(sent, bytes);
    result_.copied_bytes += bytes;  // the tx copy; the rx copy is counted at rx
    posted += count;
    if (posted == batch.count()) batch.set_count(posted = 0);
  };

  for (;;) {
    const bool stopping = stop() || from_.rx_done();
    const uint32_t before = batch.count();
    const uint32_t n =
        stopping ? 0 : from_.rx_burst(batch, std::min(spec_.burst, capacity - before));
    const uint64_t now = monotonic_ns();
    BatchView v = batch.view();
    uint64_t bytes = 0;
    for (uint32_t i = before; i < before + n; ++i) {
      bytes += v.len[i];
      rx_ns[i] = now;
      alive[i] = 0;
      if (v.len[i] > v.stride) {
        count_drop(DropReason::oversize);
        continue;
      }
      uint8_t* frame = v.data.framework_data() + size_t(i) * v.stride;
      DropReason why = DropReason::none;
      if (!on_rx(frame, v.len[i], sums[i], why)) {
        count_drop(why);
        continue;
      }
      if (between_rx_and_tx) between_rx_and_tx(frame, v.len[i]);
      alive[i] = 1;
    }
    if (n) {
      count_rx(n, bytes);
      result_.copied_bytes += bytes;
    }
    while (batch.count() - posted >= db) post(db);
    const uint32_t left = batch.count() - posted;
    if (left && (stopping || batch.count() == capacity || now - rx_ns[posted] >= flush_ns))
      post(left);
    if (stopping) break;
    if (n == 0) std::this_thread::yield();
  }
  to_.flush();
}

}  // namespace gpunfv
