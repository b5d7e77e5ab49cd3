# Run by CTest (tests/install/CMakeLists.txt) with BUILD_DIR and WORK_DIR set: cpack makes the .deb and the
# .tar.gz from this build tree; the .deb's metadata and contents are checked with dpkg-deb, and both packages are
# unpacked (dpkg-deb -x, no root needed) and the tool in each runs the bundled example container.
include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)
function(expect what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
step("cpack" cpack --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/out)
file(GLOB deb ${WORK_DIR}/out/mpspack_0.1.0_*.deb)
file(GLOB tgz ${WORK_DIR}/out/mpspack-0.1.0-*.tar.gz)
list(LENGTH deb ndeb)
list(LENGTH tgz ntgz)
if(NOT ndeb EQUAL 1 OR NOT ntgz EQUAL 1)
  message(FATAL_ERROR "cpack made '${deb}' and '${tgz}', expected one .deb and one .tar.gz")
endif()

# 1. The .deb's metadata.
step("dpkg-deb --info" dpkg-deb --info ${deb})
set(info "${STEP_OUTPUT}")
expect("control" "${info}" "\n Package: mpspack\n")
expect("control" "${info}" "\n Version: 0\\.1\\.0\n")
# Maintainer: the address kept in MAINTAINERS (cmake/package.cmake), as it is there.
file(STRINGS ${SOURCE_DIR}/MAINTAINERS maintainers REGEX "^[^#]")
list(GET maintainers 0 maintainer)
string(FIND "${info}" "\n Maintainer: ${maintainer}\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the .deb's Maintainer is not '${maintainer}' (MAINTAINERS):\n${info}")
endif()
expect("control" "${info}" "\n Description: [^\n]+\n [^\n]+")
# Depends: computed by dpkg-shlibdeps: the C library for every ELF file; none of the libraries the tree carries.
expect("control" "${info}" "\n Depends: [^\n]*libc6 \\(>= [0-9.]+\\)")
string(REGEX MATCH "\n Depends: [^\n]*" depends "${info}")
foreach(carried libsleef libzip4 libdnnl ocl-icd-libopencl1 libcudart)
  if(depends MATCHES "${carried}")
    message(FATAL_ERROR "the .deb depends on ${carried}, which it carries: ${depends}")
  endif()
endforeach()

# 2. Its contents: the tree under /opt/mpspack, every entry a folder or a plain file (no link to resolve), and the
# links outside it from where the system looks (cmake/deb_links.cmake): /usr/bin/mpspack, the bash completion and,
# where help2man made it, the man page. No entry for /opt itself (cmake/deb_unown_opt.cmake).
step("dpkg-deb --contents" dpkg-deb --contents ${deb})
set(contents "${STEP_OUTPUT}")
find_program(HELP2MAN help2man)
set(links "usr/bin/mpspack:bin/mpspack"
          "usr/share/bash-completion/completions/mpspack:share/bash-completion/completions/mpspack")
if(HELP2MAN)
  list(APPEND links "usr/share/man/man1/mpspack.1:share/man/man1/mpspack.1")
endif()
list(APPEND links "usr/lib/python3/dist-packages/mpspack:lib/python/mpspack")  # the Python package
set(rest "${contents}")
foreach(pair ${links})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 link)
  list(GET pair 1 target)
  set(entry "lrwxrwxrwx root/root +0 [^\n]+ \\./${link} -> /opt/mpspack/${target}")
  string(REGEX MATCHALL "(^|\n)${entry}" found "${contents}")
  list(LENGTH found nfound)
  if(NOT nfound EQUAL 1)
    message(FATAL_ERROR "the .deb does not hold the link /${link} -> /opt/mpspack/${target} once:\n${contents}")
  endif()
  string(REGEX REPLACE "(^|\n)${entry}" "" rest "${rest}")
endforeach()
# The C API's library under its SONAME and its development name, links to its versioned file beside them, as
# shared libraries are installed (ldconfig and the linker's -lmpspack_c look for those names).
string(REGEX REPLACE "(^|\n)lrwxrwxrwx root/root +0 [^\n]+ \\./opt/mpspack/lib/libmpspack_c\\.so(\\.0)? -> libmpspack_c\\.so\\.[0-9.]+"
       "" rest "${rest}")
string(REGEX MATCHALL "(^|\n)[^d-][^\n]*" odd "${rest}")
if(odd)
  message(FATAL_ERROR "the .deb holds entries that are neither folders nor plain files:${odd}")
endif()
if(contents MATCHES "(^|\n)d[^\n]* \\./opt/?\n")
  message(FATAL_ERROR "the .deb lists the folder /opt, which dpkg would then try to remove with it:\n${contents}")
