// SM partitions: G-NET's spatial sharing (NSDI'18, section 5.1) with CUDA green contexts. Each
// partition owns a disjoint set of SMs and a stream whose kernels run only there. Where green
// contexts are unavailable (driver older than CUDA 12.4, a GPU without them, use_green=false)
// a partition is a stream in the primary context with G-NET's cap: at most `sms` blocks per
// launch (GpuStream::max_blocks), one block per SM while the GPU spreads blocks.
//
// Threads: a kernel launched with <<<>>> on partition.stream lands on its SMs when the
// launching thread called make_current() first (and after any cudaSetDevice, which makes the
// primary context current again). Device memory from cudaMalloc in the primary context is
// usable in every partition (green contexts share its address space).
//
// The driver API is reached through cudaGetDriverEntryPointByVersion, so binaries do not link
// libcuda and still start where no driver is installed (CI).
//
// Errors: SmPartitions throws GpuError (gpu/cuda_check.h) when the SMs asked for exceed the
// device, when no device is present, or when a driver call fails (naming the call).
#pragma once

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include <string>
#include <vector>

struct CUctx_st;
struct CUgreenCtx_st;

namespace gpunfv {

struct SmInfo {
  int total_sms = 0;
  int min_sms = 1;    // smallest partition (green contexts: minSmPartitionSize)
  int align_sms = 1;  // partition sizes step by this (smCoscheduledAlignment)
  bool green_contexts = false;
  std::string why_not;  // why green contexts are unavailable (empty when they are)
};
SmInfo query_sm_info(int device = 0);

struct SmPartition {
  int sms = 0;                 // SMs this partition owns (0 = whole GPU, shared)
  bool green = false;          // backed by a green context
  cudaStream_t stream = nullptr;
  // A second stream on the same SMs: an NF's ordered pass for the next batch can run there
  // beside the per-packet work of the previous one (GpuStream::aux).
  cudaStream_t aux_stream = nullptr;
  cudaEvent_t aux_done = nullptr;  // made in this partition's context, for stream -> aux order
  int max_blocks = 0;          // fallback cap on blocks per launch (0 = none)
  // Makes the green context current on the calling thread; otherwise the device's primary
  // context (so a thread can move between partitions).
  void make_current() const;

  CUctx_st* context = nullptr;  // the green context as a CUcontext (green only)
  CUctx_st* primary = nullptr;  // the device's primary context
  int device = 0;
};

class SmPartitions {  // owning: destroys streams and green contexts
 public:
  // One partition per entry; entries > 0 get disjoint SM sets rounded up to the device's
  // granularity; 0 = whole GPU (no green context). With green contexts, one entry may ask for
  // a count off the granularity (say 68 where partitions step 8, 16, ...): it is built last
  // and gets every SM the others leave, at least its count. That is how a plan hands the SMs
  // below one partition step to an NF (132 = 8 + 8 + 48 + 68 on an H200). Throws GpuError if
  // the sum exceeds the device, or if two entries are off the granularity.
  explicit SmPartitions(const std::vector<int>& sms, bool use_green = true, int device = 0);
  ~SmPartitions();
  SmPartitions(const SmPartitions&) = delete;
  SmPartitions& operator=(const SmPartitions&) = delete;

  size_t size() const { return parts_.size(); }
  const SmPartition& operator[](size_t i) const { return parts_[i]; }
  std::string describe() const;
  const SmInfo& info() const { return info_; }

 private:
  void release();

  SmInfo info_;
  int device_ = 0;
  CUctx_st* primary_ = nullptr;
  std::vector<SmPartition> parts_;
  std::vector<CUgreenCtx_st*> green_;  // partitions' and intermediate remainders' contexts
};

// Diagnostic (tests): launches `blocks` blocks (at most p.max_blocks when set) of `threads`
// threads on p.stream, after p.make_current() unless `current` is false (the primary context
// stays current: shows where a launch on the stream alone lands); each block records the SM
// it ran on (%smid) and spins about spin_us so blocks spread over every SM they may use.
// Returns one SM id per block launched. Leaves the primary context current.
std::vector<int> probe_block_sms(const SmPartition& p, int blocks, int threads = 128,
                                 int spin_us = 50, bool current = true);

}  // namespace gpunfv
#endif
