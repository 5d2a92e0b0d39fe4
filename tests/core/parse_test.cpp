#include "core/parse.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpunfv {
namespace {

// Builds Ethernet + IPv4 (+ options) + UDP/TCP frames byte by byte.
std::vector<uint8_t> eth(uint16_t ethertype) {
  std::vector<uint8_t> f(12, 0xAA);
  f.push_back(ethertype >> 8);
  f.push_back(ethertype & 0xFF);
  return f;
}

void push16(std::vector<uint8_t>& f, uint16_t v) {
  f.push_back(v >> 8);
  f.push_back(v & 0xFF);
}

std::vector<uint8_t> ipv4_udp(int options_words = 0, uint16_t payload = 8, bool vlan = false) {
  std::vector<uint8_t> f = vlan ? eth(kEtherTypeVlan) : eth(kEtherTypeIpv4);
  if (vlan) {
    push16(f, 0x0064);
    push16(f, kEtherTypeIpv4);
  }
  uint16_t ihl = 5 + options_words;
  f.push_back(0x40 | ihl);
  f.push_back(0);
  push16(f, ihl * 4 + payload);
  push16(f, 1);
  push16(f, 0);
  f.push_back(64);
  f.push_back(kProtoUdp);
  push16(f, 0);
  for (int i = 0; i < 8; ++i) f.push_back(i + 1);
  for (int i = 0; i < options_words * 4; ++i) f.push_back(1);  // NOP options
  for (int i = 0; i < payload; ++i) f.push_back(i);
  return f;
}

DropReason parse(const std::vector<uint8_t>& f, PacketHeaders& h) {
  return parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h);
}

TEST(Parse, Ipv4Udp) {
  PacketHeaders h;
  auto f = ipv4_udp();
  ASSERT_EQ(parse(f, h), DropReason::none);
  EXPECT_EQ(h.ip_version, 4);
  EXPECT_EQ(h.l3_off, 14);
  EXPECT_EQ(h.l4_off, 34);
  EXPECT_EQ(h.l4_proto, kProtoUdp);
}

TEST(Parse, Ipv4OptionsAndVlan) {
  PacketHeaders h;
  auto f = ipv4_udp(2, 8, true);
  ASSERT_EQ(parse(f, h), DropReason::none);
  EXPECT_EQ(h.l3_off, 18);
  EXPECT_EQ(h.l4_off, 18 + 28);
}

TEST(Parse, TruncatedAtEveryLength) {
  // Every prefix of a valid frame is either accepted or dropped with a reason; never read
  // out of bounds (IsoSpan aborts if it were).
  auto f = ipv4_udp(1, 16, true);
  for (size_t n = 0; n < f.size(); ++n) {
    std::vector<uint8_t> cut(f.begin(), f.begin() + n);
    PacketHeaders h;
    EXPECT_NE(parse(cut, h), DropReason::none) << "length " << n;
  }
}

TEST(Parse, BadIhlAndLength) {
  PacketHeaders h;
  auto f = ipv4_udp();
  f[14] = 0x44;  // IHL 4
  EXPECT_EQ(parse(f, h), DropReason::bad_ipv4_ihl);
  f = ipv4_udp();
  f[16] = 0x05;  // total length far beyond the frame
  EXPECT_EQ(parse(f, h), DropReason::bad_ip_length);
  f = ipv4_udp();
  f[14] = 0x65;  // version 6 under an IPv4 EtherType
  EXPECT_EQ(parse(f, h), DropReason::bad_ip_version);
}

TEST(Parse, NonIpPassesUnparsed) {
  auto f = eth(0x0806);
  f.resize(60, 0);
  PacketHeaders h;
  EXPECT_EQ(parse(f, h), DropReason::none);
  EXPECT_EQ(h.ip_version, 0);
}

TEST(Parse, Ipv6Tcp) {
  auto f = eth(kEtherTypeIpv6);
  f.push_back(0x60);
  f.push_back(0);
  push16(f, 0);
  push16(f, 20);  // payload length
  f.push_back(kProtoTcp);
  f.push_back(64);
  for (int i = 0; i < 32; ++i) f.push_back(i);
  for (int i = 0; i < 20; ++i) f.push_back(0);
  f[14 + 40 + 12] = 0x50;  // data offset 5
  PacketHeaders h;
  ASSERT_EQ(parse(f, h), DropReason::none);
  EXPECT_EQ(h.ip_version, 6);
  EXPECT_EQ(h.l4_off, 54);
  f[14 + 40 + 12] = 0x30;  // data offset 3
  EXPECT_EQ(parse(f, h), DropReason::bad_tcp_offset);
}

TEST(FlowHash, SameTupleSameHash) {
  auto a = ipv4_udp();
  auto b = ipv4_udp();
  b.back() ^= 0xFF;  // payload differs, tuple equal
  PacketHeaders ha, hb;
  ASSERT_EQ(parse(a, ha), DropReason::none);
  ASSERT_EQ(parse(b, hb), DropReason::none);
  EXPECT_EQ(flow_hash(IsoSpan<const uint8_t>(a.data(), a.size()), ha),
            flow_hash(IsoSpan<const uint8_t>(b.data(), b.size()), hb));
}

}  // namespace
}  // namespace gpunfv
