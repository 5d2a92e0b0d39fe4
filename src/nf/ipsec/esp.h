// ESP in tunnel mode (RFC 4303) with AES-128-CTR (RFC 3686) and HMAC-SHA1-96 (RFC 2404): the
// per-packet transforms, one source for both backends.
//
// Outbound, a frame   [L2][inner IPv4 packet][L2 trailer?]
// becomes             [L2][outer IPv4 20][SPI 4][seq 4][IV 8][ENC(inner, pad, pad len, 4)][ICV 12]
// with the L2 header kept as it was (its EtherType is IPv4 already) and any Ethernet padding
// after the inner packet left out. Inbound reverses it and checks everything on the way.
//
// Each NF runs in three steps per batch, because a sequence number (outbound) and the replay
// window (inbound) depend on the order of packets within an SA while everything else is
// independent per packet:
//   outbound: select the SA (per packet) -> number the packets of each SA in packet order
//             (ordered pass, esp_order.h) -> encapsulate (per packet, this file)
//   inbound:  verify, decrypt, strip (per packet, this file) -> replay window in packet order
//             (ordered pass), which turns accepted duplicates into esp_replay drops.
// Per-packet steps hand data to the ordered pass through the NF's slice of the per-packet
// results record (EspRecord).
#pragma once

#include <cstdint>

#include "core/batch.h"
#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/internet_checksum.h"
#include "core/parse.h"
#include "core/word_access.h"
#include "nf/ipsec/aes128.h"
#include "nf/ipsec/hmac_sha1.h"
#include "nf/ipsec/sa_table.h"
#include "nf/nf_drops.h"
#include "nf/nf_packets.h"

namespace gpunfv {

#define GPUNFV_IPSEC_DROPS(X)                                                           \
  X(esp_bad_icv, "ESP integrity check value does not verify (ipsec inbound)")           \
  X(esp_replay, "ESP sequence number replayed or left of the window (ipsec inbound)")   \
  X(esp_unknown_spi, "no SA with the packet's SPI (ipsec inbound)")                     \
  X(esp_malformed, "ESP packet too short, misaligned, fragmented or badly padded")     \
  X(ipsec_no_sa, "no SA applies to the packet (ipsec, bypass off)")                     \
  X(esp_seq_exhausted, "SA sent 2^32-1 packets, needs new keys (ipsec outbound)")
GPUNFV_NF_DROP_REASONS(IpsecDrop, "ipsec", GPUNFV_IPSEC_DROPS);

}  // namespace gpunfv

