// Between the SIGBUS handler (read_errors.cpp) and the files it watches: MappedFile registers its mappings,
// AtomicWriter its temp files, so that a failed read of a mapped page names the file and leaves no temp file.
// Also the messages both give about files.
#pragma once

#include "mpspack/result.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mpspack::io {

// An Io error "NAME: WHAT: <errno's text>".
Error io_error(const std::string& name, std::string_view what);

// What a file that is neither a regular file nor a folder is, for messages.
const char* special_file_type(mode_t mode);

void register_mapping(const uint8_t* begin, uint64_t size, const std::string& name);
void unregister_mapping(const uint8_t* begin);
void register_temp(const std::string& path);
void unregister_temp(const std::string& path);

}  // namespace mpspack::io
