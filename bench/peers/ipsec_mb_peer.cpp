#include "peers/ipsec_mb_peer.h"

#if GPUNFV_HAVE_IPSEC_MB

#include <intel-ipsec-mb.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace gpunfv::peers {

using namespace esp_framing;

struct IpsecMbEspPeer::State {
  IMB_MGR* mgr = nullptr;
  EspPeerSa sa;
  alignas(16) uint32_t enc_keys[4 * 15];  // expanded AES key (room for the library's layout)
  alignas(16) uint32_t dec_keys[4 * 15];
  alignas(16) uint8_t ipad_hash[20];  // SHA-1 state after key ^ ipad, as the library wants it
  alignas(16) uint8_t opad_hash[20];
  std::vector<std::array<uint8_t, 16>> ivs;  // counter blocks of the burst in flight
  std::vector<Outbound> layout;
};

IpsecMbEspPeer::IpsecMbEspPeer(const EspPeerSa& sa) : s_(std::make_unique<State>()) {
  s_->sa = sa;
  s_->mgr = alloc_mb_mgr(0);
  if (!s_->mgr) throw std::runtime_error("intel-ipsec-mb: alloc_mb_mgr failed");
  init_mb_mgr_auto(s_->mgr, nullptr);
  if (imb_get_errno(s_->mgr) != 0) throw std::runtime_error("intel-ipsec-mb: no usable code path");
  IMB_AES_KEYEXP_128(s_->mgr, sa.enc_key.data(), s_->enc_keys, s_->dec_keys);
  alignas(16) uint8_t block[64];
  std::memset(block, 0x36, sizeof block);
  for (size_t i = 0; i < sa.auth_key.size(); ++i) block[i] ^= sa.auth_key[i];
  IMB_SHA1_ONE_BLOCK(s_->mgr, block, s_->ipad_hash);
  std::memset(block, 0x5C, sizeof block);
  for (size_t i = 0; i < sa.auth_key.size(); ++i) block[i] ^= sa.auth_key[i];
  IMB_SHA1_ONE_BLOCK(s_->mgr, block, s_->opad_hash);
  std::memset(block, 0, sizeof block);
}

IpsecMbEspPeer::~IpsecMbEspPeer() {
  if (s_ && s_->mgr) free_mb_mgr(s_->mgr);
}

const char* IpsecMbEspPeer::arch() const {
  switch (s_->mgr->used_arch) {
    case IMB_ARCH_SSE:
      return "SSE";
    case IMB_ARCH_AVX:
      return "AVX";
    case IMB_ARCH_AVX2:
      return "AVX2";
    case IMB_ARCH_AVX512:
      return "AVX512";
    default:
      return "other";
  }
}

void IpsecMbEspPeer::encapsulate_burst(Packet* packets, size_t n) {
  State& s = *s_;
  s.ivs.resize(n);
  s.layout.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Packet& p = packets[i];
    s.layout[i] = frame_outbound(p.frame, p.len, p.l3_off, s.sa, p.seq, p.iv);
    counter_block(s.sa, p.iv, s.ivs[i].data());
  }
  for (size_t i = 0; i < n; ++i) {
    Packet& p = packets[i];
    const Outbound& o = s.layout[i];
    p.len = o.len;
    if (!o.len) continue;
    IMB_JOB* job = IMB_GET_NEXT_JOB(s.mgr);
    job->chain_order = IMB_ORDER_CIPHER_HASH;
    job->cipher_direction = IMB_DIR_ENCRYPT;
    job->cipher_mode = IMB_CIPHER_CNTR;
    job->enc_keys = s.enc_keys;
    job->dec_keys = s.dec_keys;
    job->key_len_in_bytes = 16;
    job->src = p.frame;
    job->dst = p.frame + o.ct;
    job->cipher_start_src_offset_in_bytes = o.ct;
    job->msg_len_to_cipher_in_bytes = o.ct_len;
    job->iv = s.ivs[i].data();
    job->iv_len_in_bytes = 16;  // the whole counter block (RFC 3686 layout)
    job->hash_alg = IMB_AUTH_HMAC_SHA_1;
    job->hash_start_src_offset_in_bytes = o.esp;
    job->msg_len_to_hash_in_bytes = o.icv - o.esp;
    job->auth_tag_output = p.frame + o.icv;
    job->auth_tag_output_len_in_bytes = kIcv;
    job->u.HMAC._hashed_auth_key_xor_ipad = s.ipad_hash;
    job->u.HMAC._hashed_auth_key_xor_opad = s.opad_hash;
    job->user_data = &p;
    IMB_JOB* done = IMB_SUBMIT_JOB(s.mgr);
    while (done) {
      if (done->status != IMB_STATUS_COMPLETED) static_cast<Packet*>(done->user_data)->len = 0;
      done = IMB_GET_COMPLETED_JOB(s.mgr);
    }
  }
  while (IMB_JOB* done = IMB_FLUSH_JOB(s.mgr))
    if (done->status != IMB_STATUS_COMPLETED) static_cast<Packet*>(done->user_data)->len = 0;
}

}  // namespace gpunfv::peers

#endif  // GPUNFV_HAVE_IPSEC_MB
