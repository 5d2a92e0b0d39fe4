// An NF process's GPU calls (gpu/gpu_calls.h, nf/nf_process/internal/manager_calls.h), without a
// GPU: the NF process's side, served on a thread of this process, sends its NF's kernel launch
// for a batch with its reply, and an answered call at once with the calls before it; the
// Manager's side refuses memory, streams, events and kernels the process was not given.
#if GPUNFV_HAVE_CUDA

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "core/shared_arena.h"
#include "gpu/device_buffer.h"
#include "gpu/kernel_registry.h"
#include "nf/nf_process/internal/channel.h"
#include "nf/nf_process/internal/manager_calls.h"
#include "nf/nf_process/internal/manager_gpu.h"
#include "nf/nf_process/internal/protocol.h"
#include "nf/nf_process/nf_process.h"
#include "nf/node_exit.h"
#include "nf/ttl_filter/ttl_filter.h"

namespace gpunfv {
namespace {

using nf_process::CallAnswer;
using nf_process::ManagerCall;
using nf_process::CallHead;
using nf_process::CallReader;
using nf_process::LaunchHead;
using nf_process::Reply;
using nf_process::ReplyKind;

struct Call {
  CallHead head;
  std::string payload;
};

std::vector<Call> decode(const std::string& calls) {
  std::vector<Call> out;
  CallReader r(calls.data(), calls.size());
  CallHead h;
  std::string_view p;
  while (r.next(h, p)) out.push_back({h, std::string(p)});
  return out;
}

// Reads one message from the NF process's side: its header, text and calls.
Reply receive(int fd, std::string& text, std::string& calls) {
  Reply rep;
  EXPECT_TRUE(nf_process::recv_all(fd, &rep, sizeof rep));
  EXPECT_TRUE(nf_process::recv_text(fd, rep.text_bytes, text));
  EXPECT_TRUE(nf_process::recv_text(fd, rep.calls_bytes, calls));
  return rep;
}

class NfProcessGpuCalls : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv_), 0); }
  void TearDown() override {
    close(sv_[0]);
    if (side_.joinable()) side_.join();
    close(sv_[1]);
    set_gpu_call_sink(nullptr);  // this process's GPU calls are its own again
  }
  int sv_[2] = {-1, -1};
  std::thread side_;
};

