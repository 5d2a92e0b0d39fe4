// An NF process's calls on the Manager: those that need no answer wait for the thread's next
// message; one that needs an answer goes at once with those before it.
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "nf/nf_process/internal/channel.h"
#include "nf/nf_process/internal/manager_calls.h"
#include "nf/nf_process/internal/protocol.h"
#include "nf/nf_process/nf_process.h"
#include "core/drop_reason.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"
#endif

namespace gpunfv::nf_process {

namespace {

struct Channel {
  int fd = -1;
  std::string pending;
};
thread_local Channel t_channel;

}  // namespace

void bind_channel(int fd) {
  t_channel.fd = fd;
  t_channel.pending.clear();
}

std::string take_pending_calls() {
  std::string out;
  out.swap(t_channel.pending);
  return out;
}

namespace {

Channel& channel() {
  if (t_channel.fd < 0)
    throw std::logic_error("a call on the Manager from an NF process thread that serves no request");
  return t_channel;
}

void later(CallHead h, std::string_view payload = {}) { append_call(channel().pending, h, payload); }

// Sends the thread's waiting calls and `h`, and returns the Manager's answer to `h`. Throws
// std::runtime_error with the Manager's reason.
std::string ask(CallHead h, std::string_view payload = {}) {
  Channel& c = channel();
  append_call(c.pending, h, payload);
  Reply msg;
  msg.kind = ReplyKind::call;
  msg.calls_bytes = uint32_t(c.pending.size());
  CallAnswer a;
  std::string got;
  const bool sent = send_all(c.fd, &msg, sizeof msg) && send_all(c.fd, c.pending.data(), c.pending.size());
  c.pending.clear();
  if (!sent || !recv_all(c.fd, &a, sizeof a) || !recv_text(c.fd, a.bytes, got))
    throw std::runtime_error("the Manager is gone");
  if (!a.ok) throw std::runtime_error("the Manager refused a call: " + got);
  return got;
}

uint8_t drop_codes_from_manager(std::string_view owner, std::span<const DropReasonDecl> reasons) {
  std::string payload(owner);
  payload += '\n';
  for (const DropReasonDecl& d : reasons) (((payload += d.name) += '\n') += d.description) += '\n';
  const std::string got = ask({ManagerCall::drop_reasons}, payload);
  if (got.size() != 1) throw std::runtime_error("the Manager answered a call with the wrong size");
  return uint8_t(got[0]);
}

}  // namespace

void take_drop_codes_from_manager() { set_drop_reason_registrar(&drop_codes_from_manager); }

}  // namespace gpunfv::nf_process

namespace gpunfv {

void use_manager_drop_codes(int sock) {
  nf_process::take_drop_codes_from_manager();
  nf_process::bind_channel(sock);
}

}  // namespace gpunfv

