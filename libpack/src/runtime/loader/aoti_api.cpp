#include "aoti_api.hpp"

#include <dlfcn.h>

namespace mpspack::runtime {
namespace {

template <class F>
void find(void* dl, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(dl, name));
}

}  // namespace

Result<AotiApi> resolve_api(void* dl) {
  AotiApi a;
  find(dl, "AOTInductorModelContainerCreateWithDevice", a.create);
  find(dl, "AOTInductorModelContainerDelete", a.destroy);
  find(dl, "AOTInductorModelContainerRun", a.run);
  find(dl, "AOTInductorModelContainerGetNumInputs", a.num_inputs);
  find(dl, "AOTInductorModelContainerGetNumOutputs", a.num_outputs);
  const std::pair<const char*, bool> required[] = {
      {"AOTInductorModelContainerCreateWithDevice", a.create != nullptr},
      {"AOTInductorModelContainerDelete", a.destroy != nullptr},
      {"AOTInductorModelContainerRun", a.run != nullptr},
      {"AOTInductorModelContainerGetNumInputs", a.num_inputs != nullptr},
      {"AOTInductorModelContainerGetNumOutputs", a.num_outputs != nullptr},
  };
  for (const auto& [name, present] : required)
    if (!present)
      return make_error(Error::Kind::NotThisFormat, "does not export {}: not an AOTInductor model library", name);
  find(dl, "AOTInductorModelContainerGetNumConstants", a.num_constants);
  find(dl, "AOTInductorModelContainerGetConstantName", a.constant_name);
  find(dl, "AOTInductorModelContainerGetConstantOriginalFQN", a.constant_fqn);
  find(dl, "AOTInductorModelContainerGetConstantType", a.constant_type);
  find(dl, "AOTInductorModelContainerGetConstantDtype", a.constant_dtype);
  find(dl, "AOTInductorModelContainerGetConstantDataSize", a.constant_data_size);
  find(dl, "AOTInductorModelContainerGetConstantFromFolded", a.constant_from_folded);
  find(dl, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs", a.update_user_managed_pairs);
  find(dl, "AOTInductorModelContainerExtractConstantsMap", a.extract_constants_map);
  find(dl, "AOTInductorModelUpdateConstantsFromBlob", a.update_constants_from_blob);
  return a;
}

}  // namespace mpspack::runtime
