// The fused pipeline's per-slot graphs (chain/fused_graph.h) on copies alone: updated in place
// while the shape holds, one made for each new shape and updated when that shape comes back,
// and a recording CUDA refuses launches nothing and leaves no error behind. Skipped where no CUDA device is present.
#if GPUNFV_HAVE_CUDA
#include "chain/fused_graph.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "gpu/cuda_check.h"
#include "gpu/device.h"

namespace gpunfv {
namespace {

constexpr size_t kBytes = 1 << 16;

struct Buffers {
  uint8_t *in = nullptr, *out = nullptr, *dev = nullptr, *dev2 = nullptr;
  explicit Buffers(uint8_t seed) {
    GPUNFV_CUDA(cudaMallocHost(&in, kBytes));
    GPUNFV_CUDA(cudaMallocHost(&out, kBytes));
    GPUNFV_CUDA(cudaMalloc(&dev, kBytes));
    GPUNFV_CUDA(cudaMalloc(&dev2, kBytes));
    for (size_t i = 0; i < kBytes; ++i) in[i] = uint8_t(i * 7 + seed);
    std::memset(out, 0, kBytes);
  }
  ~Buffers() {
    cudaFreeHost(in), cudaFreeHost(out), cudaFree(dev), cudaFree(dev2);
  }
};

// There and back: two copy nodes.
void round_trip(const Buffers& b, cudaStream_t st) {
  GPUNFV_CUDA(cudaMemcpyAsync(b.dev, b.in, kBytes, cudaMemcpyHostToDevice, st));
  GPUNFV_CUDA(cudaMemcpyAsync(b.out, b.dev, kBytes, cudaMemcpyDeviceToHost, st));
}

// There, across the device and back: three nodes, another shape.
void round_trip_via(const Buffers& b, cudaStream_t st) {
  GPUNFV_CUDA(cudaMemcpyAsync(b.dev, b.in, kBytes, cudaMemcpyHostToDevice, st));
  GPUNFV_CUDA(cudaMemcpyAsync(b.dev2, b.dev, kBytes, cudaMemcpyDeviceToDevice, st));
  GPUNFV_CUDA(cudaMemcpyAsync(b.out, b.dev2, kBytes, cudaMemcpyDeviceToHost, st));
}

class FusedGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
    GPUNFV_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (st) cudaStreamDestroy(st);
  }
  void expect_copied(const Buffers& b) {
    GPUNFV_CUDA(cudaStreamSynchronize(st));
    EXPECT_EQ(0, std::memcmp(b.in, b.out, kBytes));
  }
  cudaStream_t st = nullptr;
  FusedGraphCounts counts;
};

TEST_F(FusedGraphTest, UpdatesInPlaceAndKeepsAGraphPerShape) {
  Buffers a(1), b(2), c(3);
  {
    FusedGraph g(counts);
    ASSERT_TRUE(g.launch(st, [&] { round_trip(a, st); }));
    expect_copied(a);
    ASSERT_TRUE(g.launch(st, [&] { round_trip(b, st); }));  // other addresses, same shape
    expect_copied(b);
    ASSERT_TRUE(g.launch(st, [&] { round_trip_via(c, st); }));  // three nodes: a second graph
    expect_copied(c);
    std::memset(a.out, 0, kBytes);
    ASSERT_TRUE(g.launch(st, [&] { round_trip(a, st); }));  // and back: the first, updated
    expect_copied(a);
    std::memset(c.out, 0, kBytes);
    ASSERT_TRUE(g.launch(st, [&] { round_trip_via(c, st); }));  // the second, updated
    expect_copied(c);
  }
  EXPECT_EQ(counts.launches.load(), 5u);
  EXPECT_EQ(counts.updates.load(), 3u);
  EXPECT_EQ(counts.instantiations.load(), 2u);
  EXPECT_EQ(counts.capture_failures.load(), 0u);
}

TEST_F(FusedGraphTest, RefusedRecordingLaunchesNothingAndLeavesNoError) {
  Buffers a(4), b(5);
  FusedGraph g(counts);
  ASSERT_TRUE(g.launch(st, [&] { round_trip(a, st); }));
  expect_copied(a);
  // Synchronizing a stream that is being captured is refused (and ends the recording).
  EXPECT_FALSE(g.launch(st, [&] {
    round_trip(b, st);
    GPUNFV_CUDA(cudaStreamSynchronize(st));
  }));
  // An exception of the issuing code's own ends it too.
  EXPECT_FALSE(g.launch(st, [&] {
    round_trip(b, st);
    throw std::runtime_error("issue failed");
  }));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(st, &capturing), cudaSuccess);
  EXPECT_EQ(capturing, cudaStreamCaptureStatusNone);
  GPUNFV_CUDA(cudaStreamSynchronize(st));
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(b.out[i], 0) << i;  // nothing of b ran
  // The slot's graph still works.
  ASSERT_TRUE(g.launch(st, [&] { round_trip(b, st); }));
  expect_copied(b);
  EXPECT_EQ(counts.launches.load(), 2u);
  EXPECT_EQ(counts.capture_failures.load(), 2u);
}

}  // namespace
}  // namespace gpunfv
#endif
