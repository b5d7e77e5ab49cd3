# Run by CTest (tests/install/CMakeLists.txt) with BUILD_DIR, WORK_DIR, CONSUMER_DIR, FIXTURE,
# EXAMPLE_SO, GENERATOR and CONSUMER_FLAGS set. Any failed step stops the test with its output.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(STEP_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. Install.
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f bin/mpspack include/mpspack/mpspack.hpp include/mpspack/format/container.hpp
          include/mpspack/pack/diff.hpp lib/libmpspack.a lib/cmake/mpspack/mpspackConfig.cmake
          lib/cmake/mpspack/mpspackConfigVersion.cmake lib/cmake/mpspack/mpspackTargets.cmake
          share/bash-completion/completions/mpspack)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
find_program(HELP2MAN help2man)
if(HELP2MAN AND NOT EXISTS ${prefix}/share/man/man1/mpspack.1)
  message(FATAL_ERROR "help2man is present but share/man/man1/mpspack.1 was not installed")
endif()
# Generated FlatBuffers headers and the runtime's headers stay out of the public tree.
file(GLOB_RECURSE private_headers ${prefix}/include/*_generated.h ${prefix}/include/mpspack/runtime/*)
if(private_headers)
  message(FATAL_ERROR "private headers installed: ${private_headers}")
endif()

# 2. Configure and build the consumer against the prefix only.
# CONSUMER_FLAGS: the sanitizer flags of an asan build (its libmpspack.a needs their runtime); empty otherwise.
step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
     "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
step("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)

# 3. The installed mpspack builds a container; the consumer lists it.
if(EXISTS ${FIXTURE})
  set(input ${FIXTURE})
  set(expect "library model cpu embedded\n.*constant l_weight f32 \\[4,8\\] 128\n")
else()
  message(STATUS "fixture ${FIXTURE} missing: using the bundled example (no constants table)")
  set(input ${EXAMPLE_SO})
  set(expect "library model cpu embedded\n")
endif()
step("installed mpspack build" ${prefix}/bin/mpspack build ${input} -o ${WORK_DIR}/model.mpk)
step("installed mpspack --version" ${prefix}/bin/mpspack --version)
if(NOT STEP_OUTPUT MATCHES "^mpspack 0\\.1\\.0")
  message(FATAL_ERROR "unexpected --version: ${STEP_OUTPUT}")
endif()
step("consumer" ${WORK_DIR}/consumer/consumer ${WORK_DIR}/model.mpk)
message(STATUS "consumer printed:\n${STEP_OUTPUT}")
if(NOT STEP_OUTPUT MATCHES "${expect}")
  message(FATAL_ERROR "consumer output does not match '${expect}'")
endif()
# 4. The CUDA backend is a plugin the installed mpspack finds beside itself (lib/mpspack): running a CUDA library
#    reaches it (a result on a GPU machine, "no usable CUDA device here" without one), never "no cuda backend".
if(WITH_CUDA)
  if(NOT EXISTS ${prefix}/lib/mpspack/backend_cuda.so)
    message(FATAL_ERROR "not installed: ${prefix}/lib/mpspack/backend_cuda.so")
  endif()
  if(EXISTS ${CUDA_FIXTURE}/model.so)
    step("installed mpspack build (cuda)" ${prefix}/bin/mpspack build ${CUDA_FIXTURE}/model.so -o ${WORK_DIR}/cuda.mpk)
    execute_process(COMMAND ${prefix}/bin/mpspack run ${WORK_DIR}/cuda.mpk --input ${CUDA_FIXTURE}/input0.bin:f32:8x64
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 AND NOT err MATCHES "no usable CUDA device here")
      message(FATAL_ERROR "installed mpspack did not reach its CUDA backend (exit ${rc}): ${err}")
    endif()
  else()
    message(STATUS "skipped the CUDA run: fixture ${CUDA_FIXTURE} missing")
  endif()
endif()

# Errors are values: a file that is not a container gives NotThisFormat (exit 3 in the consumer).
file(WRITE ${WORK_DIR}/junk.mpk "not a container")
execute_process(COMMAND ${WORK_DIR}/consumer/consumer ${WORK_DIR}/junk.mpk RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "consumer on junk: exit ${rc}, expected 3 (NotThisFormat): ${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
