// The IPsec NF's GPU backend: the same per-packet ESP code as process(), as kernels, plus the
// two order-dependent passes (esp_order.h) as per-SA kernels.
//
// Order across batches: several batches are in flight on their own streams, so their kernels
// may run in any order. The ordered pass of every batch therefore waits for the previous
// batch's, in the order process_gpu() is called (the GPU stage calls it in ingress order: the
// NF's stage thread, or the fused pipeline's issuing threads at each batch's turn,
// chain/issue_turns.h): on the batch's own stream between a wait for the previous pass's event
// and its own record of it (which a CUDA graph of the batch keeps as event nodes), or, for a
// lane's stream (a green context, whose streams record only their own context's events), on a
// stream owned by the NF that events hand the batch to and back from. The per-packet work of
// different batches still overlaps freely.
// In a chain pipeline where the NF is on one chain's path, every batch comes through one serial
// stream of the NF's SM partition; outbound SA selection and numbering then run on the
// partition's second stream (GpuStream::aux), so numbering batch k + 1 overlaps encrypting
// batch k. An NF on several chains' paths gets batches on each chain's lane, so the GPU stage
// hands it non-serial streams and the ordered passes go through the NF's own stream.
//
// Order within a batch: outbound, one block per SA numbers the batch with a block-wide prefix
// count (number_kernel). Inbound, one warp per SA walks the batch 32 packets at a time, in
// packet order; the window lives in every lane's registers; the lanes
// apply the SA's packets one at a time in lane order (shuffling each sequence number to all
// lanes), so the window sees the same sequence as on the CPU.
#include <mutex>

#include <cub/block/block_scan.cuh>

#include "core/debug_switches.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"
#include "nf/nf_count_kernel.cuh"
#include "gpu/stream.h"
#include "nf/ipsec/esp_crypto.h"
#include "nf/ipsec/esp_order.h"
#include "nf/ipsec/ipsec.h"

namespace gpunfv {

struct IpsecGateway::GpuState {
  cudaStream_t order = nullptr;  // lanes' batches: the ordered passes, in launch order
  cudaEvent_t done = nullptr;    // the latest batch's ordered pass is done
  std::mutex m;                  // one launch sequence at a time (events are reused)
  uint32_t encap_lanes = 0;      // GPUNFV_IPSEC_LANES, read when prepared (0: by batch size)
  GpuState() {
    order = create_stream();
    done = create_event(cudaEventDisableTiming);
  }
  ~GpuState() {
    gpu::destroy_event(done);
    destroy_stream(order);
  }
};

void IpsecGateway::GpuStateDeleter::operator()(GpuState* s) const { delete s; }

namespace {

constexpr int kOrderThreads = 128;  // 4 warps, 4 SAs per block
__global__ void select_sa_kernel(NfPackets<> p, esp::EspView v) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.count(); i += gridDim.x * blockDim.x)
    esp::select_outbound_sa(p, i, v);
}

// Outbound numbering: one block per SA (blocks stride over SAs). Each tile of the batch is
// split into runs of kNumberItems consecutive packets, one run per thread; a block-wide
// exclusive scan of the runs' counts of the SA's packets gives every packet the number of the
// SA's packets before it, exactly the numbers the CPU's sequential loop hands out. (A warp
// walking the batch 32 packets at a time was a chain of ~N/32 dependent global loads: at a
// batch of 8192 it made this pass the IPsec stage's bottleneck.)
// The record's words as aligned 32-bit accesses (NfPackets::result_word). read_record's byte
// loads (12 a record, on rows result_stride apart) were most of this kernel's memory
// instructions: 227 us per 32768-packet batch on an H100, three times the encryption's time,
// which made numbering the IPsec stage's limit.
using esp::kRecordSa, esp::kRecordSeq, esp::kRecordFlags;

// Blocks of 1024 threads take a tile of 8192 packets, one pass over a default batch; a smaller
// batch gets a block just large enough for one tile (launch_numbering), whose scan is shorter
// (a block of 1024 took 14 us on an H200 for one tile, most of it the block-wide scan).
constexpr int kNumberItems = 8;

// Up to this many SAs and packets, numbering selects each packet's SA itself (Select): every
// block scans the few SAs for every packet of the batch, which spares the issuing thread the
// selection kernel's launch (S_d on the H200 host: 6 us a batch; the GPU time stays); the block
// numbering an SA writes its packets' whole records, and block 0 also those of packets no SA
// applies to. A larger batch is selected by the whole grid first: a block per SA would walk all
// its packets' headers alone.
constexpr uint32_t kSelectInNumberingSas = 8;
constexpr uint32_t kSelectInNumberingPackets = 4096;
// Such a batch fits one tile of a block of 512 (launch_numbering): no 1024-thread Select instance.
static_assert(kSelectInNumberingPackets <= 512 * kNumberItems);