namespace gpunfv::esp {

inline constexpr uint8_t kProtoEsp = 50;
inline constexpr uint8_t kNextHeaderIpv4 = 4;  // IP-in-IP: tunnel mode carries an IPv4 packet
inline constexpr uint32_t kOuterIpBytes = 20;
inline constexpr uint32_t kHeaderBytes = 8;  // SPI + sequence number
inline constexpr uint32_t kIvBytes = 8;
inline constexpr uint32_t kIcvBytes = hmac_sha1::kIcvBytes;
inline constexpr uint8_t kOuterTtl = 64;
// Largest growth of a packet: outer header, ESP header, IV, up to 3 pad bytes, pad length and
// next header, ICV.
inline constexpr uint32_t kMaxGrowth = kOuterIpBytes + kHeaderBytes + kIvBytes + 3 + 2 + kIcvBytes;
// Smallest ESP payload we accept: header, IV, 4 bytes of ciphertext (pad length + next header
// rounded up to the 4-byte alignment RFC 4303 2.4 requires), ICV.
inline constexpr uint32_t kMinEspBytes = kHeaderBytes + kIvBytes + 4 + kIcvBytes;

// --- the NF's slice of the per-packet results record ---------------------------------------

inline constexpr uint32_t kRecordBytes = 12;
inline constexpr uint32_t kSeqExhausted = 1u;  // outbound: the SA has sent 2^32 - 1 packets
inline constexpr uint32_t kAccepted = 2u;      // inbound: ICV verified, decrypted, stripped

// The record's words, for passes that read or write one field as an aligned word
// (NfPackets::result_word).
inline constexpr uint32_t kRecordSa = 0, kRecordSeq = 1, kRecordFlags = 2;

struct EspRecord {
  uint32_t sa = kNoSa;  // SA index, or kNoSa (no SA applies: bypassed or dropped)
  uint32_t seq = 0;     // ESP sequence number
  uint32_t flags = 0;
};

// A record from / into the NF's slice of a packet's results (kRecordBytes): little-endian
// words on both backends, so a record copied back from the device reads the same, read and
// written as one run with one bounds check (word_access.h).
GPUNFV_HD inline EspRecord read_record(IsoSpan<const uint8_t> r) {
  uint32_t w[3];
  words::load_le_words(r, 0, w);
  return EspRecord{w[0], w[1], w[2]};
}
GPUNFV_HD inline void write_record(IsoSpan<uint8_t> r, const EspRecord& e) {
  const uint32_t w[3] = {e.sa, e.seq, e.flags};
  words::store_le_words(r, 0, w);
}
// Host side, for collect() and tests: packet i's record at `offset` of a finished batch.
inline EspRecord read_record(const BatchView& b, uint32_t i, uint32_t offset) {
  return read_record(b.results.subspan(size_t(i) * b.result_stride + offset, kRecordBytes));
}

// --- what the per-packet functions read ----------------------------------------------------

// The NF's record and drop codes come with each packet (NfPackets, PacketRef::results).
struct EspView {
  SaTableRef table;
  bool bypass = false;    // packets no SA applies to pass unchanged instead of being dropped
  uint32_t iv_epoch = 0;  // high 32 bits of every IV (the low 32 are the sequence number)
};
static_assert(iso_view<EspView>, GPUNFV_ISO_VIEW_MESSAGE);

GPUNFV_HD GPUNFV_FORCEINLINE void store_be32(IsoSpan<uint8_t> f, uint32_t off, uint32_t v) {
  store_be16(f, off, uint16_t(v >> 16));
  store_be16(f, off + 2, uint16_t(v));
}

// Pad bytes for an inner packet of n bytes: payload + pad + 2 trailer bytes is a multiple of 4
// (RFC 4303 2.4; CTR itself needs no block alignment, RFC 3686 section 3).
GPUNFV_HD GPUNFV_FORCEINLINE uint32_t pad_bytes(uint32_t n) { return (4 - (n + 2) % 4) % 4; }

// The IV of the packet with sequence number `seq`: unique per SA because sequence numbers never
// repeat within an SA (RFC 3686 section 3 allows a counter), and the same on both backends.
GPUNFV_HD GPUNFV_FORCEINLINE uint64_t iv_of(uint32_t epoch, uint32_t seq) {
  return (uint64_t(epoch) << 32) | seq;
}

// The one's complement checksum of a 20-byte IPv4 header at `ip` (checksum field zero).
GPUNFV_HD inline uint16_t ipv4_header_checksum(IsoSpan<const uint8_t> f, uint32_t ip) {
  return static_cast<uint16_t>(~ipv4_checksum::ones_sum(f, ip, 20));
}

// Copies n bytes from `from` to `to` within one span when the ranges overlap, 16 bytes at a
// time through 16-byte views (constant indices: the bounds checks fold away). Moving up
// (to > from) goes last chunk first, moving down first chunk first, so no byte is overwritten
// before it is read. Both callers move by at least 36 bytes, so a chunk's source and
// destination never overlap each other.
GPUNFV_HD inline void move_bytes(IsoSpan<uint8_t> s, uint32_t from, uint32_t to, uint32_t n) {
  // ESP moves by 36 bytes (outbound) or its header size: a multiple of 4 keeps source and
  // destination in the same word alignment, so whole words move (word_access.h: why).
  const uint32_t distance = to > from ? to - from : from - to;
  if (distance % 4 == 0 && distance >= 16) {
    words::move_aligned_distance(s, from, to, n);
    return;
  }
  auto chunk = [&](uint32_t at) {
    IsoSpan<uint8_t> src = s.subspan(from + at, 16), dst = s.subspan(to + at, 16);
    GPUNFV_IPSEC_UNROLL
    for (int j = 0; j < 16; ++j) dst[j] = src[j];
  };
  auto tail = [&](uint32_t at) {
    for (uint32_t j = at; j < n; ++j) s[to + j] = s[from + j];
  };
  const uint32_t whole = n / 16 * 16;
  if (to > from) {
    tail(whole);
    for (uint32_t at = whole; at > 0; at -= 16) chunk(at - 16);
  } else {
    for (uint32_t at = 0; at < whole; at += 16) chunk(at);
    tail(whole);
  }
}

// --- outbound step 1: SA selection (per packet) --------------------------------------------

// The SA of packet i, which is here (kNoSa: none applies).
GPUNFV_HD inline uint32_t outbound_sa_of(const NfPackets<>& packets, uint32_t i, const EspView& v) {
  const PacketReader p = packets.packet(i);
  const PacketHeaders& h = p.headers();
  return h.ip_version == 4 ? v.table.find_by_destination(load_be32(p.frame(), h.l3_off + 16)) : kNoSa;
}

GPUNFV_HD inline void select_outbound_sa(const NfPackets<>& packets, uint32_t i, const EspView& v) {
  if (!packets.here(i)) return;
  EspRecord rec;
  rec.sa = outbound_sa_of(packets, i, v);
  write_record(packets.packet(i).results(), rec);
}

// --- outbound step 3: encapsulation (per packet; step 2 has set the sequence number) --------

// What an encapsulation's three parts hand each other: begin() checks the packet, moves the
// inner packet up and writes the trailer; the CTR keystream blocks are XORed in (each block
// depends only on its number, so GPU lanes may share a packet's: esp_crypto.cu); end() writes the
// ESP and outer headers and the ICV. operator() runs the three in that order on one thread.
struct EncapLayout {
  bool proceed = false;  // begin() passed the packet on to be encrypted (else its verdict stands)
  uint32_t sa = 0, seq = 0;
  uint32_t ip = 0, ct = 0, ct_len = 0;  // the outer header's offset, the ciphertext's range
  uint8_t tos = 0;
  uint16_t df = 0;
  GPUNFV_HD uint32_t esp() const { return ip + kOuterIpBytes; }
  GPUNFV_HD uint32_t icv() const { return ct + ct_len; }
  GPUNFV_HD uint32_t end() const { return icv() + kIcvBytes; }
};

// Table: where AES reads its round table (aes128.h); the CPU and the GPU's default read the
// one global copy, the GPU's crypto kernels their staged per-lane copies.
template <typename Table = aes::GlobalTable>
struct EncapsulateWith {
  using Drops = IpsecDrop;
  Table te{};
  GPUNFV_HD NfVerdict operator()(const EspView& v, PacketRef p) const {
    EncapLayout l;
    const NfVerdict r = begin(v, p, l);
    if (!l.proceed) return r;
    const Sa& sa = v.table.sas[l.sa];
    aes::ctr_xor(sa.enc, sa.nonce, iv_of(v.iv_epoch, l.seq), p.slot(), l.ct, l.ct_len, te);
    return end(v, p, l);
  }

