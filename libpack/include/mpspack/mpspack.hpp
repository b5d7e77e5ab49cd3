// mpspack's public API in one include. Every fallible function returns Result<T> (result.hpp):
// errors are values carrying one line that names the file, object, field, offset and size;
// nothing throws across the API. See docs/LIBRARY.md.
#pragma once

#include "mpspack/result.hpp"            // Result<T>, Status, Error (kind + message)
#include "mpspack/bytes.hpp"             // ByteView: bounds-checked little-endian reads
#include "mpspack/file.hpp"              // MappedFile, AtomicWriter
#include "mpspack/manifest.hpp"          // Manifest, LibraryInfo, WeightsInfo, ConstantInfo, dtype names
#include "mpspack/format/header.hpp"     // the fixed header (docs/FORMAT.md)
#include "mpspack/format/container.hpp"  // Container::open, verify
#include "mpspack/pack/build.hpp"        // build: libraries / .pt2 in, one container out
#include "mpspack/pack/unpack.hpp"       // unpack: the original libraries back, byte for byte
#include "mpspack/pack/diff.hpp"         // diff: are two containers the same model?
#include "mpspack/aoti/library.hpp"      // analyse a raw AOTInductor model library
#include "mpspack/pt2/package.hpp"       // read .pt2 packages
#include "mpspack/version.hpp"           // version_string()
