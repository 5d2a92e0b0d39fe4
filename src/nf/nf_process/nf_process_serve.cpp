#include <unistd.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "core/batch.h"
#include "nf/nf_process/internal/channel.h"
#include "nf/nf_process/internal/protocol.h"
#include "nf/nf_process/nf_process.h"

namespace gpunfv {

using nf_process::Op;
using nf_process::Reply;
using nf_process::ReplyKind;
using nf_process::Request;

namespace {

BatchView view_of(const Request& r, uint8_t* arena, size_t arena_bytes) {
  const BatchLayout layout = BatchLayout::make(r.capacity, r.stride, r.result_stride);
  if (r.count > r.capacity || r.begin > r.end || r.end > r.count ||
      r.arena_offset > arena_bytes || layout.bytes > arena_bytes - r.arena_offset)
    throw std::runtime_error("a request for a batch outside the shared memory");
  return layout.view(arena + r.arena_offset, r.count);
}

struct Served {
  std::vector<std::unique_ptr<NetworkFunction>>& nfs;
  std::vector<std::once_flag> offset_set;  // the results offset is the run's: set once per NF
  uint8_t* arena;
  size_t arena_bytes;
  const NfProcessControl& control;
};

// One request; returns the reply's text.
std::string serve(Served& s, const Request& r, const std::string& text) {
  if (r.nf >= s.nfs.size()) throw std::runtime_error("a request for an NF this process lacks");
  NetworkFunction& nf = *s.nfs[r.nf];
  if (r.op == Op::control) {
    if (!s.control) throw std::runtime_error("this NF process takes no control requests");
    return s.control(text);
  }
  // A request that carries no batch carries no results offset either.
  if (r.op != Op::command && r.op != Op::finish)
    std::call_once(s.offset_set[r.nf], [&] { nf.set_result_offset(r.result_offset); });
  uint8_t* arena = s.arena;
  const size_t arena_bytes = s.arena_bytes;
  switch (r.op) {
    case Op::process:
      nf.process(view_of(r, arena, arena_bytes), r.begin, r.end, r.position);
      return {};
    case Op::skip:
      nf.skip(view_of(r, arena, arena_bytes), r.position);
      return {};
    case Op::collect: {
      const std::string port(r.port, strnlen(r.port, sizeof r.port));
      nf.collect(view_of(r, arena, arena_bytes), r.position, CollectContext{port, r.from_pcap != 0});
      return {};
    }
    case Op::collect_range: {
      const std::string port(r.port, strnlen(r.port, sizeof r.port));
      if (r.shard >= nf.collect_shards()) throw std::runtime_error("a request for a shard the NF lacks");
      nf.collect_range(view_of(r, arena, arena_bytes), r.position, CollectContext{port, r.from_pcap != 0},
                       r.begin, r.end, r.shard);
      return {};
    }
    case Op::finish: {
      nf.finish();
      nlohmann::json j = nlohmann::json::object();
      nf.report(j);
      return j.dump();
    }
    case Op::command:
      return nf.command(text);
#if GPUNFV_HAVE_CUDA
    case Op::process_gpu: {
      // The Manager's device view and stream: handed on to the NF's GPU calls, never read here.
      nf_process::GpuBatchText sent;
      if (text.size() != sizeof sent) throw std::runtime_error("a malformed GPU request");
      std::memcpy(static_cast<void*>(&sent), text.data(), sizeof sent);
      bool taken = false;
      if (sent.switch_offered) {
        sent.stream.node_switch = &sent.node_switch;
        sent.stream.switch_taken = &taken;
      }
      nf.process_gpu(sent.batch, r.position, sent.stream);
      return taken ? std::string(nf_process::kSwitchTaken) : std::string();
    }
    case Op::release_lane: {
      cudaStream_t st;
      if (text.size() != sizeof st) throw std::runtime_error("a malformed GPU request");
      std::memcpy(static_cast<void*>(&st), text.data(), sizeof st);
      nf.release_gpu_lane(st);
      return {};
    }
#else
    case Op::process_gpu:
    case Op::release_lane:
      break;
#endif
    case Op::control:
      break;  // above
  }
  throw std::runtime_error("an unknown request");
}

// Requests on one socket, one after another, until the Manager closes it.
// A reply, with the GPU calls the request made that wait for it (performed before the Manager
// reads the reply).
bool send_reply(int sock, Reply rep, const std::string& text) {
  const std::string calls = nf_process::take_pending_calls();
  rep.text_bytes = uint32_t(text.size());
  rep.calls_bytes = uint32_t(calls.size());
  return nf_process::send_all(sock, &rep, sizeof rep) && nf_process::send_all(sock, text.data(), text.size()) &&
         nf_process::send_all(sock, calls.data(), calls.size());
}

int serve_socket(Served& s, int sock) {
  nf_process::bind_channel(sock);
  Request r;
  std::string text;
  while (nf_process::recv_all(sock, &r, sizeof r) && nf_process::recv_text(sock, r.text_bytes, text)) {
    Reply rep;
    std::string answer;
    try {
      answer = serve(s, r, text);
    } catch (const std::exception& e) {
      nf_process::take_pending_calls();  // a request that failed half-way issues nothing
      rep.ok = 0;
      answer = e.what();
    }
    if (!send_reply(sock, rep, answer)) return 1;
  }
  return 0;
}

}  // namespace

int serve_nf_process(std::vector<std::unique_ptr<NetworkFunction>>& nfs, const std::vector<int>& socks,
                     uint8_t* arena, size_t arena_bytes, bool mid_run, Backend backend,
                     const std::vector<uint32_t>& count_on_device, NfProcessControl control) {
  if (socks.empty()) return 1;
  if (backend == Backend::gpu) nf_process::send_gpu_calls_to_manager();
  nf_process::bind_channel(socks[0]);
  for (uint32_t i : count_on_device)
    if (i >= nfs.size() || !nfs[i]->count_on_device())
      throw std::runtime_error("the Manager and this process disagree on which NFs count on the device");
  for (auto& nf : nfs) {
    nf->prepare(backend);
    if (mid_run) nf->resume_mid_run();
  }
  nf_process::Ready ready;
  ready.nfs = uint32_t(nfs.size());
  ready.pid = getpid();
  Reply rep;
  rep.kind = ReplyKind::ready;
  if (!send_reply(socks[0], rep, std::string(reinterpret_cast<const char*>(&ready), sizeof ready))) return 1;
  nf_process::bind_channel(-1);
  Served s{nfs, std::vector<std::once_flag>(nfs.size()), arena, arena_bytes, control};
  std::vector<int> status(socks.size(), 0);
  std::vector<std::thread> threads;
  for (size_t k = 1; k < socks.size(); ++k)
    threads.emplace_back([&, k] { status[k] = serve_socket(s, socks[k]); });
  status[0] = serve_socket(s, socks[0]);
  for (auto& t : threads) t.join();
  for (int st : status)
    if (st != 0) return st;
  return 0;  // the Manager closed the sockets: the run is over
}

}  // namespace gpunfv
