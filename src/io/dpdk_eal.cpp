#include "io/dpdk_eal.h"

#if GPUNFV_HAVE_DPDK_PORT

#include <fmt/core.h>
#include <fmt/format.h>
#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <mutex>
#include <string>
#include <vector>

namespace gpunfv {

namespace {
std::mutex g_eal_mutex;
bool g_eal_ready = false;
std::vector<std::string> g_eal_args;
}  // namespace

void init_dpdk_eal_once(const ConfigNode& node) {
  std::vector<std::string> args;
  const bool given = node.has("eal");
  if (given)
    for (const ConfigNode& a : node["eal"].items()) args.push_back(a.as_string());
  std::lock_guard lock(g_eal_mutex);
  if (g_eal_ready) {
    if (given && args != g_eal_args)
      node["eal"].fail("eal: differs from the options EAL was initialised with (EAL runs once per "
                       "process; give the same list or none)");
    return;
  }
  if (!given) args = {"--in-memory"};
  std::vector<std::string> argv_store{"gpunfv"};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_store) argv.push_back(s.data());
  argv.push_back(nullptr);
  // rte_eal_init pins this thread to the main lcore; give it its old cores back.
  cpu_set_t before;
  const bool have_affinity = pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0;
  int rc = rte_eal_init(int(argv.size() - 1), argv.data());
  const int init_errno = rte_errno;
  if (have_affinity) pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  // EALREADY: another part of this process (the DPDK peers of tests and benchmarks) brought
  // the EAL up first; its options stand.
  if (rc < 0 && init_errno == EALREADY) rc = 0;
  if (rc < 0)
    (given ? node["eal"] : node)
        .fail(fmt::format("DPDK EAL initialisation failed: {} (options: {})",
                          rte_strerror(init_errno), fmt::join(args, " ")));
  g_eal_ready = true;
  g_eal_args = args;
}

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_DPDK_PORT