  // Checks, the SA, the inner packet moved up by 36 bytes, the trailer. `l.proceed` false: the
  // packet is done with the verdict returned (a drop, or passed unchanged in bypass).
  GPUNFV_HD NfVerdict begin(const EspView& v, PacketRef p, EncapLayout& l) const {
    const PacketHeaders& h = p.headers();
    const EspRecord rec = read_record_of(p);
    if (rec.sa == kNoSa) {
      if (v.bypass) return DropReason::none;
      return h.ip_version == 4 ? NfVerdict(IpsecDrop::ipsec_no_sa) : DropReason::not_ipv4;
    }
    if (rec.flags & kSeqExhausted) return IpsecDrop::esp_seq_exhausted;

    IsoSpan<uint8_t> s = p.slot();
    const uint32_t ip = h.l3_off;
    const uint32_t inner = load_be16(s, ip + 2);  // parse_headers: it lies within the frame
    const uint32_t ct_len = inner + pad_bytes(inner) + 2;
    const uint32_t ct = ip + kOuterIpBytes + kHeaderBytes + kIvBytes;
    const uint32_t end = ct + ct_len + kIcvBytes;
    if (end > s.size() || end > 0xFFFF || end - ip > 0xFFFF) return DropReason::oversize;

    // The headers are written through views of their constant sizes, each checked once: the
    // checks of their fields' constant offsets fold away.
    // Read what the outer header copies before the inner packet moves.
    const IsoSpan<const uint8_t> inner_ip = s.subspan(ip, kOuterIpBytes);
    l.tos = inner_ip[1];  // DSCP and ECN copied (RFC 4301 5.1.2.1, RFC 6040 normal mode)
    l.df = load_be16(inner_ip, 6) & 0x4000;  // DF copied from the inner header

    // Move the inner packet up by 36 bytes to make room for the headers.
    move_bytes(s, ip, ct, inner);
    // Trailer: pad bytes 1, 2, 3 (RFC 4303 2.4), pad length, next header.
    const uint32_t pad = ct_len - inner - 2;
    const IsoSpan<uint8_t> trailer = s.subspan(ct + inner, pad + 2);
    for (uint32_t k = 0; k < pad; ++k) trailer[k] = uint8_t(k + 1);
    trailer[pad] = uint8_t(pad);
    trailer[pad + 1] = kNextHeaderIpv4;

    l.proceed = true;
    l.sa = rec.sa;
    l.seq = rec.seq;
    l.ip = ip;
    l.ct = ct;
    l.ct_len = ct_len;
    return DropReason::none;
  }

