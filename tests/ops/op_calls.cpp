#include "op_calls.hpp"

#include "mpspack/dtype.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace mpspack::test {

namespace {

constexpr size_t kMaxResults = 16;

std::map<std::string, OpCall, std::less<>>& table() {
  static std::map<std::string, OpCall, std::less<>> calls;
  return calls;
}

double json_float(const nlohmann::json& v) {
  if (v.is_object() && v.contains("float")) {
    const auto& f = v["float"];
    if (f.is_number()) return f.get<double>();
    const std::string s = f.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  throw std::runtime_error("a case argument is not a number: " + v.dump());
}

void check(AOTITorchError e, const char* what) {
  if (e != AOTI_TORCH_SUCCESS) throw std::runtime_error(std::string("setting up a case: ") + what + " failed");
}

}  // namespace

namespace {
int32_t g_device = 0;
}

void set_op_device(int32_t device_type) { g_device = device_type; }
int32_t op_device() { return g_device; }

void* cuda_function(std::string_view cpu_name) {
  std::string name(cpu_name);
  name.replace(0, std::string_view("aoti_torch_cpu_").size(), "aoti_torch_cuda_");
  void* fn = dlsym(RTLD_DEFAULT, name.c_str());
  if (fn == nullptr) throw std::runtime_error(name + " is not provided");
  return fn;
}

std::vector<uint8_t> decode_base64(std::string_view s) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) throw std::runtime_error("bad base64 in a case's tensor data");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t((acc >> bits) & 0xff));
    }
  }
  return out;
}

int32_t dtype_code(std::string_view name) {
  for (const DtypeInfo& d : kDtypes)
    if (name == d.torch_name) return d.code;
  return -1;
}

bool register_op_calls(std::initializer_list<std::pair<std::string_view, OpCall>> calls) {
  for (const auto& [name, call] : calls) table().emplace(std::string(name), call);
  return true;
}

const std::map<std::string, OpCall, std::less<>>& op_calls() { return table(); }

CallArgs::CallArgs(const nlohmann::json& args, int32_t device_type, bool offset_storage)
    : args_(args), device_type_(device_type), offset_storage_(offset_storage) {
  rets_.assign(kMaxResults, nullptr);
  ret_ints_.assign(kMaxResults, 0);
  ret_floats_.assign(kMaxResults, 0.0);
}

CallArgs::~CallArgs() {
  // An in-place op may have replaced an argument's handle contents, never the handle itself: delete each once.
  for (AtenTensorHandle h : owned_) aoti_torch_delete_tensor_object(h);
  for (AtenTensorHandle h : rets_)
    if (h != nullptr) aoti_torch_delete_tensor_object(h);
}

const nlohmann::json& CallArgs::at(size_t i, const char* want) const {
  if (i >= args_.size())
    throw std::runtime_error("the adapter reads argument " + std::to_string(i) + " (" + want + ") but the case has " +
                             std::to_string(args_.size()));
  return args_[i];
}

// A tensor on the case's device holding the recorded bytes; with offset_storage, its storage starts 3 elements
// before it (filled with a pattern), so every op also meets a non-zero storage offset.
AtenTensorHandle CallArgs::make_tensor(const nlohmann::json& j) {
  const auto& t = j.at("tensor");
  const int32_t dt = dtype_code(t.at("dtype").get<std::string>());
  if (dt < 0) throw std::runtime_error("a case tensor has dtype " + t.at("dtype").dump() + ", unknown here");
  const auto sizes = t.at("sizes").get<std::vector<int64_t>>();
  const auto strides = t.at("strides").get<std::vector<int64_t>>();
  const std::vector<uint8_t> data = decode_base64(t.at("data").get<std::string>());
  const int64_t isz = dtype_size(dt);
  const int64_t pad = offset_storage_ ? 3 : 0;
  const int64_t elems = int64_t(data.size()) / isz + pad;
  // The bytes on the CPU first; then the tensor on the case's device.
  AtenTensorHandle host = nullptr;
  const int64_t flat[1] = {elems}, unit[1] = {1};
  check(aoti_torch_empty_strided(1, flat, unit, dt, 0, 0, &host), "empty_strided");
  void* p = nullptr;
  check(aoti_torch_get_data_ptr(host, &p), "get_data_ptr");
  if (pad > 0) std::memset(p, 0xA5, size_t(pad * isz));  // an empty tensor has no memory (p is null)
  if (!data.empty()) std::memcpy(static_cast<char*>(p) + pad * isz, data.data(), data.size());
  AtenTensorHandle storage = host;
  if (device_type_ != 0) {
    check(aoti_torch_empty_strided(1, flat, unit, dt, device_type_, 0, &storage), "empty_strided on the device");
    check(aoti_torch_copy_(storage, host, 0), "copy to the device");
    aoti_torch_delete_tensor_object(host);
  }
  owned_.push_back(storage);
  AtenTensorHandle view = nullptr;
  check(aoti_torch__reinterpret_tensor(storage, int64_t(sizes.size()), sizes.data(), strides.data(), pad, &view),
        "_reinterpret_tensor");
  owned_.push_back(view);
  return view;
}

AtenTensorHandle CallArgs::tensor(size_t i) {
  if (auto it = arg_tensors_.find(i); it != arg_tensors_.end()) return it->second;
  const auto& v = at(i, "tensor");
  if (!v.is_object() || !v.contains("tensor"))
    throw std::runtime_error("argument " + std::to_string(i) + " is not a tensor");
  return arg_tensors_[i] = make_tensor(v);
}