TEST_F(NfProcessGpuCalls, ABatchComesBackAsTheNfsLaunchOnTheBatchStream) {
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  nfs.push_back(std::make_unique<TtlFilter>("gtsm", 100));
  side_ = std::thread([&] {
    const SharedArena& a = SharedArena::instance();
    serve_nf_process(nfs, {sv_[1]}, a.base(), a.size(), false, Backend::gpu);
  });
  std::string text, calls;
  Reply ready = receive(sv_[0], text, calls);
  EXPECT_EQ(ready.kind, ReplyKind::ready);
  EXPECT_TRUE(calls.empty());  // the TTL filter has no tables to upload

  BatchView b;
  b.count = 1000;
  b.result_stride = 8;
  GpuStream s;
  s.stream = reinterpret_cast<cudaStream_t>(0x1234);
  s.max_blocks = 2;
  s.threads_per_block = 128;
  nf_process::Request r;
  r.op = nf_process::Op::process_gpu;
  r.position = 3;
  nf_process::GpuBatchText sent;
  sent.batch = b;
  sent.stream = s;
  std::string request(reinterpret_cast<const char*>(&sent), sizeof sent);
  r.text_bytes = uint32_t(request.size());
  ASSERT_TRUE(nf_process::send_all(sv_[0], &r, sizeof r));
  ASSERT_TRUE(nf_process::send_all(sv_[0], request.data(), request.size()));
  Reply rep = receive(sv_[0], text, calls);
  ASSERT_EQ(rep.ok, 1u) << text;
  EXPECT_EQ(rep.kind, ReplyKind::reply);
  EXPECT_TRUE(text.empty());  // no switch offered, none taken

  std::vector<Call> got = decode(calls);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].head.call, ManagerCall::launch);
  LaunchHead h;
  std::memcpy(&h, got[0].payload.data(), sizeof h);
  EXPECT_EQ(h.grid[0], 2u);  // 8 blocks of 128 would cover the batch; the share allows 2
  EXPECT_EQ(h.block[0], 128u);
  EXPECT_EQ(h.stream, 0x1234u);
  ASSERT_EQ(h.args, 4u);
  const std::string_view rest(got[0].payload.data() + sizeof h, got[0].payload.size() - sizeof h);
  const void* kernel = PerPacketKernel<TtlFilterView, TtlFilterLogic>::function;
  std::string name, file;
  for (const KernelEntry& e : registered_kernels())
    if (e.function == kernel) name = e.name, file = e.file;
  ASSERT_FALSE(name.empty());
  EXPECT_EQ(rest.substr(0, h.name_bytes), name);
  EXPECT_EQ(rest.substr(h.name_bytes, h.file_bytes), file);
  uint32_t sizes[4];
  std::memcpy(sizes, rest.data() + h.name_bytes + h.file_bytes, sizeof sizes);
  EXPECT_EQ(sizes[0], sizeof(NfPackets<>));
  EXPECT_EQ(sizes[1], sizeof(TtlFilterView));
  EXPECT_EQ(sizes[2], 1u);
  ASSERT_EQ(sizes[3], sizeof(NodeExit));
  // No switch offered: the process's kernel is handed none.
  const size_t exit_at = h.name_bytes + h.file_bytes + sizeof sizes + sizes[0] + sizes[1] + sizes[2];
  NodeExit exit;
  std::memcpy(static_cast<void*>(&exit), rest.data() + exit_at, sizeof exit);
  EXPECT_FALSE(exit.taken());
  // The NF's packets of the Manager's device view, at the position handed over. The view has no
  // arrays here, so the NF's packets are none (nf/nf_packets.h: count() is what the arrays hold).
  alignas(NfPackets<>) char packets_bytes[sizeof(NfPackets<>)];
  std::memcpy(packets_bytes, rest.data() + h.name_bytes + h.file_bytes + sizeof sizes, sizeof packets_bytes);
  const auto& packets = *reinterpret_cast<const NfPackets<>*>(packets_bytes);
  EXPECT_EQ(packets.position(), 3u);
  EXPECT_EQ(packets.count(), 0u);
  BatchView handed = b;
  handed.count = 0;
  EXPECT_EQ(std::memcmp(&packets.framework_view(), &handed, sizeof handed), 0);

  // The switch after the node offered with the request: the NF's kernel takes it, and the
  // reply says so (the Manager then launches no switch kernel after the NF).
  sent.switch_offered = 1;
  sent.node_switch.node = 3;
  request.assign(reinterpret_cast<const char*>(&sent), sizeof sent);
  ASSERT_TRUE(nf_process::send_all(sv_[0], &r, sizeof r));
  ASSERT_TRUE(nf_process::send_all(sv_[0], request.data(), request.size()));
  rep = receive(sv_[0], text, calls);
  ASSERT_EQ(rep.ok, 1u) << text;
  EXPECT_EQ(text, nf_process::kSwitchTaken);
  got = decode(calls);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].head.call, ManagerCall::launch);
  std::memcpy(static_cast<void*>(&exit), got[0].payload.data() + sizeof h + exit_at, sizeof exit);
  EXPECT_TRUE(exit.taken());

  // A malformed request is refused; the process goes on.
  r.text_bytes = 4;
  ASSERT_TRUE(nf_process::send_all(sv_[0], &r, sizeof r));
  ASSERT_TRUE(nf_process::send_all(sv_[0], "oops", 4));
  rep = receive(sv_[0], text, calls);
  EXPECT_EQ(rep.ok, 0u);
  EXPECT_NE(text.find("malformed"), std::string::npos) << text;
  EXPECT_TRUE(calls.empty());
}

