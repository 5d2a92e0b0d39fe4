// The NIDS's GPU backend: a warp per packet. The payload is cut into 32 chunks, one per lane;
// each lane runs the DFA over its chunk and on past its end while an occurrence that started in
// the chunk can still be in progress (at most the longest pattern minus one byte:
// AhoCorasickRef::scan_range), so every occurrence is found by exactly one lane. Matched
// patterns meet in the warp's bitmap in shared memory (atomicOr); then the lanes split the
// bitmap's words, fire the rules anchored at the patterns they hold (each rule is anchored at
// one pattern, so no rule is seen twice), keep their 7 lowest rule indices, and a warp merge
// picks the packet's 7 lowest and the total: the same record as the CPU's single pass.
#include <algorithm>
#include <stdexcept>

#include "gpu/cuda_check.h"
#include "nf/nids/nids.h"

namespace gpunfv {

namespace {

constexpr uint32_t kLanes = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// A lane gets at least this many bytes: short payloads use fewer lanes instead of 32 slivers
// that would each pay the run-on past their end.
constexpr uint32_t kMinChunk = 32;
constexpr size_t kDefaultSharedLimit = 48 * 1024;

__device__ uint32_t warp_min(uint32_t v) {
  for (int o = kLanes / 2; o > 0; o /= 2) v = min(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

__device__ uint32_t warp_sum(uint32_t v) {
  for (int o = kLanes / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// The packet's record from the lanes' partial ones: the lanes fired disjoint sets of rules,
// so the lowest 7 overall are among the lanes' lowest 7, taken one by one with a warp minimum.
__device__ NidsResult warp_merge(const NidsResult& mine) {
  NidsResult all;
  all.fired = warp_sum(mine.fired);
  const uint32_t kept = mine.kept();
  uint32_t next = 0;
  for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) {
    const uint32_t head = next < kept ? mine.rules[next] : kNidsNoRule;
    const uint32_t m = warp_min(head);
    if (m == kNidsNoRule) break;
    if (head == m) ++next;
    all.rules[k] = m;
  }
  return all;
}

__global__ void nids_kernel(BatchView b, uint8_t position, NidsView v, uint32_t words) {
  extern __shared__ uint32_t shared[];
  const uint32_t lane = threadIdx.x % kLanes;
  const uint32_t warp = threadIdx.x / kLanes;
  const uint32_t warps = blockDim.x / kLanes;
  IsoSpan<uint32_t> bits(shared + size_t(warp) * words, words);
  for (uint32_t w = lane; w < words; w += kLanes) bits[w] = 0;
  __syncwarp();

  // Every lane of a warp works on the same packet, so all branches below are warp-uniform
  // except inside the scans.
  for (uint32_t i = blockIdx.x * warps + warp; i < b.count; i += gridDim.x * warps) {
    if (b.verdict[i] != static_cast<uint8_t>(DropReason::none) || b.next_nf[i] != position)
      continue;
    PacketRef p(b, i);
    IsoSpan<const uint8_t> frame = p.frame();
    const PayloadRange pr = nids_payload(frame, p.headers());
    IsoSpan<const uint8_t> payload = frame.subspan(pr.offset, pr.length);
    const uint32_t chunk = max(kMinChunk, (pr.length + kLanes - 1) / kLanes);
    const uint32_t begin = min(lane * chunk, pr.length);
    const uint32_t end = min(begin + chunk, pr.length);

    bool any = false;
    v.matcher.ac.scan_range(payload, begin, end, [&](uint32_t pat, uint32_t) {
      atomicOr(&bits[pat >> 5], 1u << (pat & 31));
      any = true;
    });

    NidsResult mine;
    if (__any_sync(kFullMask, any)) {
      __syncwarp();
      auto is_matched = [&](uint32_t q) { return ((bits[q >> 5] >> (q & 31)) & 1u) != 0; };
      for (uint32_t w = lane; w < words; w += kLanes) {
        for (uint32_t x = bits[w]; x != 0; x &= x - 1) {
          const uint32_t q = w * 32 + uint32_t(__ffs(int(x)) - 1);
          v.matcher.rules_fired_by(q, is_matched, [&](uint32_t r) { mine.add(r); });
        }
      }
      __syncwarp();
      for (uint32_t w = lane; w < words; w += kLanes)
        if (bits[w] != 0) bits[w] = 0;
      __syncwarp();
    }
    const NidsResult all = warp_merge(mine);
    if (lane == 0) {
      all.store(p.results(v.result_offset, kNidsResultBytes));
      const DropReason r = nids_verdict(v, all);
      if (r == DropReason::none)
        b.next_nf[i] = static_cast<uint8_t>(position + 1);
      else
        b.verdict[i] = static_cast<uint8_t>(r);
    }
  }
}

size_t bitmap_bytes(uint32_t patterns) { return size_t((patterns + 31) / 32) * sizeof(uint32_t); }

}  // namespace

void Nids::prepare_gpu() {
  matcher_.upload_to_device();
  device_view_ = NidsView{matcher_.device_ref(), result_offset(), drop_};
  // One warp's bitmap must fit a block's shared memory; past the default 48 KiB (about 393K
  // patterns) the kernel opts in to what the device allows.
  const size_t need = bitmap_bytes(matcher_.automaton().pattern_count());
  gpu_shared_limit_ = kDefaultSharedLimit;
  if (need > kDefaultSharedLimit) {
    int device = 0, optin = 0;
    GPUNFV_CUDA(cudaGetDevice(&device));
    GPUNFV_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (need > size_t(optin))
      throw std::runtime_error("nids " + name() + ": " +
                               std::to_string(matcher_.automaton().pattern_count()) +
                               " patterns need a " + std::to_string(need) +
                               " B bitmap per warp, more shared memory than the device has");
    GPUNFV_CUDA(cudaFuncSetAttribute(nids_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     optin));
    gpu_shared_limit_ = size_t(optin);
  }
}

void Nids::process_gpu(const BatchView& device_batch, uint8_t position,
                       const GpuStream& stream) const {
  if (device_batch.count == 0) return;
  const uint32_t patterns = matcher_.automaton().pattern_count();
  const size_t per_warp = bitmap_bytes(patterns);
  int warps = std::max(1, stream.threads_per_block / int(kLanes));
  warps = std::min<int>(warps, std::max<size_t>(1, gpu_shared_limit_ / per_warp));
  int blocks = int((device_batch.count + warps - 1) / warps);
  if (stream.max_blocks > 0) blocks = std::min(blocks, stream.max_blocks);
  NidsView view = device_view_;
  view.result_offset = result_offset();  // set by the batch planner, possibly after prepare()
  nids_kernel<<<blocks, warps * kLanes, warps * per_warp, stream.stream>>>(
      device_batch, position, view, uint32_t(per_warp / sizeof(uint32_t)));
  GPUNFV_CUDA(cudaGetLastError());
}

}  // namespace gpunfv
