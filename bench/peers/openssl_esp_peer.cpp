#include "peers/openssl_esp_peer.h"

#if GPUNFV_HAVE_OPENSSL

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstring>
#include <stdexcept>

namespace gpunfv::peers {

using namespace esp_framing;

OpenSslEspPeer::OpenSslEspPeer(const EspPeerSa& sa) : sa_(sa) {
  cipher_ = EVP_CIPHER_CTX_new();
  if (!cipher_ ||
      EVP_EncryptInit_ex(cipher_, EVP_aes_128_ctr(), nullptr, sa.enc_key.data(), nullptr) != 1)
    throw std::runtime_error("OpenSSL: AES-128-CTR init failed");
  mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  mac_ctx_ = mac_ ? EVP_MAC_CTX_new(mac_) : nullptr;
  char digest[] = "SHA1";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!mac_ctx_ || EVP_MAC_init(mac_ctx_, sa.auth_key.data(), sa.auth_key.size(), params) != 1)
    throw std::runtime_error("OpenSSL: HMAC-SHA1 init failed");
}

OpenSslEspPeer::~OpenSslEspPeer() {
  EVP_MAC_CTX_free(mac_ctx_);
  EVP_MAC_free(mac_);
  EVP_CIPHER_CTX_free(cipher_);
}

bool OpenSslEspPeer::hmac(const uint8_t* data, size_t len, uint8_t out[20]) {
  size_t n = 0;
  return EVP_MAC_init(mac_ctx_, nullptr, 0, nullptr) == 1 &&  // same key, fresh state
         EVP_MAC_update(mac_ctx_, data, len) == 1 && EVP_MAC_final(mac_ctx_, out, &n, 20) == 1 &&
         n == 20;
}

void OpenSslEspPeer::ctr(uint8_t* data, size_t len, uint64_t iv) {
  uint8_t block[16];
  counter_block(sa_, iv, block);
  int out = 0;
  EVP_EncryptInit_ex(cipher_, nullptr, nullptr, nullptr, block);
  EVP_EncryptUpdate(cipher_, data, &out, data, int(len));
}

size_t OpenSslEspPeer::encapsulate(uint8_t* frame, size_t len, size_t l3_off, uint32_t seq,
                                   uint64_t iv) {
  Outbound o = frame_outbound(frame, len, l3_off, sa_, seq, iv);
  if (!o.len) return 0;
  ctr(frame + o.ct, o.ct_len, iv);
  uint8_t d[20];
  if (!hmac(frame + o.esp, o.icv - o.esp, d)) return 0;
  std::memcpy(frame + o.icv, d, kIcv);
  return o.len;
}

size_t OpenSslEspPeer::decapsulate(uint8_t* frame, size_t len, size_t l3_off) {
  if (len < l3_off + 20) return 0;
  uint8_t* ip = frame + l3_off;
  const size_t ihl = (ip[0] & 0x0F) * 4u;
  const size_t total = get16(ip + 2);
  if ((ip[0] >> 4) != 4 || ip[9] != 50 || ihl < 20 || total < ihl || l3_off + total > len) return 0;
  uint8_t* esp = ip + ihl;
  const size_t esp_len = total - ihl;
  if (esp_len < 16 + 4 + kIcv || get32(esp) != sa_.spi) return 0;
  const size_t ct_len = esp_len - 16 - kIcv;
  if (ct_len % 4) return 0;
  uint8_t* ct = esp + 16;
  uint8_t d[20];
  if (!hmac(esp, 16 + ct_len, d) || CRYPTO_memcmp(d, ct + ct_len, kIcv) != 0) return 0;
  ctr(ct, ct_len, uint64_t(get32(esp + 8)) << 32 | get32(esp + 12));
  const size_t pad = ct[ct_len - 2];
  if (ct[ct_len - 1] != 4 || pad + 2 > ct_len) return 0;
  const size_t inner = get16(ct + 2);
  if (inner < 20 || inner > ct_len - 2 - pad) return 0;
  std::memmove(ip, ct, inner);
  return l3_off + inner;
}

}  // namespace gpunfv::peers

#endif  // GPUNFV_HAVE_OPENSSL
