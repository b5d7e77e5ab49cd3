// What every command shares: exit codes, the one-line error report, logging and progress.
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/result.hpp"

#include "mpspack/json_report.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class FormatterBase;
class Validator;
}

namespace mpspack::cli {

// Exit codes (docs/CLI.md): scripts tell "the check said no" from "could not check".
enum Exit : int {
  kOk = 0,
  kCheckFailed = 1,  // verify found damage; run's outputs did not match; diff found differences
  kError = 2,        // bad usage, unreadable or invalid input, I/O failure
};

struct Globals {
  bool quiet = false;
  std::string log_level = "warn";
};

const Globals& globals();
Globals& mutable_globals();

// Prints "mpspack: <message>" on stderr and returns kError (or `code`).
int fail(const Error& e, int code = kError);

// A progress reporter for long work: a bar on a terminal, nothing when stderr is piped or with
// --quiet. `label` is the verb ("build", "verify").
format::Progress progress_bar(std::string label);

// Options for benchmarks of mpspack itself, not a user's choice, go in this group: --help leaves it out. (CLI11's
// own way to hide an option, the group "", also drops the option's name from its errors: ": bogus not in {...}".)
inline constexpr const char* kHiddenGroup = "Hidden";

// CLI11's help, less kHiddenGroup. Set on the top-level app before its subcommands are added: they take it over.
std::shared_ptr<CLI::FormatterBase> help_formatter();

// What values an option takes (docs/CLI.md, "Option ranges"): CLI11 checks, added with ->check(), that refuse any
// other value as a usage error naming the option and the range in plain numbers ("--warmup: -1 is outside
// 0..1000000"). They read the value as typed, before CLI11 converts it: a negative number would otherwise wrap
// into an unsigned option, a number too large for it be cut, and "010" be read as octal. `--help` shows the range
// after the type ("UINT:0..1000000").
CLI::Validator whole_number(uint64_t lo, uint64_t hi);  // decimal digits; rewritten as the number they are
enum class Excluded { none, low, both };                // which ends of a real range are not in it
CLI::Validator real_number(double lo, double hi, Excluded excluded = Excluded::none);
CLI::Validator non_empty();  // a name or path: "" is refused, not taken for "not given"

// Help of --fsync, which build and unpack share.
inline constexpr const char* kFsyncHelp =
    "Wait until the output is on the disk before renaming it into place, so that it survives a power loss "
    "(as slow as the disk writes; without it the output is complete for every reader, like cp's)";

// The kinds of input file a command reads, as flags.
enum InputKind : unsigned {
  kContainerInput = 1,  // an mpspack container
  kLibraryInput = 2,    // an ELF shared library (a model library)
  kPt2Input = 4,        // a .pt2 package (a zip archive)
};

// The one wording every command gives a file whose first bytes are not one of the kinds it reads (an empty file,
// a few bytes, text, random bytes, or a known kind it does not take): "FILE: not a file mpspack <command> reads
// (not an mpspack container)", with "an empty file" or the kind it is when known. Empty when the file starts like
// one of `kinds` (the command's reader then checks the rest), or is not a regular file that opens (the command's
// own open says why: missing, a folder, a FIFO).
std::optional<Error> unknown_input(const std::string& path, std::string_view command, unsigned kinds);

// Text that is safe to print on a terminal (text::printable: controls, C1 and invalid UTF-8 become \xNN).
std::string printable(std::string_view s);

// Pretty-prints JSON (json_text: through utf8_json) on stdout.
void print_json(const nlohmann::json& j);

}  // namespace mpspack::cli