template <int Threads, bool Select>
__global__ void __launch_bounds__(Threads)
number_kernel(NfPackets<> p, IsoSpan<const uint32_t> slots, IsoSpan<esp::SaState> state,
              esp::EspView v) {
  using Scan = cub::BlockScan<uint32_t, Threads>;
  __shared__ typename Scan::TempStorage scan_storage;
  constexpr uint32_t kTile = uint32_t(Threads) * kNumberItems;
  for (uint32_t k = blockIdx.x; k < slots.size(); k += gridDim.x) {
    const uint32_t sa = slots[k];
    const uint64_t first_seq = state[sa].next_seq;
    uint64_t next = first_seq;
    for (uint32_t base = 0; base < p.count(); base += kTile) {
      const uint32_t first = base + threadIdx.x * kNumberItems;
      uint32_t mine = 0;  // bit j: packet first + j belongs to this SA
      uint32_t unowned = 0;  // Select, k == 0: bit j: packet first + j is here with no SA of slots
      // No short-circuit: the items' loads are independent and may all be in flight at once.
      for (uint32_t j = 0; j < uint32_t(kNumberItems); ++j) {
        const uint32_t i = first + j;
        if (i >= p.count()) break;
        const bool here = p.here(i);
        if constexpr (Select) {
          const uint32_t of = here ? esp::outbound_sa_of(p, i, v) : esp::kNoSa;
          mine |= uint32_t(here && of == sa) << j;
          if (k == 0 && here) {
            bool listed = false;
            for (uint32_t m = 0; m < slots.size(); ++m) listed |= slots[m] == of;
            unowned |= uint32_t(!listed) << j;
          }
        } else {
          const bool of_sa = p.result_word(i, kRecordSa) == sa;
          mine |= uint32_t(here && of_sa) << j;
        }
      }
      uint32_t before = 0, tile_total = 0;
      Scan(scan_storage).ExclusiveSum(uint32_t(__popc(mine)), before, tile_total);
      for (uint32_t j = 0; mine | unowned; ++j, mine >>= 1, unowned >>= 1) {
        const uint32_t i = first + j;
        if constexpr (Select) {
          if (unowned & 1u) esp::write_record(p.packet(i).results(), esp::EspRecord{});
        }
        if (!(mine & 1u)) continue;
        const uint64_t seq = next + before++;
        if constexpr (Select) {
          const bool exhausted = seq > esp::kLastSeq;
          esp::write_record(p.packet(i).results(),
                            esp::EspRecord{sa, exhausted ? 0 : uint32_t(seq),
                                           exhausted ? esp::kSeqExhausted : 0});
        } else if (seq > esp::kLastSeq) {
          p.set_result_word(i, kRecordFlags, p.result_word(i, kRecordFlags) | esp::kSeqExhausted);
        } else {
          p.set_result_word(i, kRecordSeq, uint32_t(seq));
        }
      }
      next += tile_total;
      __syncthreads();  // scan_storage is reused by the next tile
    }
    // An SA this batch does not use is left alone, not rewritten with the value read above.
    if (threadIdx.x == 0 && next != first_seq)
      state[sa].next_seq = next < esp::kLastSeq + 1 ? next : esp::kLastSeq + 1;
    __syncthreads();
  }
}

// The numbering pass over a batch, in blocks of the fewest threads (128 to 1024) whose tile
// holds the whole batch; larger batches take blocks of 1024 over several tiles. With `select`,
// the pass selects the packets' SAs too (kSelectInNumberingSas).
void launch_numbering(const NfPackets<>& p, IsoSpan<const uint32_t> slots,
                      IsoSpan<esp::SaState> state, const esp::EspView& v, bool select, int blocks,
                      cudaStream_t stream) {
  int threads = 128;
  while (threads < 1024 && uint64_t(threads) * kNumberItems < p.count()) threads *= 2;
  const dim3 grid(blocks);
  // Spelled out, one launch per instance: the kernel registry test finds them by name.
  switch (threads * 2 + int(select)) {
    case 128 * 2 + 0: launch_nf_kernel(number_kernel<128, false>, grid, dim3(128), 0, stream, p, slots, state, v); break;
    case 128 * 2 + 1: launch_nf_kernel(number_kernel<128, true>, grid, dim3(128), 0, stream, p, slots, state, v); break;
    case 256 * 2 + 0: launch_nf_kernel(number_kernel<256, false>, grid, dim3(256), 0, stream, p, slots, state, v); break;
    case 256 * 2 + 1: launch_nf_kernel(number_kernel<256, true>, grid, dim3(256), 0, stream, p, slots, state, v); break;
    case 512 * 2 + 0: launch_nf_kernel(number_kernel<512, false>, grid, dim3(512), 0, stream, p, slots, state, v); break;
    case 512 * 2 + 1: launch_nf_kernel(number_kernel<512, true>, grid, dim3(512), 0, stream, p, slots, state, v); break;
    default: launch_nf_kernel(number_kernel<1024, false>, grid, dim3(1024), 0, stream, p, slots, state, v); break;
  }
}

