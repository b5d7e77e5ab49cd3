#pragma once
#include <string>
namespace mpspack {
// "0.1.0" plus the commit it was built from when known ("0.1.0+g1234abc").
std::string version_string();
}  // namespace mpspack
