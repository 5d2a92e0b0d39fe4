// What the Manager and an NF process say to each other over their socket: fixed-size requests,
// each answered by one reply; a reply's text (a report, a command's answer, an error) follows it.
// Batches are not sent: a request names one by its place in the shared arena
// (core/shared_arena.h) and its layout.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace gpunfv::nf_process {

enum class Op : uint32_t { process, skip, collect, finish, command };

struct Request {
  Op op = Op::process;
  uint32_t nf = 0;  // the NF's index in its process (configuration order)
  uint64_t arena_offset = 0;
  uint32_t capacity = 0, stride = 0, result_stride = 0, count = 0;
  uint32_t begin = 0, end = 0;
  uint32_t result_offset = 0;
  uint8_t position = 0;
  uint8_t from_pcap = 0;
  char port[62] = {};    // collect: the batch's port name (cut to fit)
  uint32_t text_bytes = 0;  // command: its text follows
};

struct Reply {
  uint32_t ok = 1;          // 0: the NF threw; the text says what
  uint32_t text_bytes = 0;  // follows
};

// The first message of a started NF process: it loaded its NFs and is ready.
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