__global__ void replay_kernel(NfPackets<> p, IsoSpan<const uint32_t> slots,
                              IsoSpan<esp::SaState> state) {
  const uint32_t k = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x & 31;
  if (k >= slots.size()) return;
  const uint32_t sa = slots[k];
  esp::ReplayWindow window = state[sa].window;  // the same copy in every lane
  for (uint32_t base = 0; base < p.count(); base += 32) {
    const uint32_t i = base + lane;
    bool mine = false;
    uint32_t seq = 0;
    if (i < p.count() && p.passed(i)) {
      const esp::EspRecord rec = esp::read_record(p.results(i));
      mine = esp::decapsulated(rec) && rec.sa == sa;
      seq = rec.seq;
    }
    uint32_t mask = __ballot_sync(0xFFFFFFFFu, mine);
    bool replayed = false;
    while (mask) {
      const int j = __ffs(mask) - 1;
      const uint32_t s = __shfl_sync(0xFFFFFFFFu, seq, j);
      const bool ok = window.accept(s);
      if (int(lane) == j) replayed = !ok;
      mask &= mask - 1;
    }
    if (mine && replayed) p.drop_passed(i, IpsecDrop::esp_replay);
  }
  if (lane == 0) state[sa].window = window;
}

// collect_range()'s count on the device: packets this NF passed, per SA slot (bypassed ones, kNoSa,
// and the rest count nowhere; the host's sink slot is never reported).
struct IpsecCountSlot {
  uint32_t sas;
  __device__ bool operator()(const NfPackets<>& p, uint32_t i, uint32_t& slot) const {
    if (!p.reached(i) || p.dropped(i)) return false;
    slot = p.result_word(i, kRecordSa);
    return slot < sas;
  }
};

}  // namespace

void IpsecTables::upload() {
  table.upload_to_device();
  device_packets.allocate();
}

void IpsecGateway::prepare_gpu() {
  const_cast<IpsecTables&>(*tables_.pin().tables).upload();
  // Every slot fresh: sequence numbers from 1, empty windows (rewind() comes here too).
  device_state_.upload(std::vector<esp::SaState>(max_sas_, esp::SaState{}));
  if (!gpu_) gpu_.reset(new GpuState);
  gpu_->encap_lanes = debug_switches().ipsec_lanes;
  if (device_counting_ && !device_counts_) device_counts_ = std::make_unique<DeviceCounters>(max_sas_);
}

// A replaced version's SAs go once the streams that launched over it are done. The per-SA
// state needs no carrying over: it is one array by slot, and the next version's ordered passes
// queue behind the old one's on the same stream (the NF's ordering stream, or the lane's).
void IpsecGateway::retire(LiveSnapshot<IpsecTables>::Pinned old) {
  device_users_.wait(old.version);
  old.tables->device_packets.take(old.packets);
}

void IpsecGateway::prepare_gpu_lane(const GpuStream&) {
  // Nothing to make per lane: the aux stream's event comes with the SM partition
  // (GpuStream::aux_done), made before any persistent kernel starts.
}

