// NF plugins: an NF built outside the gpunfv tree against the installed SDK (find_package(gpunfv)
// and gpunfv_add_nf_plugin, docs/writing-an-nf.md) into a shared library holding its host code
// and its device code. Loaded, the library registers its NF type itself, with the same line a
// built-in NF uses (GPUNFV_PER_PACKET_NF or GPUNFV_REGISTER_NF); its kernels register with the
// process's one CUDA runtime. An `nfs:` entry `{type: plugin, library: PATH, ...}` loads it.
#pragma once

#include <string>

namespace gpunfv {

// Loads the library at `path` (once per file: loading it again returns the same type) and
// returns the NF type it registered. The library stays loaded for the life of the process.
// Throws std::runtime_error when the library cannot be loaded (with the loader's message: a
// missing file, an unresolved symbol, a library built for another gpunfv), registers no NF
// type, registers a type already registered, or registers more than one, or was built for
// another gpunfv (nf/nf_plugin_abi.h).
std::string load_nf_plugin(const std::string& path);

}  // namespace gpunfv
