#include "io/gpuring/nic_emulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "core/clock.h"
#include "core/parse.h"

namespace gpunfv::gpuring {

namespace {
// A phase's start and end when phase timing is on; 0 (no clock read) otherwise.
inline uint64_t stamp(bool on) { return on ? monotonic_ns() : 0; }
}  // namespace

NicEmulator::NicEmulator(RingSet& rings, Port& source, Port* sink, DmaEngine& dma,
                         NicEmulatorConfig cfg, RingSet* tx_rings)
    : rings_(rings), v_(rings.view()), tx_rings_(tx_rings ? *tx_rings : rings),
      tv_(tx_rings_.view()), source_(source), sink_(sink), dma_(dma), cfg_(cfg),
      rss_(rings.params().rings),
      rx_staging_(std::max<uint32_t>(cfg.burst, 1), rings.params().slot_bytes, MemoryKind::host_pinned),
      tx_staging_(std::max<uint32_t>(cfg.tx_burst, 1), rings.params().slot_bytes, MemoryKind::host_pinned) {
  if (!source.has_rx()) throw std::invalid_argument("NIC emulator: source port '" + source.name() + "' has no rx side");
  if (cfg_.burst == 0) cfg_.burst = 1;
  if (cfg_.tx_burst == 0) cfg_.tx_burst = 1;
  const RingParams& p = rings.params();
  rdh_.assign(p.rings, 0);
  rx_fetched_until_.assign(p.rings, 0);
  wb_first_.assign(p.rings, 0);
  wb_count_.assign(p.rings, 0);
  tdh_.assign(p.rings, 0);
  last_seq_in_ring_.assign(p.rings, 0);
  for (uint32_t r = 0; r < p.rings; ++r) {
    rx_mirror_.push_back(static_cast<RxDesc*>(dma_.alloc_staging(sizeof(RxDesc) * p.ring_size)));
    rx_wb_.push_back(static_cast<RxDesc*>(dma_.alloc_staging(sizeof(RxDesc) * p.ring_size)));
  }
  tx_mirror_ = static_cast<TxDesc*>(dma_.alloc_staging(sizeof(TxDesc) * cfg_.tx_burst));
  tx_wb_ = static_cast<TxDesc*>(dma_.alloc_staging(sizeof(TxDesc) * cfg_.tx_burst));
  if (tx_rings && (tv_.p.rings != p.rings || tv_.p.ring_size != p.ring_size ||
                   tv_.p.total_slots() != p.total_slots()))
    throw std::invalid_argument("NIC emulator: the tx rings' shape differs from the rx rings'");
  meta_.assign(uint64_t(p.total_slots()) * (&tx_rings_ == &rings_ ? 1 : 2), SlotMeta{0, 0, 0});
  stats_.delivered_per_ring.assign(p.rings, 0);
  stats_.latency_ns.reserve(std::min<uint64_t>(cfg_.max_latency_samples, 1u << 20));
}

NicEmulator::~NicEmulator() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  for (RxDesc* d : rx_mirror_) dma_.free_staging(d);
  for (RxDesc* d : rx_wb_) dma_.free_staging(d);
  dma_.free_staging(tx_mirror_);
  dma_.free_staging(tx_wb_);
}

void NicEmulator::start() { thread_ = std::thread([this] { run(); }); }

void NicEmulator::join() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
}

void NicEmulator::run() {
  try {
    start_ns_ = monotonic_ns();
    bool source_done = false;
    while (!stop_.load(std::memory_order_acquire)) {
      bool busy = false;
      if (!source_done) {
        busy = rx_step();
        if (!busy && staged_next_ == rx_staging_.count() && source_.rx_done()) {
          complete_rx_copies();  // every frame is in its ring before "finished" is said
          source_done = true;
          rx_finished_.store(true, std::memory_order_release);
        }
      }
      for (uint32_t r = 0; r < v_.p.rings; ++r) busy |= tx_step(r);
      if (!busy) sched_yield();
    }
    // The loops have exited: whatever they posted last is sent now.
    for (uint32_t r = 0; r < v_.p.rings; ++r)
      while (tx_step(r)) {
      }
    dma_.wait();
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    stats_.thread_cpu_ns = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
  } catch (...) {
    error_ = std::current_exception();
    rx_finished_.store(true, std::memory_order_release);
  }
}

