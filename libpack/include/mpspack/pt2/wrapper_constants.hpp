// The constant table of an AOTInductor model, read from the generated wrapper `.cpp` that a `.pt2`
// carries beside the library. Its constructor assigns every constant's fields as literals:
//
//   constants_info_[0].name = "l_weight";
//   constants_info_[0].dtype = cached_torch_dtype_float32;
//   constants_info_[0].offset = 0;                 // storage offset, in elements
//   constants_info_[0].data_size = 128;            // bytes in the blob, padded
//   constants_info_[0].from_folded = false;
//   constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter);
//   constants_info_[0].shape = {4, 8};
//   constants_info_[0].stride = {8, 1};
//   constants_info_[0].original_fqn = "l.weight";
//
// This reads those assignments only (no C++ parsing beyond them), bounded and without trusting
// the text: unknown forms, missing fields, gaps in the indices or a count that disagrees with the
// `AOTInductorModelBase(inputs, outputs, constants, ...)` call are errors.
#pragma once

#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <string_view>
#include <vector>

namespace mpspack::pt2 {

// The constants in index order. `offset` is each constant's byte offset inside the weights blob:
// the running sum of the earlier non-folded constants' data_size (aoti-abi.md section 1). Folded
// constants are not in the blob; they get the running offset at their position and keep their
// data_size. `what` names the source in error messages.
Result<std::vector<ConstantInfo>> parse_wrapper_constants(std::string_view wrapper_cpp,
                                                          std::string_view what = "wrapper.cpp");

// The sum of the non-folded constants' sizes: the blob size the table describes.
Result<uint64_t> wrapper_blob_size(const std::vector<ConstantInfo>& constants);

}  // namespace mpspack::pt2
