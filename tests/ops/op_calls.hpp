// The op conformance runner's side of a case: a case's JSON arguments as the C types the shim functions take,
// and the table of adapters (calls_*.cpp) that call each function through its own signature.
#pragma once

#include "runtime/shim/aoti_shim.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::test {

// Owns every handle and array it hands out for one call; tensors are made on `device_type` (0 CPU, 1 CUDA).
class CallArgs {
 public:
  CallArgs(const nlohmann::json& args, int32_t device_type, bool offset_storage);
  ~CallArgs();
  CallArgs(const CallArgs&) = delete;
  CallArgs& operator=(const CallArgs&) = delete;

  AtenTensorHandle tensor(size_t i);
  AtenTensorHandle* optional_tensor(size_t i);          // nullptr for None
  const AtenTensorHandle* tensors(size_t i);            // with count(i)
  const AtenTensorHandle** optional_tensors(size_t i);  // each element nullptr for None
  int64_t i64(size_t i);
  double f64(size_t i);
  int32_t boolean(size_t i);
  int32_t dtype(size_t i);
  int64_t* optional_i64(size_t i);
  double* optional_f64(size_t i);
  int32_t* optional_boolean(size_t i);
  int32_t* optional_dtype(size_t i);
  const int64_t* ints(size_t i);             // with count(i)
  const int64_t** optional_ints(size_t i);   // nullptr for None
  const double* floats(size_t i);            // with count(i)
  const double** optional_floats(size_t i);  // nullptr for None
  const int32_t* bools(size_t i);            // with count(i)
  const char* str(size_t i);
  const char** optional_str(size_t i);
  AtenGeneratorHandle* generator(size_t i);  // always nullptr: torch's generators do not exist here
  int64_t count(size_t i) const;

  AtenTensorHandle* ret(size_t k);
  int64_t* ret_i64(size_t k);
  double* ret_f64(size_t k);

  // After the call: the handle an argument holds now, and the results.
  AtenTensorHandle arg_tensor(size_t i) const;
  AtenTensorHandle result(size_t k) const;
  bool has_result(size_t k) const { return k < rets_.size(); }
  int64_t result_i64(size_t k) const { return k < ret_ints_.size() ? ret_ints_[k] : 0; }

 private:
  const nlohmann::json& at(size_t i, const char* want) const;
  AtenTensorHandle make_tensor(const nlohmann::json& t);

  const nlohmann::json& args_;
  int32_t device_type_;
  bool offset_storage_;
  std::map<size_t, AtenTensorHandle> arg_tensors_;  // by position (tensors and optional tensors)
  std::vector<AtenTensorHandle> owned_;             // every handle made, including list elements
  std::deque<std::vector<AtenTensorHandle>> handle_lists_;
  std::deque<std::vector<AtenTensorHandle*>> optional_lists_;
  std::deque<std::vector<AtenTensorHandle>> optional_storage_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::deque<std::vector<double>> float_lists_;
  std::deque<std::vector<int32_t>> bool_lists_;
  std::deque<const int64_t*> int_list_ptrs_;
  std::deque<const double*> float_list_ptrs_;
  std::deque<int64_t> ints_;
  std::deque<double> floats_;
  std::deque<int32_t> int32s_;
  std::deque<std::string> strings_;
  std::deque<const char*> string_ptrs_;
  std::deque<AtenTensorHandle> single_handles_;
  std::vector<AtenTensorHandle> rets_;
  std::vector<int64_t> ret_ints_;
  std::vector<double> ret_floats_;
};

using OpCall = std::function<AOTITorchError(CallArgs&)>;

// The device the runner calls functions for: 0 (CPU) or 1 (CUDA).
void set_op_device(int32_t device_type);
int32_t op_device();
// The CUDA twin of a CPU function (aoti_torch_cuda_X for aoti_torch_cpu_X, the same parameters), looked up in
// the process (op_conformance_cuda links the CUDA shim); throws when it is not there.
void* cuda_function(std::string_view cpu_name);

// `fn` for the runner's device: SHIM(topk)(...) calls aoti_torch_cpu_topk, or aoti_torch_cuda_topk under --device cuda.
template <class Fn>
Fn device_function(Fn cpu, std::string_view cpu_name) {
  return op_device() == 0 ? cpu : reinterpret_cast<Fn>(cuda_function(cpu_name));
}
#define SHIM(op) (::mpspack::test::device_function(&aoti_torch_cpu_##op, "aoti_torch_cpu_" #op))
// A CUDA function without a CPU twin (aoti_shim_cuda.h declares it), looked up the same way.
#define CUDA_SHIM(op) \
  (reinterpret_cast<decltype(&aoti_torch_cuda_##op)>(::mpspack::test::cuda_function("aoti_torch_cpu_" #op)))

// Adds adapters by C function name; returns true (to initialise a static in each calls_*.cpp).
bool register_op_calls(std::initializer_list<std::pair<std::string_view, OpCall>> calls);
const std::map<std::string, OpCall, std::less<>>& op_calls();

// The bytes of make_cases.py's base64 text (a tensor's storage); throws on a character outside the alphabet.
std::vector<uint8_t> decode_base64(std::string_view s);

// c10 dtype code of torch's dtype name ("float32"); -1 when unknown.
int32_t dtype_code(std::string_view name);

}  // namespace mpspack::test
