// DeviceUsers: an update waits for the streams that used a table copy, and a stream its owner
// gave up (a gnet re-plan's lane move) is never synchronized after it is destroyed. Skipped
// where no CUDA device is present; scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include "gpu/device_users.h"

#include <gtest/gtest.h>

#include "gpu/device.h"

namespace gpunfv {
namespace {

TEST(DeviceUsers, WaitForgetsTheCopysStreamsAndSkipsForgottenOnes) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  cudaStream_t kept = nullptr, moved = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&kept, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&moved, cudaStreamNonBlocking), cudaSuccess);
  DeviceUsers users;
  users.note(1, kept);
  users.note(1, moved);
  users.note(2, moved);
  EXPECT_EQ(users.streams(1), 2u);
  // The re-plan's move: the stream is idle, forgotten, then destroyed.
  ASSERT_EQ(cudaStreamSynchronize(moved), cudaSuccess);
  users.forget_stream(moved);
  ASSERT_EQ(cudaStreamDestroy(moved), cudaSuccess);
  EXPECT_EQ(users.streams(1), 1u);
  EXPECT_EQ(users.streams(2), 0u);
  users.wait(1);  // synchronizes `kept` only: a destroyed stream would fail here
  users.wait(2);
  EXPECT_EQ(users.streams(1), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(kept), cudaSuccess);
}

}  // namespace
}  // namespace gpunfv
#endif
