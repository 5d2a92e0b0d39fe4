// 82599 descriptor encodings and the RSS hash (layouts are static_asserts in descriptors.h).
#include "io/gpuring/ring/descriptors.h"

#include <gtest/gtest.h>

#include <cstring>

#include "io/gpuring/nic_emu/toeplitz.h"

namespace gpunfv::gpuring {
namespace {

TEST(GpuRingDescriptors, RxWriteBackUpperQuadwordHoldsStatusLengthVlan) {
  RxDesc d{};
  d.wb.status_error = kRxStatusDD | kRxStatusEOP;
  d.wb.length = 1514;
  d.wb.vlan = 0x0123;
  EXPECT_EQ(d.qword[1], rx_upper(kRxStatusDD | kRxStatusEOP, 1514, 0x0123));
  EXPECT_EQ(rx_upper_status(d.qword[1]), kRxStatusDD | kRxStatusEOP);
  EXPECT_EQ(rx_upper_length(d.qword[1]), 1514);
}

TEST(GpuRingDescriptors, RearmingClearsDD) {
  RxDesc d{};
  d.qword[1] = rx_upper(kRxStatusDD | kRxStatusEOP, 64, 0);
  d.read.pkt_addr = 0x1000;
  d.read.hdr_addr = 0;  // what the driver writes when it re-arms
  EXPECT_EQ(rx_upper_status(d.qword[1]) & kRxStatusDD, 0u);
}

TEST(GpuRingDescriptors, TxCommandMatchesDatasheetBits) {
  // DTYP 0011b (advanced data), DCMD: EOP (bit 24), IFCS (25), RS (27), DEXT (29).
  EXPECT_EQ(tx_cmd_type_len(60, true), 0x2B300000u | 60u);
  EXPECT_EQ(tx_cmd_type_len(1514, false), 0x23300000u | 1514u);
  TxDesc d{};
  d.read.olinfo_status = 1514u << kTxPaylenShift;
  EXPECT_FALSE(tx_upper_done(d.qword[1]));
  d.wb.status = kTxStatusDD;
  EXPECT_TRUE(tx_upper_done(d.qword[1]));
}

// The verification vectors of Microsoft's RSS specification ("Verifying the RSS Hash
// Calculation"): 66.9.149.187:2794 -> 161.142.100.80:1766.
TEST(GpuRingRss, ToeplitzMatchesSpecificationVectors) {
  const uint8_t ip_only[] = {66, 9, 149, 187, 161, 142, 100, 80};
  const uint8_t with_ports[] = {66, 9, 149, 187, 161, 142, 100, 80, 0x0A, 0xEA, 0x06, 0xE6};
  EXPECT_EQ(toeplitz_hash(ip_only), 0x323e8fc2u);
  EXPECT_EQ(toeplitz_hash(with_ports), 0x51ccc178u);
  // Second vector of the same table: 199.92.111.2:14230 -> 65.69.140.83:4739.
  const uint8_t v2[] = {199, 92, 111, 2, 65, 69, 140, 83, 0x37, 0x96, 0x12, 0x83};
  EXPECT_EQ(toeplitz_hash(std::span<const uint8_t>(v2, 8)), 0xd718262au);
  EXPECT_EQ(toeplitz_hash(v2), 0xc626b0eau);
}

TEST(GpuRingRss, TheTableHashEqualsTheBitwiseOne) {
  const ToeplitzTable table;
  const uint8_t with_ports[] = {66, 9, 149, 187, 161, 142, 100, 80, 0x0A, 0xEA, 0x06, 0xE6};
  EXPECT_EQ(table.hash(with_ports), 0x51ccc178u);
  uint8_t tuple[12];
  uint32_t x = 12345;
  for (int n = 0; n < 20000; ++n) {
    for (uint8_t& b : tuple) {
      x = x * 1103515245u + 12345u;
      b = uint8_t(x >> 16);
    }
    const size_t len = (n % 2) ? 12 : 8;
    ASSERT_EQ(table.hash(std::span<const uint8_t>(tuple, len)), toeplitz_hash(std::span<const uint8_t>(tuple, len)));
  }
}

TEST(GpuRingRss, RedirectionTableSpreadsOverRings) {
  RssTable t(4);
  EXPECT_EQ(t.ring_of(0), 0u);
  EXPECT_EQ(t.ring_of(5), 1u);
  EXPECT_EQ(t.ring_of(0x80 + 3), 3u);  // only the low 7 bits index the table
}

}  // namespace
}  // namespace gpunfv::gpuring