void IpsecGateway::process_gpu(const BatchView& db, uint8_t position, const GpuStream& s) const {
  if (db.count == 0) return;
  // One SA table for the whole batch; its stream noted before the pin ends, so a live change
  // waits for this launch before it frees the table.
  const auto t = tables_.pin();
  device_users_.note(t.version, s.stream);
  t->device_packets.count(db, position, s, t.packets);
  t.count(s.packets);
  const esp::EspView v = view_of(t->table.device_ref());
  const uint8_t first_drop = first_drop_code<IpsecDrop>();
  const NfPackets<> packets = packets_at(db, position, first_drop);
  const auto rewritable = packets_at<PacketAccess::rewrite>(db, position, first_drop);
  const IsoSpan<const uint32_t> slots = t->table.device_slots();
  const uint32_t sa_count = uint32_t(slots.size());
  const int order_blocks = int((uint64_t(sa_count) * 32 + kOrderThreads - 1) / kOrderThreads);
  // Blocks stride over SAs; a bounded grid keeps a partition's other work schedulable.
  const int number_blocks = int(sa_count < 1024 ? sa_count : 1024);
  // A table without SAs still needs every record written (no SA): the selection kernel does it.
  const bool select_in_numbering = sa_count > 0 && sa_count <= kSelectInNumberingSas &&
                                   db.count <= kSelectInNumberingPackets;
  IsoSpan<esp::SaState> state = device_state_.span();


  std::lock_guard<std::mutex> lock(gpu_->m);
  // Runs `pass` after everything queued so far on the batch's stream and after the previous
  // batch's pass, and makes the batch's stream wait for it. A serial stream is already in
  // order. A stream of the primary context (the fused pipeline's) runs the pass itself between
  // a wait for the previous pass's event and its own record of it, so a batch recorded as a
  // CUDA graph keeps that order as event nodes (gpu::record_event); a lane's stream (a green
  // context) hands the batch to the NF's ordering stream and back.
  const bool in_place = s.serial || !s.aux_done;
  cudaStream_t order_stream = in_place ? s.stream : gpu_->order;
  auto ordered = [&](auto pass) {
    if (sa_count == 0) return;  // no SA: nothing to number or check
    if (s.serial) {
      pass();
      return;
    }
    if (in_place) {
      gpu::wait_event(s.stream, gpu_->done);
      pass();
      gpu::record_event(gpu_->done, s.stream);
      return;
    }
    // A stream records only events of its own context: a lane's (green context) stream brings
    // one (aux_done, unused without serial).
    cudaEvent_t ready = s.aux_done;
    gpu::record_event(ready, s.stream);
    gpu::wait_event(gpu_->order, ready);
    pass();
    gpu::record_event(gpu_->done, gpu_->order);
    gpu::wait_event(s.stream, gpu_->done);
  };

  if (direction_ == IpsecDirection::outbound) {
    int threads = s.threads_per_block;
    int blocks = int((db.count + threads - 1) / threads);
    if (s.max_blocks > 0 && blocks > s.max_blocks) blocks = s.max_blocks;
    if (s.serial && s.aux && s.aux_done && sa_count > 0) {
      // SA selection and numbering of this batch on the lane's aux stream, in batch order there,
      // so they overlap the previous batch's encryption on s.stream; the batch's own
      // encryption waits for them. (The batch's earlier stages completed before the pipeline
      // handed it to this NF, so nothing else needs waiting for.)
      if (!select_in_numbering)
        launch_nf_kernel(select_sa_kernel, dim3(blocks), dim3(threads), 0, s.aux, packets, v);
      launch_numbering(packets, slots, state, v, select_in_numbering, number_blocks, s.aux);
      gpu::record_event(s.aux_done, s.aux);
      gpu::wait_event(s.stream, s.aux_done);
    } else {
      if (!select_in_numbering)
        launch_nf_kernel(select_sa_kernel, dim3(blocks), dim3(threads), 0, s.stream, packets, v);
      ordered([&] {
        launch_numbering(packets, slots, state, v, select_in_numbering, number_blocks, order_stream);
      });
    }
    esp::PassedPerSa passed;  // outbound counts as it encrypts
    if (device_counts_) passed = {device_counts_->ref(), max_sas_};
    esp::launch_encapsulation(rewritable, v, s, gpu_->encap_lanes, passed);
  } else {
    esp::launch_decapsulation(rewritable, v, s);
    ordered([&] {
      launch_nf_kernel(replay_kernel, dim3(order_blocks), dim3(kOrderThreads), 0, order_stream,
                       packets, slots, state);
    });
  }
  // Inbound counts after every pass that may drop (s.stream waits for the ordered ones).
  if (device_counts_ && direction_ == IpsecDirection::inbound)
    launch_count_packets(packets, device_counts_->ref(), IpsecCountSlot{max_sas_}, s);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(select_sa_kernel);
GPUNFV_REGISTER_KERNEL(number_kernel<128, false>);
GPUNFV_REGISTER_KERNEL(number_kernel<256, false>);
GPUNFV_REGISTER_KERNEL(number_kernel<512, false>);
GPUNFV_REGISTER_KERNEL(number_kernel<1024, false>);
GPUNFV_REGISTER_KERNEL(number_kernel<128, true>);
GPUNFV_REGISTER_KERNEL(number_kernel<256, true>);
GPUNFV_REGISTER_KERNEL(number_kernel<512, true>);
GPUNFV_REGISTER_KERNEL(replay_kernel);
GPUNFV_REGISTER_KERNEL(count_packets_kernel<IpsecCountSlot>);

}  // namespace gpunfv