  // Keystream block `block` (from 1) of the packet begin() laid out as `l`.
  GPUNFV_HD GPUNFV_FORCEINLINE void keystream(const EspView& v, const EncapLayout& l, uint32_t block,
                                              uint32_t ks[4]) const {
    const Sa& sa = v.table.sas[l.sa];
    aes::keystream_block(sa.enc, sa.nonce, iv_of(v.iv_epoch, l.seq), block, ks, te);
  }

  // ESP header, outer IPv4 header, ICV, length and headers, once the ciphertext is in place.
  GPUNFV_HD NfVerdict end(const EspView& v, PacketRef p, const EncapLayout& l) const {
    const Sa& sa = v.table.sas[l.sa];
    IsoSpan<uint8_t> s = p.slot();
    const uint64_t iv = iv_of(v.iv_epoch, l.seq);
    const uint32_t esp = l.esp(), icv = l.icv(), end = l.end();
    const IsoSpan<uint8_t> esp_iv = s.subspan(esp, kHeaderBytes + kIvBytes);
    store_be32(esp_iv, 0, sa.spi);
    store_be32(esp_iv, 4, l.seq);
    store_be32(esp_iv, 8, uint32_t(iv >> 32));
    store_be32(esp_iv, 12, uint32_t(iv));

    // Outer IPv4 header: no options, ID from the sequence number (unique enough: the outer
    // packet is never fragmented by us), TTL 64, protocol 50, fresh checksum.
    const IsoSpan<uint8_t> outer = s.subspan(l.ip, kOuterIpBytes);
    outer[0] = 0x45;
    outer[1] = l.tos;
    store_be16(outer, 2, uint16_t(end - l.ip));
    store_be16(outer, 4, uint16_t(l.seq));
    store_be16(outer, 6, l.df);
    outer[8] = kOuterTtl;
    outer[9] = kProtoEsp;
    store_be16(outer, 10, 0);
    store_be32(outer, 12, sa.local);
    store_be32(outer, 16, sa.remote);
    store_be16(outer, 10, ipv4_header_checksum(outer, 0));

    // Encrypt-then-MAC: the ICV covers ESP header, IV and ciphertext (RFC 4303 3.3.4).
    hmac_sha1::write_icv(sa.auth, s, esp, icv - esp, s, icv);

    p.set_length(uint16_t(end));
    PacketHeaders& out = p.headers();
    out.l4_proto = kProtoEsp;
    out.l4_off = esp <= 255 ? uint8_t(esp) : 0;
    return DropReason::none;
  }

