#include "nf/network_function.h"

namespace gpunfv {

std::string NetworkFunction::command(std::string_view cmd) const {
  if (cmd == "describe") return describe();
  return "unknown command '" + std::string(cmd) + "' (try: describe)";
}

}  // namespace gpunfv
