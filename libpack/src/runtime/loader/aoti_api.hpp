// The C API every AOTInductor model library exports (aoti-abi.md section 2), resolved with dlsym.
#pragma once

#include "runtime/shim/aoti_shim.h"
#include "mpspack/result.hpp"

#include <cstddef>
#include <cstdint>

namespace mpspack::runtime {

using AOTInductorModelContainerHandle = void*;
struct AOTInductorConstantMapEntry {
  const char* name;
  AtenTensorHandle handle;
};

struct AotiApi {
  using H = AOTInductorModelContainerHandle;
  // Required.
  int32_t (*create)(H*, size_t, const char*, const char*) = nullptr;
  int32_t (*destroy)(H) = nullptr;
  int32_t (*run)(H, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*) = nullptr;
  int32_t (*num_inputs)(H, size_t*) = nullptr;
  int32_t (*num_outputs)(H, size_t*) = nullptr;
  // Optional: constants.
  int32_t (*num_constants)(H, size_t*) = nullptr;
  int32_t (*constant_name)(H, size_t, const char**) = nullptr;
  int32_t (*constant_fqn)(H, size_t, const char**) = nullptr;
  int32_t (*constant_type)(H, size_t, int32_t*) = nullptr;
  int32_t (*constant_dtype)(H, size_t, int32_t*) = nullptr;
  int32_t (*constant_data_size)(H, size_t, size_t*) = nullptr;
  int32_t (*constant_from_folded)(H, size_t, bool*) = nullptr;
  int32_t (*update_user_managed_pairs)(H, const AOTInductorConstantMapEntry*, size_t, bool, bool) = nullptr;
  int32_t (*extract_constants_map)(H, void* /* std::unordered_map<std::string, AtenTensorHandle>* */, bool) = nullptr;
  int32_t (*update_constants_from_blob)(H, const uint8_t*) = nullptr;
};

// Looks every function up in `dl`; an error names the first required one that is missing.
Result<AotiApi> resolve_api(void* dl);

}  // namespace mpspack::runtime