TEST_F(NfProcessGpuCalls, AnAnsweredCallGoesAtOnceWithTheCallsBeforeIt) {
  std::string error;
  std::string left;
  side_ = std::thread([&] {
    nf_process::send_gpu_calls_to_manager();
    nf_process::bind_channel(sv_[1]);
    {
      DeviceBuffer<uint32_t> table;
      table.upload({1, 2, 3});                                  // malloc (answered), then a copy
      gpu::synchronize(reinterpret_cast<cudaStream_t>(0x77));  // sends the copy with it
      try {
        gpu::create_stream();
      } catch (const GpuError& e) {
        error = e.what();
      }
    }  // the table's free waits for the next message
    left = nf_process::take_pending_calls();
    nf_process::bind_channel(-1);
  });
  auto answer = [&](bool ok, const std::string& bytes) {
    CallAnswer a;
    a.ok = ok;
    a.bytes = uint32_t(bytes.size());
    ASSERT_TRUE(nf_process::send_all(sv_[0], &a, sizeof a));
    ASSERT_TRUE(nf_process::send_all(sv_[0], bytes.data(), bytes.size()));
  };
  std::string text, calls;
  Reply m = receive(sv_[0], text, calls);
  EXPECT_EQ(m.kind, ReplyKind::call);
  std::vector<Call> got = decode(calls);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].head.call, ManagerCall::malloc);
  EXPECT_EQ(got[0].head.a, 12u);
  const uint64_t device = 0x100000;
  answer(true, std::string(reinterpret_cast<const char*>(&device), sizeof device));

  m = receive(sv_[0], text, calls);
  got = decode(calls);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].head.call, ManagerCall::copy_to_device);
  EXPECT_EQ(got[0].head.a, device);
  EXPECT_EQ(got[0].head.c, 0u);  // synchronous
  const uint32_t words[] = {1, 2, 3};
  EXPECT_EQ(got[0].payload, std::string(reinterpret_cast<const char*>(words), sizeof words));
  EXPECT_EQ(got[1].head.call, ManagerCall::synchronize);
  EXPECT_EQ(got[1].head.a, 0x77u);
  answer(true, "");

  m = receive(sv_[0], text, calls);
  got = decode(calls);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].head.call, ManagerCall::create_stream);
  answer(false, "no streams for you");
  side_.join();
  EXPECT_NE(error.find("no streams for you"), std::string::npos) << error;
  got = decode(left);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].head.call, ManagerCall::free);
  EXPECT_EQ(got[0].head.a, device);
}

std::string one_call(CallHead h, std::string_view payload = {}) {
  std::string out;
  nf_process::append_call(out, h, payload);
  return out;
}

std::string launch_of(const std::string& name, const std::string& file, uint64_t stream) {
  LaunchHead h;
  h.stream = stream;
  h.name_bytes = uint32_t(name.size());
  h.file_bytes = uint32_t(file.size());
  std::string p(reinterpret_cast<const char*>(&h), sizeof h);
  return one_call({ManagerCall::launch}, p + name + file);
}

TEST(ManagerGpu, RefusesWhatTheProcessWasNotGiven) {
  nf_process::ManagerGpu m;
  auto refused = [&](const std::string& calls, const char* why) {
    try {
      for (const Call& c : decode(calls)) m.perform_one(c.head, c.payload);
      ADD_FAILURE() << "not refused: " << why;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(one_call({ManagerCall::copy_to_device, 0, 0xdead0000}, "abcd"), "not given");
  refused(one_call({ManagerCall::copy_to_host, 0, 0xdead0000, 4}), "not given");
  refused(one_call({ManagerCall::free, 0, 0xdead0000}), "not given");
  refused(one_call({ManagerCall::record_event, 0, 0x55, 0x66}), "event the NF process was not given");
  refused(one_call({ManagerCall::synchronize, 0, 0x66}), "stream the NF process was not given");

  // A lane's stream, handed with a batch: usable, never the process's to destroy, and gone
  // once taken back.
  GpuStream lane;
  lane.stream = reinterpret_cast<cudaStream_t>(0x66);
  lane.aux = reinterpret_cast<cudaStream_t>(0x67);
  lane.aux_done = reinterpret_cast<cudaEvent_t>(0x55);
  m.hand(lane);
  refused(one_call({ManagerCall::destroy_stream, 0, 0x66}), "did not make");
  refused(one_call({ManagerCall::destroy_event, 0, 0x55}), "did not make");
  refused(launch_of("no_such_kernel", "src/nowhere.cu", 0x66), "has not loaded");
  m.take_back(lane.stream);
  refused(one_call({ManagerCall::wait_event, 0, 0x67, 0x55}), "stream the NF process was not given");
  const KernelEntry k = registered_kernels().at(0);
  refused(launch_of(k.name, k.file, 0x66), "stream the NF process was not given");

  std::string truncated = one_call({ManagerCall::free, 0, 1});
  truncated.pop_back();
  refused(truncated, "truncated");
  EXPECT_EQ(m.allocations(), 0u);
}

}  // namespace
}  // namespace gpunfv

#endif  // GPUNFV_HAVE_CUDA
