// Tensors on the host, in and out of files: the `FILE[:DTYPE:SHAPE]` specs the CLI takes, raw
// little-endian files, NumPy `.npy` (v1/v2/v3, little-endian, C order), and the comparison `run`
// uses to say whether a model's output matches a reference.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack {

// A dense tensor in host memory: row-major (C order), little-endian elements.
struct HostTensor {
  int32_t dtype = dtype::float32;  // c10 code
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // exactly numel() * dtype_size(dtype) bytes

  uint64_t numel() const;
  uint64_t nbytes() const { return data.size(); }
};

// The c10 code of a dtype name: f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool (also float32, int64, ...).
std::optional<int32_t> parse_dtype(std::string_view name);
// "4x96"; "scalar" for a 0-d shape.
std::string shape_string(const std::vector<int64_t>& shape);
// "4x96" -> {4, 96}; "scalar" or "" -> {}. Dimensions are non-negative decimal integers.
Result<std::vector<int64_t>> parse_shape(std::string_view text);
// Bytes a dense tensor of this dtype and shape takes, or an error on overflow / unknown dtype.
Result<uint64_t> tensor_bytes(int32_t dtype, const std::vector<int64_t>& shape);

// `FILE[:DTYPE:SHAPE]`, parsed from the right so a path may contain ':' itself.
struct TensorSpec {
  std::filesystem::path path;
  std::optional<int32_t> dtype;
  std::optional<std::vector<int64_t>> shape;
  std::string text;  // as given
};
Result<TensorSpec> parse_tensor_spec(std::string_view text);

// What the tensor should be when the spec does not say (e.g. a recorded example's metadata).
struct TensorHint {
  int32_t dtype = dtype::float32;
  std::vector<int64_t> shape;
};

// Reads the tensor a spec names. A `.npy` file carries its own dtype and shape (a DTYPE:SHAPE
// given as well must agree); any other file is raw bytes and needs DTYPE:SHAPE, or `hint`.
// Errors name the file and the problem (missing, wrong size, not a valid .npy, ...).
Result<HostTensor> read_tensor(const TensorSpec& spec, const std::optional<TensorHint>& hint = {});

// Parses NPY bytes; `what` names the file in errors. Refuses Fortran order, big-endian and
// dtypes mpspack does not know, each with its own message.
Result<HostTensor> parse_npy(ByteView bytes);
// NPY v1 bytes of `t` (v2 when the header does not fit 64 KiB). bf16 has no NumPy dtype: an error.
Result<std::vector<uint8_t>> encode_npy(const HostTensor& t);
// Writes `t` atomically: `.npy` for every dtype NumPy knows, raw bytes when `raw` is set.
Status write_tensor(const std::filesystem::path& path, const HostTensor& t, bool raw = false);

// Element i (flat) of `t` as a double: floats widened, integers exactly up to 2^53, bool 0 or 1.
double element_as_double(const HostTensor& t, uint64_t i);
// Stores `v` as element i (flat) of `t`, converted to its dtype (integers: truncated toward zero).
void set_element(HostTensor& t, uint64_t i, double v);

// How close is close enough: |got - want| <= atol + rtol * |want|.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
// f32 1e-4/1e-5; f16 and bf16 1e-2/1e-3; f64 1e-7/1e-9; integers and bool exact.
Tolerance default_tolerance(int32_t dtype);

struct Comparison {
  bool match = false;
  std::string problem;                        // non-empty when dtype or shape differ (nothing compared)
  uint64_t mismatches = 0;                    // elements out of tolerance
  double max_abs_error = 0;                   // over all elements (NaN/Inf pairs that agree count as 0)
  double max_rel_error = 0;                   // |got - want| / |want| where want != 0
  std::optional<uint64_t> first_mismatch;     // flat index
  std::vector<int64_t> first_mismatch_index;  // the same, per dimension
  double first_got = 0, first_want = 0;
};
// Compares `got` with `want` element by element. NaN equals NaN; infinities equal when same sign.
Comparison compare_tensors(const HostTensor& got, const HostTensor& want, Tolerance tol);

}  // namespace mpspack
