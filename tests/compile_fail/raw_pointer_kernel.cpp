// Must not compile: an NF kernel handed a raw pointer, through which it could write anywhere
// (nf/nf_kernel.h). launch_nf_kernel() applies this check to every NF kernel it launches.
#include "nf/nf_kernel.h"

namespace gpunfv {

void leaky_kernel(NfPackets<> packets, uint32_t* counts) {}
constexpr bool checked = (check_nf_kernel(leaky_kernel), true);

}  // namespace gpunfv
