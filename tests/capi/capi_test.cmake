# Run by CTest (tests/capi/CMakeLists.txt) with BUILD_DIR, WORK_DIR, SOURCE_DIR, FIXTURES, EXAMPLE_SO (the example
# container's model library), C_COMPILER and C_FLAGS set: installs the build tree into a temp prefix, compiles capi_test.c and the C API example of docs/LIBRARY.md
# with only the installed mpspack.h and libmpspack_c (C99, warnings as errors), and runs them on every
# rebuilt-bookworm fixture and the bundled example container. Any failed step stops the test with its output.
include(${SOURCE_DIR}/tests/install/step.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/tmp)
set(prefix ${WORK_DIR}/installed)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/mpspack/mpspack.h lib/libmpspack_c.so lib/libmpspack_c.so.0)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()

# Only the C API's header folder and library: -I and -L point at the installed tree, and nothing else of mpspack
# is named. C_FLAGS carries the sanitizers under the asan preset (the library is built with them too).
separate_arguments(flags UNIX_COMMAND "${C_FLAGS}")
function(compile source out)
  step("compile ${source}" ${C_COMPILER} -std=c99 -Wall -Wextra -pedantic -Werror ${flags} ${source}
       -I${prefix}/include -L${prefix}/lib -lmpspack_c -lm -pthread -ldl -Wl,-rpath,${prefix}/lib -o ${out})
endfunction()
compile(${SOURCE_DIR}/tests/capi/capi_test.c ${WORK_DIR}/capi_test)

# The example of docs/LIBRARY.md, "The C API": the C code block after the marker, compiled and run as it is.
file(READ ${SOURCE_DIR}/docs/LIBRARY.md doc)
string(FIND "${doc}" "<!-- capi-example -->" at)
if(at LESS 0)
  message(FATAL_ERROR "docs/LIBRARY.md has no <!-- capi-example --> marker")
endif()
string(SUBSTRING "${doc}" ${at} -1 doc)
string(REGEX MATCH "```c\n(.*)" block "${doc}")
string(FIND "${CMAKE_MATCH_1}" "```" end)
string(SUBSTRING "${CMAKE_MATCH_1}" 0 ${end} code)
file(WRITE ${WORK_DIR}/doc_example.c "${code}")
compile(${WORK_DIR}/doc_example.c ${WORK_DIR}/doc_example)

set(example ${prefix}/share/mpspack/examples/tiny_mlp.mpk)
# Opened RTLD_LOCAL, as a host language opens it: the model still binds to the library's shim.
step("compile capi_local.c" ${C_COMPILER} -std=c99 -Wall -Wextra -pedantic -Werror ${flags}
     ${SOURCE_DIR}/tests/capi/capi_local.c -I${prefix}/include -ldl -lm -o ${WORK_DIR}/capi_local)
