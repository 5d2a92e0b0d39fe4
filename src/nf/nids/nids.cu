// The NIDS's GPU backend: a group of G lanes of a warp per packet (G = 32: a warp per packet;
// G = 8: four packets per warp). The payload is cut into G chunks (nids_chunk), one per lane;
// each lane runs the DFA over its chunk and on past its end while an occurrence that started
// in the chunk can still be in progress (at most the longest pattern minus one byte:
// AhoCorasickRef::scan_range), so every occurrence is found by exactly one lane. Matched
// patterns meet in the group's bitmap in shared memory (atomicOr), and the bitmap words they
// touch in a summary beside it (a bit per word); then the group's lanes split the touched
// words, fire the rules anchored at the patterns they hold (each rule is anchored at one
// pattern, so no rule is seen twice), keep their 7 lowest rule indices, and a merge across the
// group picks the packet's 7 lowest and the total: the same record as the CPU's single pass,
// whatever G is. The summary keeps a packet's rule work and its clearing to the few words it
// touched: with every ET Open rule file the bitmap has 849 words, and visiting each was half
// the kernel's time at 64 B.
//
// Why groups: a payload gets at most len / min_chunk lanes (nids_chunk: 32 bytes, 16 for batches
// of up to 1,024 packets), so a small packet (an ESP packet of a 64-byte frame has ~80 payload
// bytes: 3 lanes of 32 bytes) left most of a warp idle when a warp took one packet. G is chosen
// at launch (process_gpu); GPUNFV_NIDS_LANES=4|8|16|32 overrides it.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "gpu/cuda_check.h"
#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"
#include "gpu/device_counters.h"
#include "nf/nf_kernel.h"
#include "core/iso_walk.h"
#include "nf/nids/nids.h"
#include "core/debug_switches.h"

