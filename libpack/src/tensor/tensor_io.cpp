#include "mpspack/tensor_io.hpp"

#include "mpspack/file.hpp"
#include "mpspack/half.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace mpspack {
namespace {

using Kind = Error::Kind;

constexpr std::string_view kNpyMagic = "\x93NUMPY";

// Names parse_dtype takes besides each dtype's own two (dtype.hpp).
struct DtypeAlias {
  std::string_view name;
  int32_t code;
};
constexpr DtypeAlias kDtypeAliases[] = {{"half", dtype::float16}, {"double", dtype::float64}};

bool is_float(int32_t d) {
  const DtypeInfo* info = find_dtype(d);
  return info && info->floating;
}

// Element i of `t` as a double (integers exactly up to 2^53, which is enough to report errors;
// integer equality is decided on the raw values, see compare_tensors).
double element(const HostTensor& t, uint64_t i) {
  const uint8_t* p = t.data.data() + i * dtype_size(t.dtype);
  switch (t.dtype) {
    case dtype::float32: return std::bit_cast<float>(load_u32le(p));
    case dtype::float64: return std::bit_cast<double>(load_u64le(p));
    case dtype::float16: return half_to_float(load_u16le(p));
    case dtype::bfloat16: return bf16_to_float(load_u16le(p));
    case dtype::int64: return double(int64_t(load_u64le(p)));
    case dtype::int32: return double(int32_t(load_u32le(p)));
    case dtype::int16: return double(int16_t(load_u16le(p)));
    case dtype::int8: return double(int8_t(p[0]));
    case dtype::uint8: return double(p[0]);
    case dtype::uint16: return double(load_u16le(p));
    case dtype::uint32: return double(load_u32le(p));
    case dtype::uint64: return double(load_u64le(p));
    case dtype::bool_: return p[0] != 0 ? 1.0 : 0.0;
  }
  return 0;
}

int64_t integer_element(const HostTensor& t, uint64_t i) {
  const uint8_t* p = t.data.data() + i * dtype_size(t.dtype);
  switch (t.dtype) {
    case dtype::int64: return int64_t(load_u64le(p));
    case dtype::int32: return int32_t(load_u32le(p));
    case dtype::int16: return int16_t(load_u16le(p));
    case dtype::int8: return int8_t(p[0]);
    case dtype::uint8: return p[0];
    case dtype::uint16: return load_u16le(p);
    case dtype::uint32: return load_u32le(p);
    case dtype::uint64: return int64_t(load_u64le(p));  // the same bits: equality stays exact
    case dtype::bool_: return p[0] != 0;
  }
  return 0;
}

std::vector<int64_t> unflatten(uint64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    idx[d] = int64_t(flat % uint64_t(shape[d]));
    flat /= uint64_t(shape[d]);
  }
  return idx;
}

// Whether element() reads `code` (complex and float8 types it does not).
bool readable_element(int32_t code) {
  switch (code) {
    case dtype::complex32:
    case dtype::complex64:
    case dtype::complex128:
    case dtype::float8_e5m2:
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2fnuz:
    case dtype::float8_e4m3fnuz: return false;
  }
  return find_dtype(code) != nullptr;
}

// A complex64/complex128 tensor as its float32/float64 (real, imaginary) pairs: one more dimension of 2.
HostTensor as_real_pairs(const HostTensor& t) {
  HostTensor r{t.dtype == dtype::complex64 ? dtype::float32 : dtype::float64, t.shape, t.data};
  r.shape.push_back(2);
  return r;
}

// The first element whose bytes differ, for the dtypes compared bit for bit (complex32, float8).
Comparison compare_bytes(const HostTensor& got, const HostTensor& want) {
  Comparison c;
  const uint64_t size = dtype_size(got.dtype);
  for (uint64_t i = 0; i < got.numel(); ++i) {
    if (std::memcmp(got.data.data() + i * size, want.data.data() + i * size, size) == 0) continue;
    if (!c.first_mismatch) {
      c.first_mismatch = i;
      c.first_mismatch_index = unflatten(i, got.shape);
    }
    ++c.mismatches;
    c.max_abs_error = INFINITY;
  }
  c.match = c.mismatches == 0;
  return c;
}

