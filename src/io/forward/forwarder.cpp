#include "io/forward/forwarder.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "core/batch.h"
#include "core/clock.h"
#include "core/parse.h"
#include "io/forward/forward_loop.h"
#include "io/forward/sampled_integrity.h"

namespace gpunfv {

Forwarder::Forwarder(const ForwardParams& spec, Port& from, Port& to, PortCounters& from_pc,
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
  std::string s = fmt::format("forward {} {}", spec_.name,
                              handle_bursts() ? "zero-copy (handle bursts)" : zero_copy() ? "zero-copy" : "copy");
  if (!fallback_reason_.empty()) s += " (zerocopy asked: " + fallback_reason_ + ")";
  s += fmt::format(", descriptor_batch {}", spec_.descriptor_batch);
  if (spec_.count_bytes == ByteCounting::off)
    s += handle_bursts() ? ", bytes not counted" : ", bytes counted (count_bytes: off applies to handle bursts only)";
  if (spec_.hook) s += ", routed";
  if (spec_.integrity) s += ", sampled integrity";
  return s;
}

bool Forwarder::on_rx(uint8_t* frame, uint32_t len, uint32_t& sum, DropReason& why) const {
  if (spec_.hook) {
    why = spec_.hook(frame, len);
    if (why != DropReason::none) return false;
  }
  // After routing: the checksum covers the bytes that are meant to leave.
  if (spec_.integrity) sum = sampled_integrity(frame, len);
  return true;
}

bool Forwarder::handle_bursts() const {
  return zc_from_ && zc_from_->zc_handle_bursts() && zc_to_->zc_handle_bursts() && !spec_.hook &&
         !spec_.integrity && !between_rx_and_tx;
}

void Forwarder::publish(Loop& st) {
  auto add = [](std::atomic<uint64_t>& a, uint64_t& v) {
    if (v) a.fetch_add(v, std::memory_order_relaxed), v = 0;
  };
  add(from_pc_.rx_packets, st.rx);
  add(from_pc_.rx_bytes, st.rx_bytes);
  add(from_pc_.dropped_total, st.dropped);
  uint64_t tx = st.tx;
  add(to_pc_.tx_packets, st.tx);
  add(to_pc_.tx_bytes, st.tx_bytes);
  add(from_pc_.forwarded, tx);
}

// After an empty poll the loop polls again at once, as a DPDK lcore does, for the first
// kSpinPolls (a few microseconds: a pause there delays the reaction to the next burst by up to
// ~140 cycles on recent Intel cores, and in a loop with few frames in flight the rate is frames
// in flight over that reaction time); then with a pause instruction between polls, about half a
// millisecond; then it gives the core away: a yield is a system call, and on a busy core it
// hands the CPU to another task for a whole time slice, far longer than the gap until the next
// burst while traffic flows.
void Forwarder::idle(Loop& st) {
  if (++st.empty_polls < Loop::kSpinPolls) return;
  if (st.empty_polls < Loop::kPausePolls) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    return;
  }
  st.empty_polls = 0;
  publish(st);
  std::this_thread::yield();
}

void Forwarder::run(const std::function<bool()>& stop) {
  from_.io_thread_begin();
  to_.io_thread_begin();
  auto st = std::make_unique<Loop>();  // the histogram is 8 KiB: heap, this thread's arena
  if (handle_bursts()) {
    if (spec_.count_bytes == ByteCounting::off) {
      from_pc_.rx_bytes_counted.store(false, std::memory_order_relaxed);
      to_pc_.tx_bytes_counted.store(false, std::memory_order_relaxed);
    }
    run_handle_bursts(stop, *st);
  }
  else if (zero_copy())
    run_zero_copy(stop, *st);
  else
    run_copy(stop, *st);
  publish(*st);
  to_.io_thread_end();
  from_.io_thread_end();
  result_ = std::move(st->result);
}

