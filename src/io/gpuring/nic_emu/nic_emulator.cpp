// The NIC emulator's shared parts: construction, the two threads' lifetimes, RSS, slot
// bookkeeping, the copies of frames between ring memory and staging, and the latency
// breakdown. The rx engine is in nic_emulator_rx.cpp, the tx engine in nic_emulator_tx.cpp.
#include "io/gpuring/nic_emu/nic_emulator.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include "core/clock.h"

namespace gpunfv::gpuring {

namespace {

uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// Slots of the rx set, plus the tx set's when it is another one (a forward).
uint32_t meta_slots(const RingSet& rx, const RingSet& tx) {
  return rx.params().total_slots() * (&rx == &tx ? 1 : 2);
}

}  // namespace

NicEmulator::NicEmulator(RingSet& rings, Port& source, Port* sink, DmaEngine& dma,
                         NicEmulatorConfig cfg, RingSet* tx_rings)
    : rings_(rings), v_(rings.view()), tx_rings_(tx_rings ? *tx_rings : rings),
      tv_(tx_rings_.view()), source_(source), sink_(sink), dma_(dma), tx_dma_(dma.make_peer()), cfg_(cfg),
      rss_(rings.params().rings),
      rx_staging_(rings.params().descriptors(), rings.params().slot_bytes, MemoryKind::host_pinned),
      tx_staging_(rings.params().descriptors(), rings.params().slot_bytes, MemoryKind::host_pinned),
      rx_source_(std::max<uint32_t>(cfg.burst, 1), rings.params().slot_bytes, MemoryKind::host) {
  if (!source.has_rx()) throw std::invalid_argument("NIC emulator: source port '" + source.name() + "' has no rx side");
  const RingParams& p = rings.params();
  if (tx_rings && (tv_.p.rings != p.rings || tv_.p.ring_size != p.ring_size ||
                   tv_.p.total_slots() != p.total_slots() || tv_.p.slot_bytes != p.slot_bytes))
    throw std::invalid_argument("NIC emulator: the tx rings' shape differs from the rx rings'");
  if (cfg_.burst == 0) cfg_.burst = 1;
  if (cfg_.tx_burst == 0) cfg_.tx_burst = 1;
  cfg_.tx_burst = std::min(cfg_.tx_burst, p.ring_size);
  cfg_.inflight = std::clamp<uint32_t>(cfg_.inflight, 1, DmaEngine::kMaxTicketsInFlight / 4);
  rx_staging_.set_count(rx_staging_.capacity());
  tx_staging_.set_count(tx_staging_.capacity());
  rdh_.assign(p.rings, 0);
  rx_fetched_until_.assign(p.rings, 0);
  rx_fetch_issued_until_.assign(p.rings, 0);
  rx_fetch_ticket_.assign(p.rings, 0);
  wb_first_.assign(p.rings, 0);
  wb_count_.assign(p.rings, 0);
  tdh_.assign(p.rings, 0);
  tdt_seen_.assign(p.rings, 0);
  tx_fetch_next_.assign(p.rings, 0);
  tdt_seen_ns_.assign(p.rings, std::vector<uint64_t>(p.ring_size, 0));
  tx_frames_.assign(p.rings, std::vector<TxFrame>(p.ring_size, TxFrame{}));
  last_seq_in_ring_.assign(p.rings, 0);
  for (uint32_t r = 0; r < p.rings; ++r) {
    rx_mirror_.push_back(static_cast<RxDesc*>(dma_.alloc_staging(sizeof(RxDesc) * p.ring_size)));
    rx_wb_.push_back(static_cast<RxDesc*>(dma_.alloc_staging(sizeof(RxDesc) * p.ring_size)));
    tx_mirror_.push_back(static_cast<TxDesc*>(tx_dma_->alloc_staging(sizeof(TxDesc) * p.ring_size)));
    tx_wb_.push_back(static_cast<TxDesc*>(tx_dma_->alloc_staging(sizeof(TxDesc) * p.ring_size)));
  }
  meta_.assign(meta_slots(rings, tx_rings_), SlotMeta{0, 0, 0});
  stats_.delivered_per_ring.assign(p.rings, 0);
  stats_.latency_ns.reserve(std::min<uint64_t>(cfg_.max_latency_samples, 1u << 20));
  if (cfg_.latency_breakdown) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(cfg_.max_latency_samples, 1u << 26));
    arrived_ns_.assign(n, 0);
    visible_ns_.assign(n, 0);
    posted_ns_.assign(n, 0);
    sent_ns_.assign(n, 0);
  }
}

