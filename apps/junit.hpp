// JUnit XML for CI systems (`--junit FILE` of verify, run and run --bench; docs/CI.md): one <testsuite> of
// <testcase>s, each passed, failed (the check said no: exit 1), errored (could not check: exit 2) or skipped
// (nothing to compare with), in the form Jenkins, GitLab and GitHub's test reporters read.
#pragma once

#include "mpspack/result.hpp"

#include <string>
#include <utility>
#include <vector>

namespace mpspack::cli {

struct JunitCase {
  enum class Outcome { passed, failure, error, skipped };
  JunitCase(std::string name_, std::string classname_, double seconds_)
      : name(std::move(name_)), classname(std::move(classname_)), seconds(seconds_) {}
  std::string name;       // the container, library and output checked
  std::string classname;  // mpspack.verify, mpspack.run, mpspack.bench
  double seconds = 0;
  Outcome outcome = Outcome::passed;
  std::string message;  // the one-line reason, for failure, error and skipped
  std::string type;     // what kind of failure or error
  std::string details;  // the numbers behind a failure or error; the figures of a passed case (system-out)
};

struct JunitSuite {
  std::string name;  // "mpspack verify", ...
  std::vector<JunitCase> cases;
  std::vector<std::pair<std::string, std::string>> properties;  // name, value
};

// The document (exposed for tests of its escaping; write_junit writes it).
std::string junit_xml(const JunitSuite& suite);

// Writes the suite to `path` atomically: the file appears whole or not at all.
Status write_junit(const std::string& path, const JunitSuite& suite);

// Writes the suite when `path` is not empty and returns `code`, or kError after the write's one-line error.
int finish_with_junit(const std::string& path, const JunitSuite& suite, int code);

}  // namespace mpspack::cli
