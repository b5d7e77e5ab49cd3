# Binary packages of the install tree, made by `cpack` in the build folder (`cpack -G DEB`, `cpack -G TGZ`, or both):
#   mpspack_<version>_<arch>.deb      the tree under /opt/mpspack, and links to it where the system looks:
#                                     /usr/bin/mpspack (the tool), the man page and the bash completion
#                                     (package_generator.cmake)
#   mpspack-<version>-Linux.tar.gz    the same tree under one top folder, to unpack anywhere
# The tree is relocatable: bin/mpspack and its plugins find the libraries carried in lib/ through RUNPATH
# $ORIGIN/../lib, so neither package needs those libraries on the machine. The tool and the plugins are stripped
# (the static libraries keep their symbols). The .deb's Depends are computed by dpkg-shlibdeps from what the
# packaged executables and libraries need and the tree does not carry (the C and C++ runtimes, libgomp for oneDNN,
# libzip's compression libraries).
set(CPACK_PACKAGE_NAME mpspack)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# The maintainers' address is kept in one place, MAINTAINERS at the top of the source tree.
file(STRINGS ${PROJECT_SOURCE_DIR}/MAINTAINERS _mpspack_maintainers REGEX "^[^#].*<[^>]+@[^>]+>")
list(GET _mpspack_maintainers 0 CPACK_PACKAGE_CONTACT)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/MAINTAINERS)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "package PyTorch AOTInductor model libraries into one container and run them")
set(CPACK_PACKAGE_DESCRIPTION
    "mpspack packs AOTInductor model libraries (model.so, .pt2) and their weights into one container file,\
 inspects and verifies it without running anything, restores the original byte for byte, and runs the model\
 without libtorch on its own AOTInductor shim (CPU, and CUDA when built with it). The package holds the tool, its\
 libraries and plugins, the C++ library and runtime with their CMake package, the C API (libmpspack_c.so.0 and\
 mpspack.h), the man page, bash completion and\
 an example container (share/mpspack/examples/tiny_mlp.mpk).")
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# push, pull and inspect oci:// open libcurl.so.4 at their first transfer (libpack/src/registry/curl_api.hpp), which
# dpkg-shlibdeps cannot see; everything else runs without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/package_generator.cmake)
include(CPack)
