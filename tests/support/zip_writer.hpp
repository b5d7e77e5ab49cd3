// Small zips for tests, made and read with libzip (link PkgConfig::LIBZIP).
#pragma once

#include <catch2/catch.hpp>
#include <zip.h>

#include <filesystem>
#include <string>
#include <vector>

namespace mpspack::test {

struct ZipEntry {
  std::string name;
  std::string data;
  bool deflate = false;
};

// Writes a zip with libzip's writing API.
inline void write_zip(const std::filesystem::path& path, const std::vector<ZipEntry>& entries) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  REQUIRE(z != nullptr);
  for (const auto& e : entries) {
    zip_source_t* src = zip_source_buffer(z, e.data.data(), e.data.size(), 0);
    REQUIRE(src != nullptr);
    zip_int64_t idx = zip_file_add(z, e.name.c_str(), src, ZIP_FL_ENC_UTF_8);
    REQUIRE(idx >= 0);
    REQUIRE(zip_set_file_compression(z, idx, e.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
  }
  REQUIRE(zip_close(z) == 0);
}

// Every entry of a zip, in order, stored (to be written back, edited, by write_zip).
inline std::vector<ZipEntry> read_zip(const std::filesystem::path& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  REQUIRE(z != nullptr);
  std::vector<ZipEntry> entries;
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    REQUIRE(zip_stat_index(z, i, 0, &st) == 0);
    std::string data(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, i, 0);
    REQUIRE(f != nullptr);
    REQUIRE(zip_fread(f, data.data(), st.size) == zip_int64_t(st.size));
    zip_fclose(f);
    entries.push_back({st.name, std::move(data)});
  }
  zip_discard(z);
  return entries;
}

// A .pt2 metadata JSON whose "x" holds objects nested `depth` deep (100,000 fit in the 1 MiB metadata cap).
inline std::string nested_metadata_json(size_t depth) {
  std::string json = R"({"AOTI_DEVICE_KEY": "cpu", "x": )";
  for (size_t i = 0; i < depth; ++i) json += R"({"a":)";
  return json + "1" + std::string(depth + 1, '}');
}

}  // namespace mpspack::test
