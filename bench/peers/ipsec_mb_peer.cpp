#include "peers/ipsec_mb_peer.h"

#if GPUNFV_HAVE_IPSEC_MB

#include <intel-ipsec-mb.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace gpunfv::peers {

using namespace esp_framing;

// One SA's key material, in the layouts the library wants.
struct SaKeys {
  EspPeerSa sa;
  alignas(16) uint32_t enc_keys[4 * 15];  // expanded AES key (room for the library's layout)
  alignas(16) uint32_t dec_keys[4 * 15];
  alignas(16) uint8_t ipad_hash[20];  // SHA-1 state after key ^ ipad, as the library wants it
  alignas(16) uint8_t opad_hash[20];
};

struct IpsecMbEspPeer::State {
  IMB_MGR* mgr = nullptr;
  std::vector<std::unique_ptr<SaKeys>> sas;
  std::vector<std::array<uint8_t, 16>> ivs;  // counter blocks of the jobs in flight
  std::vector<Outbound> layout;
};

namespace {

void expand_keys(IMB_MGR* mgr, SaKeys& k) {
  IMB_AES_KEYEXP_128(mgr, k.sa.enc_key.data(), k.enc_keys, k.dec_keys);
  alignas(16) uint8_t block[64];
  std::memset(block, 0x36, sizeof block);
  for (size_t i = 0; i < k.sa.auth_key.size(); ++i) block[i] ^= k.sa.auth_key[i];
  IMB_SHA1_ONE_BLOCK(mgr, block, k.ipad_hash);
  std::memset(block, 0x5C, sizeof block);
  for (size_t i = 0; i < k.sa.auth_key.size(); ++i) block[i] ^= k.sa.auth_key[i];
  IMB_SHA1_ONE_BLOCK(mgr, block, k.opad_hash);
  std::memset(block, 0, sizeof block);
}

// A completed job: a failed one zeroes its packet's length.
void settle(IMB_JOB* job) {
  if (job->status != IMB_STATUS_COMPLETED)
    static_cast<IpsecMbEspPeer::Packet*>(job->user_data)->len = 0;
}

}  // namespace

IpsecMbEspPeer::IpsecMbEspPeer(const EspPeerSa& sa) : IpsecMbEspPeer(std::span<const EspPeerSa>(&sa, 1)) {}

IpsecMbEspPeer::IpsecMbEspPeer(std::span<const EspPeerSa> sas) : s_(std::make_unique<State>()) {
  s_->mgr = alloc_mb_mgr(0);
  if (!s_->mgr) throw std::runtime_error("intel-ipsec-mb: alloc_mb_mgr failed");
  init_mb_mgr_auto(s_->mgr, nullptr);
  if (imb_get_errno(s_->mgr) != 0) throw std::runtime_error("intel-ipsec-mb: no usable code path");
  for (const EspPeerSa& sa : sas) {
    s_->sas.push_back(std::make_unique<SaKeys>());
    s_->sas.back()->sa = sa;
    expand_keys(s_->mgr, *s_->sas.back());
  }
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
    if (p.sa >= s.sas.size()) throw std::out_of_range("intel-ipsec-mb peer: no such SA");
    const EspPeerSa& sa = s.sas[p.sa]->sa;
    s.layout[i] = frame_outbound(p.frame, p.len, p.l3_off, sa, p.seq, p.iv);
    counter_block(sa, p.iv, s.ivs[i].data());
    p.len = s.layout[i].len;
  }
  // One job per packet, submitted as soon as it is filled; the manager keeps up to its queue's
  // worth in flight and returns them as they complete; one flush at the end of the call.
  for (size_t i = 0; i < n; ++i) {
    const Outbound& o = s.layout[i];
    if (!o.len) continue;
    Packet& p = packets[i];
    const SaKeys& key = *s.sas[p.sa];
    IMB_JOB* job = IMB_GET_NEXT_JOB(s.mgr);
    job->chain_order = IMB_ORDER_CIPHER_HASH;
    job->cipher_direction = IMB_DIR_ENCRYPT;
    job->cipher_mode = IMB_CIPHER_CNTR;
    job->enc_keys = key.enc_keys;
    job->dec_keys = key.dec_keys;
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
    job->u.HMAC._hashed_auth_key_xor_ipad = key.ipad_hash;
    job->u.HMAC._hashed_auth_key_xor_opad = key.opad_hash;
    job->user_data = &p;
    for (IMB_JOB* done = IMB_SUBMIT_JOB(s.mgr); done; done = IMB_GET_COMPLETED_JOB(s.mgr))
      settle(done);
  }
  while (IMB_JOB* done = IMB_FLUSH_JOB(s.mgr)) settle(done);
}

}  // namespace gpunfv::peers

#endif  // GPUNFV_HAVE_IPSEC_MB
