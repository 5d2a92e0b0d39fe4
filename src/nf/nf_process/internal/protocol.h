// What the Manager and an NF process say to each other over their socket: fixed-size requests,
// each answered by one reply; a reply's text (a report, a command's answer, an error) follows it.
// Batches are not sent: a request names one by its place in the shared arena
// (core/shared_arena.h) and its layout, or, on the GPU backend, by its device view.
//
// Calls the NF process makes on the Manager (internal/manager_calls.h: on the GPU backend its
// GPU calls, gpu/gpu_calls.h; on both, the codes of its NFs' drop reasons) travel with its
// messages: those that need no answer wait and go with the next message; one that needs an
// answer goes at once, in a message of kind call, which the Manager answers (CallAnswer) before
// the request's reply comes. The Manager performs a message's calls before it reads the message
// as a reply or as ready.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#if GPUNFV_HAVE_CUDA
#include "core/batch.h"
#include "core/chain_switch.h"
#include "gpu/stream.h"
#endif

namespace gpunfv::nf_process {

// control: a live table update for the process's NFs (its text a control request, JSON).
enum class Op : uint32_t {
  process, skip, collect, collect_range, finish, command, process_gpu, release_lane, control
};

struct Request {
  Op op = Op::process;
  uint32_t nf = 0;  // the NF's index in its process (configuration order)
  uint64_t arena_offset = 0;
  uint32_t capacity = 0, stride = 0, result_stride = 0, count = 0;
  uint32_t begin = 0, end = 0;  // process, collect_range: the packets
  uint32_t shard = 0;           // collect_range
  uint32_t result_offset = 0;
  uint8_t position = 0;
  uint8_t from_pcap = 0;
  char port[62] = {};    // collect: the batch's port name (cut to fit)
  uint32_t text_bytes = 0;  // command: its text follows; process_gpu: a GpuBatchText
};

#if GPUNFV_HAVE_CUDA
// process_gpu's text: the Manager's device view and stream, handed on to the NF's GPU calls, and
// the switch after the NF's node when the pipeline offers it (nf/node_exit.h). It travels by
// value, the stream's pointers into the Manager's memory cleared; the reply's text is
// kSwitchTaken when the NF's last kernel took it, and the Manager then launches no switch kernel.
struct GpuBatchText {
  BatchView batch;
  GpuStream stream;
  NodeSwitch node_switch;
  uint8_t switch_offered = 0;
};
inline constexpr std::string_view kSwitchTaken = "switch taken";
#endif

enum class ReplyKind : uint32_t { reply, call, ready };

struct Reply {
  ReplyKind kind = ReplyKind::reply;
  uint32_t ok = 1;           // 0: the NF threw; the text says what
  uint32_t text_bytes = 0;   // follows
  uint32_t calls_bytes = 0;  // GPU calls, after the text
};

// The Manager's answer to a message of kind call: the last call's result, or why it failed.
struct CallAnswer {
  uint32_t ok = 1;
  uint32_t bytes = 0;  // follow
};

// The text of a started NF process's first message (kind ready): it loaded its NFs and is ready.
struct Ready {
  uint32_t magic = 0x4e465052;  // "NFPR"
  uint32_t nfs = 0;
  int32_t pid = 0;
};

// Whole messages or false (the peer is gone): never a partial one.
inline bool send_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= size_t(w);
  }
  return true;
}

inline bool recv_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= size_t(r);
  }
  return true;
}

inline bool recv_text(int fd, uint32_t bytes, std::string& out) {
  out.resize(bytes);
  return bytes == 0 || recv_all(fd, out.data(), bytes);
}

}  // namespace gpunfv::nf_process
