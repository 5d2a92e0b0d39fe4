// The calls an NF process makes on the Manager, as bytes: each call is a CallHead and its
// payload. Most are its GPU calls (gpu/gpu_calls.h); their handles (device pointers, streams,
// events) are the Manager's, as numbers: the NF process never uses them itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpunfv::nf_process {

enum class ManagerCall : uint32_t {
  // Performed in order, with the next message (no answer):
  free,                    // a = pointer
  copy_to_device,          // a = destination, c = stream (0: synchronous); payload = the bytes
  launch,                  // payload = LaunchHead, kernel name, file, arg sizes, arg bytes
  destroy_stream,          // a = stream
  destroy_event,           // a = event
  record_event,            // a = event, b = stream
  wait_event,              // a = stream, b = event
  set_max_dynamic_shared,  // a = bytes; payload = kernel name and file (LaunchHead's counts)
  // Sent at once, answered:
  malloc,                  // a = bytes -> pointer
  copy_to_host,            // a = source, b = bytes -> the bytes
  create_stream,           // -> stream
  create_event,            // a = flags -> event
  synchronize,             // a = stream
  max_shared_optin,        // -> int32
  synchronize_device,
  // Not a GPU call: the codes of an NF type's drop reasons, which are the Manager's in a run
  // (core/drop_reason.h). Payload: the owner, then per reason its name and description, each
  // ended by '\n'. -> the first code (uint8).
  drop_reasons,
};

inline bool answered(ManagerCall c) { return c >= ManagerCall::malloc; }

struct CallHead {
  ManagerCall call;
  uint32_t payload = 0;  // bytes after this head
  uint64_t a = 0, b = 0, c = 0;
};

struct LaunchHead {
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint64_t shared_bytes = 0;
  uint64_t stream = 0;
  uint32_t args = 0;
  uint32_t name_bytes = 0, file_bytes = 0;  // the kernel's registration (gpu/kernel_registry.h)
};

// Reads calls one at a time from a message's bytes. Throws std::runtime_error on a truncated one.
class CallReader {
 public:
  CallReader(const char* p, size_t n) : p_(p), end_(p + n) {}
  bool next(CallHead& h, std::string_view& payload) {
    if (p_ == end_) return false;
    if (size_t(end_ - p_) < sizeof h) throw std::runtime_error("a truncated GPU call");
    std::memcpy(&h, p_, sizeof h);
    p_ += sizeof h;
    if (size_t(end_ - p_) < h.payload) throw std::runtime_error("a truncated GPU call");
    payload = std::string_view(p_, h.payload);
    p_ += h.payload;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

inline void append_call(std::string& out, CallHead h, std::string_view payload = {}) {
  h.payload = uint32_t(payload.size());
  out.append(reinterpret_cast<const char*>(&h), sizeof h);
  out.append(payload);
}

}  // namespace gpunfv::nf_process