endif()
set(root ./opt/mpspack)
set(wanted bin/mpspack include/mpspack/mpspack.hpp include/mpspack/runtime/verify.hpp lib/libmpspack.a
           lib/libmpspack_runtime.a lib/libmpspack_shim.a lib/libsleef.so.3 lib/libzip.so.4 lib/mpspack/onednn.so
           lib/cmake/mpspack/mpspackConfig.cmake lib/cmake/mpspack/mpspackTargets.cmake
           share/bash-completion/completions/mpspack share/mpspack/examples/tiny_mlp.mpk
           include/mpspack/mpspack.h)
if(HELP2MAN)
  list(APPEND wanted share/man/man1/mpspack.1)
endif()
list(APPEND wanted lib/python/mpspack/__init__.py lib/python/mpspack/_capi.py)
if(NOT contents MATCHES " \\./opt/mpspack/lib/libmpspack_c\\.so\\.0\\.[0-9.]+\n")
  message(FATAL_ERROR "the .deb lacks the C API's library, lib/libmpspack_c.so.0.*:\n${contents}")
endif()
foreach(f ${wanted})
  string(FIND "${contents}" " ${root}/${f}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the .deb lacks ${root}/${f}:\n${contents}")
  endif()
endforeach()

# 3. Unpacked as dpkg would install it: the stripped tool runs the example from there.
step("dpkg-deb -x" dpkg-deb -x ${deb} ${WORK_DIR}/root)
set(tool ${WORK_DIR}/root/opt/mpspack/bin/mpspack)
set(example ${WORK_DIR}/root/opt/mpspack/share/mpspack/examples/tiny_mlp.mpk)
step("readelf -S" readelf -S --wide ${tool})
if(STEP_OUTPUT MATCHES "\\.symtab|\\.debug_")
  message(FATAL_ERROR "${tool} is not stripped")
endif()
step(".deb: mpspack --version" ${tool} --version)
expect("--version" "${STEP_OUTPUT}" "^mpspack 0\\.1\\.0")
step(".deb: mpspack inspect" ${tool} inspect ${example})
expect("inspect" "${STEP_OUTPUT}" "model")
step(".deb: mpspack verify" ${tool} verify ${example})
step(".deb: mpspack run" ${tool} run ${example})
# The link as dpkg unpacked it, resolved inside the scratch root the way /usr/bin/mpspack resolves on the machine.
file(READ_SYMLINK ${WORK_DIR}/root/usr/bin/mpspack on_path)
if(NOT on_path STREQUAL "/opt/mpspack/bin/mpspack")
  message(FATAL_ERROR "/usr/bin/mpspack links to '${on_path}', expected /opt/mpspack/bin/mpspack")
endif()
step(".deb: mpspack --version through /usr/bin" ${WORK_DIR}/root${on_path} --version)
# The Python package from the unpacked tree, by Debian's python3: it loads that tree's C API library and runs the
# example in-process.
find_program(SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
function(python_from tree)
  if(NOT SYSTEM_PYTHON3)
    return()
  endif()
  set(python_env)  # under the sanitizers: their runtimes first (cmake/sanitizer_env.cmake)
  if(NOT "$ENV{MPSPACK_PYTHON_PRELOAD}" STREQUAL "")
    set(python_env LD_PRELOAD=$ENV{MPSPACK_PYTHON_PRELOAD} ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0)
  endif()
  step("python package of ${tree}" ${CMAKE_COMMAND} -E env --unset=MPSPACK_LIBRARY ${python_env} PYTHONPATH=${tree}/lib/python
       PYTHONDONTWRITEBYTECODE=1 ${SYSTEM_PYTHON3} -c
       "import sys, mpspack\nprint(mpspack.library_path())\nprint(mpspack.load(sys.argv[1]).bench(iterations=1)['ok'])"
       ${tree}/share/mpspack/examples/tiny_mlp.mpk)
  expect("python" "${STEP_OUTPUT}" "^${tree}/lib/libmpspack_c\\.so\\.0\nTrue\n$")
endfunction()
python_from(${WORK_DIR}/root/opt/mpspack)

# 4. The archive, unpacked anywhere.
file(MAKE_DIRECTORY ${WORK_DIR}/tgz)
step("tar xf" ${CMAKE_COMMAND} -E chdir ${WORK_DIR}/tgz ${CMAKE_COMMAND} -E tar xf ${tgz})
file(GLOB top ${WORK_DIR}/tgz/mpspack-0.1.0-*)
step(".tar.gz: mpspack --version" ${top}/bin/mpspack --version)
expect("--version" "${STEP_OUTPUT}" "^mpspack 0\\.1\\.0")
step(".tar.gz: mpspack inspect" ${top}/bin/mpspack inspect ${top}/share/mpspack/examples/tiny_mlp.mpk)
expect("inspect" "${STEP_OUTPUT}" "model")
python_from(${top})
file(REMOVE_RECURSE ${WORK_DIR})
