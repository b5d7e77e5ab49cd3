// What the shim exports, for `inspect` to tell which imports of a model library it lacks.
#pragma once

#include <string_view>
#include <vector>

namespace mpspack::shim {

// Sorted: every aoti_torch_* function the shim defines (aoti_shim.h), and every Sleef_* function of the libsleef
// the loader opens into the global scope before a model that imports them (loader/library_memory.cpp).
std::vector<std::string_view> mpspack_shim_provided_symbols();

// Whether `name` is one of those: a binary search of each sorted list, with nothing merged or allocated (the
// loader asks for every import of a model library before it loads one).
bool shim_provides(std::string_view name);

// A device part of the shim (the CUDA one) adds the names it provides (its aoti_torch_<device>_* functions
// and the device runtime functions it exports). `names` must stay alive; returns true (to initialise a static).
bool register_provided_symbols(const std::string_view* names, std::size_t count);

// Call after dlopen'ing a model library: keeps the OpenMP runtime it brought (libgomp.so.1) loaded for the rest
// of the process, even when the model is dlclose'd. Without it, closing the last OpenMP model unloads libgomp
// while its worker threads are parked, and the next OpenMP model crashes (seen on Ubuntu 24.04: SIGSEGV running
// a second convolution model after the first was closed). Returns whether libgomp is loaded (and now pinned).
bool pin_openmp_runtime();

// The message of the last failure of a shim function on this thread ("" if none).
std::string_view last_error();

}  // namespace mpspack::shim
