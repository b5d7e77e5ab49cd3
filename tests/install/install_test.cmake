# Run by CTest (tests/install/CMakeLists.txt) with BUILD_DIR, WORK_DIR, CONSUMER_DIR, FIXTURE, EXAMPLE_SO,
# GENERATOR and CONSUMER_FLAGS set. Any failed step stops the test with its output.
# Every program runs without LD_LIBRARY_PATH, so what it loads comes from its RUNPATH or the system.
include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. Install, then move the tree: everything below runs from where it was moved to (the tree is relocatable).
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/installed)
set(prefix ${WORK_DIR}/moved)
file(RENAME ${WORK_DIR}/installed ${prefix})
foreach(f bin/mpspack include/mpspack/mpspack.hpp include/mpspack/format/container.hpp
          include/mpspack/pack/diff.hpp include/mpspack/runtime/verify.hpp include/mpspack/runtime/model.hpp
          lib/libmpspack.a lib/libmpspack_runtime.a lib/libmpspack_shim.a lib/cmake/mpspack/mpspackConfig.cmake
          lib/cmake/mpspack/mpspackConfigVersion.cmake lib/cmake/mpspack/mpspackTargets.cmake
          lib/mpspack/onednn.so share/bash-completion/completions/mpspack share/mpspack/examples/tiny_mlp.mpk)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
find_program(HELP2MAN help2man)
if(HELP2MAN AND NOT EXISTS ${prefix}/share/man/man1/mpspack.1)
  message(FATAL_ERROR "help2man is present but share/man/man1/mpspack.1 was not installed")
endif()
# Generated FlatBuffers headers and the shim's own headers stay out of the public tree.
file(GLOB_RECURSE private_headers ${prefix}/include/*_generated.h ${prefix}/include/*/tensor.hpp)
if(private_headers)
  message(FATAL_ERROR "private headers installed: ${private_headers}")
endif()

# 2. Real files: every link in the tree points at a file inside it; every library the tool carries is a file.
file(GLOB_RECURSE entries LIST_DIRECTORIES false ${prefix}/*)
foreach(e ${entries})
  if(IS_SYMLINK ${e})
    file(REAL_PATH ${e} target)
    string(FIND "${target}" "${prefix}/" at)
    if(NOT EXISTS ${target} OR NOT at EQUAL 0)
      message(FATAL_ERROR "${e} is a link to ${target}, not a file of the installed tree")
    endif()
  endif()
endforeach()
file(GLOB carried ${prefix}/lib/*.so.*)
if(NOT carried)
  message(FATAL_ERROR "no shared library copies in ${prefix}/lib")
endif()
# 3. Every ELF file's search path is relative to itself ($ORIGIN): nothing points back at the build tree or the
#    install location; and ldd finds every library it needs, those the tree carries in the tree.
file(GLOB elves ${prefix}/bin/mpspack ${prefix}/lib/mpspack/*.so)
foreach(f ${elves})
  step("readelf -d ${f}" readelf -d ${f})
  string(REGEX MATCHALL "\\((RPATH|RUNPATH)\\)[^\n]*" lines "${STEP_OUTPUT}")
  foreach(line ${lines})
    string(REGEX REPLACE ".*: \\[(.*)\\]$" "\\1" dirs "${line}")
    string(REPLACE ":" ";" dirs "${dirs}")
    foreach(d ${dirs})
      if(NOT d MATCHES "^\\$ORIGIN(/|$)")
        message(FATAL_ERROR "${f}: search path ${d} is not relative to the file (${line})")
      endif()
    endforeach()
  endforeach()
  step("ldd ${f}" ldd ${f})
  if(STEP_OUTPUT MATCHES "not found")
    message(FATAL_ERROR "${f}: a library is not found:\n${STEP_OUTPUT}")
  endif()
  foreach(c ${carried})
    get_filename_component(name ${c} NAME)
    if(STEP_OUTPUT MATCHES "\t${name} => ([^ ]*)")
      file(REAL_PATH "${CMAKE_MATCH_1}" from)
      if(NOT from STREQUAL "${prefix}/lib/${name}")
        message(FATAL_ERROR "${f} loads ${name} from ${from}, not from the installed tree")
      endif()
    endif()
  endforeach()
endforeach()

# 4. Configure and build the consumer against the moved prefix only. It sets no C++ standard itself.
# CONSUMER_FLAGS: the sanitizer flags of an asan build (its static libraries need their runtime); empty otherwise.
step("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
     "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
step("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)

# 5. The installed mpspack checks and runs the bundled example container; the consumer runs it through the
#    installed runtime (verify(): the recorded example input in, the outputs compared with the recorded ones).
set(example ${prefix}/share/mpspack/examples/tiny_mlp.mpk)
step("installed mpspack --version" ${prefix}/bin/mpspack --version)
if(NOT STEP_OUTPUT MATCHES "^mpspack 0\\.1\\.0")
  message(FATAL_ERROR "unexpected --version: ${STEP_OUTPUT}")
endif()
step("installed mpspack verify" ${prefix}/bin/mpspack verify ${example})
step("installed mpspack run" ${prefix}/bin/mpspack run ${example})
step("consumer_run" ${WORK_DIR}/consumer/consumer_run ${example})
message(STATUS "consumer_run printed:\n${STEP_OUTPUT}")
if(NOT STEP_OUTPUT MATCHES "library model weights [^\n]+\noutput 0 matches\nverified\n")
  message(FATAL_ERROR "consumer_run did not run and match the example")
endif()

# 6. The installed mpspack builds a container; the consumer lists it. Reading a .pt2 opens libzip: the copy in the
#    installed tree, not the system's.
# Not under ASan: its dlopen interceptor makes libasan the caller, whose search path is not the tool's RUNPATH.
if(EXISTS ${FIXTURE} AND NOT CONSUMER_FLAGS MATCHES "-fsanitize=")
  step("installed mpspack inspect (.pt2)" ${CMAKE_COMMAND} -E env LD_DEBUG=libs ${prefix}/bin/mpspack inspect ${FIXTURE})
  if(NOT STEP_ERROR MATCHES "calling init: ([^\n]*/libzip\\.so\\.[0-9]+)")
    message(FATAL_ERROR "mpspack inspect on a .pt2 did not open libzip:\n${STEP_ERROR}")
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" from)
  if(NOT from MATCHES "^${prefix}/lib/libzip\\.so\\.[0-9]+$")
    message(FATAL_ERROR "mpspack inspect on a .pt2 opened ${from}, not the installed tree's libzip")
  endif()