step("capi_local" ${WORK_DIR}/capi_local ${prefix}/lib/libmpspack_c.so.0 ${example})
# ... and beside an impostor in the global scope (torch's shim, in a process that imported torch): a library
# defining each aoti_torch_* the example's and the fixtures' models import as a function that aborts.
file(GLOB fixture_libraries ${FIXTURES}/*/model.so)
set(imports "")
foreach(so ${EXAMPLE_SO} ${fixture_libraries})
  step("nm ${so}" nm -D --undefined-only ${so})
  string(REGEX MATCHALL "aoti_torch_[A-Za-z0-9_]+" found "${STEP_OUTPUT}")
  list(APPEND imports ${found})
endforeach()
list(REMOVE_DUPLICATES imports)
set(impostor "#include <stdlib.h>\n")
foreach(name ${imports})
  string(APPEND impostor "void ${name}(void) { abort(); }\n")
endforeach()
file(WRITE ${WORK_DIR}/impostor.c "${impostor}")
step("compile impostor.c" ${C_COMPILER} -shared -fPIC ${flags} ${WORK_DIR}/impostor.c -o ${WORK_DIR}/libimpostor.so)
step("capi_local beside an impostor" ${WORK_DIR}/capi_local ${prefix}/lib/libmpspack_c.so.0 ${example}
     ${WORK_DIR}/libimpostor.so)
step("doc example" ${WORK_DIR}/doc_example ${example})
if(NOT STEP_OUTPUT MATCHES "output 0: ")
  message(FATAL_ERROR "the doc example printed no output line:\n${STEP_OUTPUT}")
endif()
step("capi_test example" ${WORK_DIR}/capi_test example ${example} ${WORK_DIR}/tmp)
step("capi_test pt2" ${WORK_DIR}/capi_test pt2 ${FIXTURES}/../pt2/pkg.pt2 ${WORK_DIR}/tmp)

# Every rebuilt-bookworm case: "torch.float32" [8, 64] -> "f32:8x64".
set(manifest ${FIXTURES}/manifest.json)
if(NOT EXISTS ${manifest})
  message(FATAL_ERROR "no fixtures at ${FIXTURES} (../shared beside the checkout)")
endif()
file(READ ${manifest} json)
function(spec_of tensor out)
  string(JSON dtype GET "${tensor}" dtype)
  string(REPLACE "torch." "" dtype "${dtype}")
  set(short_float32 f32)
  set(short_int64 i64)
  set(short_float16 f16)
  set(short_bfloat16 bf16)
  set(short_int32 i32)
  if(DEFINED short_${dtype})
    set(dtype ${short_${dtype}})
  endif()
  string(JSON n LENGTH "${tensor}" shape)
  set(dims "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON d GET "${tensor}" shape ${i})
    list(APPEND dims ${d})
  endforeach()
  list(JOIN dims "x" shape)
  set(${out} "${dtype}:${shape}" PARENT_SCOPE)
endfunction()
string(JSON n_cases LENGTH "${json}" cases)
math(EXPR last "${n_cases} - 1")
foreach(i RANGE ${last})
  string(JSON dir GET "${json}" cases ${i} dir)
  string(JSON input GET "${json}" cases ${i} inputs 0)
  string(JSON output GET "${json}" cases ${i} outputs 0)
  spec_of("${input}" in_spec)
  spec_of("${output}" out_spec)
  file(MAKE_DIRECTORY ${WORK_DIR}/tmp/${dir})
  step("capi_test fixture ${dir}" ${WORK_DIR}/capi_test fixture ${FIXTURES}/${dir} ${WORK_DIR}/tmp/${dir}
       ${in_spec} ${out_spec})
  # Its container (built by capi_test with the case's input and output as its example) from the library opened
  # RTLD_LOCAL, alone and beside the impostor: AOTInductor's static initializers call the shim (dtype and device
  # codes) when the model library is loaded, before any run.
  step("capi_local ${dir}" ${WORK_DIR}/capi_local ${prefix}/lib/libmpspack_c.so.0 ${WORK_DIR}/tmp/${dir}/model.mpk)
  step("capi_local ${dir} beside an impostor" ${WORK_DIR}/capi_local ${prefix}/lib/libmpspack_c.so.0
       ${WORK_DIR}/tmp/${dir}/model.mpk ${WORK_DIR}/libimpostor.so)
endforeach()
message(STATUS "C API: the example and ${n_cases} fixtures passed")

# With the CUDA backend: the CUDA MLP on the GPU, skipped (exit 77) on a machine without a usable one.
if(WITH_CUDA)
  set(cuda_case ${FIXTURES}/../torch-built/cuda_mlp_default)
  if(NOT EXISTS ${cuda_case}/model.so)
    message(FATAL_ERROR "no CUDA fixture at ${cuda_case}")
  endif()
  file(MAKE_DIRECTORY ${WORK_DIR}/tmp/cuda)
  execute_process(COMMAND ${WORK_DIR}/capi_test cuda ${cuda_case} ${WORK_DIR}/tmp/cuda f32:8x64 f32:8x10
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 77)
    message(STATUS "C API on CUDA: ${out}")
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "capi_test cuda failed (${rc}):\n${out}\n${err}")
  else()
    message(STATUS "C API on CUDA: passed")
  endif()
endif()
