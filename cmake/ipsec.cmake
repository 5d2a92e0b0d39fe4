# IPsec NF peers (bench/peers): OpenSSL (EVP AES-128-CTR + HMAC-SHA1) and intel-ipsec-mb do the
# same ESP transform with a library, for the test that compares bytes and for the benchmark.
# Linked only by gpunfv_tests and nf_bench (and ipsec_bench when it exists); gpunfv_lib and the
# gpunfv binary carry our own crypto only. Both are optional: without them the peer tests are skipped.
find_package(OpenSSL)
find_library(GPUNFV_IPSEC_MB_LIB NAMES IPSec_MB)
find_path(GPUNFV_IPSEC_MB_INCLUDE NAMES intel-ipsec-mb.h)

set(GPUNFV_HAVE_OPENSSL 0)
set(GPUNFV_HAVE_IPSEC_MB 0)
if(OPENSSL_FOUND)
  set(GPUNFV_HAVE_OPENSSL 1)
endif()
if(GPUNFV_IPSEC_MB_LIB AND GPUNFV_IPSEC_MB_INCLUDE)
  set(GPUNFV_HAVE_IPSEC_MB 1)
endif()
message(STATUS
        "gpunfv: IPsec peers: OpenSSL ${GPUNFV_HAVE_OPENSSL}, intel-ipsec-mb ${GPUNFV_HAVE_IPSEC_MB}")

# Attaches the peers to a target (their sources compile to nothing without the definitions).
function(gpunfv_attach_ipsec_peers target)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/bench)
  target_compile_definitions(${target} PRIVATE GPUNFV_HAVE_OPENSSL=${GPUNFV_HAVE_OPENSSL}
                             GPUNFV_HAVE_IPSEC_MB=${GPUNFV_HAVE_IPSEC_MB})
  if(GPUNFV_HAVE_OPENSSL)
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/bench/peers/openssl_esp_peer.cpp)
    target_link_libraries(${target} PRIVATE OpenSSL::Crypto)
  endif()
  if(GPUNFV_HAVE_IPSEC_MB)
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/bench/peers/ipsec_mb_peer.cpp)
    target_include_directories(${target} SYSTEM PRIVATE ${GPUNFV_IPSEC_MB_INCLUDE})
    target_link_libraries(${target} PRIVATE ${GPUNFV_IPSEC_MB_LIB})
  endif()
endfunction()

foreach(target gpunfv_tests ipsec_bench nf_bench)
  if(TARGET ${target})
    gpunfv_attach_ipsec_peers(${target})
  endif()
endforeach()
