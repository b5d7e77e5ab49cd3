// Reads `constants_info_[i].field = value;` assignments out of an AOTInductor wrapper .cpp.
// A small hand-written scanner: every step checks the remaining length, numbers are parsed with
// overflow checks, strings and lists have caps, and anything unexpected becomes an Error.
#include "mpspack/pt2/wrapper_constants.hpp"

#include "mpspack/bytes.hpp"
#include "mpspack/dtype.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

namespace mpspack::pt2 {
namespace {

constexpr uint64_t kMaxConstants = 1u << 20;
constexpr size_t kMaxStringLength = 4096;
constexpr size_t kMaxDims = 64;
constexpr size_t kMaxValueLength = 512;  // non-string, non-list values

constexpr std::string_view kMarker = "constants_info_[";

struct Fields {
  std::optional<std::string> name, fqn;
  std::optional<int32_t> dtype, type;
  std::optional<int64_t> storage_offset;
  std::optional<uint64_t> data_size;
  std::optional<bool> from_folded;
  std::optional<std::vector<int64_t>> shape, stride;
};

// A cursor over the text; every accessor is bounds-checked.
class Scanner {
 public:
  Scanner(std::string_view text, size_t pos) : t_(text), p_(pos) {}
  size_t pos() const { return p_; }
  bool done() const { return p_ >= t_.size(); }
  char peek() const { return done() ? '\0' : t_[p_]; }
  void skip_space() {
    while (!done() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  std::string_view ident() {
    skip_space();
    size_t b = p_;
    while (!done() && (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_')) ++p_;
    return t_.substr(b, p_ - b);
  }
  // A decimal integer with an optional sign and C++ suffixes (L, LL, U, UL, ...).
  std::optional<int64_t> integer() {
    skip_space();
    size_t b = p_;
    if (peek() == '-' || peek() == '+') ++p_;
    while (!done() && std::isdigit(static_cast<unsigned char>(t_[p_]))) ++p_;
    std::string_view digits = t_.substr(b, p_ - b);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    while (!done() && (t_[p_] == 'L' || t_[p_] == 'l' || t_[p_] == 'U' || t_[p_] == 'u')) ++p_;
    return v;
  }
  // A C++ string literal with the escapes the generator can emit.
  std::optional<std::string> string_literal() {
    skip_space();
    if (peek() != '"') return std::nullopt;
    ++p_;
    std::string out;
    while (!done()) {
      char c = t_[p_++];
      if (c == '"') return out;
      if (c == '\n') return std::nullopt;
      if (c == '\\') {
        if (done()) return std::nullopt;
        char e = t_[p_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case '0': c = '\0'; break;
          case '\\':
          case '"':
          case '\'':
          case '?': c = e; break;
          default: return std::nullopt;
        }
      }
      if (out.size() >= kMaxStringLength) return std::nullopt;
      out += c;
    }
    return std::nullopt;
  }
  // `{a, b, ...}` of integers, possibly empty.
  std::optional<std::vector<int64_t>> int_list() {
    if (!eat('{')) return std::nullopt;
    std::vector<int64_t> out;
    if (eat('}')) return out;
    for (;;) {
      auto v = integer();
      if (!v || out.size() >= kMaxDims) return std::nullopt;
      out.push_back(*v);
      if (eat('}')) return out;
      if (!eat(',')) return std::nullopt;
    }
  }
  // Everything up to the next ';' (bounded), trimmed.
  std::optional<std::string_view> until_semicolon() {
    skip_space();
    size_t b = p_;
    while (!done() && t_[p_] != ';') {
      if (p_ - b > kMaxValueLength) return std::nullopt;
      ++p_;
    }
    if (done()) return std::nullopt;
    std::string_view v = t_.substr(b, p_ - b);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  }

 private:
  std::string_view t_;
  size_t p_;
};

// 1-based line number of `pos`, computed only for error messages.
size_t line_of(std::string_view text, size_t pos) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + std::min(pos, text.size()), '\n'));
}

// `cached_torch_dtype_float32`, `aoti_torch_dtype_float32()`, or a plain number.
std::optional<int32_t> dtype_code(std::string_view v) {
  auto pos = v.find("dtype_");
  if (pos != std::string_view::npos) {
    std::string_view rest = v.substr(pos + 6);
    size_t n = 0;
    while (n < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '_')) ++n;
    rest = rest.substr(0, n);
    for (const DtypeInfo& d : kDtypes)
      if (rest == d.torch_name) return d.code;
    return std::nullopt;
  }
  Scanner s(v, 0);
  auto i = s.integer();
  if (i && s.done() && *i >= 0 && *i < 1000) return static_cast<int32_t>(*i);
  return std::nullopt;
}

// `static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter)` or a plain number.
std::optional<int32_t> constant_type(std::string_view v) {
  static constexpr std::array<std::pair<std::string_view, int32_t>, 5> names = {{
      {"Unknown", 0},
      {"Parameter", 1},
      {"Buffer", 2},
      {"TensorConstant", 3},
      {"FoldedConstant", 4},
  }};
  auto pos = v.find("ConstantType::");
  if (pos != std::string_view::npos) {
    std::string_view rest = v.substr(pos + 14);
    size_t n = 0;
    while (n < rest.size() && std::isalnum(static_cast<unsigned char>(rest[n]))) ++n;
    rest = rest.substr(0, n);
    for (auto [name, code] : names)
      if (rest == name) return code;
    return std::nullopt;
  }
  Scanner s(v, 0);
  auto i = s.integer();
  if (i && s.done() && *i >= 0 && *i <= 4) return static_cast<int32_t>(*i);
  return std::nullopt;
}

// The third argument of `AOTInductorModelBase(inputs, outputs, constants, ...)`, when present.
std::optional<uint64_t> declared_count(std::string_view text) {
  auto pos = text.find(": AOTInductorModelBase(");
  if (pos == std::string_view::npos) return std::nullopt;
  Scanner s(text, pos + std::string_view(": AOTInductorModelBase(").size());
  for (int i = 0; i < 2; ++i) {
    if (!s.integer() || !s.eat(',')) return std::nullopt;
  }
  auto n = s.integer();
  if (!n || *n < 0 || !s.eat(',')) return std::nullopt;
  return static_cast<uint64_t>(*n);
}

template <class T>
Status set_once(std::optional<T>& slot, std::optional<T> value, std::string_view what, uint64_t index,
                std::string_view field, std::string_view text, size_t at) {
  size_t line = (!value || slot) ? line_of(text, at) : 0;
  if (!value)
    return make_error(Error::Kind::Corrupt, "{}: line {}: constants_info_[{}].{} has a value mpspack cannot read", what,
                      line, index, field);
  if (slot)
    return make_error(Error::Kind::Corrupt, "{}: line {}: constants_info_[{}].{} is assigned twice", what, line, index,
                      field);
  slot = std::move(value);
  return {};
}

// The value of a `;`-terminated field (dtype, type, offset, data_size, from_folded) stored into its slot;
// other such fields (device_type, layout, opaque_metadata, ...) are not needed and are skipped.
Status assign_scalar(Scanner& s, Fields& f, const std::string& field, uint64_t i, std::string_view text,
                     std::string_view what, size_t at) {
  auto v = s.until_semicolon();
  if (!v)
    return make_error(Error::Kind::Corrupt, "{}: line {}: constants_info_[{}].{} has no ';'", what, line_of(text, at),
                      i, field);
  if (field == "dtype") return set_once(f.dtype, dtype_code(*v), what, i, field, text, at);
  if (field == "type") return set_once(f.type, constant_type(*v), what, i, field, text, at);
  if (field == "offset") {
    Scanner n(*v, 0);
    auto x = n.integer();
    if (x && (!n.done() || *x < 0)) x.reset();
    return set_once(f.storage_offset, x, what, i, field, text, at);
  }
  if (field == "data_size") {
    Scanner n(*v, 0);
    auto x = n.integer();
    std::optional<uint64_t> size;
    if (x && n.done() && *x >= 0) size = static_cast<uint64_t>(*x);
    return set_once(f.data_size, size, what, i, field, text, at);
  }
  if (field == "from_folded") {
    std::optional<bool> b;
    if (*v == "true") b = true;
    else if (*v == "false") b = false;
    return set_once(f.from_folded, b, what, i, field, text, at);
  }
  return {};
}

// One `constants_info_[i].field = value;` with the scanner just past the `=`.
Status assign_field(Scanner& s, Fields& f, const std::string& field, uint64_t i, std::string_view text,
                    std::string_view what, size_t at) {
  if (field == "name") return set_once(f.name, s.string_literal(), what, i, field, text, at);
  if (field == "original_fqn") return set_once(f.fqn, s.string_literal(), what, i, field, text, at);
  if (field == "shape") return set_once(f.shape, s.int_list(), what, i, field, text, at);
  if (field == "stride") return set_once(f.stride, s.int_list(), what, i, field, text, at);
  return assign_scalar(s, f, field, i, text, what, at);
}

// Every assignment to constants_info_, by index. Other mentions of the marker (reads, comparisons,
// `constants_info_[idx]` in code) are skipped; a numeric index that cannot be read or is out of range is not.
Result<std::map<uint64_t, Fields>> scan_assignments(std::string_view text, std::string_view what) {
  std::map<uint64_t, Fields> table;
  size_t pos = 0;
  while ((pos = text.find(kMarker, pos)) != std::string_view::npos) {
    Scanner s(text, pos + kMarker.size());
    pos += kMarker.size();
    const bool digits = std::isdigit(static_cast<unsigned char>(s.peek()));
    auto index = s.integer();
    if (digits && !index)
      return make_error(Error::Kind::Corrupt, "{}: line {}: unreadable constant index", what, line_of(text, s.pos()));
    if (!index || !s.eat(']') || !s.eat('.')) continue;  // e.g. `constants_info_[idx]` in code
    if (*index < 0 || static_cast<uint64_t>(*index) >= kMaxConstants)
      return make_error(Error::Kind::Corrupt, "{}: line {}: constant index {} out of range", what,
                        line_of(text, s.pos()), *index);
    uint64_t i = static_cast<uint64_t>(*index);
    std::string field(s.ident());
    if (field.empty() || !s.eat('=')) continue;  // a read, not an assignment
    if (s.peek() == '=') continue;               // `==`
    size_t at = s.pos();
    MPK_CHECK(assign_field(s, table[i], field, i, text, what, at));
  }
  return table;
}

// The count the constructor declares, where it declares one, must match the constants described.
Status check_declared_count(std::string_view text, size_t described, std::string_view what) {
  auto declared = declared_count(text);
  if (declared && *declared != described)
    return make_error(Error::Kind::Corrupt, "{}: AOTInductorModelBase declares {} constants but {} are described", what,
                      *declared, described);
  return {};
}

// Constant i from its fields: the required ones present, shape and stride of one rank, no negative size.
// Its blob offset is left to the caller, which keeps the running total.
Result<ConstantInfo> to_constant(uint64_t i, Fields& f, std::string_view what) {
  auto missing = [&](std::string_view field) {
    return make_error(Error::Kind::Corrupt, "{}: constants_info_[{}].{} is never assigned", what, i, field);
  };
  if (!f.name) return missing("name");
  if (!f.dtype) return missing("dtype");
  if (!f.data_size) return missing("data_size");
  if (!f.shape) return missing("shape");
  if (!f.stride) return missing("stride");
  if (f.shape->size() != f.stride->size())
    return make_error(Error::Kind::Corrupt, "{}: constant {} ({}) has {} sizes but {} strides", what, i, *f.name,
                      f.shape->size(), f.stride->size());
  for (int64_t d : *f.shape)
    if (d < 0)
      return make_error(Error::Kind::Corrupt, "{}: constant {} ({}) has a negative size {}", what, i, *f.name, d);
  ConstantInfo c;
  c.name = std::move(*f.name);
  c.fqn = f.fqn ? std::move(*f.fqn) : std::string();
  c.dtype = *f.dtype;
  c.shape = std::move(*f.shape);
  c.stride = std::move(*f.stride);
  c.storage_offset = f.storage_offset.value_or(0);
  c.size = *f.data_size;
  c.type = f.type.value_or(0);
  c.from_folded = f.from_folded.value_or(false);
  return c;
}

// The constants in index order, with no index skipped, each placed after the previous unfolded one in the
// blob (folded constants are computed at run time and take no blob bytes).
Result<std::vector<ConstantInfo>> lay_out(std::map<uint64_t, Fields>& table, std::string_view what) {
  std::vector<ConstantInfo> out;
  out.reserve(table.size());
  uint64_t running = 0;
  uint64_t expected_index = 0;
  for (auto& [i, f] : table) {
    if (i != expected_index)
      return make_error(Error::Kind::Corrupt, "{}: constant {} is not described (indices skip to {})", what,
                        expected_index, i);
    ++expected_index;
    MPK_TRY(ConstantInfo c, to_constant(i, f, what));
    c.offset = running;
    if (!c.from_folded && !checked_add(running, c.size, running))
      return make_error(Error::Kind::Corrupt, "{}: constant sizes overflow at constant {} ({})", what, i, c.name);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<std::vector<ConstantInfo>> parse_wrapper_constants(std::string_view text, std::string_view what) {
  if (text.find("AOTInductorModel::AOTInductorModel(") == std::string_view::npos)
    return make_error(Error::Kind::NotThisFormat, "{}: not an AOTInductor wrapper (no AOTInductorModel constructor)",
                      what);
  MPK_TRY(auto table, scan_assignments(text, what));
  MPK_CHECK(check_declared_count(text, table.size(), what));
  return lay_out(table, what);
}

Result<uint64_t> wrapper_blob_size(const std::vector<ConstantInfo>& constants) {
  uint64_t total = 0;
  for (const auto& c : constants)
    if (!c.from_folded && !checked_add(total, c.size, total))
      return make_error(Error::Kind::Corrupt, "constant sizes overflow at {}", c.name);
  return total;
}

}  // namespace mpspack::pt2
