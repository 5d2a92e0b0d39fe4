#include "io/forward/forwarder.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "core/batch.h"
#include "core/clock.h"
#include "core/parse.h"
#include "io/forward/sampled_integrity.h"
#include "nf/router/router.h"

namespace gpunfv {

namespace {

// Latency and flush timing read the TSC (invariant on the hosts we run on): clock_gettime costs
// up to a few hundred ns in some VMs (a quarter of the forwarding loop in a profile), while the
// loop reads the time once per burst. Calibrated once against CLOCK_MONOTONIC.
class LoopClock {
 public:
  LoopClock() {
#if defined(__x86_64__)
    const uint64_t t0 = monotonic_ns(), c0 = __builtin_ia32_rdtsc();
    while (monotonic_ns() - t0 < 2'000'000) {
    }
    const uint64_t t1 = monotonic_ns(), c1 = __builtin_ia32_rdtsc();
    // ns = cycles * ns_per_cycle, in 32.32 fixed point: a multiply and a shift per read.
    ns_per_cycle_q32_ = uint64_t(double(t1 - t0) / double(c1 - c0) * 4294967296.0);
#endif
  }
  uint64_t now() const {
#if defined(__x86_64__)
    return uint64_t((unsigned __int128)__builtin_ia32_rdtsc() * ns_per_cycle_q32_ >> 32);
#else
    return monotonic_ns();
#endif
  }

 private:
  uint64_t ns_per_cycle_q32_ = uint64_t(1) << 32;
};

const LoopClock& loop_clock() {
  static const LoopClock clock;
  return clock;
}

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
  std::string s = fmt::format("forward {} {}", spec_.name,
                              handle_bursts() ? "zero-copy (handle bursts)" : zero_copy() ? "zero-copy" : "copy");
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

// What a running loop writes: kept on the forwarding thread's stack, so two forwards (the two
// directions of a port pair) never write one cache line; the counts reach the shared
// PortCounters every 256 busy loop turns (publish()), as an atomic add per burst on a line both
// directions write cost more than the forwarding itself.
struct Forwarder::Loop {
  ForwardResult result;
  uint64_t rx = 0, rx_bytes = 0, tx = 0, tx_bytes = 0, dropped = 0;  // not yet published
  uint32_t empty_polls = 0, turns = 0, polls = 0;

  void drop(DropReason r, uint64_t n = 1) {
    result.drops.add(r, n);
    dropped += n;
  }
  // End of a loop turn: publish every 256 busy turns (the two directions of a port pair write
  // each other's PortCounters lines); an empty poll idles.
  bool busy_turn() { return ++turns % 256 == 0; }
  // The stop word and the source's end are read every 16th poll, empty or not.
  bool check_stop() { return (++polls & 15) == 0; }
  // Empty polls: kSpinPolls at once, then with a pause until kPausePolls, then the loop
  // publishes and yields (idle()).
  static constexpr uint32_t kSpinPolls = 256, kPausePolls = 16384;
  // Whether the next idle() publishes.
  bool publishes_when_idle() const { return empty_polls + 1 >= kPausePolls; }
};

bool Forwarder::handle_bursts() const {
  return zc_from_ && zc_from_->zc_handle_bursts() && zc_to_->zc_handle_bursts() && !spec_.route &&
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
  if (handle_bursts())
    run_handle_bursts(stop, *st);
  else if (zero_copy())
    run_zero_copy(stop, *st);
  else
    run_copy(stop, *st);
  publish(*st);
  to_.io_thread_end();
  from_.io_thread_end();
  result_ = std::move(st->result);
}

// Byte counts of a handle-burst forward, from one of two sources:
// - frame lengths: summed once at rx (reading each mbuf's header); tx bytes are the rx bytes
//   less those dropped and those still waiting, settled when counters go out;
// - the ports' own counters (ZeroCopyIo::zc_port_bytes: a DPDK vdev's ibytes/obytes, counted in
//   software in rx/tx burst), where they agree exactly with the lengths: the loop sums lengths
//   until a settle (64 bursts in, or when it idles) finds frames received and sent, compares,
//   and then reads no frame header again if both sides agree; otherwise it keeps summing.
class Forwarder::BurstBytes {
 public:
  BurstBytes(ZeroCopyIo& in, ZeroCopyIo& out) : in_(in), out_(out) {
    uint64_t unused = 0;
    const bool have = in_.zc_port_bytes(port_rx0_, unused) && out_.zc_port_bytes(unused, port_tx0_);
    source_ = have ? Source::calibrating : Source::frames;
  }
  // Whether rx must sum the lengths of what it received.
  bool per_frame() const { return source_ != Source::port; }
  bool calibrating() const { return source_ == Source::calibrating; }
  void received(uint64_t bytes) { rx_ += bytes; }
  void lost(void* const* handles, uint32_t n) {
    if (per_frame()) lost_ += in_.zc_handle_bytes(handles, n);
  }
  // Moves the bytes counted since the last call into st; pending[0, waiting) are frames
  // received and not yet posted.
  void settle(Loop& st, void* const* pending, uint32_t waiting);
  const char* source_name() const {
    return source_ == Source::port ? "port counters" : "frame lengths";
  }

