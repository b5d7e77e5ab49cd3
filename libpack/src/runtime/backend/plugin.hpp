// The one function a backend plugin (lib/mpspack/backend_<device>.so, plugin.cpp) exports, with C
// linkage so the loader finds it by name. Both sides are built from this tree by one compiler, so the C++
// types cross as they are.
#pragma once

#include "backend.hpp"

namespace mpspack::runtime {

// Makes the backend for device index `index` into *out (an error when the device is not usable here).
using BackendEntry = void (*)(int32_t index, Result<std::unique_ptr<Backend>>* out);
inline constexpr const char* kBackendEntry = "mpspack_make_backend_v1";

// Opens lib/mpspack/backend_<device>.so and makes its backend; a Runtime error when the file is missing or does
// not load (a broken install).
Result<std::unique_ptr<Backend>> make_plugin_backend(std::string_view device, int32_t index);

}  // namespace mpspack::runtime

#define MPSPACK_BACKEND_PLUGIN_ENTRY extern "C" __attribute__((visibility("default"))) void mpspack_make_backend_v1
