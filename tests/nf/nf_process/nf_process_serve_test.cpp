// The NF process's side of its socket (nf/nf_process/nf_process.h), served on a thread of this
// process: requests name batches in the shared arena, and the NF's work lands in them in place;
// an NF's error, a request for an NF it lacks, or for a batch outside the arena, is answered
// with an error and the process goes on.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "core/shared_arena.h"
#include "nf/nf_process/internal/protocol.h"
#include "nf/nf_process/nf_process.h"
#include "nf/ttl_filter/ttl_filter.h"
#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"

namespace gpunfv {
namespace {

using nf_process::Op;
using nf_process::Reply;
using nf_process::Request;

class ServedNfProcess : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv_), 0);
    nfs_.push_back(std::make_unique<TtlFilter>("gtsm", 100));
    server_ = std::thread([this] {
      const SharedArena& a = SharedArena::instance();
      status_ = serve_nf_process(nfs_, {sv_[1]}, a.base(), a.size());
    });
    Reply msg;
    ASSERT_TRUE(nf_process::recv_all(sv_[0], &msg, sizeof msg));
    EXPECT_EQ(msg.kind, nf_process::ReplyKind::ready);
    EXPECT_EQ(msg.calls_bytes, 0u);  // CPU backend: no GPU calls
    ASSERT_EQ(msg.text_bytes, sizeof(nf_process::Ready));
    nf_process::Ready ready;
    ASSERT_TRUE(nf_process::recv_all(sv_[0], &ready, sizeof ready));
    EXPECT_EQ(ready.nfs, 1u);
    EXPECT_EQ(ready.pid, getpid());
  }
  void TearDown() override {
    close(sv_[0]);
    server_.join();
    EXPECT_EQ(status_, 0);
    close(sv_[1]);
  }
  // Sends `r`, returns the reply and its text.
  std::pair<Reply, std::string> call(Request r, const std::string& text = {}) {
    r.text_bytes = uint32_t(text.size());
    EXPECT_TRUE(nf_process::send_all(sv_[0], &r, sizeof r));
    if (!text.empty()) EXPECT_TRUE(nf_process::send_all(sv_[0], text.data(), text.size()));
    Reply rep;
    std::string answer;
    EXPECT_TRUE(nf_process::recv_all(sv_[0], &rep, sizeof rep));
    EXPECT_TRUE(nf_process::recv_text(sv_[0], rep.text_bytes, answer));
    EXPECT_EQ(rep.kind, nf_process::ReplyKind::reply);
    EXPECT_EQ(rep.calls_bytes, 0u);
    return {rep, answer};
  }
  static Request request_for(const Batch& b) {
    Request r;
    r.arena_offset = SharedArena::instance().offset_of(b.base());
    r.capacity = b.capacity();
    r.stride = b.stride();
    r.result_stride = b.result_stride();
    r.count = r.end = b.count();
    return r;
  }

  int sv_[2] = {-1, -1};
  std::vector<std::unique_ptr<NetworkFunction>> nfs_;
  std::thread server_;
  int status_ = -1;
};

TEST_F(ServedNfProcess, WorksOnTheSharedBatchInPlace) {
  Batch b(8, 128, MemoryKind::host_shared);
  ASSERT_TRUE(SharedArena::instance().contains(b.base()));
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t ttl : {200, 50, 100, 99}) frames.push_back(fixtures::ipv4_frame({.ttl = ttl}));
  fixtures::fill_frames(b, frames);
  auto [rep, text] = call(request_for(b));
  EXPECT_EQ(rep.ok, 1u) << text;
  const BatchView v = b.view();
  for (uint32_t i = 0; i < 4; ++i) {
    const bool below = i == 1 || i == 3;
    EXPECT_EQ(v.verdict[i] != uint8_t(DropReason::none), below) << i;
    EXPECT_EQ(v.next_nf[i], below ? 0 : 1) << i;
  }

  Request finish;
  finish.op = Op::finish;
  auto [done, report] = call(finish);
  EXPECT_EQ(done.ok, 1u);
  EXPECT_EQ(report, "{}");
}

TEST_F(ServedNfProcess, AnswersBadRequestsWithErrors) {
  Batch b(4, 128, MemoryKind::host_shared);
  Request r = request_for(b);
  r.nf = 3;
  auto [rep, text] = call(r);
  EXPECT_EQ(rep.ok, 0u);
  EXPECT_NE(text.find("an NF this process lacks"), std::string::npos) << text;

  r = request_for(b);
  r.arena_offset = SharedArena::instance().size() - 64;
  std::tie(rep, text) = call(r);
  EXPECT_EQ(rep.ok, 0u);
  EXPECT_NE(text.find("outside the shared memory"), std::string::npos) << text;

  r = request_for(b);
  r.end = r.count + 1;
  std::tie(rep, text) = call(r);
  EXPECT_EQ(rep.ok, 0u);

  Request command;
  command.op = Op::command;
  std::tie(rep, text) = call(command, "stats");
  EXPECT_EQ(rep.ok, 1u);  // the NF's own answer to a command it does not know
}

}  // namespace
}  // namespace gpunfv