NicEmulator::~NicEmulator() {
  stop_ = true;
  if (rx_thread_.joinable()) rx_thread_.join();
  if (tx_thread_.joinable()) tx_thread_.join();
  for (RxDesc* d : rx_mirror_) dma_.free_staging(d);
  for (RxDesc* d : rx_wb_) dma_.free_staging(d);
  for (TxDesc* d : tx_mirror_) tx_dma_->free_staging(d);
  for (TxDesc* d : tx_wb_) tx_dma_->free_staging(d);
}

void NicEmulator::start() {
  start_ns_ = monotonic_ns();
  rx_thread_ = std::thread([this] { run_rx(); });
  tx_thread_ = std::thread([this] { run_tx(); });
}

void NicEmulator::join() {
  stop_ = true;
  const bool ran = rx_thread_.joinable() || tx_thread_.joinable();
  if (rx_thread_.joinable()) rx_thread_.join();
  if (tx_thread_.joinable()) tx_thread_.join();
  if (ran) {
    stats_.thread_cpu_ns = rx_cpu_ns_ + tx_cpu_ns_;
    build_breakdown();
  }
  if (rx_error_) std::rethrow_exception(rx_error_);
  if (tx_error_) std::rethrow_exception(tx_error_);
}

void NicEmulator::run_rx() {
  try {
    bool source_done = false;
    while (!stop_.load(std::memory_order_acquire) && !source_done) {
      bool busy = reap_rx(0);
      busy |= rx_step();
      if (!busy && staged_next_ == rx_source_.count() && source_.rx_done()) {
        reap_rx(kAll);  // every frame is in its ring before "finished" is said
        source_done = true;
        rx_finished_.store(true, std::memory_order_release);
      }
      if (!busy) sched_yield();
    }
    reap_rx(kAll);  // nothing may still read staging or write descriptors once the thread is gone
    dma_.park();
  } catch (...) {
    rx_error_ = std::current_exception();
    rx_finished_.store(true, std::memory_order_release);
  }
  rx_cpu_ns_ = thread_cpu_ns();
}

void NicEmulator::run_tx() {
  try {
    uint64_t last_pass_ns = 0;
    for (;;) {
      // After stop (the loops have exited), whatever they posted last is still sent.
      const bool stopping = stop_.load(std::memory_order_acquire);
      if (cfg_.phase_timing) {
        const uint64_t now = monotonic_ns();
        if (tx_saturated_) stats_.phases.tx_wait_ns += now - last_pass_ns;
        last_pass_ns = now;
      }
      bool busy = tx_complete_front();
      busy |= tx_poll_tails();
      if (stopping && !busy && tx_inflight_.empty()) break;
      if (!busy) sched_yield();
    }
    tx_dma_->park();
  } catch (...) {
    tx_error_ = std::current_exception();
  }
  tx_cpu_ns_ = thread_cpu_ns();
}

std::string NicEmulator::live_state() const {
  const uint64_t since = rx_dma_wait_since_ns_.load(std::memory_order_relaxed);
  std::string s = "NIC delivered " + std::to_string(live_delivered_.load(std::memory_order_relaxed)) +
                  " sent " + std::to_string(live_sent_.load(std::memory_order_relaxed));
  if (since) {
    const uint64_t now = monotonic_ns();
    s += ", rx waiting for its copies for " + std::to_string((now > since ? now - since : 0) / 1'000'000) + " ms";
  }
  return s;
}

uint32_t NicEmulator::meta_index(uint64_t addr) const {
  const uint64_t span = uint64_t(v_.p.total_slots()) * v_.p.slot_bytes;
  if (addr >= v_.bus_base && addr < v_.bus_base + span) return v_.slot_of_bus(addr);
  return v_.p.total_slots() + tv_.slot_of_bus(addr);
}

