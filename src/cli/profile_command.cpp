#include "cli/profile_command.h"

#include <cstdio>

#include "config/config.h"
#include "core/error.h"
#include "gpu/device.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#endif

namespace gpunfv {

CLI::App* add_profile_command(CLI::App& app, ProfileOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "profile", "Measure each NF's kernel and transfer times on this GPU and fit G-NET's model");
  add_profile_options(*sub, o);
  sub->footer("Examples:\n  gpunfv profile examples/router-fulltable.yaml\n"
              "  gpunfv profile examples/router-fulltable.yaml --sizes 64,1518 --out models.json");
  return sub;
}

int run_profile_command(const ProfileOptions& o) {
  constexpr int kExitRuntime = 1, kExitUsage = 2;
  try {
    validate_profile_options(o);
    if (!cuda_device_available()) {
      std::fprintf(stderr, "gpunfv: error: profile needs a CUDA device; %s\n",
                   GPUNFV_HAVE_CUDA ? "none is available on this machine"
                                    : "this build has no CUDA backend");
      return kExitUsage;
    }
#if GPUNFV_HAVE_CUDA
    RuntimeConfig rc = load_runtime_config(o.config);
    ProfileResult r =
        run_profile(o, rc, [&rc](uint32_t size) { return sized_generator(rc, size); }, stderr);
    std::fputs(profile_table(r.models).c_str(), stdout);
    std::fputs(r.allocations.c_str(), stdout);
    if (!o.out.empty()) {
      r.models.save(o.out);
      std::fprintf(stderr, "gpunfv profile: models written to %s\n", o.out.c_str());
    }
    return 0;
#endif
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "gpunfv: error: %s\n", e.what());
    return kExitUsage;
#if GPUNFV_HAVE_CUDA
  } catch (const GpuError& e) {
    std::fprintf(stderr, "gpunfv: GPU error: %s\n", e.what());
    return kExitRuntime;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpunfv: error: %s\n", e.what());
    return kExitRuntime;
  }
  return kExitRuntime;
}

}  // namespace gpunfv