// --- NPY header: a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (4, 96), }

// The text after `'key':` (spaces skipped), or nullopt.
std::optional<std::string_view> npy_value(std::string_view header, std::string_view key) {
  for (char q : {'\'', '"'}) {
    std::string quoted = std::string(1, q) + std::string(key) + std::string(1, q);
    size_t at = header.find(quoted);
    if (at == std::string_view::npos) continue;
    std::string_view rest = header.substr(at + quoted.size());
    size_t colon = rest.find_first_not_of(' ');
    if (colon == std::string_view::npos || rest[colon] != ':') return std::nullopt;
    rest = rest.substr(colon + 1);
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    return rest.substr(start);
  }
  return std::nullopt;
}

Result<int32_t> npy_dtype(std::string_view value, const std::string& what) {
  if (value.empty() || (value[0] != '\'' && value[0] != '"'))
    return make_error(Kind::Corrupt, "{}: .npy header 'descr' is not a string", what);
  size_t end = value.find(value[0], 1);
  if (end == std::string_view::npos)
    return make_error(Kind::Corrupt, "{}: .npy header 'descr' is not terminated", what);
  std::string_view descr = value.substr(1, end - 1);
  if (descr.size() == 3) {
    char order = descr[0];
    std::string_view kind = descr.substr(1);
    for (const DtypeInfo& d : kDtypes) {
      if (kind != d.npy) continue;
      bool one_byte = d.size == 1;
      if (order == '>' && !one_byte)
        return make_error(Kind::Unsupported,
                          "{}: .npy data is big-endian ('{}'); save it little-endian (e.g. arr.astype('<{}'))", what,
                          descr, kind);
      if (order == '<' || order == '|' || (order == '>' && one_byte) ||
          (order == '=' && std::endian::native == std::endian::little))
        return d.code;
    }
  }
  return make_error(Kind::Unsupported,
                    "{}: .npy dtype '{}' is not supported (f32 f16 f64 c64 i64 i32 i16 i8 u8 u16 u32 u64 bool)", what,
                    descr);
}

Result<std::vector<int64_t>> npy_shape(std::string_view value, const std::string& what) {
  if (value.empty() || value[0] != '(')
    return make_error(Kind::Corrupt, "{}: .npy header 'shape' is not a tuple", what);
  size_t end = value.find(')');
  if (end == std::string_view::npos)
    return make_error(Kind::Corrupt, "{}: .npy header 'shape' is not terminated", what);
  std::string_view body = value.substr(1, end - 1);
  std::vector<int64_t> shape;
  while (!body.empty()) {
    size_t s = body.find_first_not_of(" ,");
    if (s == std::string_view::npos) break;
    body = body.substr(s);
    int64_t v = -1;
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ec != std::errc() || v < 0)
      return make_error(Kind::Corrupt, "{}: .npy header 'shape' has a bad dimension", what);
    shape.push_back(v);
    if (shape.size() > 64) return make_error(Kind::Unsupported, "{}: .npy has more than 64 dimensions", what);
    body = body.substr(size_t(p - body.data()));
    // Python writes long integers as e.g. 4L in old files.
    if (!body.empty() && body[0] == 'L') body = body.substr(1);
  }
  return shape;
}

}  // namespace

double element_as_double(const HostTensor& t, uint64_t i) { return element(t, i); }

void set_element(HostTensor& t, uint64_t i, double v) {
  uint8_t* p = t.data.data() + i * dtype_size(t.dtype);
  switch (t.dtype) {
    case dtype::float32: store_u32le(p, std::bit_cast<uint32_t>(float(v))); return;
    case dtype::float64: store_u64le(p, std::bit_cast<uint64_t>(v)); return;
    case dtype::float16: store_u16le(p, float_to_half(float(v))); return;
    case dtype::bfloat16: store_u16le(p, float_to_bf16(float(v))); return;
    case dtype::int64: store_u64le(p, uint64_t(int64_t(v))); return;
    case dtype::int32: store_u32le(p, uint32_t(int32_t(v))); return;
    case dtype::int16: store_u16le(p, uint16_t(int16_t(v))); return;
    case dtype::int8: p[0] = uint8_t(int8_t(v)); return;
    case dtype::uint8: p[0] = uint8_t(v); return;
    case dtype::bool_: p[0] = v != 0 ? 1 : 0; return;
  }
}