  GPUNFV_HD static EspRecord read_record_of(const PacketRef& p) { return read_record(p.results()); }
};

// --- inbound step 1: verify, decrypt, strip (per packet) -----------------------------------

template <typename Table = aes::GlobalTable>
struct DecapsulateWith {
  using Drops = IpsecDrop;
  Table te{};
  GPUNFV_HD NfVerdict operator()(const EspView& v, PacketRef p) const {
    IsoSpan<uint8_t> rec = p.results();
    // Every packet this step passes gets a record: the replay pass reads only fresh ones.
    write_record(rec, EspRecord{});
    const PacketHeaders h = p.headers();
    if (h.ip_version != 4 || h.l4_proto != kProtoEsp) {
      if (v.bypass) return DropReason::none;
      return h.ip_version == 4 ? NfVerdict(IpsecDrop::ipsec_no_sa) : DropReason::not_ipv4;
    }
    IsoSpan<uint8_t> f = p.frame();
    const uint32_t ip = h.l3_off;
    const uint32_t ihl = (f[ip] & 0x0Fu) * 4u;
    const uint32_t total = load_be16(f, ip + 2);  // parse_headers: ihl <= total, within frame
    // A fragment of an ESP packet would need reassembly first (RFC 4303 3.4.1).
    if (load_be16(f, ip + 6) & 0x3FFF) return IpsecDrop::esp_malformed;
    const uint32_t esp = ip + ihl;
    const uint32_t esp_len = total - ihl;
    if (esp_len < kHeaderBytes) return IpsecDrop::esp_malformed;
    const uint32_t sa_index = v.table.find_by_spi(load_be32(f, esp));
    if (sa_index == kNoSa) return IpsecDrop::esp_unknown_spi;
    if (esp_len < kMinEspBytes) return IpsecDrop::esp_malformed;
    const uint32_t ct = esp + kHeaderBytes + kIvBytes;
    const uint32_t ct_len = esp_len - kHeaderBytes - kIvBytes - kIcvBytes;
    if (ct_len % 4 != 0) return IpsecDrop::esp_malformed;  // RFC 4303 2.4: 4-byte aligned
    const uint32_t icv = ct + ct_len;
    const Sa& sa = v.table.sas[sa_index];

    // Integrity first: nothing of an unauthenticated packet is decrypted or trusted. (RFC 4303
    // 3.4.3 lets a receiver reject duplicates before the ICV check as a shortcut; here the
    // window is consulted after it, in the ordered pass, so a forged duplicate is counted as
    // esp_bad_icv on both backends alike.)
    if (!hmac_sha1::icv_matches(sa.auth, f, esp, icv - esp, icv)) return IpsecDrop::esp_bad_icv;

    const uint32_t seq = load_be32(f, esp + 4);
    const uint64_t iv = (uint64_t(load_be32(f, esp + 8)) << 32) | load_be32(f, esp + 12);
    aes::ctr_xor(sa.enc, sa.nonce, iv, f, ct, ct_len, te);

    const uint32_t pad = f[icv - 2];
    if (f[icv - 1] != kNextHeaderIpv4 || pad + 2 > ct_len) return IpsecDrop::esp_malformed;
    // The receiver checks the default padding 1, 2, 3, ... (RFC 4303 2.4, "SHOULD inspect").
    uint32_t bad_pad = 0;
    for (uint32_t k = 0; k < pad; ++k) bad_pad |= f[icv - 2 - pad + k] ^ uint8_t(k + 1);
    if (bad_pad) return IpsecDrop::esp_malformed;

    // The inner packet: an IPv4 header whose total length fits what was carried (anything
    // after it is TFC padding, RFC 4303 2.7, and is discarded).
    const uint32_t carried = ct_len - 2 - pad;
    if (carried < 20 || (f[ct] >> 4) != 4) return IpsecDrop::esp_malformed;
    const uint32_t inner_ihl = (f[ct] & 0x0Fu) * 4u;
    const uint32_t inner = load_be16(f, ct + 2);
    if (inner_ihl < 20 || inner < inner_ihl || inner > carried) return IpsecDrop::esp_malformed;

    // Strip: the inner packet moves down to where the outer header began.
    move_bytes(f, ct, ip, inner);
    p.set_length(uint16_t(ip + inner));
    PacketHeaders inner_headers;
    DropReason r = parse_headers(p.frame(), inner_headers);
    if (r != DropReason::none) return r;
    p.headers() = inner_headers;

    write_record(rec, EspRecord{sa_index, seq, kAccepted});
    return DropReason::none;
  }
};

using Encapsulate = EncapsulateWith<>;
using Decapsulate = DecapsulateWith<>;

}  // namespace gpunfv::esp
