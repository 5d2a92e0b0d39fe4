// `gpunfv profile CONFIG [--sizes ...] [--batches ...] [--out FILE.json] [--sms N]`: fits G-NET's
// performance model for every NF of a configuration on this machine's GPU (sched/profiler.h).
#pragma once

#include <CLI/CLI.hpp>

#include "sched/profiler.h"

namespace gpunfv {

// Adds the subcommand to `app`; its options land in `o`.
CLI::App* add_profile_command(CLI::App& app, ProfileOptions& o);
// Runs it: 0 on success, 2 without a GPU or on bad input (message on stderr), 1 on GPU errors.
int run_profile_command(const ProfileOptions& o);

}  // namespace gpunfv