uint64_t HostTensor::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

std::optional<int32_t> parse_dtype(std::string_view name) {
  for (const DtypeInfo& d : kDtypes)
    if (name == d.name || name == d.torch_name) return d.code;
  for (const DtypeAlias& a : kDtypeAliases)
    if (name == a.name) return a.code;
  return std::nullopt;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Result<std::vector<int64_t>> parse_shape(std::string_view text) {
  std::vector<int64_t> shape;
  if (text.empty() || text == "scalar") return shape;
  size_t pos = 0;
  while (true) {
    size_t x = text.find('x', pos);
    std::string_view part = text.substr(pos, x == std::string_view::npos ? std::string_view::npos : x - pos);
    int64_t v = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v < 0)
      return make_error(Kind::Invalid, "shape '{}' is not like 4x96 (non-negative sizes separated by 'x')", text);
    shape.push_back(v);
    if (shape.size() > 64) return make_error(Kind::Invalid, "shape '{}' has more than 64 dimensions", text);
    if (x == std::string_view::npos) break;
    pos = x + 1;
  }
  return shape;
}

Result<uint64_t> tensor_bytes(int32_t dt, const std::vector<int64_t>& shape) {
  uint64_t n = dtype_size(dt);
  if (n == 0) return make_error(Kind::Unsupported, "dtype code {} is not supported", dt);
  for (int64_t d : shape)
    if (d < 0 || !checked_mul(n, uint64_t(d), n))
      return make_error(Kind::Invalid, "shape {} is negative or too large", shape_string(shape));
  return n;
}

Result<TensorSpec> parse_tensor_spec(std::string_view text) {
  TensorSpec spec;
  spec.text = std::string(text);
  if (text.empty()) return make_error(Kind::Invalid, "empty tensor spec (expected FILE[:DTYPE:SHAPE])");
  // FILE:DTYPE:SHAPE when the last two ':' fields are a dtype name and a shape; else all of it is FILE.
  size_t last = text.rfind(':');
  if (last != std::string_view::npos && last > 0) {
    size_t mid = text.rfind(':', last - 1);
    if (mid != std::string_view::npos) {
      std::string_view dt = text.substr(mid + 1, last - mid - 1);
      std::string_view sh = text.substr(last + 1);
      if (auto code = parse_dtype(dt)) {
        auto shape = parse_shape(sh);
        if (!shape.ok()) return shape.error().context(text);
        spec.dtype = code;
        spec.shape = std::move(shape).value();
        spec.path = std::string(text.substr(0, mid));
        if (spec.path.empty()) return make_error(Kind::Invalid, "{}: no file name before ':'", text);
        return spec;
      }
      if (!dt.empty() && sh.find_first_not_of("0123456789x") == std::string_view::npos && !sh.empty())
        return make_error(Kind::Invalid, "{}: unknown dtype '{}' (use f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool)", text,
                          dt);
    }
  }
  spec.path = std::string(text);
  return spec;
}

