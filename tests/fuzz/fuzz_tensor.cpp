// fuzz_tensor: the inputs `build --example-*` and `run --input` take: a `FILE[:DTYPE:SHAPE]` spec
// and the file's bytes, `.npy` or raw. The input is split at the first newline: before it, the
// spec's suffix (e.g. ":f32:4x16", or nothing), after it, the file's bytes. Also checked: a tensor
// that was read encodes to `.npy` and parses back to the same tensor, and compares equal to itself.
#include "fuzz_support.hpp"
#include "mpspack/tensor_io.hpp"

#include <cstring>
#include <string_view>

using namespace mpspack;

namespace {

void roundtrip(const HostTensor& t) {
  auto npy = encode_npy(t);
  if (npy.ok()) {
    auto back = parse_npy(ByteView({npy->data(), npy->size()}, "encoded.npy"));
    if (!back.ok()) fuzz::property_failed("parse_npy refused what encode_npy wrote");
    if (back->dtype != t.dtype || back->shape != t.shape || back->data != t.data)
      fuzz::property_failed("encode_npy + parse_npy changed the tensor");
  }
  if (t.data.size() <= (1u << 16)) {
    auto cmp = compare_tensors(t, t, default_tolerance(t.dtype));
    if (!cmp.problem.empty()) fuzz::property_failed("a tensor has a dtype/shape problem against itself");
    (void)cmp.match;  // NaN payloads compare equal to themselves by the documented rule
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', std::min<size_t>(size, 256)));
  std::string_view suffix;
  const uint8_t* body = data;
  size_t body_size = size;
  if (nl) {
    suffix = std::string_view(reinterpret_cast<const char*>(data), size_t(nl - reinterpret_cast<const char*>(data)));
    body = reinterpret_cast<const uint8_t*>(nl + 1);
    body_size = size - (suffix.size() + 1);
  }

  // The bytes alone, as a .npy.
  auto direct = parse_npy(ByteView({body, body_size}, "fuzz.npy"));
  if (direct.ok()) roundtrip(*direct);

  // The spec text parsers on their own.
  (void)parse_tensor_spec(suffix);
  (void)parse_shape(suffix);
  (void)parse_dtype(suffix);

  // The whole path: the spec names the memfd, then the file is read as the CLI reads it.
  fuzz::MemFile mem(body, body_size);
  auto spec = parse_tensor_spec(mem.path() + std::string(suffix));
  if (!spec.ok()) return 0;
  std::optional<TensorHint> hint;
  if (!suffix.empty() && suffix[0] == 'h') hint = TensorHint{dtype::float32, {int64_t(body_size % 7), 2}};
  auto t = read_tensor(*spec, hint);
  if (t.ok()) {
    auto need = tensor_bytes(t->dtype, t->shape);
    if (!need.ok() || *need != t->data.size())
      fuzz::property_failed("read_tensor gave a tensor whose bytes do not match its dtype and shape");
    roundtrip(*t);
  }
  return 0;
}
