#include "nf/nf_process/internal/manager_gpu.h"

#if GPUNFV_HAVE_CUDA

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"
#include "nf/nf_process/internal/manager_calls.h"

namespace gpunfv::nf_process {

namespace {

constexpr uint32_t kMaxArgs = 32;

uint64_t u64(const void* p) { return reinterpret_cast<uint64_t>(p); }

std::string bytes_of(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); }

}  // namespace

ManagerGpu::~ManagerGpu() {
  for (auto& [p, bytes] : memory_) gpu::free(reinterpret_cast<void*>(p));  // waits for the device
  for (uint64_t e : own_events_) gpu::destroy_event(reinterpret_cast<cudaEvent_t>(e));
  for (uint64_t s : own_streams_) gpu::destroy_stream(reinterpret_cast<cudaStream_t>(s));
}

void ManagerGpu::hand(const GpuStream& s) {
  std::lock_guard<std::mutex> lk(m_);
  if (!s.stream || handed_.count(u64(s.stream))) return;
  handed_[u64(s.stream)] = s;
  handed_streams_.insert(u64(s.stream));
  if (s.aux) handed_streams_.insert(u64(s.aux));
  if (s.aux_done) handed_events_.insert(u64(s.aux_done));
}

void ManagerGpu::take_back(cudaStream_t s) {
  std::lock_guard<std::mutex> lk(m_);
  auto it = handed_.find(u64(s));
  if (it == handed_.end()) return;
  handed_streams_.erase(u64(it->second.stream));
  handed_streams_.erase(u64(it->second.aux));
  handed_events_.erase(u64(it->second.aux_done));
  handed_.erase(it);
}

size_t ManagerGpu::allocations() const {
  std::lock_guard<std::mutex> lk(m_);
  return memory_.size();
}

void ManagerGpu::check_device_range(uint64_t p, uint64_t bytes) const {
  auto it = memory_.upper_bound(p);
  if (it == memory_.begin()) throw GpuError("a copy to or from memory the NF process was not given");
  --it;
  if (p - it->first > it->second || bytes > it->second - (p - it->first))
    throw GpuError("a copy past the end of the NF process's memory");
}

cudaStream_t ManagerGpu::stream(uint64_t s) const {
  if (!own_streams_.count(s) && !handed_streams_.count(s))
    throw GpuError("a GPU call on a stream the NF process was not given");
  return reinterpret_cast<cudaStream_t>(s);
}

cudaEvent_t ManagerGpu::event(uint64_t e) const {
  if (!own_events_.count(e) && !handed_events_.count(e))
    throw GpuError("a GPU call on an event the NF process was not given");
  return reinterpret_cast<cudaEvent_t>(e);
}

// A registered kernel by its registration; the registry grows as plugins load.
const void* ManagerGpu::kernel(std::string_view name, std::string_view file) {
  const std::string key = std::string(name) + '\n' + std::string(file);
  {
    std::lock_guard<std::mutex> lk(m_);
    auto it = kernels_.find(key);
    if (it != kernels_.end()) return it->second;
  }
  for (const KernelEntry& e : registered_kernels()) {
    if (e.name != name || e.file != file) continue;
    std::lock_guard<std::mutex> lk(m_);
    kernels_[key] = e.function;
    return e.function;
  }
  throw GpuError("the NF process named a kernel the Manager has not loaded: " + std::string(name));
}

// A kernel's parameter sizes, as it declares them (asked once per kernel).
const std::vector<uint32_t>& ManagerGpu::parameters(const void* fn) {
  {
    std::lock_guard<std::mutex> lk(m_);
    auto it = params_.find(fn);
    if (it != params_.end()) return it->second;
  }
  std::vector<uint32_t> sizes;
  for (size_t a = 0; a <= kMaxArgs; ++a) {
    size_t offset = 0, size = 0;
    if (cudaFuncGetParamInfo(fn, a, &offset, &size) != cudaSuccess) {
      cudaGetLastError();  // past the last parameter: the expected failure is not the run's error
      break;
    }
    sizes.push_back(uint32_t(size));
  }
  std::lock_guard<std::mutex> lk(m_);
  return params_.emplace(fn, std::move(sizes)).first->second;
}

void ManagerGpu::launch(std::string_view payload) {
  LaunchHead h;
  if (payload.size() < sizeof h) throw GpuError("a truncated launch");
  std::memcpy(&h, payload.data(), sizeof h);
  payload.remove_prefix(sizeof h);
  if (h.args > kMaxArgs || payload.size() < size_t(h.name_bytes) + h.file_bytes + 4ull * h.args)
    throw GpuError("a truncated launch");
  cudaStream_t st;
  {
    std::lock_guard<std::mutex> lk(m_);
    st = stream(h.stream);
  }
  const void* fn = kernel(payload.substr(0, h.name_bytes), payload.substr(h.name_bytes, h.file_bytes));
  payload.remove_prefix(size_t(h.name_bytes) + h.file_bytes);
  uint32_t sizes[kMaxArgs];
  std::memcpy(sizes, payload.data(), 4ull * h.args);
  payload.remove_prefix(4ull * h.args);
  // The kernel's own parameter list decides what it reads: the sizes sent must be its sizes.
  const std::vector<uint32_t>& declared = parameters(fn);
  if (declared.size() != h.args || !std::equal(declared.begin(), declared.end(), sizes))
    throw GpuError("a launch whose arguments do not match the kernel's parameters");
  size_t total = 0;
  for (uint32_t a = 0; a < h.args; ++a) total += sizes[a];
  if (payload.size() != total) throw GpuError("a truncated launch");
  std::vector<std::max_align_t> store((total + kMaxArgs * 16) / sizeof(std::max_align_t) + 1);
  GpuLaunchArg args[kMaxArgs];
  char* at = reinterpret_cast<char*>(store.data());
  for (uint32_t a = 0; a < h.args; ++a) {
    std::memcpy(at, payload.data(), sizes[a]);
    args[a] = GpuLaunchArg{at, sizes[a]};
    payload.remove_prefix(sizes[a]);
    at += (sizes[a] + 15) / 16 * 16;
  }
  gpu::launch(GpuLaunch{fn, dim3(h.grid[0], h.grid[1], h.grid[2]), dim3(h.block[0], h.block[1], h.block[2]),
                        size_t(h.shared_bytes), st, args, h.args});
}

