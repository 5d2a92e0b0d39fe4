// Intel 82599 advanced receive and transmit descriptors (82599 datasheet, sections 7.1.6 and
// 7.2.3.2.4): the format the Host Bypassing prototypes drove from accelerator memory. Each is
// 16 bytes, read by the NIC as written by the driver ("read" layout) and overwritten by the NIC
// when done ("write-back" layout). The done bit (DD) lies in the upper 8 bytes of both layouts,
// so a poller reads the upper quadword with one 64-bit load and sees DD, length and VLAN together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpunfv::gpuring {

// --- receive ---------------------------------------------------------------------------------
union RxDesc {
  struct Read {
    uint64_t pkt_addr;  // bus address of the packet buffer
    uint64_t hdr_addr;  // header buffer (header split, unused: 0); bit 0 overlays DD, so 0 clears it
  } read;
  struct WriteBack {
    uint16_t pkt_info;      // RSS type [3:0], packet type [15:4]
    uint16_t hdr_info;      // header length and SPH (header split, unused)
    uint32_t rss;           // RSS hash
    uint32_t status_error;  // status [19:0] (DD, EOP, ...), errors [31:20]
    uint16_t length;        // PKT_LEN: bytes written to the buffer
    uint16_t vlan;          // VLAN tag (when VP is set)
  } wb;
  uint64_t qword[2];
};
static_assert(sizeof(RxDesc) == 16);
static_assert(offsetof(RxDesc, read.hdr_addr) == 8);
static_assert(offsetof(RxDesc, wb.rss) == 4);
static_assert(offsetof(RxDesc, wb.status_error) == 8);
static_assert(offsetof(RxDesc, wb.length) == 12);
static_assert(offsetof(RxDesc, wb.vlan) == 14);
static_assert(std::is_trivially_copyable_v<RxDesc>);

inline constexpr uint32_t kRxStatusDD = 1u << 0;   // descriptor done
inline constexpr uint32_t kRxStatusEOP = 1u << 1;  // end of packet
inline constexpr uint32_t kRxStatusVP = 1u << 3;   // VLAN tag stripped into wb.vlan
inline constexpr uint32_t kRxErrorRXE = 1u << 29;  // MAC error (CRC, length)

// wb.pkt_info: RSS type in bits [3:0], packet type in [15:4].
inline constexpr uint16_t kRssTypeNone = 0x0;
inline constexpr uint16_t kRssTypeTcpIpv4 = 0x1;
inline constexpr uint16_t kRssTypeIpv4 = 0x2;
inline constexpr uint16_t kRssTypeUdpIpv4 = 0x7;
inline constexpr uint16_t kPtypeIpv4 = 0x01 << 4;
inline constexpr uint16_t kPtypeTcp = 0x10 << 4;
inline constexpr uint16_t kPtypeUdp = 0x20 << 4;

// The upper quadword of an rx write-back, as one 64-bit value (little-endian layout).
inline constexpr uint32_t rx_upper_status(uint64_t upper) { return static_cast<uint32_t>(upper); }
inline constexpr uint16_t rx_upper_length(uint64_t upper) { return static_cast<uint16_t>(upper >> 32); }
inline constexpr uint64_t rx_upper(uint32_t status_error, uint16_t length, uint16_t vlan) {
  return uint64_t(status_error) | (uint64_t(length) << 32) | (uint64_t(vlan) << 48);
}

// --- transmit --------------------------------------------------------------------------------
union TxDesc {
  struct Read {
    uint64_t buffer_addr;    // bus address of the data
    uint32_t cmd_type_len;   // DTALEN [15:0], DTYP [23:20], DCMD [31:24]
    uint32_t olinfo_status;  // STA [3:0], IDX [6:4], POPTS [13:8], PAYLEN [31:14]
  } read;
  struct WriteBack {
    uint64_t rsvd;
    uint32_t nxtseq_seed;
    uint32_t status;  // DD in bit 0, written only for descriptors with RS set
  } wb;
  uint64_t qword[2];
};
static_assert(sizeof(TxDesc) == 16);
static_assert(offsetof(TxDesc, read.cmd_type_len) == 8);
static_assert(offsetof(TxDesc, read.olinfo_status) == 12);
static_assert(offsetof(TxDesc, wb.status) == 12);
static_assert(std::is_trivially_copyable_v<TxDesc>);

inline constexpr uint32_t kTxLenMask = 0xFFFF;           // DTALEN
inline constexpr uint32_t kTxDtypAdvData = 0x3u << 20;   // advanced data descriptor
inline constexpr uint32_t kTxDcmdEOP = 1u << 24;         // end of packet
inline constexpr uint32_t kTxDcmdIFCS = 1u << 25;        // insert FCS
inline constexpr uint32_t kTxDcmdRS = 1u << 27;          // report status: write DD back when sent
inline constexpr uint32_t kTxDcmdDEXT = 1u << 29;        // advanced (extended) descriptor
inline constexpr uint32_t kTxPaylenShift = 14;           // olinfo_status PAYLEN
inline constexpr uint32_t kTxStatusDD = 1u << 0;

inline constexpr uint32_t tx_cmd_type_len(uint32_t len, bool report_status) {
  return (len & kTxLenMask) | kTxDtypAdvData | kTxDcmdDEXT | kTxDcmdEOP | kTxDcmdIFCS |
         (report_status ? kTxDcmdRS : 0u);
}
// DD of a tx write-back, read from the upper quadword.
inline constexpr bool tx_upper_done(uint64_t upper) { return (upper >> 32) & kTxStatusDD; }

}  // namespace gpunfv::gpuring
