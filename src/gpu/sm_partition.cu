#include "gpu/sm_partition.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdlib>

#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "core/debug_switches.h"

namespace gpunfv {

namespace {

// The driver calls we use, looked up once through the runtime (no link against libcuda).
struct Driver {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_get_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split_by_count = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 green_destroy = nullptr;
  PFN_cuGreenCtxGetDevResource_v12040 green_get_resource = nullptr;
  PFN_cuCtxFromGreenCtx_v12040 ctx_from_green = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 green_stream_create = nullptr;
  std::string missing;  // entry points the driver does not have
};

template <typename F>
void lookup(const char* name, F& f, unsigned version, std::string& missing) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    missing += (missing.empty() ? "" : ", ") + std::string(name);
    return;
  }
  f = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    lookup("cuGetErrorName", x.get_error_name, 6000, x.missing);
    lookup("cuDeviceGet", x.device_get, 2000, x.missing);
    lookup("cuCtxSetCurrent", x.ctx_set_current, 4000, x.missing);
    lookup("cuCtxGetCurrent", x.ctx_get_current, 4000, x.missing);
    lookup("cuStreamDestroy", x.stream_destroy, 4000, x.missing);
    lookup("cuDeviceGetDevResource", x.device_get_resource, 12040, x.missing);
    lookup("cuDevSmResourceSplitByCount", x.split_by_count, 12040, x.missing);
    lookup("cuDevResourceGenerateDesc", x.generate_desc, 12040, x.missing);
    lookup("cuGreenCtxCreate", x.green_create, 12040, x.missing);
    lookup("cuGreenCtxDestroy", x.green_destroy, 12040, x.missing);
    lookup("cuGreenCtxGetDevResource", x.green_get_resource, 12040, x.missing);
    lookup("cuCtxFromGreenCtx", x.ctx_from_green, 12040, x.missing);
    lookup("cuGreenCtxStreamCreate", x.green_stream_create, 12050, x.missing);
    return x;
  }();
  return d;
}

void drv_check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().get_error_name) driver().get_error_name(r, &name);
  throw GpuError(std::string(what) + " failed: " + (name ? name : "CUresult " + std::to_string(r)));
}

CUdevice cu_device(int ordinal) {
  CUdevice d = 0;
  drv_check(driver().device_get(&d, ordinal), "cuDeviceGet");
  return d;
}

// The smallest size >= want that partitions may have: min, then steps of align.
int round_to_granularity(int want, const SmInfo& info) {
  const int min = std::max(1, info.min_sms), align = std::max(1, info.align_sms);
  if (want <= min) return min;
  return min + (want - min + align - 1) / align * align;
}

}  // namespace

SmInfo query_sm_info(int device) {
  SmInfo info;
  if (!cuda_device_available()) {
    info.why_not = "no CUDA device";
    return info;
  }
  GPUNFV_CUDA(cudaSetDevice(device));
  GPUNFV_CUDA(cudaDeviceGetAttribute(&info.total_sms, cudaDevAttrMultiProcessorCount, device));
  const Driver& d = driver();
  if (!d.missing.empty()) {
    info.why_not = "the driver lacks " + d.missing + " (green contexts need a CUDA 12.5+ driver)";
    return info;
  }
  if (debug_switches().no_green_contexts) {
    info.why_not = "GPUNFV_NO_GREEN_CONTEXTS is set";
    return info;
  }
  GPUNFV_CUDA(cudaFree(nullptr));  // the primary context exists before green ones are made
  CUdevResource res{};
  CUresult r = d.device_get_resource(cu_device(device), &res, CU_DEV_RESOURCE_TYPE_SM);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.get_error_name(r, &name);
    info.why_not = std::string("cuDeviceGetDevResource: ") + (name ? name : "error");
    return info;
  }
  info.total_sms = static_cast<int>(res.sm.smCount);
  info.min_sms = static_cast<int>(std::max(1u, res.sm.minSmPartitionSize));
  info.align_sms = static_cast<int>(std::max(1u, res.sm.smCoscheduledAlignment));
  info.green_contexts = true;
  return info;
}

void SmPartition::make_current() const {
  if (green)
    drv_check(driver().ctx_set_current(context), "cuCtxSetCurrent");
  else if (primary)
    drv_check(driver().ctx_set_current(primary), "cuCtxSetCurrent");
  else
    GPUNFV_CUDA(cudaSetDevice(device));
}