bool NicEmulator::is_slot_address(uint64_t addr) const {
  const uint64_t rx_span = uint64_t(v_.p.total_slots()) * v_.p.slot_bytes;
  const uint64_t tx_span = uint64_t(tv_.p.total_slots()) * tv_.p.slot_bytes;
  const bool in_rx = addr >= v_.bus_base && addr < v_.bus_base + rx_span;
  const bool in_tx = addr >= tv_.bus_base && addr < tv_.bus_base + tx_span;
  return (in_rx && (addr - v_.bus_base) % v_.p.slot_bytes == 0) ||
         (in_tx && (addr - tv_.bus_base) % tv_.p.slot_bytes == 0);
}

uint8_t* NicEmulator::staging_entry(const Batch& staging, uint32_t index) {
  return staging.base() + staging.layout().off_data + size_t(index) * staging.stride();
}

uint64_t NicEmulator::issue_frame_copies(DmaEngine& dma, const Batch& staging, std::vector<Piece>& pieces,
                                         bool to_ring) {
  if (pieces.empty()) return 0;
  const size_t pitch = staging.stride();
  const uint32_t slot_bytes = v_.p.slot_bytes;
  if (!cfg_.coalesce) {
    std::vector<void*>& dst = to_ring ? dst_ : tx_dst_;
    std::vector<const void*>& src = to_ring ? src_ : tx_src_;
    std::vector<size_t>& size = to_ring ? size_ : tx_size_;
    dst.clear();
    src.clear();
    size.clear();
    for (const Piece& p : pieces) {
      void* ring = reinterpret_cast<void*>(p.addr);
      uint8_t* host = staging_entry(staging, p.index);
      dst.push_back(to_ring ? ring : host);
      src.push_back(to_ring ? static_cast<const void*>(host) : ring);
      size.push_back(std::min(p.len, slot_bytes));
    }
    if (to_ring)
      dma.write_gather(dst, src, size);
    else
      dma.read_gather(dst, src, size);
    return pieces.size();
  }
  // Adjacent slots (consecutive staging indices and bus addresses) form one run, one copy.
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.index < b.index; });
  uint64_t ops = 0;
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i + 1;
    uint32_t width = std::min(pieces[i].len, slot_bytes);
    while (j < pieces.size() && pieces[j].index == pieces[j - 1].index + 1 &&
           pieces[j].addr == pieces[j - 1].addr + slot_bytes) {
      width = std::max(width, std::min(pieces[j].len, slot_bytes));
      ++j;
    }
    void* ring = reinterpret_cast<void*>(pieces[i].addr);
    uint8_t* host = staging_entry(staging, pieces[i].index);
    if (to_ring)
      dma.copy_rows(ring, slot_bytes, host, pitch, width, j - i);
    else
      dma.copy_rows(host, pitch, ring, slot_bytes, width, j - i);
    ++ops;
    i = j;
  }
  return ops;
}

void NicEmulator::build_breakdown() {
  if (!cfg_.latency_breakdown) return;
  NicLatencyBreakdown& b = stats_.breakdown;
  b = {};
  const size_t n = std::min<size_t>(arrived_ns_.size(), next_seq_);
  auto clamp32 = [](uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); };
  for (size_t s = 0; s < n; ++s) {
    if (sent_ns_[s] == 0 || posted_ns_[s] == 0 || arrived_ns_[s] == 0) continue;  // NF drop, or not sent
    // The rx thread may have looked at the step's completion after the GPU side had already
    // posted the frame: it was visible by then.
    const uint64_t visible = visible_ns_[s] == 0 ? posted_ns_[s] : std::min(visible_ns_[s], posted_ns_[s]);
    const uint64_t arrived = std::min(arrived_ns_[s], visible);
    b.rx_dma_ns.push_back(clamp32(visible - arrived));
    b.gpu_ns.push_back(clamp32(posted_ns_[s] - visible));
    b.tx_dma_ns.push_back(clamp32(sent_ns_[s] - posted_ns_[s]));
  }
}

}  // namespace gpunfv::gpuring
