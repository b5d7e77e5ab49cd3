# Run by cpack for the .deb only (CPACK_PRE_BUILD_SCRIPTS, cmake/package_generator.cmake), after the tree is
# staged under /opt/mpspack and before the package is made: links from where the system looks into the tree, so
# that the installed package is found without settings. /usr/bin/mpspack (PATH), /usr/share/man/man1/mpspack.1
# (man; man-db reads a page that is not compressed), /usr/share/bash-completion/completions/mpspack (loaded by
# bash-completion the first time `mpspack` is completed), /usr/lib/python3/dist-packages/mpspack (Debian's python3
# imports the package from there; it finds the C API library through its real path, /opt/mpspack/lib). The tree itself stays whole under /opt/mpspack (its
# lib/ must not be where the system's loader searches); the archive has no such links and stays relocatable. The
# man page is linked only where it was built (help2man, share/CMakeLists.txt).
set(staged ${CPACK_TEMPORARY_INSTALL_DIRECTORY})
set(tree ${CPACK_PACKAGING_INSTALL_PREFIX})
foreach(pair "bin/mpspack:usr/bin/mpspack"
             "share/man/man1/mpspack.1:usr/share/man/man1/mpspack.1"
             "share/bash-completion/completions/mpspack:usr/share/bash-completion/completions/mpspack"
             "lib/python/mpspack:usr/lib/python3/dist-packages/mpspack")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 link)
  if(NOT EXISTS ${staged}${tree}/${target})
    if(target MATCHES "^share/man/")
      continue()
    endif()
    message(FATAL_ERROR "deb_links.cmake: ${tree}/${target} is not in the staged tree")
  endif()
  get_filename_component(folder ${staged}/${link} DIRECTORY)
  file(MAKE_DIRECTORY ${folder})
  file(CREATE_LINK ${tree}/${target} ${staged}/${link} SYMBOLIC)
endforeach()