Result<HostTensor> parse_npy(ByteView bytes) {
  const std::string& what = bytes.what();
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kNpyMagic.data(), kNpyMagic.size()) != 0)
    return make_error(Kind::NotThisFormat, "{}: not a .npy file (no \\x93NUMPY magic)", what);
  const uint8_t major = bytes.data()[6];
  uint64_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = load_u16le(bytes.data() + 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    MPK_TRY(uint32_t len, bytes.u32(8, ".npy header length"));
    header_len = len;
    header_start = 12;
  } else {
    return make_error(Kind::Unsupported, "{}: .npy format version {} is not supported (1, 2, 3)", what, major);
  }
  MPK_TRY(ByteView header_bytes, bytes.slice(header_start, header_len, ".npy header"));
  std::string_view header(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size());

  auto descr = npy_value(header, "descr");
  auto fortran = npy_value(header, "fortran_order");
  auto shape_text = npy_value(header, "shape");
  if (!descr || !fortran || !shape_text)
    return make_error(Kind::Corrupt, "{}: .npy header lacks 'descr', 'fortran_order' or 'shape'", what);
  HostTensor t;
  MPK_TRY(t.dtype, npy_dtype(*descr, what));
  MPK_TRY(t.shape, npy_shape(*shape_text, what));
  if (fortran->starts_with("True") && t.shape.size() > 1)
    return make_error(Kind::Unsupported,
                      "{}: .npy data is in Fortran (column-major) order; save it C-ordered "
                      "(np.ascontiguousarray)",
                      what);
  if (!fortran->starts_with("True") && !fortran->starts_with("False"))
    return make_error(Kind::Corrupt, "{}: .npy header 'fortran_order' is neither True nor False", what);
  auto need = tensor_bytes(t.dtype, t.shape);
  if (!need.ok()) return need.error().context(what);
  const uint64_t data_start = header_start + header_len;
  if (bytes.size() - data_start != *need)
    return make_error(Kind::Corrupt, "{}: .npy header says {} {} ({} bytes of data), but the file holds {}", what,
                      dtype_name(t.dtype), shape_string(t.shape), *need, bytes.size() - data_start);
  t.data.assign(bytes.data() + data_start, bytes.data() + bytes.size());
  return t;
}

Result<HostTensor> read_tensor(const TensorSpec& spec, const std::optional<TensorHint>& hint) {
  const std::string name = spec.path.string();
  std::error_code ec;
  if (!std::filesystem::exists(spec.path, ec)) return make_error(Kind::Io, "{}: no such file", name);
  MPK_TRY(MappedFile file, MappedFile::open(spec.path));
  ByteView bytes(file.view().span(), name);
  const bool is_npy =
      bytes.size() >= kNpyMagic.size() && std::memcmp(bytes.data(), kNpyMagic.data(), kNpyMagic.size()) == 0;
  if (is_npy) {
    MPK_TRY(HostTensor t, parse_npy(bytes));
    if (spec.dtype && *spec.dtype != t.dtype)
      return make_error(Kind::Invalid, "{}: the .npy file holds {}, not {} as given", name, dtype_name(t.dtype),
                        dtype_name(*spec.dtype));
    if (spec.shape && *spec.shape != t.shape)
      return make_error(Kind::Invalid, "{}: the .npy file has shape {}, not {} as given", name, shape_string(t.shape),
                        shape_string(*spec.shape));
    return t;
  }
  HostTensor t;
  if (spec.dtype && spec.shape) {
    t.dtype = *spec.dtype;
    t.shape = *spec.shape;
  } else if (hint) {
    t.dtype = hint->dtype;
    t.shape = hint->shape;
  } else {
    return make_error(Kind::Invalid, "{}: raw tensor file: say its dtype and shape as {}:DTYPE:SHAPE (e.g. :f32:4x96)",
                      name, name);
  }
  auto need = tensor_bytes(t.dtype, t.shape);
  if (!need.ok()) return need.error().context(name);
  if (bytes.size() != *need)
    return make_error(Kind::Invalid, "{}: holds {} bytes, but {} {} needs {}", name, bytes.size(), dtype_name(t.dtype),
                      shape_string(t.shape), *need);
  t.data.assign(bytes.data(), bytes.data() + bytes.size());
  return t;
}

