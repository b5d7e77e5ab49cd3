// What the shim exports, for `inspect` to tell which imports of a model library it lacks.
#pragma once

#include <string_view>
#include <vector>

namespace mpspack::shim {

// Sorted: every aoti_torch_* function the shim defines (aoti_shim.h), and every Sleef_* function of the libsleef
// the shim's consumers link (--no-as-needed, so these names are in the global scope a dlopen'ed model binds to).
std::vector<std::string_view> mpspack_shim_provided_symbols();

// The message of the last failure of a shim function on this thread ("" if none).
std::string_view last_error();

}  // namespace mpspack::shim
