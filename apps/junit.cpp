// JUnit XML (junit.hpp): the attributes and elements of the schema CI tools read (Jenkins' junit-10.xsd), and no
// others, so that a strict reader takes it too.
#include "junit.hpp"

#include "cli.hpp"
#include "mpspack/file.hpp"
#include "mpspack/version.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace mpspack::cli {
namespace {

// Text for an attribute or an element: what printable() leaves (no control characters, which XML 1.0 cannot
// hold, and valid UTF-8), with XML's five special characters escaped.
std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : printable(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// The body of an element: its lines escaped one by one, the newlines kept.
std::string xml_lines(const std::string& s) {
  std::string out;
  for (size_t start = 0; start < s.size();) {
    const size_t end = std::min(s.find('\n', start), s.size());
    out += xml_text(s.substr(start, end - start)) + (end < s.size() ? "\n" : "");
    start = end + 1;
  }
  return out;
}

std::string case_xml(const JunitCase& c) {
  using O = JunitCase::Outcome;
  std::string s = fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3f}\"", xml_text(c.name),
                              xml_text(c.classname), c.seconds);
  if (c.outcome == O::passed && c.details.empty()) return s + "/>\n";
  s += ">\n";
  if (c.outcome == O::skipped) s += fmt::format("      <skipped message=\"{}\"/>\n", xml_text(c.message));
  if (c.outcome == O::failure || c.outcome == O::error) {
    const char* tag = c.outcome == O::failure ? "failure" : "error";
    s += fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", tag, xml_text(c.message), xml_text(c.type),
                     xml_lines(c.details), tag);
  } else if (!c.details.empty()) {
    s += fmt::format("      <system-out>{}</system-out>\n", xml_lines(c.details));
  }
  return s + "    </testcase>\n";
}

std::string timestamp_now() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);  // the schema's xs:dateTime, no zone
  return buf;
}

std::string hostname() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 && buf[0] ? std::string(buf) : std::string("localhost");
}

}  // namespace

std::string junit_xml(const JunitSuite& suite) {
  size_t failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string cases;
  for (const JunitCase& c : suite.cases) {
    failures += c.outcome == JunitCase::Outcome::failure;
    errors += c.outcome == JunitCase::Outcome::error;
    skipped += c.outcome == JunitCase::Outcome::skipped;
    seconds += c.seconds;
    cases += case_xml(c);
  }
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\"", suite.cases.size(), failures, errors);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format("<testsuites name=\"{}\" {} time=\"{:.3f}\">\n", xml_text(suite.name), counts, seconds);
  s += fmt::format("  <testsuite name=\"{}\" {} skipped=\"{}\" time=\"{:.3f}\" timestamp=\"{}\" hostname=\"{}\">\n",
                   xml_text(suite.name), counts, skipped, seconds, timestamp_now(), xml_text(hostname()));
  s += "    <properties>\n";
  s += fmt::format("      <property name=\"mpspack_version\" value=\"{}\"/>\n", xml_text(version_string()));
  for (const auto& [k, v] : suite.properties)
    s += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_text(k), xml_text(v));
  s += "    </properties>\n" + cases + "  </testsuite>\n</testsuites>\n";
  return s;
}

Status write_junit(const std::string& path, const JunitSuite& suite) {
  const std::string xml = junit_xml(suite);
  auto s = write_file_atomically(path, [&](AtomicWriter& w) { return w.write(xml.data(), xml.size()); });
  if (!s.ok()) return s.error().context("--junit");
  return {};
}

int finish_with_junit(const std::string& path, const JunitSuite& suite, int code) {
  if (path.empty()) return code;
  if (auto s = write_junit(path, suite); !s.ok()) return fail(s.error());
  return code;
}

}  // namespace mpspack::cli
