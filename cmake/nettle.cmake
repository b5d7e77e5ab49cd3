# mpspack::nettle: Nettle (GnuTLS's crypto library) for SHA-256; its x86-64 build uses the CPU's SHA extensions
# where present, one 64-byte block a call (format/hash_sha256_ni.cpp runs them over many blocks a call, 11% faster,
# and leaves Nettle the padding and partial blocks). Linked statically, so the binary runs on machines without
# our Debian packages, and unlike OpenSSL's libcrypto.a (16,000 relocations, 0.5 ms added to the start of every
# command, 2 ms of provider set-up at the first digest) it costs nothing until it hashes. Included by the build
# and by the installed mpspackConfig.cmake (libmpspack.a needs it at the consumer's link).
if(NOT TARGET mpspack::nettle)
  find_path(MPSPACK_NETTLE_INCLUDE_DIR nettle/sha2.h REQUIRED)
  find_library(MPSPACK_NETTLE_LIBRARY NAMES libnettle.a REQUIRED)
  add_library(mpspack::nettle STATIC IMPORTED)
  set_target_properties(mpspack::nettle PROPERTIES IMPORTED_LOCATION "${MPSPACK_NETTLE_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${MPSPACK_NETTLE_INCLUDE_DIR}")
endif()
# mpspack::hogweed: Nettle's public-key half (Ed25519, ECDSA P-256) for signing and verifying containers
# (libpack/src/sign), with GMP, which it computes with. Static like Nettle: only the objects the signing code uses are
# linked in, and nothing runs until a command signs or verifies (docs/SIGNING.md, "Why Nettle").
if(NOT TARGET mpspack::hogweed)
  find_library(MPSPACK_HOGWEED_LIBRARY NAMES libhogweed.a REQUIRED)
  find_library(MPSPACK_GMP_LIBRARY NAMES libgmp.a REQUIRED)
  add_library(mpspack::hogweed STATIC IMPORTED)
  set_target_properties(mpspack::hogweed PROPERTIES IMPORTED_LOCATION "${MPSPACK_HOGWEED_LIBRARY}"
                                                    INTERFACE_LINK_LIBRARIES "mpspack::nettle;${MPSPACK_GMP_LIBRARY}"
                                                    INTERFACE_INCLUDE_DIRECTORIES "${MPSPACK_NETTLE_INCLUDE_DIR}")
endif()