SmPartitions::SmPartitions(const std::vector<int>& sms, bool use_green, int device)
    : device_(device) {
  if (!cuda_device_available()) throw GpuError("SM partitions: no CUDA device is available");
  info_ = query_sm_info(device);
  const bool green = use_green && info_.green_contexts;
  if (!green) {
    info_.min_sms = info_.align_sms = 1;  // block caps come in any count
    if (info_.why_not.empty()) info_.why_not = "green contexts not requested";
  }
  int total = 0;
  std::vector<int> want(sms.size(), 0);
  // The entry off the granularity, if any: built last from what the others leave.
  size_t rest_entry = sms.size();
  for (size_t i = 0; i < sms.size(); ++i) {
    if (sms[i] < 0) throw GpuError("SM partitions: negative SM count");
    if (sms[i] == 0) continue;
    want[i] = round_to_granularity(sms[i], info_);
    if (green && want[i] != sms[i]) {
      if (rest_entry != sms.size())
        throw GpuError("SM partitions: " + std::to_string(sms[rest_entry]) + " and " +
                       std::to_string(sms[i]) + " SMs are both off the device's granularity (" +
                       std::to_string(info_.min_sms) + " + k*" + std::to_string(info_.align_sms) +
                       "); only one partition may take the SMs the others leave");
      rest_entry = i;
      want[i] = sms[i];
    }
    total += want[i];
  }
  std::vector<size_t> order;  // build order: the rest entry last
  for (size_t i = 0; i < sms.size(); ++i)
    if (i != rest_entry) order.push_back(i);
  if (rest_entry != sms.size()) order.push_back(rest_entry);
  if (total > info_.total_sms)
    throw GpuError("SM partitions: " + std::to_string(total) + " SMs asked for (after rounding to " +
                   std::to_string(info_.min_sms) + " + k*" + std::to_string(info_.align_sms) +
                   "), the device has " + std::to_string(info_.total_sms));
  GPUNFV_CUDA(cudaSetDevice(device));
  GPUNFV_CUDA(cudaFree(nullptr));
  try {
    const Driver& d = driver();
    CUcontext primary{};
    if (d.ctx_get_current) drv_check(d.ctx_get_current(&primary), "cuCtxGetCurrent");
    primary_ = primary;
    CUdevResource input{};
    const CUdevice dev = green ? cu_device(device) : 0;
    if (green) drv_check(d.device_get_resource(dev, &input, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
    size_t left = std::count_if(want.begin(), want.end(), [](int w) { return w > 0; });
    parts_.resize(want.size());
    for (size_t i : order) {
      SmPartition p;
      p.device = device;
      p.primary = primary_;
      if (want[i] == 0 || !green) {
        p.sms = want[i];
        p.max_blocks = want[i];
        p.stream = create_stream();
        p.aux_stream = create_stream();
        p.aux_done = create_event(cudaEventDisableTiming);
        parts_[i] = p;
        continue;
      }
      // Split this partition off what is left; the rest becomes a green context of its own
      // so it can be split again (split results cannot be split directly). The rest entry
      // takes what is left whole.
      CUdevResource group{}, rest{};
      if (i == rest_entry) {
        group = input;
        if (int(group.sm.smCount) < want[i])
          throw GpuError("SM partitions: " + std::to_string(group.sm.smCount) +
                         " SMs left for the partition that asked for " + std::to_string(want[i]));
      } else {
        unsigned groups = 1;
        drv_check(d.split_by_count(&group, &groups, &input, &rest, 0, unsigned(want[i])),
                  "cuDevSmResourceSplitByCount");
        if (groups != 1) throw GpuError("SM partitions: no group of " + std::to_string(want[i]) + " SMs left");
      }
      CUdevResourceDesc desc{};
      drv_check(d.generate_desc(&desc, &group, 1), "cuDevResourceGenerateDesc");
      CUgreenCtx g{};
      drv_check(d.green_create(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
      green_.push_back(g);
      CUcontext ctx{};
      drv_check(d.ctx_from_green(&ctx, g), "cuCtxFromGreenCtx");
      CUstream s{}, aux{};
      drv_check(d.green_stream_create(&s, g, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
      drv_check(d.green_stream_create(&aux, g, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
      note_stream_created();
      note_stream_created();
      p.sms = static_cast<int>(group.sm.smCount);
      p.green = true;
      p.context = ctx;
      p.stream = s;
      p.aux_stream = aux;
      // An event belongs to the context current when it is made: this partition's.
      drv_check(d.ctx_set_current(ctx), "cuCtxSetCurrent");
      p.aux_done = create_event(cudaEventDisableTiming);
      drv_check(d.ctx_set_current(primary_), "cuCtxSetCurrent");
      parts_[i] = p;
      if (--left > 0) {
        CUdevResourceDesc rest_desc{};
        drv_check(d.generate_desc(&rest_desc, &rest, 1), "cuDevResourceGenerateDesc (rest)");
        CUgreenCtx r{};
        drv_check(d.green_create(&r, rest_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate (rest)");
        green_.push_back(r);
        drv_check(d.green_get_resource(r, &input, CU_DEV_RESOURCE_TYPE_SM), "cuGreenCtxGetDevResource");
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

SmPartitions::~SmPartitions() { release(); }

void SmPartitions::release() {
  const Driver& d = driver();
  for (SmPartition& p : parts_) {
    if (p.aux_done) {
      if (p.green && d.ctx_set_current) d.ctx_set_current(p.context);
      cudaEventDestroy(p.aux_done);
      p.aux_done = nullptr;
    }
    for (cudaStream_t* s : {&p.stream, &p.aux_stream}) {
      if (!*s) continue;
      if (p.green) {
        d.stream_destroy(*s);
        note_stream_destroyed();
      } else {
        destroy_stream(*s);
      }
      *s = nullptr;
    }
  }
  parts_.clear();
  for (auto it = green_.rbegin(); it != green_.rend(); ++it) d.green_destroy(*it);
  green_.clear();
  // A thread left on a destroyed green context would fail its next call: back to primary.
  if (primary_ && d.ctx_set_current) d.ctx_set_current(primary_);
}

std::string SmPartitions::describe() const {
  std::string s;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const SmPartition& p = parts_[i];
    s += (i ? ", " : "") + std::string("[") + std::to_string(i) + "] ";
    if (p.sms == 0)
      s += "whole GPU";
    else if (p.green)
      s += std::to_string(p.sms) + " SMs (green context)";
    else
      s += std::to_string(p.sms) + " SMs (at most " + std::to_string(p.max_blocks) + " blocks)";
  }
  s += "; device " + std::to_string(info_.total_sms) + " SMs, partitions of " +
       std::to_string(info_.min_sms) + " + k*" + std::to_string(info_.align_sms);
  if (!info_.why_not.empty()) s += "; no green contexts: " + info_.why_not;
  return s;
}

namespace {

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__global__ void probe_kernel(int* out, long long spin_cycles) {
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(sm_id());
  // Hold the SM a while so the next blocks go to other SMs the partition has.
  const long long start = clock64();
  while (clock64() - start < spin_cycles) {
  }
}

}  // namespace

std::vector<int> probe_block_sms(const SmPartition& p, int blocks, int threads, int spin_us,
                                 bool current) {
  GPUNFV_CUDA(cudaSetDevice(p.device));
  if (p.max_blocks > 0) blocks = std::min(blocks, p.max_blocks);
  int clock_khz = 0;
  GPUNFV_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, p.device));
  int* dev = nullptr;
  GPUNFV_CUDA(cudaMalloc(&dev, sizeof(int) * blocks));  // primary context, used by the partition
  std::vector<int> ids(blocks, -1);
  try {
    if (current) p.make_current();
    probe_kernel<<<blocks, threads, 0, p.stream>>>(dev, static_cast<long long>(spin_us) * clock_khz / 1000);
    GPUNFV_CUDA(cudaGetLastError());
    GPUNFV_CUDA(cudaMemcpyAsync(ids.data(), dev, sizeof(int) * blocks, cudaMemcpyDeviceToHost, p.stream));
    GPUNFV_CUDA(cudaStreamSynchronize(p.stream));
  } catch (...) {
    SmPartition primary = p;
    primary.green = false;
    primary.make_current();
    cudaFree(dev);
    throw;
  }
  SmPartition primary = p;
  primary.green = false;
  primary.make_current();
  GPUNFV_CUDA(cudaFree(dev));
  return ids;
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(probe_kernel);

}  // namespace gpunfv
