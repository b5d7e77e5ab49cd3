// list_constants: what a container holds, through libpack's public API only.
//   list_constants model.mpk
// Prints each library, then each weights entry's constants (name, dtype, shape, bytes). Exit 2 when
// the file cannot be opened (the error is one line on stderr).
#include <mpspack/mpspack.hpp>

#include <cstdio>
#include <string>

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: list_constants FILE.mpk\n");
    return 2;
  }
  auto c = mpspack::format::Container::open(argv[1]);
  if (!c) {  // an error value: kind (Io, NotThisFormat, Corrupt, ...) and one line
    std::fprintf(stderr, "list_constants: %s\n", c.error().message.c_str());
    return 2;
  }
  const mpspack::Manifest& m = c->manifest();
  std::printf("%s: %zu libraries, %zu weights (mpspack %s)\n", argv[1], m.libraries.size(), m.weights.size(),
              mpspack::version_string().c_str());
  for (const auto& l : m.libraries)
    std::printf("library %s: %s %s, %s, original sha256 %s\n", l.name.c_str(), l.device.c_str(), l.machine.c_str(),
                mpspack::to_string(l.flavour), l.original_sha256.c_str());
  for (size_t i = 0; i < m.weights.size(); ++i) {
    const auto& w = m.weights[i];
    std::printf("weights %zu: segment %u, %llu bytes, %zu constants\n", i, w.segment,
                (unsigned long long)m.segments[w.segment].size, w.constants.size());
    for (const auto& k : w.constants)
      std::printf("  %s %s %s %llu\n", k.name.c_str(), mpspack::dtype_name(k.dtype).c_str(),
                  shape_text(k.shape).c_str(), (unsigned long long)k.size);
  }
  return 0;
}
