# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE, cmake/package.cmake). The .deb installs the tree
# under /opt/mpspack: its lib/ holds private copies of shared libraries (SLEEF, libzip, oneDNN, libOpenCL), which
# must not sit in a folder the system's loader searches. dpkg-shlibdeps looks there first (-l, a path inside the
# package), so that a library the tree carries is no dependency even where the one naming it has no RUNPATH (the
# carried libdnnl names libOpenCL.so.1, loaded from lib/ by the plugin before it). The archive keeps the tree
# relative to its top folder. The .deb also links into the tree from where the system looks (deb_links.cmake):
# /usr/bin/mpspack for PATH, the man page for man, the completion for bash-completion. It owns /opt/mpspack but
# not /opt (deb_unown_opt.cmake), whose folder its preinst makes where it is missing (deb/preinst).
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /opt/mpspack)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS /opt/mpspack/lib)
  set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/deb_links.cmake)
  set(CPACK_POST_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/deb_unown_opt.cmake)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/preinst)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
  set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)  # deb_unown_opt.cmake rewrites data.tar.gz
endif()
