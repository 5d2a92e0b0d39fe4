// SM partitions land kernels on their own SMs: a probe kernel records %smid per block. Skipped
// where no CUDA device is present (CI); scripts/gpu-check.sh --suite sched runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include "gpu/sm_partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "gpu/cuda_check.h"
#include "gpu/device.h"

namespace gpunfv {
namespace {

std::set<int> distinct(const std::vector<int>& ids) { return {ids.begin(), ids.end()}; }

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device"

TEST(GpuSmPartition, ReportsTheDevice) {
  SKIP_WITHOUT_GPU();
  SmInfo info = query_sm_info();
  std::printf("SMs %d, partitions of %d + k*%d, green contexts %s%s\n", info.total_sms,
              info.min_sms, info.align_sms, info.green_contexts ? "yes" : "no",
              info.why_not.empty() ? "" : (" (" + info.why_not + ")").c_str());
  EXPECT_GT(info.total_sms, 0);
  EXPECT_GE(info.min_sms, 1);
  EXPECT_GE(info.align_sms, 1);
}

TEST(GpuSmPartition, WholeGpuProbeSeesManySms) {
  // The probe can see more SMs than a partition has: otherwise the tests below prove nothing.
  SKIP_WITHOUT_GPU();
  SmPartitions whole({0});
  EXPECT_EQ(whole[0].sms, 0);
  EXPECT_FALSE(whole[0].green);
  const int total = query_sm_info().total_sms;
  auto ids = probe_block_sms(whole[0], 4 * total);
  EXPECT_GT(static_cast<int>(distinct(ids).size()), total / 2);
}

TEST(GpuSmPartition, GreenPartitionsAreDisjointAndConfined) {
  SKIP_WITHOUT_GPU();
  SmInfo info = query_sm_info();
  if (!info.green_contexts) GTEST_SKIP() << "no green contexts: " << info.why_not;
  const int m = info.min_sms;
  SmPartitions parts({m, 2 * m, 0});
  std::printf("%s\n", parts.describe().c_str());
  ASSERT_EQ(parts.size(), 3u);
  ASSERT_TRUE(parts[0].green);
  ASSERT_TRUE(parts[1].green);
  EXPECT_GE(parts[0].sms, m);
  EXPECT_GE(parts[1].sms, 2 * m);
  const int blocks = 8 * info.total_sms;
  std::set<int> a = distinct(probe_block_sms(parts[0], blocks));
  std::set<int> b = distinct(probe_block_sms(parts[1], blocks));
  std::printf("partition 0: %zu SMs seen, partition 1: %zu SMs seen\n", a.size(), b.size());
  EXPECT_LE(static_cast<int>(a.size()), parts[0].sms);
  EXPECT_LE(static_cast<int>(b.size()), parts[1].sms);
  EXPECT_GT(b.size(), static_cast<size_t>(parts[0].sms));  // blocks spread over the partition
  for (int id : a) EXPECT_EQ(b.count(id), 0u) << "SM " << id << " is in both partitions";
  // Again: a partition keeps its SMs from launch to launch.
  std::set<int> a2 = distinct(probe_block_sms(parts[0], blocks));
  for (int id : a2) EXPECT_EQ(b.count(id), 0u) << "SM " << id << " is in both partitions";
  a.insert(a2.begin(), a2.end());
  EXPECT_LE(static_cast<int>(a.size()), parts[0].sms);
  // Where a launch on the green stream goes without make_current (a fact to know, not a rule
  // the framework relies on: it always calls make_current).
  try {
    std::printf("partition 0 launched without make_current: %zu SMs seen (partition has %d)\n",
                distinct(probe_block_sms(parts[0], blocks, 128, 50, false)).size(), parts[0].sms);
  } catch (const GpuError& e) {
    std::printf("partition 0 launched without make_current: %s\n", e.what());
  }
  // The whole-GPU partition, after the green ones, is not confined.
  EXPECT_GT(distinct(probe_block_sms(parts[2], blocks)).size(), b.size());
}

TEST(GpuSmPartition, OnePartitionTakesTheSmsOffTheGranularity) {
  SKIP_WITHOUT_GPU();
  SmInfo info = query_sm_info();
  if (!info.green_contexts) GTEST_SKIP() << "no green contexts: " << info.why_not;
  const int m = info.min_sms, rest = info.total_sms - m;
  if (rest == info.min_sms + (rest - info.min_sms) / info.align_sms * info.align_sms)
    GTEST_SKIP() << info.total_sms << " SMs split evenly: nothing is off the granularity";
  // Listed first, built last: the entry of `rest` SMs gets all the first one leaves.
  SmPartitions parts({rest, m});
  std::printf("%s\n", parts.describe().c_str());
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].sms, rest);
  EXPECT_EQ(parts[1].sms, m);
  const int blocks = 8 * info.total_sms;
  std::set<int> big = distinct(probe_block_sms(parts[0], blocks));
  std::set<int> small = distinct(probe_block_sms(parts[1], blocks));
  std::printf("rest partition: %zu SMs seen of %d\n", big.size(), rest);
  EXPECT_LE(static_cast<int>(big.size()), rest);
  EXPECT_GT(static_cast<int>(big.size()), rest - m);  // more than any step below it holds
  for (int id : small) EXPECT_EQ(big.count(id), 0u) << "SM " << id << " is in both partitions";
  // Two entries off the granularity cannot both take the rest.
  EXPECT_THROW(SmPartitions({m + 1, m + 1}), GpuError);
}

TEST(GpuSmPartition, PrimaryContextMemoryWorksInAGreenPartition) {
  SKIP_WITHOUT_GPU();
  SmInfo info = query_sm_info();
  if (!info.green_contexts) GTEST_SKIP() << "no green contexts: " << info.why_not;
  SmPartitions parts({info.min_sms});
  int* dev = nullptr;
  GPUNFV_CUDA(cudaMalloc(&dev, sizeof(int) * 64));
  std::vector<int> host(64, 7), back(64, 0);
  parts[0].make_current();
  GPUNFV_CUDA(cudaMemcpyAsync(dev, host.data(), sizeof(int) * 64, cudaMemcpyHostToDevice, parts[0].stream));
  GPUNFV_CUDA(cudaMemcpyAsync(back.data(), dev, sizeof(int) * 64, cudaMemcpyDeviceToHost, parts[0].stream));
  GPUNFV_CUDA(cudaStreamSynchronize(parts[0].stream));
  SmPartition primary = parts[0];
  primary.green = false;
  primary.make_current();
  GPUNFV_CUDA(cudaFree(dev));
  EXPECT_EQ(back, host);
}

TEST(GpuSmPartition, FallbackCapsBlocks) {
  SKIP_WITHOUT_GPU();
  SmPartitions parts({3, 5}, /*use_green=*/false);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_FALSE(parts[0].green);
  EXPECT_EQ(parts[0].sms, 3);
  EXPECT_EQ(parts[0].max_blocks, 3);
  EXPECT_EQ(parts[1].max_blocks, 5);
  auto ids = probe_block_sms(parts[1], 1000);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_LE(distinct(ids).size(), 5u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), -1), 0);  // every launched block ran
}

TEST(GpuSmPartition, TooManySmsThrow) {
  SKIP_WITHOUT_GPU();
  const int total = query_sm_info().total_sms;
  EXPECT_THROW(SmPartitions({total, 1}, false), GpuError);
  EXPECT_THROW(SmPartitions({total + 1}), GpuError);
  EXPECT_THROW(SmPartitions({-1}), GpuError);
}

}  // namespace
}  // namespace gpunfv
#endif