uint32_t NicEmulator::pick_ring(const uint8_t* frame, uint32_t len, uint32_t& hash,
                                uint16_t& pkt_info) const {
  hash = 0;
  pkt_info = kRssTypeNone;
  PacketHeaders h;
  if (parse_headers(IsoSpan<const uint8_t>(frame, len), h) != DropReason::none || h.ip_version != 4)
    return 0;  // no RSS type: queue 0, as the 82599 does
  uint8_t tuple[12];
  std::memcpy(tuple, frame + h.l3_off + 12, 8);  // source and destination address
  size_t n = 8;
  pkt_info = kPtypeIpv4 | kRssTypeIpv4;
  if (h.l4_off != 0 && (h.l4_proto == kProtoTcp || h.l4_proto == kProtoUdp)) {
    std::memcpy(tuple + 8, frame + h.l4_off, 4);  // source and destination port
    n = 12;
    pkt_info = h.l4_proto == kProtoTcp ? (kPtypeIpv4 | kPtypeTcp | kRssTypeTcpIpv4)
                                       : (kPtypeIpv4 | kPtypeUdp | kRssTypeUdpIpv4);
  }
  hash = toeplitz_hash(std::span<const uint8_t>(tuple, n));
  return rss_.ring_of(hash);
}

uint32_t NicEmulator::meta_index(uint64_t addr) const {
  const uint64_t span = uint64_t(v_.p.total_slots()) * v_.p.slot_bytes;
  if (addr >= v_.bus_base && addr < v_.bus_base + span) return v_.slot_of_bus(addr);
  return v_.p.total_slots() + tv_.slot_of_bus(addr);
}

void NicEmulator::fetch_rx_descriptors(uint32_t r, uint32_t rdt) {
  // Fetch [fetched_until, rdt): descriptors the driver handed over since the last fetch.
  const uint32_t size = v_.p.ring_size;
  uint32_t from = rx_fetched_until_[r];
  const RxDesc* ring = v_.rx_desc + uint64_t(r) * size;
  while (from != rdt) {
    const uint32_t end = rdt > from ? rdt : size;
    dma_.read(rx_mirror_[r] + from, ring + from, sizeof(RxDesc) * (end - from));
    from = end & (size - 1);
  }
  rx_fetched_until_[r] = rdt;
}

void NicEmulator::complete_rx_copies() {
  if (!rx_copies_pending_) return;
  dma_.wait();
  for (uint32_t r = 0; r < v_.p.rings; ++r) store_release(rings_.host_regs(r).rdh, rdh_[r]);
  rx_copies_pending_ = false;
}

