// Opens a container through the installed public API and lists its libraries and constants.
#include <mpspack/mpspack.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  mpspack::Result<mpspack::format::Container> c = mpspack::format::Container::open(argv[1]);
  if (!c.ok()) {
    std::fprintf(stderr, "consumer: %s\n", c.error().message.c_str());
    return c.error().kind == mpspack::Error::Kind::NotThisFormat ? 3 : 2;
  }
  std::printf("version %s\n", mpspack::version_string().c_str());
  for (const auto& l : c->manifest().libraries)
    std::printf("library %s %s %s\n", l.name.c_str(), l.device.c_str(), mpspack::to_string(l.flavour));
  for (const auto& w : c->manifest().weights)
    for (const auto& k : w.constants) {
      std::printf("constant %s %s [", k.name.c_str(), mpspack::dtype_name(k.dtype).c_str());
      for (size_t i = 0; i < k.shape.size(); ++i) std::printf("%s%lld", i ? "," : "", (long long)k.shape[i]);
      std::printf("] %llu\n", (unsigned long long)k.size);
    }
  return 0;
}