 private:
  enum class Source : uint8_t { frames, calibrating, port };
  ZeroCopyIo& in_;
  ZeroCopyIo& out_;
  Source source_ = Source::frames;
  uint64_t port_rx0_ = 0, port_tx0_ = 0;  // the ports' counters when the loop began
  uint64_t rx_ = 0, lost_ = 0;            // lengths: received, dropped (totals)
  uint64_t rx_out_ = 0, tx_out_ = 0;      // totals already moved into the loop's counters
};

void Forwarder::BurstBytes::settle(Loop& st, void* const* pending, uint32_t waiting) {
  uint64_t rx = 0, tx = 0;
  if (source_ == Source::port) {
    uint64_t port_rx = 0, port_tx = 0, unused = 0;
    in_.zc_port_bytes(port_rx, unused);
    out_.zc_port_bytes(unused, port_tx);
    rx = port_rx - port_rx0_, tx = port_tx - port_tx0_;
  } else {
    rx = rx_;
    tx = rx_ - lost_ - (waiting ? in_.zc_handle_bytes(pending, waiting) : 0);
    if (source_ == Source::calibrating && rx && tx) {
      uint64_t port_rx = 0, port_tx = 0, unused = 0;
      in_.zc_port_bytes(port_rx, unused);
      out_.zc_port_bytes(unused, port_tx);
      source_ = port_rx - port_rx0_ == rx && port_tx - port_tx0_ == tx ? Source::port : Source::frames;
    }
  }
  st.rx_bytes += rx - rx_out_, rx_out_ = rx;
  st.tx_bytes += tx - tx_out_, tx_out_ = tx;
}

// Zero-copy by handle bursts: rx_burst fills `pending` behind the frames still waiting, tx_burst
// takes groups of descriptor_batch straight from it. Nothing in the loop reads an mbuf or the
// clock unless a count needs it:
// - latency: one rx burst in `latency_sample` is timed, from a clock read when its poll returned
//   to one after each post of its frames (one histogram update per post); the frames of the
//   other bursts are sent untimed (ForwardResult: sent - latency.count()). An empty poll reads
//   no clock. `timed` holds the timed bursts still waiting: pending[from, end), and when they
//   came.
// - bytes: BurstBytes (the ports' counters where they agree, else lengths read at rx).
// - a partial group goes at once when the burst came back short (the rx queue ran dry) or the
//   loop stops; after a full burst it waits for more, at most flush_us from when the loop first
//   saw it (the only other clock read, and only where descriptor_batch does not divide bursts).
void Forwarder::run_handle_bursts(const std::function<bool()>& stop, Loop& st) {
  const LoopClock& clock = loop_clock();
  ZeroCopyIo& in = *zc_from_;
  ZeroCopyIo& out = *zc_to_;
  const uint32_t db = spec_.descriptor_batch, burst = spec_.burst;
  const uint32_t sample_every = std::max<uint32_t>(spec_.latency_sample, 1);
  const uint64_t flush_ns = uint64_t(spec_.flush_us) * 1000;
  const uint32_t cap = burst + db;  // at most db - 1 wait between turns, plus a burst
  std::vector<void*> pending(cap);
  struct Timed {
    uint32_t from, end;
    uint64_t ns;
  };
  std::vector<Timed> timed(cap);
  uint32_t waiting = 0, ntimed = 0;  // pending[0, waiting); timed[0, ntimed)
  uint32_t to_next_timed = 0;        // non-empty bursts until the next timed one
  uint64_t wait_since = 0;           // when the partial group left waiting was first seen
  BurstBytes bytes(in, out);
  st.result.latency_sample = sample_every;

  // Posts pending[first, first + count): one tx descriptor post; what the port does not take
  // within 1000 tries is freed and counted (port_tx_error).
  auto post = [&](uint32_t first, uint32_t count) {
    void* const* group = pending.data() + first;
    uint32_t sent = out.zc_tx_handles(group, count);
    for (int tries = 1; sent < count && tries < 1000; ++tries) sent += out.zc_tx_handles(group + sent, count - sent);
    ++st.result.posts;
    st.tx += sent;
    st.result.sent += sent;
    if (sent < count) {
      bytes.lost(group + sent, count - sent);
      in.zc_free_handles(group + sent, count - sent);
      st.drop(DropReason::port_tx_error, count - sent);
    }
    uint64_t now = 0;
    for (uint32_t t = 0; t < ntimed; ++t) {
      const uint32_t lo = std::max(timed[t].from, first), hi = std::min(timed[t].end, first + sent);
      if (hi <= lo) continue;
      if (!now) now = clock.now();
      st.result.latency.record(now - timed[t].ns, hi - lo);
    }
  };

  uint32_t n = 0;
  for (;;) {
    const bool stopping = st.check_stop() && (stop() || from_.rx_done());
    uint64_t got_bytes = 0;
    n = stopping ? 0 : in.zc_rx_handles(pending.data() + waiting, burst, bytes.per_frame() ? &got_bytes : nullptr);
    if (n) {
      st.rx += n;
      bytes.received(got_bytes);
      if (to_next_timed == 0)
        timed[ntimed++] = Timed{waiting, waiting + n, clock.now()}, to_next_timed = sample_every - 1;
      else
        --to_next_timed;
      waiting += n;
    }
    uint32_t posted = 0;
    while (waiting - posted >= db) post(posted, db), posted += db;
    if (waiting > posted) {
      if (stopping || n < burst) {
        post(posted, waiting - posted), posted = waiting;
      } else {
        // Frames left after a post were all in this burst (fewer than db waited before it).
        const uint64_t now = clock.now();
        if (posted || !wait_since)
          wait_since = now;
        else if (now - wait_since >= flush_ns)
          post(posted, waiting - posted), posted = waiting;
      }
    }
    if (posted) {
      // Frames left (fewer than db) move to the front; so do the timed bursts they came in.
      const uint32_t left = waiting - posted;
      if (left) std::memmove(pending.data(), pending.data() + posted, left * sizeof(void*));
      else wait_since = 0;
      uint32_t keep = 0;
      for (uint32_t t = 0; t < ntimed; ++t)
        if (timed[t].end > posted)
          timed[keep++] = Timed{std::max(timed[t].from, posted) - posted, timed[t].end - posted, timed[t].ns};
      ntimed = keep;
      waiting = left;
    }
    if (stopping) break;
    if (n == 0) {
      if (st.publishes_when_idle()) bytes.settle(st, pending.data(), waiting);
      idle(st);
    } else if (st.busy_turn()) {
      bytes.settle(st, pending.data(), waiting);
      publish(st), st.empty_polls = 0;
    } else if (bytes.calibrating() && (st.turns & 63) == 0) {
      bytes.settle(st, pending.data(), waiting);  // compares the ports' counts, 64 bursts in
    }
  }
  bytes.settle(st, pending.data(), waiting);
  st.result.byte_counts = bytes.source_name();
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
      if ((spec_.route || spec_.integrity) && !on_rx(rx[k].data, rx[k].len, sum, why)) {
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
      publish(st), st.empty_polls = 0;
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
      publish(st), st.empty_polls = 0;
  }
  to_.flush();
}

}  // namespace gpunfv
