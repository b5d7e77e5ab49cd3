// Catch2's main, plus the skip exit code: a run that failed nothing but stopped a case for a missing
// fixture (tests/support/fixtures.hpp) exits with kSkipReturnCode, so CTest says "Skipped", not "Passed".
#define CATCH_CONFIG_RUNNER
#include "fixtures.hpp"

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && mpspack::test::fixture_was_missing()) return mpspack::test::kSkipReturnCode;
  return failed;
}
