// What an NF plugin shares with the gpunfv that loads it: the NF interface's revision, whether
// NetworkFunction has its GPU members (GPUNFV_HAVE_CUDA) and IsoSpan its checks
// (GPUNFV_UNCHECKED). The SDK compiles GPUNFV_DEFINE_NF_PLUGIN_ABI into every plugin
// (gpunfv_add_nf_plugin); the loader refuses a plugin whose stamp differs from its own.
#pragma once

// Raised whenever a change to the NF interface breaks plugins built before it.
#define GPUNFV_NF_ABI_REVISION 7

#define GPUNFV_NF_ABI_STR2(x) #x
#define GPUNFV_NF_ABI_STR(x) GPUNFV_NF_ABI_STR2(x)
#ifdef GPUNFV_UNCHECKED
#define GPUNFV_NF_ABI_CHECKS "unchecked"
#else
#define GPUNFV_NF_ABI_CHECKS "checked"
#endif
#define GPUNFV_NF_ABI                                                          \
  "gpunfv NF interface " GPUNFV_NF_ABI_STR(GPUNFV_NF_ABI_REVISION) ", CUDA " \
      GPUNFV_NF_ABI_STR(GPUNFV_HAVE_CUDA) ", " GPUNFV_NF_ABI_CHECKS

#define GPUNFV_DEFINE_NF_PLUGIN_ABI \
  extern "C" __attribute__((visibility("default"))) const char gpunfv_nf_abi[] = GPUNFV_NF_ABI;