std::string ManagerGpu::perform_one(const CallHead& h, std::string_view payload) {
  const uint64_t a = h.a, b = h.b, c = h.c;
  switch (h.call) {
    case ManagerCall::free: {
      {
        std::lock_guard<std::mutex> lk(m_);
        if (!memory_.erase(a)) throw GpuError("a free of memory the NF process was not given");
      }
      gpu::free(reinterpret_cast<void*>(a));
      return {};
    }
    case ManagerCall::copy_to_device: {
      cudaStream_t st = nullptr;
      {
        std::lock_guard<std::mutex> lk(m_);
        check_device_range(a, payload.size());
        if (c) st = stream(c);
      }
      gpu::copy_to_device(reinterpret_cast<void*>(a), payload.data(), payload.size(), st);
      // An ordered copy's bytes must outlive the call: the message is freed when it returns.
      if (st) gpu::synchronize(st);
      return {};
    }
    case ManagerCall::launch:
      launch(payload);
      return {};
    case ManagerCall::destroy_stream: {
      {
        std::lock_guard<std::mutex> lk(m_);
        if (!own_streams_.erase(a)) throw GpuError("a stream the NF process did not make");
      }
      gpu::destroy_stream(reinterpret_cast<cudaStream_t>(a));
      return {};
    }
    case ManagerCall::destroy_event: {
      {
        std::lock_guard<std::mutex> lk(m_);
        if (!own_events_.erase(a)) throw GpuError("an event the NF process did not make");
      }
      gpu::destroy_event(reinterpret_cast<cudaEvent_t>(a));
      return {};
    }
    case ManagerCall::record_event: {
      std::unique_lock<std::mutex> lk(m_);
      const cudaEvent_t e = event(a);
      const cudaStream_t s = stream(b);
      lk.unlock();
      gpu::record_event(e, s);
      return {};
    }
    case ManagerCall::wait_event: {
      std::unique_lock<std::mutex> lk(m_);
      const cudaStream_t s = stream(a);
      const cudaEvent_t e = event(b);
      lk.unlock();
      gpu::wait_event(s, e);
      return {};
    }
    case ManagerCall::set_max_dynamic_shared: {
      LaunchHead k;
      if (payload.size() < sizeof k) throw GpuError("a truncated call");
      std::memcpy(&k, payload.data(), sizeof k);
      payload.remove_prefix(sizeof k);
      if (payload.size() != size_t(k.name_bytes) + k.file_bytes) throw GpuError("a truncated call");
      gpu::set_max_dynamic_shared(kernel(payload.substr(0, k.name_bytes), payload.substr(k.name_bytes)),
                                  int(a));
      return {};
    }
    case ManagerCall::malloc: {
      void* p = gpu::malloc(a);
      std::lock_guard<std::mutex> lk(m_);
      memory_[u64(p)] = a;
      return bytes_of(u64(p));
    }
    case ManagerCall::copy_to_host: {
      {
        std::lock_guard<std::mutex> lk(m_);
        check_device_range(a, b);
      }
      std::string out(b, '\0');
      gpu::copy_to_host(out.data(), reinterpret_cast<const void*>(a), b);
      return out;
    }
    case ManagerCall::create_stream: {
      const cudaStream_t s = gpu::create_stream();
      std::lock_guard<std::mutex> lk(m_);
      own_streams_.insert(u64(s));
      return bytes_of(u64(s));
    }
    case ManagerCall::create_event: {
      const cudaEvent_t e = gpu::create_event(unsigned(a));
      std::lock_guard<std::mutex> lk(m_);
      own_events_.insert(u64(e));
      return bytes_of(u64(e));
    }
    case ManagerCall::synchronize: {
      cudaStream_t s;
      {
        std::lock_guard<std::mutex> lk(m_);
        s = stream(a);
      }
      gpu::synchronize(s);
      return {};
    }
    case ManagerCall::synchronize_device:
      gpu::synchronize_device();
      return {};
    case ManagerCall::max_shared_optin: {
      const int32_t v = gpu::max_shared_per_block_optin();
      return std::string(reinterpret_cast<const char*>(&v), sizeof v);
    }
    case ManagerCall::drop_reasons:
      break;
  }
  throw GpuError("an unknown GPU call");
}

}  // namespace gpunfv::nf_process

#endif  // GPUNFV_HAVE_CUDA
