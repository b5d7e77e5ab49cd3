// Giving back the pages of a file mapping the process no longer needs resident: after oneDNN has packed a weight
// that lies in the container's mapped file (constant_memory.hpp), the weight's own pages would otherwise count in
// the process's memory twice over. A page the process wrote, or any anonymous page, is left alone: dropping it
// would lose its bytes, where a file page is read back from the file at the next access.
#pragma once

#include <cstddef>

namespace mpspack::shim {

// Drops the whole pages of [p, p + bytes) that are mapped file pages (/proc/self/pagemap), with MADV_DONTNEED; the
// bytes left to drop: 0 when every whole page was dropped or absent. Nothing is dropped where pagemap cannot be read.
std::size_t release_file_pages(const void* p, std::size_t bytes);

}  // namespace mpspack::shim
