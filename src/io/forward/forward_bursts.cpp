// The burst-native zero-copy loop (Forwarder::run_handle_bursts) and its byte counting.
#include <algorithm>
#include <cstring>
#include <vector>

#if GPUNFV_HAVE_DPDK_PORT
#include "io/dpdk_handle_bursts.h"
#endif

#include "io/forward/forward_loop.h"
#include "io/forward/forwarder.h"

namespace gpunfv {

// Byte counts of a handle-burst forward, from one of two sources:
// - frame lengths: summed once at rx (reading each mbuf's header); tx bytes are the rx bytes
//   less those dropped and those still waiting, settled when counters go out;
// - the ports' own counters (ZeroCopyIo::zc_port_bytes: a DPDK vdev's ibytes/obytes, counted in
//   software in rx/tx burst), where they agree exactly with the lengths: the loop sums lengths
//   until a settle (64 bursts in, or when it idles) finds frames received and sent, compares,
//   and then reads no frame header again if both sides agree; otherwise it keeps summing.
class Forwarder::BurstBytes {
 public:
  BurstBytes(ZeroCopyIo& in, ZeroCopyIo& out, ByteCounting counting) : in_(in), out_(out) {
    uint64_t unused = 0;
    if (counting == ByteCounting::off) {
      source_ = Source::off;
      return;
    }
    const bool have = in_.zc_port_bytes(port_rx0_, unused) && out_.zc_port_bytes(unused, port_tx0_);
    source_ = have ? Source::calibrating : Source::frames;
  }
  // Whether rx must sum the lengths of what it received.
  bool per_frame() const { return source_ == Source::frames || source_ == Source::calibrating; }
  bool calibrating() const { return source_ == Source::calibrating; }
  void received(uint64_t bytes) { rx_ += bytes; }
  void lost(void* const* handles, uint32_t n) {
    if (per_frame()) lost_ += in_.zc_handle_bytes(handles, n);
  }
  // Moves the bytes counted since the last call into st; pending[0, waiting) are frames
  // received and not yet posted.
  void settle(Loop& st, void* const* pending, uint32_t waiting);
  const char* source_name() const {
    return source_ == Source::port ? "port counters" : source_ == Source::off ? "off" : "frame lengths";
  }

