#include "nf/ipsec/esp_crypto.h"

#include "gpu/kernel_registry.h"
#include "nf/nf_kernel.h"
#include "nf/run_per_packet.h"

namespace gpunfv::esp {

namespace {

// A packet's crypto is thousands of instructions on one thread, so the per-packet kernels use
// small blocks (a batch of 2048 packets spreads over 16 SMs, not 8 as with 256 threads). Each
// block stages the AES table's 32 lane copies (32 KiB of shared memory, aes::LaneTable); at 128
// threads the registers (about 80 a thread) allow 6 blocks an SM, 24 warps.
constexpr int kCryptoThreads = 128;
constexpr uint32_t kWarpLanes = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// Largest outbound batch whose packets share lanes (encap_lanes).
constexpr uint32_t kEncapLaneBatch = 1024;

__device__ void stage_table(uint32_t* lanes) {
  const uint32_t* te = aes::table();
  for (uint32_t k = threadIdx.x; k < aes::LaneTable::kWords; k += blockDim.x)
    lanes[k] = te[k / aes::LaneTable::kLanes];
  __syncthreads();
}

// Adds packet i to its SA's count where `on` (it passed); every lane of the warp calls it.
__device__ GPUNFV_FORCEINLINE void count_passed(const PassedPerSa& c, uint32_t sa, bool on) {
  c.counts.add_one(on ? sa : 0, on && sa < c.sas);
}

// The ESP per-packet step (Encapsulate or Decapsulate), a thread a packet. Warp-uniform steps
// (blocks are whole warps), as counting's warp-wide adds need every lane.
template <template <typename> class Step>
__global__ void __launch_bounds__(kCryptoThreads)
esp_crypto_kernel(NfPackets<PacketAccess::rewrite> p, EspView v, PassedPerSa passed, NodeExit exit) {
  __shared__ uint32_t lanes[aes::LaneTable::kWords];
  stage_table(lanes);
  const Step<aes::LaneTable> step{aes::LaneTable{lanes + threadIdx.x % aes::LaneTable::kLanes}};
  const bool counting = !passed.counts.counts.empty();  // kernel-uniform
  for (uint32_t base = blockIdx.x * blockDim.x; base < p.count(); base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    const bool here = i < p.count() && p.here(i);
    NfVerdict r = DropReason::none;
    if (here) {
      r = verdict_of(v, step, p.packet(i));
      p.finish(i, r);
    }
    if (counting) count_passed(passed, here && r.passes() ? p.result_word(i, kRecordSa) : 0, here && r.passes());
    exit.send_on(p, i, here);
  }
}

// Outbound encapsulation with a group of G lanes per packet, for small batches, where a
// packet's thousands of dependent instructions on one thread set the kernel's time (40 us on
// an H200 for 8,192 64-byte frames, one block of 4 warps an SM, each warp mostly waiting on
// its own instructions). The group's
// first lane runs begin() and end() (the ICV is one chain of SHA-1 compressions); the AES
// blocks, most of a packet's instructions, go to the group's lanes, G at a time: each lane
// leaves its keystream block in shared memory and the first lane XORs them in, in order (two
// lanes writing one packet's neighbouring blocks would share the aligned word between them).
template <uint32_t G>
__global__ void __launch_bounds__(kCryptoThreads)
esp_encap_lanes_kernel(NfPackets<PacketAccess::rewrite> p, EspView v, PassedPerSa passed, NodeExit exit) {
  __shared__ uint32_t lanes[aes::LaneTable::kWords];
  __shared__ uint32_t stream[kCryptoThreads][4];  // each thread's keystream block of the round
  stage_table(lanes);
  const EncapsulateWith<aes::LaneTable> step{aes::LaneTable{lanes + threadIdx.x % aes::LaneTable::kLanes}};
  constexpr uint32_t kGroups = kWarpLanes / G;  // packets a warp takes at once
  const uint32_t lane = threadIdx.x % kWarpLanes, sub = lane % G, leader = lane - sub;
  const uint32_t warp = threadIdx.x / kWarpLanes, warps = blockDim.x / kWarpLanes;
  const unsigned group_mask = G == kWarpLanes ? kFullMask : ((1u << G) - 1u) << leader;
  const uint32_t first_thread = threadIdx.x - sub;  // the group's first lane, in the block
  const uint32_t count = p.count();
  const bool counting = !passed.counts.counts.empty();  // kernel-uniform
  // Warp-uniform: every lane steps through the same bases and rounds.
  for (uint32_t base = (blockIdx.x * warps + warp) * kGroups; base < count;
       base += gridDim.x * warps * kGroups) {
    const uint32_t i = base + lane / G;
    const bool here = i < count && p.here(i);
    IsoFaultScope fault;
    EncapLayout l;
    NfVerdict r = DropReason::none;
    if (here && sub == 0) r = step.begin(v, p.packet(i), l);
    // What the group's other lanes need of the layout: they read the SA and the staged table,
    // never the packet, which only the first lane touches.
    l.proceed = __shfl_sync(kFullMask, l.proceed, leader);
    l.sa = __shfl_sync(kFullMask, l.sa, leader);
    l.seq = __shfl_sync(kFullMask, l.seq, leader);
    l.ct_len = __shfl_sync(kFullMask, l.ct_len, leader);
    const uint32_t blocks = here && l.proceed ? aes::ctr_blocks(l.ct_len) : 0;
    for (uint32_t round = 0; __any_sync(kFullMask, round * G < blocks); ++round) {
      const uint32_t block = round * G + sub + 1;
      if (block <= blocks) step.keystream(v, l, block, stream[threadIdx.x]);
      __syncwarp();
      if (sub == 0 && round * G < blocks) {
        IsoSpan<uint8_t> ct = p.packet(i).slot().subspan(l.ct, l.ct_len);
        for (uint32_t k = 0; k < G && round * G + k < blocks; ++k)
          aes::xor_keystream(ct, round * G + k + 1, stream[first_thread + k]);
      }
      __syncwarp();  // the group's rows of `stream` are written again next round
    }
    if (here && sub == 0 && l.proceed) r = step.end(v, p.packet(i), l);
    // A lane of the group that reached outside the NF's memory faults the packet.
    const bool faulted = (__ballot_sync(kFullMask, fault.faulted()) & group_mask) != 0;
    if (faulted) r = DropReason::nf_isolation_fault;
    if (here && sub == 0) p.finish(i, r);
    // Bypassed packets (not encrypted) have no SA: they count nowhere.
    if (counting) count_passed(passed, l.sa, here && sub == 0 && l.proceed && r.passes());
    exit.send_on(p, i, here && sub == 0);
  }
}

// Lanes per packet for an outbound batch of `count` packets: 8 for a batch of up to
// kEncapLaneBatch packets, else 1. Lanes idle while their packet's first lane hashes, which a
// loaded GPU (large batches) pays for; S_d at half its capacity (batches of about 2,000
// packets) did no better with 2 or 4 lanes than with one.
uint32_t encap_lanes(uint32_t count, uint32_t want) {
  if (want != 0) return want;
  return count <= kEncapLaneBatch ? 8 : 1;
}

int crypto_blocks(uint64_t threads, const GpuStream& s) {
  int blocks = int((threads + kCryptoThreads - 1) / kCryptoThreads);
  if (s.max_blocks > 0 && blocks > s.max_blocks) blocks = s.max_blocks;
  return blocks;
}

}  // namespace

void launch_encapsulation(const NfPackets<PacketAccess::rewrite>& p, const EspView& v,
                          const GpuStream& s, uint32_t want_lanes, const PassedPerSa& passed) {
  if (p.count() == 0) return;
  const uint32_t lanes = encap_lanes(p.count(), want_lanes);
  const dim3 grid(crypto_blocks(uint64_t(p.count()) * lanes, s)), block(kCryptoThreads);
  const NodeExit exit = take_node_exit(s);  // encapsulation finishes the NF's packets
  switch (lanes) {
    case 1: launch_nf_kernel(esp_crypto_kernel<EncapsulateWith>, grid, block, 0, s.stream, p, v, passed, exit); break;
    case 2: launch_nf_kernel(esp_encap_lanes_kernel<2>, grid, block, 0, s.stream, p, v, passed, exit); break;
    case 4: launch_nf_kernel(esp_encap_lanes_kernel<4>, grid, block, 0, s.stream, p, v, passed, exit); break;
    default: launch_nf_kernel(esp_encap_lanes_kernel<8>, grid, block, 0, s.stream, p, v, passed, exit); break;
  }
}

void launch_decapsulation(const NfPackets<PacketAccess::rewrite>& p, const EspView& v,
                          const GpuStream& s) {
  if (p.count() == 0) return;
  launch_nf_kernel(esp_crypto_kernel<DecapsulateWith>, dim3(crypto_blocks(p.count(), s)),
                   dim3(kCryptoThreads), 0, s.stream, p, v, PassedPerSa{},
                   NodeExit{});  // the replay pass after it may still drop
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(esp_crypto_kernel<EncapsulateWith>);
GPUNFV_REGISTER_KERNEL(esp_crypto_kernel<DecapsulateWith>);
GPUNFV_REGISTER_KERNEL(esp_encap_lanes_kernel<2>);
GPUNFV_REGISTER_KERNEL(esp_encap_lanes_kernel<4>);
GPUNFV_REGISTER_KERNEL(esp_encap_lanes_kernel<8>);

}  // namespace gpunfv::esp