namespace gpunfv {

namespace {

constexpr uint32_t kLanes = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr uint32_t kDefaultGroupLanes = 8;
constexpr size_t kDefaultSharedLimit = 48 * 1024;
// Shared memory the kernel holds besides its bitmaps: the refusal notes and a spare word.
constexpr size_t kStaticShared = kIsoNoteBytes + 16;

// Reductions over the G lanes of a group (xor offsets below G stay inside an aligned group);
// every lane of the warp takes part.
template <uint32_t G>
__device__ uint32_t group_min(uint32_t v) {
  for (uint32_t o = G / 2; o > 0; o /= 2) v = min(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

template <uint32_t G>
__device__ uint32_t group_sum(uint32_t v) {
  for (uint32_t o = G / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// The packet's record from its lanes' partial ones: the lanes fired disjoint sets of rules,
// so the lowest 7 overall are among the lanes' lowest 7, taken one by one with a group minimum
// (a lane's list is sorted, kNidsNoRule past its kept rules). A fixed number of rounds (no early
// exit), so every lane of the warp shuffles together.
template <uint32_t G>
__device__ NidsResult group_merge(NidsResult mine) {
  NidsResult all;
  all.fired = group_sum<G>(mine.fired);
  for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) {
    const uint32_t head = mine.rules[0];
    const uint32_t m = group_min<G>(head);
    mine.pop_front(m != kNidsNoRule && head == m);
    all.rules[k] = m;
  }
  return all;
}

// The summary of a group's bitmap: a word per lane of the group. Bitmap word w is lane w % G's
// (a stride of G over the words) and bit (w / G) % 32 of that lane's summary word, so a lane
// finds the words it takes in its own summary word and is alone to read and clear it once the
// scan is over. Up to 32 G bitmap words (8192 patterns with 8 lanes) a bit names one word;
// past that, a bit stands for every 32 G-th word from it, all visited.
template <uint32_t G>
__device__ GPUNFV_FORCEINLINE uint32_t summary_bit(uint32_t w) { return 1u << (w / G % 32); }

// One lane's part of packet i (here: the packet waits at this NF): it scans its chunk of the
// payload into the group's bitmap (and its summary), then fires the rules anchored at the
// matched patterns of the words it takes. Returns the lane's partial record. Every lane of the
// warp calls it together.
template <uint32_t G>
__device__ NidsResult scan_and_fire(const NfPackets<>& packets, const NidsView& v, uint32_t i,
                                    bool here, IsoSpan<uint32_t> bits, IsoSpan<uint32_t> summary,
                                    unsigned group_mask, uint32_t min_chunk) {
  const uint32_t sub = threadIdx.x % G;
  // Indexed by the pattern ids the automaton gives, walked (an id past the bitmap is refused
  // and reads its last word; an empty bitmap is the spare word, in shared memory too).
  __shared__ uint32_t spare_word[1];
  IsoWalk<uint32_t, 0> bitmap(bits, spare_word);
  bool any = false;
  if (here) {
    const PacketReader p = packets.packet(i);
    IsoSpan<const uint8_t> frame = p.frame();
    const PayloadRange pr = nids_payload(frame, p.headers());
    IsoSpan<const uint8_t> payload = frame.subspan(pr.offset, pr.length);
    const NidsChunk c = nids_chunk(pr.length, G, sub, min_chunk);
    v.matcher.ac.scan_range(payload, c.begin, c.end, [&](uint32_t pat, uint32_t) {
      const uint32_t w = pat >> 5;
      // The lane that sets a word's first bit marks the word (shared atomics are ordered).
      if (atomicOr(&bitmap.at(w), 1u << (pat & 31)) == 0)
        atomicOr(&summary[w % G], summary_bit<G>(w));
      any = true;
    });
  }

  NidsResult mine;
  const unsigned hits = __ballot_sync(kFullMask, any);
  if (hits == 0) return mine;  // warp-uniform
  __syncwarp();
  const bool group_hit = (hits & group_mask) != 0;
  if (group_hit) {
    RuleMatcherRef::Walk rules = v.matcher.walk();
    auto is_matched = [&](uint32_t q) { return ((bitmap.at(q >> 5) >> (q & 31)) & 1u) != 0; };
    for (uint32_t d = summary[sub]; d != 0; d &= d - 1) {
      for (uint32_t w = uint32_t(__ffs(int(d)) - 1) * G + sub; w < bits.size(); w += 32 * G) {
        for (uint32_t x = bitmap.at(w); x != 0; x &= x - 1) {
          const uint32_t q = w * 32 + uint32_t(__ffs(int(x)) - 1);
          v.matcher.rules_fired_by(rules, q, is_matched, [&](uint32_t r) { mine.add(r); });
        }
      }
    }
  }
  // Cleared once every lane has fired (is_matched reads any word).
  __syncwarp();
  if (group_hit) {
    for (uint32_t d = summary[sub]; d != 0; d &= d - 1)
      for (uint32_t w = uint32_t(__ffs(int(d)) - 1) * G + sub; w < bits.size(); w += 32 * G)
        bitmap.at(w) = 0;
    summary[sub] = 0;
  }
  __syncwarp();
  return mine;
}

// Nids::count()'s device twin, kept as each packet finishes: packets alerted, alerts beyond the
// kept ones, kept alerts, and per kept rule (the version's own indices) its counter; slots as
// NidsTables::device_counts. An empty `counts` counts nothing. Counted in the scanning kernel
// rather than by a kernel of its own after it: a launch fewer per batch, which for small
// batches is time on the GPU and on the issuing thread.
struct NidsDeviceCount {
  DeviceCountersRef counts;
  uint32_t rules = 0;
};

// Adds a group's packet record `r` (held by lane `lead`; every lane of the warp calls it).
__device__ GPUNFV_FORCEINLINE void count_record(const NidsDeviceCount& c, const NidsResult& r, bool lead) {
  const uint32_t fired = lead ? r.fired : 0;
  const uint32_t kept = fired < kNidsRulesPerPacket ? fired : kNidsRulesPerPacket;
  c.counts.add_sum(c.rules + 1, fired != 0);
  c.counts.add_sum(c.rules + 2, fired - kept);
  c.counts.add_sum(c.rules + 3, kept);
  // Fixed indices into the record (registers, NidsResult::add says why).
#pragma unroll
  for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) {
    if (!__any_sync(kFullMask, k < kept)) break;
    const uint32_t rule = k < kept ? r.rules[k] : 0;
    c.counts.add_one(rule < c.rules ? rule : c.rules, k < kept);
  }
}

// Full occupancy whatever the block size: at most 32 registers, in the checked build as in the
// unchecked one. The scan is a chain of dependent loads, and its speed is the warps an SM
// holds; a register more would cost a quarter of them.
template <uint32_t G>
__global__ void __launch_bounds__(1024, 2) nids_kernel(NfPackets<> packets, NidsView v, uint32_t words,
                                                       uint32_t min_chunk, NidsDeviceCount counting,
                                                       NodeExit exit) {
  extern __shared__ uint32_t shared[];
  constexpr uint32_t kGroups = kLanes / G;  // packets a warp takes at once
  const uint32_t lane = threadIdx.x % kLanes;
  const uint32_t sub = lane % G;    // lane within the packet's group
  const uint32_t group = lane / G;
  const uint32_t warp = threadIdx.x / kLanes;
  const uint32_t warps = blockDim.x / kLanes;
  const unsigned group_mask = G == kLanes ? kFullMask : ((1u << G) - 1u) << (group * G);
  // A warp's shared memory: its groups' bitmaps, then the groups' summaries (G words each).
  uint32_t* const warp_shared = shared + size_t(warp) * (kGroups * words + kLanes);
  const IsoSpan<uint32_t> bits(warp_shared + group * words, words);
  const IsoSpan<uint32_t> summary(warp_shared + kGroups * words + group * G, G);
  for (uint32_t w = sub; w < words; w += G) bits[w] = 0;
  summary[sub] = 0;
  __syncwarp();

  // The loop is warp-uniform (every lane of a warp steps through the same bases); a group
  // whose packet is past the batch or not at this NF just has nothing to scan.
  const uint32_t stride = gridDim.x * warps * kGroups;
  IsoFaultScope fault;
  const uint32_t count = packets.count();
  for (uint32_t base = (blockIdx.x * warps + warp) * kGroups; base < count; base += stride) {
    const uint32_t i = base + group;
    const bool here = i < count && packets.here(i);
    const NidsResult mine = scan_and_fire<G>(packets, v, i, here, bits, summary, group_mask, min_chunk);
    NidsResult all = group_merge<G>(mine);
    // A lane of the group that reached outside the NF's memory faults the packet (taken before
    // counting, whose adds land on other groups' lanes).
    const bool faulted = (__ballot_sync(kFullMask, fault.faulted()) & group_mask) != 0;
    if (!counting.counts.counts.empty()) count_record(counting, all, sub == 0 && here);  // kernel-uniform
    all.rebase(v.rule_base);
    if (sub == 0 && here) {
      all.store(packets.results(i));
      packets.finish(i, faulted ? NfVerdict(DropReason::nf_isolation_fault) : nids_verdict(v, all));
    }
    exit.send_on(packets, i, sub == 0 && here);
  }
}

uint32_t bitmap_words(uint32_t patterns) { return (patterns + 31) / 32; }

// The smallest chunk a lane scans (nids_chunk) for a batch of `count` packets: smaller for
// small batches, which leave the GPU idle but for each packet's chain of dependent table reads
// (shorter chunks, more lanes a packet, a shorter chain), the default for large ones, where the
// run-on past each chunk's end is work taken from other packets. `want` (GPUNFV_NIDS_CHUNK)
// overrides.
constexpr uint32_t kSmallBatch = 1024;
uint32_t chunk_bytes(uint32_t count, uint32_t want) {
  if (want != 0) return want;
  return count <= kSmallBatch ? kNidsSmallBatchChunk : kNidsMinChunk;
}

// A warp's shared memory: a bitmap per packet it holds, and a summary word per lane.
size_t warp_shared_bytes(uint32_t patterns, uint32_t lanes) {
  return (size_t(bitmap_words(patterns)) * (kLanes / lanes) + kLanes) * sizeof(uint32_t);
}

// Launches the kernel for `lanes` lanes per packet (the template's instances).
template <typename... Args>
void launch_nids(uint32_t lanes, dim3 grid, dim3 block, size_t shared, cudaStream_t st, Args... a) {
  switch (lanes) {
    case 4: launch_nf_kernel(nids_kernel<4>, grid, block, shared, st, a...); break;
    case 8: launch_nf_kernel(nids_kernel<8>, grid, block, shared, st, a...); break;
    case 16: launch_nf_kernel(nids_kernel<16>, grid, block, shared, st, a...); break;
    default: launch_nf_kernel(nids_kernel<32>, grid, block, shared, st, a...); break;
  }
}

void allow_shared(int bytes) {
  gpu::set_max_dynamic_shared(reinterpret_cast<const void*>(nids_kernel<4>), bytes);
  gpu::set_max_dynamic_shared(reinterpret_cast<const void*>(nids_kernel<8>), bytes);
  gpu::set_max_dynamic_shared(reinterpret_cast<const void*>(nids_kernel<16>), bytes);
  gpu::set_max_dynamic_shared(reinterpret_cast<const void*>(nids_kernel<32>), bytes);
}

}  // namespace

void Nids::upload(NidsTables& t) {
  t.matcher.upload_to_device();
  t.device_packets.allocate();
  t.device_view = NidsView{t.matcher.device_ref(), result_offset(), drop_, t.rule_base};
  // One warp's bitmaps (one per packet it holds) must fit a block's shared memory; past the
  // default 48 KiB the kernel opts in to what the device allows. With a large rule set (about
  // 100K patterns and more) there is room for one bitmap per warp only: a warp per packet.
  const uint32_t patterns = t.matcher.automaton().pattern_count();
  const int optin = gpu::max_shared_per_block_optin() - int(kStaticShared);
  uint32_t lanes = kDefaultGroupLanes;
  if (const uint32_t want = debug_switches().nids_lanes) lanes = want;
  auto per_warp = [&] { return warp_shared_bytes(patterns, lanes); };
  while (lanes < kLanes && per_warp() > size_t(optin)) lanes *= 2;
  if (per_warp() > size_t(optin))
    throw std::length_error("nids " + name() + ": " + std::to_string(patterns) +
                            " patterns need " + std::to_string(per_warp()) +
                            " B of bitmaps per warp, more shared memory than the device has");
  t.group_lanes = lanes;
  t.chunk_bytes = debug_switches().nids_chunk;
  t.shared_limit = kDefaultSharedLimit - kStaticShared;
  if (per_warp() > t.shared_limit) {
    allow_shared(optin);
    t.shared_limit = size_t(optin);
  }
  if (device_counting_ && !t.device_counts) {  // last: the version is sure to be used
    t.device_counts = std::make_shared<DeviceCounters>(t.rules.rules.size() + 4);
    std::lock_guard<std::mutex> lk(device_counts_m_);
    device_counts_.emplace_back(t.rule_base, t.device_counts);
  }
}

void Nids::process_gpu(const BatchView& device_batch, uint8_t position,
                       const GpuStream& stream) const {
  if (device_batch.count == 0) return;
  // One version for the whole batch; its stream noted before the pin ends, so a replacement
  // waits for this launch before the version's device memory goes.
  const auto t = tables_.pin();
  device_users_.note(t.version, stream.stream);
  const uint32_t patterns = t->matcher.automaton().pattern_count();
  const uint32_t lanes = t->group_lanes;
  const uint32_t per_warp_packets = kLanes / lanes;
  const size_t per_warp = warp_shared_bytes(patterns, lanes);
  int warps = std::max(1, stream.threads_per_block / int(kLanes));
  warps = std::min<int>(warps, std::max<size_t>(1, t->shared_limit / per_warp));
  const uint32_t per_block = uint32_t(warps) * per_warp_packets;
  int blocks = int((device_batch.count + per_block - 1) / per_block);
  if (stream.max_blocks > 0) blocks = std::min(blocks, stream.max_blocks);
  t->device_packets.count(device_batch, position, stream, t.packets);
  NidsView view = t->device_view;
  view.result_offset = result_offset();  // set by the batch planner, possibly after prepare()
  const NfPackets<> packets = packets_at(device_batch, position, first_drop_code<NidsDrop>());
  NidsDeviceCount count;
  if (t->device_counts) count = {t->device_counts->ref(), uint32_t(t->rules.rules.size())};
  launch_nids(lanes, dim3(blocks), dim3(warps * kLanes), warps * per_warp, stream.stream, packets,
              view, bitmap_words(patterns), chunk_bytes(device_batch.count, t->chunk_bytes), count,
              take_node_exit(stream));
  t.count(stream.packets);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(nids_kernel<4>);
GPUNFV_REGISTER_KERNEL(nids_kernel<8>);
GPUNFV_REGISTER_KERNEL(nids_kernel<16>);
GPUNFV_REGISTER_KERNEL(nids_kernel<32>);

}  // namespace gpunfv