AtenTensorHandle* CallArgs::optional_tensor(size_t i) {
  if (at(i, "optional tensor").is_null()) return nullptr;
  single_handles_.push_back(tensor(i));
  return &single_handles_.back();
}

const AtenTensorHandle* CallArgs::tensors(size_t i) {
  auto& list = handle_lists_.emplace_back();
  for (const auto& e : at(i, "tensor list")) list.push_back(make_tensor(e));
  return list.data();
}

const AtenTensorHandle** CallArgs::optional_tensors(size_t i) {
  auto& handles = optional_storage_.emplace_back();
  const auto& v = at(i, "optional tensor list");
  handles.reserve(v.size());
  auto& ptrs = optional_lists_.emplace_back();
  for (const auto& e : v) {
    if (e.is_null()) {
      ptrs.push_back(nullptr);
    } else {
      handles.push_back(make_tensor(e));
      ptrs.push_back(&handles.back());
    }
  }
  return const_cast<const AtenTensorHandle**>(ptrs.data());
}

int64_t CallArgs::i64(size_t i) {
  const auto& v = at(i, "int");
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (!v.is_number_integer()) throw std::runtime_error("argument " + std::to_string(i) + " is not an int: " + v.dump());
  return v.get<int64_t>();
}

double CallArgs::f64(size_t i) { return json_float(at(i, "float")); }
int32_t CallArgs::boolean(size_t i) { return int32_t(i64(i) != 0); }

int32_t CallArgs::dtype(size_t i) {
  const auto& v = at(i, "dtype");
  if (v.is_number_integer()) return v.get<int32_t>();
  const int32_t code = dtype_code(v.at("dtype").get<std::string>());
  if (code < 0) throw std::runtime_error("argument " + std::to_string(i) + " names an unknown dtype");
  return code;
}

int64_t* CallArgs::optional_i64(size_t i) {
  if (at(i, "optional int").is_null()) return nullptr;
  return &ints_.emplace_back(i64(i));
}
double* CallArgs::optional_f64(size_t i) {
  if (at(i, "optional float").is_null()) return nullptr;
  return &floats_.emplace_back(f64(i));
}
int32_t* CallArgs::optional_boolean(size_t i) {
  if (at(i, "optional bool").is_null()) return nullptr;
  return &int32s_.emplace_back(boolean(i));
}
int32_t* CallArgs::optional_dtype(size_t i) {
  if (at(i, "optional dtype").is_null()) return nullptr;
  return &int32s_.emplace_back(dtype(i));
}

const int64_t* CallArgs::ints(size_t i) {
  auto& list = int_lists_.emplace_back();
  const auto& v = at(i, "int list");
  if (v.is_number_integer()) list.push_back(v.get<int64_t>());  // torch takes a bare int for an int[N]
  else
    for (const auto& e : v) list.push_back(e.is_boolean() ? int64_t(e.get<bool>()) : e.get<int64_t>());
  return list.data();
}
const int64_t** CallArgs::optional_ints(size_t i) {
  if (at(i, "optional int list").is_null()) return nullptr;
  return &int_list_ptrs_.emplace_back(ints(i));
}
const double* CallArgs::floats(size_t i) {
  auto& list = float_lists_.emplace_back();
  for (const auto& e : at(i, "float list")) list.push_back(json_float(e));
  return list.data();
}
const double** CallArgs::optional_floats(size_t i) {
  if (at(i, "optional float list").is_null()) return nullptr;
  return &float_list_ptrs_.emplace_back(floats(i));
}
const int32_t* CallArgs::bools(size_t i) {
  auto& list = bool_lists_.emplace_back();
  for (const auto& e : at(i, "bool list")) list.push_back(e.get<bool>() ? 1 : 0);
  return list.data();
}
const char* CallArgs::str(size_t i) { return strings_.emplace_back(at(i, "str").get<std::string>()).c_str(); }
const char** CallArgs::optional_str(size_t i) {
  if (at(i, "optional str").is_null()) return nullptr;
  return &string_ptrs_.emplace_back(str(i));
}
AtenGeneratorHandle* CallArgs::generator(size_t i) { return nullptr; }

int64_t CallArgs::count(size_t i) const {
  const auto& v = at(i, "list");
  if (v.is_null()) return 0;
  return v.is_array() ? int64_t(v.size()) : 1;
}

AtenTensorHandle* CallArgs::ret(size_t k) {
  if (k >= kMaxResults) throw std::runtime_error("more results than the runner holds");
  return &rets_[k];
}
int64_t* CallArgs::ret_i64(size_t k) {
  if (k >= kMaxResults) throw std::runtime_error("more results than the runner holds");
  return &ret_ints_[k];
}
double* CallArgs::ret_f64(size_t k) {
  if (k >= kMaxResults) throw std::runtime_error("more results than the runner holds");
  return &ret_floats_[k];
}

AtenTensorHandle CallArgs::arg_tensor(size_t i) const {
  auto it = arg_tensors_.find(i);
  return it == arg_tensors_.end() ? nullptr : it->second;
}
AtenTensorHandle CallArgs::result(size_t k) const { return k < rets_.size() ? rets_[k] : nullptr; }

}  // namespace mpspack::test