bool NicEmulator::rx_step() {
  // The staging frames and write-backs of the last step are reused below.
  complete_rx_copies();
  if (staged_next_ == rx_staging_.count()) {
    uint32_t want = cfg_.burst;
    const uint64_t now = monotonic_ns();
    if (cfg_.rate_pps > 0) {
      // Frames due by now at the offered rate, counted from the first.
      const double due = std::floor(double(now - start_ns_) * cfg_.rate_pps / 1e9) + 1;
      if (due <= double(stats_.offered)) return false;
      want = static_cast<uint32_t>(std::min<double>(want, due - double(stats_.offered)));
    }
    rx_staging_.set_count(0);
    staged_next_ = 0;
    const uint64_t t_src = stamp(cfg_.phase_timing);
    const uint32_t taken = source_.rx_burst(rx_staging_, want);
    if (cfg_.phase_timing) stats_.phases.rx_source_ns += monotonic_ns() - t_src;
    if (taken == 0) return false;
    stats_.offered += rx_staging_.count();
  }
  const uint32_t got = rx_staging_.count();
  const uint32_t from = staged_next_;
  const RingParams& p = v_.p;
  const BatchView b = rx_staging_.view();
  const uint8_t* frames = b.data.framework_data();
  dst_.clear();
  src_.clear();
  size_.clear();
  std::fill(wb_count_.begin(), wb_count_.end(), 0);
  const uint64_t taken_ns = monotonic_ns();
  if (stats_.rx_first_ns == 0) stats_.rx_first_ns = taken_ns;
  stats_.rx_last_ns = taken_ns;
  uint32_t i = from;
  for (; i < got; ++i) {
    const uint32_t len = b.len[i];
    if (len > p.slot_bytes) {
      ++stats_.drops_oversize;
      continue;
    }
    const uint8_t* frame = frames + size_t(i) * b.stride;
    uint32_t hash;
    uint16_t pkt_info;
    const uint32_t r = pick_ring(frame, len, hash, pkt_info);
    const uint32_t rdt = load_acquire(rings_.host_regs(r).rdt);
    if (rdh_[r] == rdt) {  // no descriptor owned by the NIC
      if (cfg_.flow_control) {
        ++stats_.pauses;
        break;
      }
      ++stats_.drops_ring_full;
      continue;
    }
    if (rdh_[r] == rx_fetched_until_[r]) {
      const uint64_t t_fetch = stamp(cfg_.phase_timing);
      fetch_rx_descriptors(r, rdt);
      if (cfg_.phase_timing) {
        stats_.phases.rx_desc_fetch_ns += monotonic_ns() - t_fetch;
        ++stats_.phases.rx_desc_fetches;
      }
    }
    const uint32_t d = rdh_[r];
    const uint64_t addr = rx_mirror_[r][d].read.pkt_addr;
    meta_[meta_index(addr)] = SlotMeta{next_seq_++, taken_ns, r};
    dst_.push_back(reinterpret_cast<void*>(addr));
    src_.push_back(frame);
    size_.push_back(len);
    if (wb_count_[r] == 0) wb_first_[r] = d;
    RxDesc& wb = rx_wb_[r][wb_count_[r]++];
    wb.qword[0] = 0;
    wb.wb.pkt_info = pkt_info;
    wb.wb.rss = hash;
    wb.qword[1] = rx_upper(kRxStatusDD | kRxStatusEOP, static_cast<uint16_t>(len), 0);
    rdh_[r] = (d + 1) & (p.ring_size - 1);
    ++stats_.delivered;
    ++stats_.delivered_per_ring[r];
  }
  // Packet data first, then the write-backs (the same ordered queue), so DD never precedes data.
  const uint64_t t_copy = stamp(cfg_.phase_timing);
  dma_.write_gather(dst_, src_, size_);
  for (uint32_t r = 0; r < p.rings; ++r) {
    uint32_t first = wb_first_[r], left = wb_count_[r], done = 0;
    RxDesc* ring = v_.rx_desc + uint64_t(r) * p.ring_size;
    while (left > 0) {
      const uint32_t n = std::min(left, p.ring_size - first);
      dma_.write_descriptors(ring + first, rx_wb_[r] + done, n);
      done += n;
      left -= n;
      first = 0;
    }
  }
  rx_copies_pending_ = true;
  if (!cfg_.defer_rx_wait) complete_rx_copies();
  if (cfg_.phase_timing) {
    stats_.phases.rx_copy_ns += monotonic_ns() - t_copy;
    ++stats_.phases.rx_steps;
    stats_.phases.rx_frames += dst_.size();
  }
  staged_next_ = i;
  return i > from;
}

