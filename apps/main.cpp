#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"mpspack: package and verify AOTInductor model libraries"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
