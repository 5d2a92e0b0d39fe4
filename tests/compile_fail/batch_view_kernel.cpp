// Must not compile: an NF kernel handed the whole batch, every NF's packets, verdicts and
// results (nf/nf_kernel.h). launch_nf_kernel() applies this check to every NF kernel it launches.
#include "nf/nf_kernel.h"

namespace gpunfv {

void greedy_kernel(BatchView b, uint8_t position) {}
constexpr bool checked = (check_nf_kernel(greedy_kernel), true);

}  // namespace gpunfv