endif()
if(EXISTS ${FIXTURE})
  set(input ${FIXTURE})
  set(expect "library model cpu embedded\n.*constant l_weight f32 \\[4,8\\] 128\n")
else()
  message(STATUS "fixture ${FIXTURE} missing: using the bundled example (no constants table)")
  set(input ${EXAMPLE_SO})
  set(expect "library model cpu embedded\n")
endif()
step("installed mpspack build" ${prefix}/bin/mpspack build ${input} -o ${WORK_DIR}/model.mpk)
step("consumer" ${WORK_DIR}/consumer/consumer ${WORK_DIR}/model.mpk)
message(STATUS "consumer printed:\n${STEP_OUTPUT}")
if(NOT STEP_OUTPUT MATCHES "${expect}")
  message(FATAL_ERROR "consumer output does not match '${expect}'")
endif()
step("consumer_log" ${WORK_DIR}/consumer/consumer_log ${WORK_DIR}/model.mpk ${WORK_DIR}/consumer.log)
file(READ ${WORK_DIR}/consumer.log logged)
if(NOT logged MATCHES "\\[info\\] 1 libraries")
  message(FATAL_ERROR "consumer_log wrote '${logged}', expected '[info] 1 libraries'")
endif()
# 7. The CUDA backend is a plugin the installed mpspack finds beside itself (lib/mpspack): running a CUDA library
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

# 8. The Python package of the tree (lib/python/mpspack) imported by Debian's python3 with nothing but the tree:
#    it loads the tree's C API library (lib/libmpspack_c.so.0, found from its own place), opens and verifies the
#    example container and runs its model in-process, with no mpspack executable on PATH. (The code has no ';':
#    step() passes its arguments on as a CMake list.)
if(NOT EXISTS ${prefix}/lib/python/mpspack/__init__.py)
  message(FATAL_ERROR "not installed: ${prefix}/lib/python/mpspack/__init__.py")
endif()
find_program(SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(python_env)  # under the sanitizers: their runtimes first (cmake/sanitizer_env.cmake)
if(NOT "$ENV{MPSPACK_PYTHON_PRELOAD}" STREQUAL "")
  set(python_env LD_PRELOAD=$ENV{MPSPACK_PYTHON_PRELOAD} ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0)
endif()
if(SYSTEM_PYTHON3)
  step("installed python package" ${CMAKE_COMMAND} -E env --unset=MPSPACK_LIBRARY --unset=MPSPACK_BIN ${python_env}
       PYTHONPATH=${prefix}/lib/python PYTHONDONTWRITEBYTECODE=1 PATH=/nonexistent ${SYSTEM_PYTHON3} -c
       "import sys, mpspack\nprint(mpspack.library_path())\nc = mpspack.open(sys.argv[1])\nprint(c.verify()['ok'])\nprint(mpspack.load(c).bench(iterations=1)['ok'])"
       ${example})
  if(NOT STEP_OUTPUT STREQUAL "${prefix}/lib/libmpspack_c.so.0\nTrue\nTrue\n")
    message(FATAL_ERROR "the installed Python package printed:\n${STEP_OUTPUT}")
  endif()
endif()

# Errors are values: a file that is not a container gives NotThisFormat (exit 3 in the consumer).
file(WRITE ${WORK_DIR}/junk.mpk "not a container")
execute_process(COMMAND ${WORK_DIR}/consumer/consumer ${WORK_DIR}/junk.mpk RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "consumer on junk: exit ${rc}, expected 3 (NotThisFormat): ${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