 private:
  enum class Source : uint8_t { frames, calibrating, port, off };
  ZeroCopyIo& in_;
  ZeroCopyIo& out_;
  Source source_ = Source::frames;
  uint64_t port_rx0_ = 0, port_tx0_ = 0;  // the ports' counters when the loop began
  uint64_t rx_ = 0, lost_ = 0;            // lengths: received, dropped (totals)
  uint64_t rx_out_ = 0, tx_out_ = 0;      // totals already moved into the loop's counters
};

void Forwarder::BurstBytes::settle(Loop& st, void* const* pending, uint32_t waiting) {
  uint64_t rx = 0, tx = 0;
  if (source_ == Source::off) return;  // the ports' counters say "not counted"
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

namespace {

// How the loop moves a burst: through the ports' ZeroCopyIo (two virtual calls a burst), or,
// between two DPDK ports, DPDK's inline rte_eth_rx_burst / rte_eth_tx_burst on queue 0, what
// the ports' zc_rx_handles / zc_tx_handles call (dpdk-testpmd io's shape: one indirect call
// into the driver each way, nothing around it). rx sums the frames' lengths where `bytes` is
// not null.
struct VirtualBursts {
  ZeroCopyIo& in;
  ZeroCopyIo& out;
  uint32_t rx(void** handles, uint32_t max, uint64_t* bytes) { return in.zc_rx_handles(handles, max, bytes); }
  uint32_t tx(void* const* handles, uint32_t n) { return out.zc_tx_handles(handles, n); }
};

#if GPUNFV_HAVE_DPDK_PORT
struct EthdevBursts {
  uint16_t in_port, out_port;
  uint32_t rx(void** handles, uint32_t max, uint64_t* bytes) { return dpdk_bursts::rx(in_port, handles, max, bytes); }
  uint32_t tx(void* const* handles, uint32_t n) { return dpdk_bursts::tx(out_port, handles, n); }
};
#endif

}  // namespace

// The counts run_bursts keeps in locals (registers, where the compiler can) and moves into its
// Loop only before something reads it: settle, publish, idle, the end of the loop.
struct Forwarder::BurstTally {
  uint64_t rx = 0, tx = 0, posts = 0;
  uint32_t polls = 0, turns = 0, empty_polls = 0;

  // The stop word and the source's end are read every 16th poll, empty or not.
  bool stop_check_due() { return (++polls & 15) == 0; }
  // An empty poll: the first kSpinPolls in a row go straight back to the port (between two
  // cores the rate is frames in flight over the time an empty poll takes to see the next
  // burst); false after that (the loop then pauses, publishes and yields: idle()).
  bool spin() { return ++empty_polls < Loop::kSpinPolls; }
  void move_into(Loop& st) {
    st.rx += rx, st.tx += tx, st.result.sent += tx, st.result.posts += posts;
    rx = tx = posts = 0;
  }
};

// What the port did not take at once: up to 1000 tries in all, then the rest is freed and
// counted (port_tx_error). Returns how many it took.
template <class Bursts>
uint32_t Forwarder::post_refused(Bursts& io, BurstBytes& bytes, Loop& st, void* const* group,
                                 uint32_t count, uint32_t sent) {
  for (int tries = 1; sent < count && tries < 1000; ++tries) sent += io.tx(group + sent, count - sent);
  if (sent < count) {
    bytes.lost(group + sent, count - sent);
    zc_from_->zc_free_handles(group + sent, count - sent);
    st.drop(DropReason::port_tx_error, count - sent);
  }
  return sent;
}

void Forwarder::run_handle_bursts(const std::function<bool()>& stop, Loop& st) {
  // Where descriptor_batch divides burst (8 or 32 of 32, the defaults and testpmd's shape), every
  // turn posts all it received: a short burst at once, a full one in whole groups. That loop
  // keeps nothing between turns and is leaner (docs/decisions/zero-copy-forward-loop.md).
  const bool whole = spec_.burst % spec_.descriptor_batch == 0;
  const bool one_post = spec_.descriptor_batch == spec_.burst;  // a post takes a whole burst
#if GPUNFV_HAVE_DPDK_PORT
  const int in = zc_from_->zc_ethdev_port(), out = zc_to_->zc_ethdev_port();
  if (in >= 0 && out >= 0) {
    const EthdevBursts io{uint16_t(in), uint16_t(out)};
    return !whole ? run_bursts(io, stop, st)
           : one_post ? run_whole_bursts<true>(io, stop, st) : run_whole_bursts<false>(io, stop, st);
  }
#endif
  const VirtualBursts io{*zc_from_, *zc_to_};
  !whole ? run_bursts(io, stop, st)
         : one_post ? run_whole_bursts<true>(io, stop, st) : run_whole_bursts<false>(io, stop, st);
}

// run_bursts where descriptor_batch divides burst, so no frame waits for a later turn (no
// pending frames, no flush timer). The common turn is dpdk-testpmd io's loop plus one count: an
// rx burst, its posts, frames received added up in a register (posts too where a burst takes
// several). Sent frames are those received less those a port refused (counted where they are
// freed), and where one post takes a whole burst (descriptor_batch == burst) the posts are the
// busy turns, so neither is counted per turn. Everything else happens on an "event turn" a
// countdown picks, out of the common path: the timed burst (one rx burst in latency_sample,
// timed from its poll to after each of its posts, as in run_bursts), publishing every 256 busy
// turns, settling bytes while they calibrate, and the stop check (at most 256 busy turns apart;
// also every 16th poll of a run of empty ones). Refused posts and the empty-poll spin are cold
// paths. (The loop before, with its counts in a struct passed to helpers and a poll counter for
// the stop check, ran 0.80-0.85x testpmd io's loop built into forward_bench on a 2-vCPU VM
// and 0.58-0.80x on the H100 host; this one 0.94-0.96x and 0.93-1.01x; current figures in
// bench/results/forward-h100host-2026-11-25.)
template <bool kOnePost, class Bursts>
void Forwarder::run_whole_bursts(Bursts io, const std::function<bool()>& stop, Loop& st) {
  const LoopClock& clock = loop_clock();
  ZeroCopyIo& in = *zc_from_;
  ZeroCopyIo& out = *zc_to_;
  const uint32_t db = spec_.descriptor_batch, burst = spec_.burst;
  const uint32_t sample_every = std::max<uint32_t>(spec_.latency_sample, 1);
  void* frames[kMaxForwardBurst];
  BurstBytes bytes(in, out, spec_.count_bytes);
  st.result.latency_sample = sample_every;
  uint64_t got_bytes = 0;
  uint64_t* lengths_to = bytes.per_frame() ? &got_bytes : nullptr;
  auto settle = [&] {
    bytes.settle(st, frames, 0);
    lengths_to = bytes.per_frame() ? &got_bytes : nullptr;
  };

  // The common turn's state, in registers: no lambda captures it (a capture that is not
  // inlined would keep it on the stack); the cold paths get it by value.
  uint64_t rx = 0, posts = 0;    // posts: counted only where a burst takes several (!kOnePost)
  uint32_t empty_in_row = 0;
  uint32_t to_event = 1;         // busy turns until the next event turn (1: the first)

  // The rest, touched on event turns and cold paths only.
  uint32_t event_span = 1;       // busy turns the current countdown began with
  uint64_t busy_turns = 0;       // busy turns before the current countdown
  uint32_t to_timed = 1;         // busy turns until the timed one, from the last event turn
  // ... until counts are published (and bytes settled; every 64 while the byte source calibrates)
  uint32_t to_publish = bytes.calibrating() ? 64 : 256;
  uint64_t refused = 0;          // frames freed after a refused post
  uint64_t moved_rx = 0, moved_tx = 0, moved_posts = 0;  // already in st
  // Moves the counts into st; `turns`: busy turns so far.
  auto move_counts = [&](uint64_t rx_now, uint64_t posts_now, uint64_t turns) {
    const uint64_t tx = rx_now - refused, all_posts = kOnePost ? turns : posts_now;
    st.rx += rx_now - moved_rx, st.tx += tx - moved_tx;
    st.result.sent += tx - moved_tx, st.result.posts += all_posts - moved_posts;
    moved_rx = rx_now, moved_tx = tx, moved_posts = all_posts;
  };
  // One post of frames[first, first + count); returns the frames sent.
  auto post = [&](uint32_t first, uint32_t count) {
    void* const* group = frames + first;
    uint32_t sent = io.tx(group, count);
    if (__builtin_expect(sent < count, 0)) {
      sent = post_refused(io, bytes, st, group, count, sent);
      refused += count - sent;
    }
    return sent;
  };
  // The event turn: posts the n frames received (timed when due), publishes when due (rx_now
  // and posts_now include this turn's); returns the busy turns until the next event turn.
  auto event_turn = [&](uint32_t n, uint64_t polled, uint64_t rx_now, uint64_t posts_now) {
    busy_turns += event_span;
    to_timed -= event_span, to_publish -= event_span;
    const bool timed = to_timed == 0;
    if (timed) to_timed = sample_every;
    for (uint32_t first = 0; first < n; first += db) {
      const uint32_t sent = post(first, std::min(db, n - first));
      if (timed && sent) st.result.latency.record(clock.now() - polled, sent);
    }
    if (to_publish == 0) {
      to_publish = bytes.calibrating() ? 64 : 256;
      move_counts(rx_now, posts_now, busy_turns);
      settle();
      publish(st);
    }
    return event_span = std::min(to_timed, to_publish);
  };

  for (;;) {
    // Lengths are summed with count_bytes: exact on ports that count no bytes, and while
    // calibrating; DPDK ports count (settle switches to their counters). Two call sites, so
    // the common one inlines without the sum.
    uint32_t n;
    if (__builtin_expect(lengths_to == nullptr, 1)) {
      n = io.rx(frames, burst, nullptr);
    } else {
      n = io.rx(frames, burst, lengths_to);
      bytes.received(got_bytes), got_bytes = 0;
    }
    if (__builtin_expect(n == 0, 0)) {
      ++empty_in_row;
      if (__builtin_expect((empty_in_row & 15) == 0, 0) && (stop() || from_.rx_done())) break;
      if (__builtin_expect(empty_in_row >= Loop::kSpinPolls, 0)) {
        move_counts(rx, posts, busy_turns + event_span - to_event);
        st.empty_polls = empty_in_row - 1;  // idle() counts this poll
        if (st.publishes_when_idle()) settle();
        idle(st);
        empty_in_row = st.empty_polls;
      }
      continue;
    }
    empty_in_row = 0;
    rx += n;
    if (__builtin_expect(--to_event == 0, 0)) {
      const uint64_t polled = clock.now();
      if (!kOnePost) posts += (n + db - 1) / db;
      to_event = event_turn(n, polled, rx, posts);
      if (stop() || from_.rx_done()) break;
    } else if (kOnePost) {
      post(0, n);
    } else {
      for (uint32_t first = 0; first < n; first += db) post(first, std::min(db, n - first)), ++posts;
    }
  }
  move_counts(rx, posts, busy_turns + event_span - to_event);
  bytes.settle(st, frames, 0);
  st.result.byte_counts = bytes.source_name();
}

// Zero-copy by handle bursts: rx_burst fills `pending` behind the frames still waiting, tx_burst
// takes groups of descriptor_batch straight from it. Nothing in the loop reads an mbuf or the
// clock unless a count needs it:
// - latency: one rx burst in `latency_sample` is timed, from a clock read when its poll returned
//   to one after each post of its frames (one histogram update per post); the frames of the
//   other bursts are sent untimed (ForwardResult: sent - latency.count()). An empty poll reads
//   no clock. `timed` holds the timed bursts still waiting: pending[from, end), and when they
//   came.
// - bytes: BurstBytes (the ports' counters where they agree, else lengths read at rx; none
//   with count_bytes: off).
// - a partial group goes at once when the burst came back short (the rx queue ran dry) or the
//   loop stops; after a full burst it waits for more, at most flush_us from when the loop first
//   saw it (the only other clock read, and only where descriptor_batch does not divide bursts).
// The common turn (a burst in, all of it posted, nothing timed) touches only the loop's
// counters, held in registers: what timing, partial groups and port refusals need sits behind
// rarely taken branches.
template <class Bursts>
void Forwarder::run_bursts(Bursts io, const std::function<bool()>& stop, Loop& st) {
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
  uint32_t to_next_timed = 1;        // non-empty bursts until the next timed one (1: this one)
  uint64_t wait_since = 0;           // when the partial group left waiting was first seen
  BurstBytes bytes(in, out, spec_.count_bytes);
  st.result.latency_sample = sample_every;

  // One histogram update per timed burst with frames in pending[first, first + sent).
  auto record = [&](uint32_t first, uint32_t sent) {
    uint64_t now = 0;
    for (uint32_t t = 0; t < ntimed; ++t) {
      const uint32_t lo = std::max(timed[t].from, first), hi = std::min(timed[t].end, first + sent);
      if (hi <= lo) continue;
      if (!now) now = clock.now();
      st.result.latency.record(now - timed[t].ns, hi - lo);
    }
  };
  BurstTally tally;
  // Posts pending[first, first + count): one tx descriptor post.
  auto post = [&](uint32_t first, uint32_t count) {
    void* const* group = pending.data() + first;
    uint32_t sent = io.tx(group, count);
    if (__builtin_expect(sent < count, 0)) sent = post_refused(io, bytes, st, group, count, sent);
    ++tally.posts;
    tally.tx += sent;
    if (__builtin_expect(ntimed != 0, 0)) record(first, sent);
  };
  // Where rx sums the frames' lengths: only while BurstBytes needs them (settle may stop it).
  uint64_t got_bytes = 0;
  uint64_t* lengths_to = bytes.per_frame() ? &got_bytes : nullptr;
  auto settle = [&] {
    bytes.settle(st, pending.data(), waiting);
    lengths_to = bytes.per_frame() ? &got_bytes : nullptr;
  };
  // After kSpinPolls empty polls in a row: pause, publish, yield (idle()).
  auto end_spin = [&] {
    tally.move_into(st);
    st.empty_polls = tally.empty_polls - 1;  // idle() counts this poll
    if (st.publishes_when_idle()) settle();
    idle(st);
    tally.empty_polls = st.empty_polls;
  };
  // A busy turn ends a run of empty polls; every 256 the counts go out, and while the byte
  // source calibrates the bytes settle every 64 (comparing the ports' counts).
  auto end_busy_turn = [&] {
    tally.empty_polls = 0;
    if (__builtin_expect((++tally.turns & 255) == 0, 0)) {
      tally.move_into(st);
      settle();
      publish(st);
    } else if (__builtin_expect(bytes.calibrating() && (tally.turns & 63) == 0, 0)) {
      settle();
    }
  };

  for (;;) {
    // The stop word and the source's end are read every 16th poll, empty or not.
    const bool stopping = tally.stop_check_due() && (stop() || from_.rx_done());
    const uint32_t n = stopping ? 0 : io.rx(pending.data() + waiting, burst, lengths_to);
    if (n) {
      tally.rx += n;
      if (lengths_to) bytes.received(got_bytes), got_bytes = 0;
      if (__builtin_expect(--to_next_timed == 0, 0))
        timed[ntimed++] = Timed{waiting, waiting + n, clock.now()}, to_next_timed = sample_every;
      waiting += n;
    }
    uint32_t posted = 0;
    while (waiting - posted >= db) post(posted, db), posted += db;
    if (__builtin_expect(waiting > posted, 0)) {
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
      const uint32_t left = waiting - posted;
      if (__builtin_expect(left != 0, 0)) {
        // Frames left (fewer than db) move to the front; so do the timed bursts they came in.
        std::memmove(pending.data(), pending.data() + posted, left * sizeof(void*));
        uint32_t keep = 0;
        for (uint32_t t = 0; t < ntimed; ++t)
          if (timed[t].end > posted)
            timed[keep++] = Timed{std::max(timed[t].from, posted) - posted, timed[t].end - posted, timed[t].ns};
        ntimed = keep;
      } else {
        wait_since = 0, ntimed = 0;
      }
      waiting = left;
    }
    if (stopping) break;
    if (n == 0) {
      if (__builtin_expect(!tally.spin(), 0)) end_spin();
      continue;
    }
    end_busy_turn();
  }
  tally.move_into(st);
  bytes.settle(st, pending.data(), waiting);
  st.result.byte_counts = bytes.source_name();
}

}  // namespace gpunfv