Result<std::vector<uint8_t>> encode_npy(const HostTensor& t) {
  std::string descr;
  if (const DtypeInfo* d = find_dtype(t.dtype); d && *d->npy) descr = std::string(d->size == 1 ? "|" : "<") + d->npy;
  if (descr.empty()) return make_error(Kind::Unsupported, "{} has no NumPy dtype; write it raw", dtype_name(t.dtype));
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";  // Python's one-element tuple
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and end with '\n' so the data starts on a 64-byte boundary (NumPy does the same).
  uint8_t version = 1;
  uint64_t prefix = 10;
  if (header.size() + 1 + prefix > 65535) version = 2, prefix = 12;
  uint64_t total = align_up(prefix + header.size() + 1, 64);
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(prefix);
  std::memcpy(out.data(), kNpyMagic.data(), kNpyMagic.size());
  out[6] = version;
  out[7] = 0;
  if (version == 1) store_u16le(out.data() + 8, uint16_t(header.size()));
  else store_u32le(out.data() + 8, uint32_t(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

Status write_tensor(const std::filesystem::path& path, const HostTensor& t, bool raw) {
  if (raw) {
    return write_file_atomically(path, [&](AtomicWriter& w) { return w.write(t.data.data(), t.data.size()); });
  }
  auto bytes = encode_npy(t);
  if (!bytes.ok()) return bytes.error().context(path.string());
  return write_file_atomically(path, [&](AtomicWriter& w) { return w.write(bytes->data(), bytes->size()); });
}

Tolerance default_tolerance(int32_t dt) {
  switch (dt) {
    case dtype::float32: return {1e-4, 1e-5};
    case dtype::float16:
    case dtype::bfloat16: return {1e-2, 1e-3};
    case dtype::float64: return {1e-7, 1e-9};
  }
  return {0, 0};
}

namespace {
// Why two tensors cannot be compared element by element ("" when they can).
std::string mismatch_of_kind(const HostTensor& got, const HostTensor& want) {
  if (got.dtype != want.dtype)
    return fmt::format("dtype {} differs from the expected {}", dtype_name(got.dtype), dtype_name(want.dtype));
  if (got.shape != want.shape)
    return fmt::format("shape {} differs from the expected {}", shape_string(got.shape), shape_string(want.shape));
  if (got.data.size() != want.data.size() || got.data.size() != got.numel() * dtype_size(got.dtype))
    return "tensor data size does not match its dtype and shape";
  return "";
}
}  // namespace

Comparison compare_tensors(const HostTensor& got, const HostTensor& want, Tolerance tol) {
  Comparison c;
  c.problem = mismatch_of_kind(got, want);
  if (!c.problem.empty()) return c;
  const uint64_t n = got.numel();
  if (got.dtype == dtype::complex64 || got.dtype == dtype::complex128)
    return compare_tensors(as_real_pairs(got), as_real_pairs(want), tol);
  if (!readable_element(got.dtype)) return compare_bytes(got, want);
  const bool fp = is_float(got.dtype);
  for (uint64_t i = 0; i < n; ++i) {
    bool ok;
    double abs_err = 0, g = 0, w = 0;
    if (fp) {
      g = element(got, i);
      w = element(want, i);
      if (std::isnan(g) || std::isnan(w)) {
        ok = std::isnan(g) && std::isnan(w);
        abs_err = ok ? 0 : INFINITY;
      } else if (std::isinf(g) || std::isinf(w)) {
        ok = g == w;
        abs_err = ok ? 0 : INFINITY;
      } else {
        abs_err = std::abs(g - w);
        ok = abs_err <= tol.atol + tol.rtol * std::abs(w);
      }
    } else {
      const int64_t gi = integer_element(got, i), wi = integer_element(want, i);
      g = double(gi);
      w = double(wi);
      // Exact on the integers themselves; a tolerance the user gave applies through the doubles.
      abs_err = gi == wi ? 0 : std::abs(g - w);
      ok = gi == wi || abs_err <= tol.atol + tol.rtol * std::abs(w);
    }
    c.max_abs_error = std::max(c.max_abs_error, abs_err);
    if (w != 0 && std::isfinite(abs_err) && std::isfinite(w))
      c.max_rel_error = std::max(c.max_rel_error, abs_err / std::abs(w));
    else if (!std::isfinite(abs_err)) c.max_rel_error = INFINITY;
    if (!ok) {
      if (!c.first_mismatch) {
        c.first_mismatch = i;
        c.first_mismatch_index = unflatten(i, got.shape);
        c.first_got = g;
        c.first_want = w;
      }
      ++c.mismatches;
    }
  }
  c.match = c.mismatches == 0;
  return c;
}

}  // namespace mpspack