bool NicEmulator::tx_step(uint32_t r) {
  const RingParams& p = v_.p;
  const uint32_t tdt = load_acquire(tx_rings_.host_regs(r).tdt);
  const uint32_t head = tdh_[r];
  if (tdt == head) return false;
  const uint32_t count = std::min((tdt - head) & (p.ring_size - 1), cfg_.tx_burst);
  const uint64_t t_desc = stamp(cfg_.phase_timing);
  const TxDesc* ring = tv_.tx_desc + uint64_t(r) * p.ring_size;
  for (uint32_t done = 0; done < count;) {
    const uint32_t at = (head + done) & (p.ring_size - 1);
    const uint32_t n = std::min(count - done, p.ring_size - at);
    dma_.read(tx_mirror_ + done, ring + at, sizeof(TxDesc) * n);
    done += n;
  }
  const uint64_t t_copy = stamp(cfg_.phase_timing);
  // Copy the frames out.
  tx_staging_.set_count(count);
  const BatchView out = tx_staging_.view();
  dst_.clear();
  src_.clear();
  size_.clear();
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t len = tx_mirror_[k].read.cmd_type_len & kTxLenMask;
    out.len[k] = static_cast<uint16_t>(len);
    dst_.push_back(out.data.framework_data() + size_t(k) * out.stride);
    src_.push_back(reinterpret_cast<const void*>(tx_mirror_[k].read.buffer_addr));
    size_.push_back(std::min(len, p.slot_bytes));
  }
  dma_.read_gather(dst_, src_, size_);
  dma_.wait();

  const uint64_t now = monotonic_ns();
  if (cfg_.phase_timing) {
    stats_.phases.tx_desc_read_ns += t_copy - t_desc;
    stats_.phases.tx_copy_ns += now - t_copy;
    ++stats_.phases.tx_steps;
    stats_.phases.tx_frames += count;
  }
  const uint64_t wire = realtime_ns();
  stats_.tx_last_ns = now;
  uint32_t writebacks = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const SlotMeta& m = meta_[meta_index(tx_mirror_[k].read.buffer_addr)];
    if (stats_.latency_ns.size() < cfg_.max_latency_samples)
      stats_.latency_ns.push_back(static_cast<uint32_t>(std::min<uint64_t>(now - m.rx_ns, UINT32_MAX)));
    if (sent_any_ && m.seq < max_seq_sent_) ++stats_.reordered;
    else max_seq_sent_ = m.seq;
    if (m.seq < last_seq_in_ring_[m.ring]) ++stats_.reordered_in_ring;
    last_seq_in_ring_[m.ring] = std::max(last_seq_in_ring_[m.ring], m.seq);
    sent_any_ = true;
    out.wire_ns[k] = wire;
    out.port[k] = 0;
    if (sink_ && !sink_->tx(out, k)) ++stats_.tx_errors;
    ++stats_.tx_packets;
    stats_.tx_bytes += out.len[k];
    if (tx_mirror_[k].read.cmd_type_len & kTxDcmdRS) ++writebacks;
  }
  const uint64_t t_wb = stamp(cfg_.phase_timing);
  if (cfg_.phase_timing) stats_.phases.tx_sink_ns += t_wb - now;
  if (writebacks) {
    // DD back into every sent descriptor that asked for it (RS), in ring order.
    for (uint32_t k = 0; k < count; ++k) {
      tx_wb_[k] = tx_mirror_[k];
      if (tx_mirror_[k].read.cmd_type_len & kTxDcmdRS) {
        tx_wb_[k].wb.rsvd = 0;
        tx_wb_[k].wb.nxtseq_seed = 0;
        tx_wb_[k].wb.status = kTxStatusDD;
      }
    }
    TxDesc* wring = tv_.tx_desc + uint64_t(r) * p.ring_size;
    for (uint32_t done = 0; done < count;) {
      const uint32_t at = (head + done) & (p.ring_size - 1);
      const uint32_t n = std::min(count - done, p.ring_size - at);
      dma_.write_descriptors(wring + at, tx_wb_ + done, n);
      done += n;
    }
    // Not waited for: the next use of tx_wb_ follows a synchronising descriptor read on the
    // same ordered queue, and in write-back mode the driver watches DD, not TDH.
  }
  if (cfg_.phase_timing) stats_.phases.tx_writeback_ns += monotonic_ns() - t_wb;
  tdh_[r] = (head + count) & (p.ring_size - 1);
  store_release(tx_rings_.host_regs(r).tdh, tdh_[r]);
  return true;
}

}  // namespace gpunfv::gpuring
