# Run by CTest (tests/install/CMakeLists.txt) with BUILD_DIR, WORK_DIR, CXX and CC set. Installs the build tree's
# headers and compiles each installed header on its own, with the install tree's include/ as the only mpspack
# include path: a public header that needs a header left out of the install (libpack/CMakeLists.txt,
# MPSPACK_PUBLIC_HEADERS), or one that does not include what it uses, fails with the compiler's message.
# mpspack.h, the C API, is compiled as C and as C++.
include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
set(include_dir ${WORK_DIR}/prefix/include)
file(GLOB_RECURSE headers RELATIVE ${include_dir} ${include_dir}/*)
if(NOT headers)
  message(FATAL_ERROR "no headers installed under ${include_dir}")
endif()
list(LENGTH headers count)
# Each header is the only include of a file of its own, as a consumer's first include would be.
foreach(h ${headers})
  string(MAKE_C_IDENTIFIER ${h} name)
  file(WRITE ${WORK_DIR}/${name}.cpp "#include <${h}>\n")
  step("${h} compiled on its own as C++"
       ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I${include_dir} ${WORK_DIR}/${name}.cpp)
  if(h MATCHES "\\.h$")
    file(WRITE ${WORK_DIR}/${name}.c "#include <${h}>\n")
    step("${h} compiled on its own as C"
         ${CC} -std=c99 -fsyntax-only -Wall -Wextra -Werror -I${include_dir} ${WORK_DIR}/${name}.c)
  endif()
endforeach()
message(STATUS "${count} installed headers, each compiles on its own")