namespace gpunfv::nf_process {

#if GPUNFV_HAVE_CUDA

namespace {

class ManagerGpuSink final : public GpuCallSink {
 public:
  void* malloc(size_t bytes) override {
    return reinterpret_cast<void*>(as_u64(ask({ManagerCall::malloc, 0, bytes})));
  }
  void free(void* p) override { later({ManagerCall::free, 0, u64(p)}); }
  void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t s) override {
    later({ManagerCall::copy_to_device, 0, u64(dst), bytes, u64(s)},
          std::string_view(static_cast<const char*>(src), bytes));
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    const std::string got = ask({ManagerCall::copy_to_host, 0, u64(src), bytes});
    if (got.size() != bytes) throw GpuError("the Manager answered a copy with the wrong size");
    std::memcpy(dst, got.data(), bytes);
  }
  void launch(const GpuLaunch& l) override {
    LaunchHead h;
    h.grid[0] = l.grid.x, h.grid[1] = l.grid.y, h.grid[2] = l.grid.z;
    h.block[0] = l.block.x, h.block[1] = l.block.y, h.block[2] = l.block.z;
    h.shared_bytes = l.shared_bytes;
    h.stream = u64(l.stream);
    h.args = l.arg_count;
    const KernelName& k = kernel_name(l.kernel);
    h.name_bytes = uint32_t(k.name.size());
    h.file_bytes = uint32_t(k.file.size());
    std::string payload(reinterpret_cast<const char*>(&h), sizeof h);
    payload += k.name;
    payload += k.file;
    for (uint32_t a = 0; a < l.arg_count; ++a)
      payload.append(reinterpret_cast<const char*>(&l.args[a].bytes), sizeof(uint32_t));
    for (uint32_t a = 0; a < l.arg_count; ++a)
      payload.append(static_cast<const char*>(l.args[a].data), l.args[a].bytes);
    later({ManagerCall::launch}, payload);
  }
  cudaStream_t create_stream() override {
    return reinterpret_cast<cudaStream_t>(as_u64(ask({ManagerCall::create_stream})));
  }
  void destroy_stream(cudaStream_t s) override { later({ManagerCall::destroy_stream, 0, u64(s)}); }
  cudaEvent_t create_event(unsigned flags) override {
    return reinterpret_cast<cudaEvent_t>(as_u64(ask({ManagerCall::create_event, 0, flags})));
  }
  void destroy_event(cudaEvent_t e) override { later({ManagerCall::destroy_event, 0, u64(e)}); }
  void record_event(cudaEvent_t e, cudaStream_t s) override {
    later({ManagerCall::record_event, 0, u64(e), u64(s)});
  }
  void wait_event(cudaStream_t s, cudaEvent_t e) override {
    later({ManagerCall::wait_event, 0, u64(s), u64(e)});
  }
  void synchronize(cudaStream_t s) override { ask({ManagerCall::synchronize, 0, u64(s)}); }
  void synchronize_device() override { ask({ManagerCall::synchronize_device}); }
  void set_max_dynamic_shared(const void* kernel, int bytes) override {
    const KernelName& k = kernel_name(kernel);
    LaunchHead h;
    h.name_bytes = uint32_t(k.name.size());
    h.file_bytes = uint32_t(k.file.size());
    std::string payload(reinterpret_cast<const char*>(&h), sizeof h);
    payload += k.name;
    payload += k.file;
    later({ManagerCall::set_max_dynamic_shared, 0, uint64_t(bytes)}, payload);
  }
  int max_shared_per_block_optin() override {
    const std::string got = ask({ManagerCall::max_shared_optin});
    int32_t v = 0;
    if (got.size() != sizeof v) throw GpuError("the Manager answered a query with the wrong size");
    std::memcpy(&v, got.data(), sizeof v);
    return v;
  }

 private:
  struct KernelName {
    std::string name, file;
  };

  static uint64_t u64(const void* p) { return reinterpret_cast<uint64_t>(p); }
  static uint64_t as_u64(const std::string& got) {
    uint64_t v = 0;
    if (got.size() != sizeof v) throw GpuError("the Manager answered a call with the wrong size");
    std::memcpy(&v, got.data(), sizeof v);
    return v;
  }

  // A kernel is named to the Manager by its registration: it launches registered kernels only.
  const KernelName& kernel_name(const void* kernel) {
    std::lock_guard<std::mutex> lk(m_);
    auto it = names_.find(kernel);
    if (it == names_.end()) {
      for (const KernelEntry& e : registered_kernels()) names_[e.function] = {e.name, e.file};
      it = names_.find(kernel);
      if (it == names_.end())
        throw GpuError("a launch of a kernel that is not registered (GPUNFV_REGISTER_KERNEL)");
    }
    return it->second;
  }

  // A GPU call's failure is a GpuError, as in the Manager.
  static std::string ask(CallHead h) {
    try {
      return nf_process::ask(h);
    } catch (const std::runtime_error& e) {
      throw GpuError(e.what());
    }
  }

  std::mutex m_;
  std::unordered_map<const void*, KernelName> names_;
};

}  // namespace

void send_gpu_calls_to_manager() {
  static ManagerGpuSink sink;
  set_gpu_call_sink(&sink);
}

#else

void send_gpu_calls_to_manager() {
  throw std::runtime_error("this build has no CUDA backend (nvcc was not found at build time)");
}

#endif

}  // namespace gpunfv::nf_process