// Zero-copy per frame: frames stay in the rx port's buffers; a post hands up to descriptor_batch
// of them to the tx port in one zc_tx call (one descriptor tail update). Arrays are sized once:
// at most burst + descriptor_batch - 1 frames wait between posts.
void Forwarder::run_zero_copy(const std::function<bool()>& stop, Loop& st) {
  const LoopClock& clock = loop_clock();
  const uint32_t db = spec_.descriptor_batch;
  const uint64_t flush_ns = uint64_t(spec_.flush_us) * 1000;
  const size_t cap = spec_.burst + db;
  std::vector<FrameRef> rx(spec_.burst), pending(cap);
  std::vector<uint64_t> rx_ns(cap);
  std::vector<uint32_t> sums(cap);
  size_t head = 0, tail = 0;  // pending[head, tail) wait for their post

  auto post = [&](uint32_t count) {
    // Verify first: a frame whose sampled bytes changed is not sent.
    uint32_t keep = count;
    if (spec_.integrity) {
      keep = 0;
      for (uint32_t k = 0; k < count; ++k) {
        const size_t at = head + k, to = head + keep;
        if (sampled_integrity(pending[at].data, pending[at].len) != sums[at]) {
          zc_from_->zc_free(&pending[at], 1);
          st.drop(DropReason::integrity_mismatch);
          continue;
        }
        pending[to] = pending[at], rx_ns[to] = rx_ns[at];
        ++keep;
      }
    }
    FrameRef* group = pending.data() + head;
    uint32_t sent = 0;
    for (int tries = 0; sent < keep && tries < 1000; ++tries)
      sent += zc_to_->zc_tx(group + sent, keep - sent);
    ++st.result.posts;
    const uint64_t now = clock.now();
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < sent; ++k) bytes += group[k].len;
    // Frames of one rx burst share their rx time: one histogram update per run of them.
    for (uint32_t k = 0; k < sent;) {
      uint32_t run = 1;
      while (k + run < sent && rx_ns[head + k + run] == rx_ns[head + k]) ++run;
      st.result.latency.record(now - rx_ns[head + k], run);
      k += run;
    }
    st.tx += sent;
    st.result.sent += sent;
    st.tx_bytes += bytes;
    if (sent < keep) {
      zc_to_->zc_free(group + sent, keep - sent);
      st.drop(DropReason::port_tx_error, keep - sent);
    }
    head += count;
    if (head == tail) head = tail = 0;
  };

  for (;;) {
    const bool stopping = stop() || from_.rx_done();
    // Waiting frames move to the front so a full burst always fits behind them.
    if (head > 0) {
      std::copy(pending.begin() + head, pending.begin() + tail, pending.begin());
      std::copy(rx_ns.begin() + head, rx_ns.begin() + tail, rx_ns.begin());
      std::copy(sums.begin() + head, sums.begin() + tail, sums.begin());
      tail -= head, head = 0;
    }
    const uint32_t n = stopping ? 0 : zc_from_->zc_rx(rx.data(), spec_.burst);
    const uint64_t now = n || tail > head ? clock.now() : 0;
    if (n) {
      uint64_t bytes = 0;
      for (uint32_t k = 0; k < n; ++k) bytes += rx[k].len;
      st.rx += n;
      st.rx_bytes += bytes;
    }
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t sum = 0;
      DropReason why = DropReason::none;
      if ((spec_.hook || spec_.integrity) && !on_rx(rx[k].data, rx[k].len, sum, why)) {
        zc_from_->zc_free(&rx[k], 1);
        st.drop(why);
        continue;
      }
      if (between_rx_and_tx) between_rx_and_tx(rx[k].data, rx[k].len);
      pending[tail] = rx[k], rx_ns[tail] = now, sums[tail] = sum;
      ++tail;
    }
    while (tail - head >= db) post(db);
    // A partial group waits for more frames only after a full burst (at most flush_us); a short
    // one means the rx queue ran dry.
    if (tail > head && (stopping || n < spec_.burst || now - rx_ns[head] >= flush_ns))
      post(uint32_t(tail - head));
    if (stopping) break;
    if (n == 0)
      idle(st);
    else if (st.busy_turn())
      publish(st);
  }
}

// Copy: rx_burst copies frames into a batch of our own, tx copies them out again; posts are
// tx_burst_end() calls every descriptor_batch frames.
void Forwarder::run_copy(const std::function<bool()>& stop, Loop& st) {
  const LoopClock& clock = loop_clock();
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
    const uint64_t now = clock.now();
    uint32_t sent = 0;
    uint64_t bytes = 0;
    for (uint32_t i = posted; i < posted + count; ++i) {
      if (!alive[i]) continue;
      uint8_t* frame = v.data.framework_data() + size_t(i) * v.stride;
      if (spec_.integrity && sampled_integrity(frame, v.len[i]) != sums[i]) {
        st.drop(DropReason::integrity_mismatch);
        continue;
      }
      if (!to_.tx(v, i)) {
        st.drop(DropReason::port_tx_error);
        continue;
      }
      ++sent;
      bytes += v.len[i];
      st.result.latency.record(now - rx_ns[i]);
    }
    to_.tx_burst_end();
    ++st.result.posts;
    st.tx += sent;
    st.result.sent += sent;
    st.tx_bytes += bytes;
    st.result.copied_bytes += bytes;  // the tx copy; the rx copy is counted at rx
    posted += count;
    if (posted == batch.count()) batch.set_count(posted = 0);
  };

  for (;;) {
    const bool stopping = stop() || from_.rx_done();
    const uint32_t before = batch.count();
    const uint32_t want = std::min(spec_.burst, capacity - before);
    const uint32_t n = stopping ? 0 : from_.rx_burst(batch, want);
    const uint64_t now = n || batch.count() > posted ? clock.now() : 0;
    BatchView v = batch.view();
    uint64_t bytes = 0;
    for (uint32_t i = before; i < before + n; ++i) {
      bytes += v.len[i];
      rx_ns[i] = now;
      alive[i] = 0;
      if (v.len[i] > v.stride) {
        st.drop(DropReason::oversize);
        continue;
      }
      uint8_t* frame = v.data.framework_data() + size_t(i) * v.stride;
      DropReason why = DropReason::none;
      if (!on_rx(frame, v.len[i], sums[i], why)) {
        st.drop(why);
        continue;
      }
      if (between_rx_and_tx) between_rx_and_tx(frame, v.len[i]);
      alive[i] = 1;
    }
    if (n) {
      st.rx += n;
      st.rx_bytes += bytes;
      st.result.copied_bytes += bytes;
    }
    while (batch.count() - posted >= db) post(db);
    const uint32_t left = batch.count() - posted;
    if (left && (stopping || n < want || batch.count() == capacity || now - rx_ns[posted] >= flush_ns))
      post(left);
    if (stopping) break;
    if (n == 0)
      idle(st);
    else if (st.busy_turn())
      publish(st);
  }
  to_.flush();
}

}  // namespace gpunfv
