// Crafting hostile containers for CLI tests: the metadata of a real one, edited, under a valid checksum, so
// that what is tested is the check behind the checksum.
#pragma once

#include "cli_runner.hpp"
#include "mpspack/bytes.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/format/metadata.hpp"
#include "mpspack/format/writer.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>

namespace mpspack::test {

// Exit code is an error (not a crash), stderr is exactly one line, and it names `name`.
inline void check_one_line_error(const CliResult& r, const std::string& name, int code = 2) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("mpspack: ", 0) == 0);
  CHECK(lines[0].find(name) != std::string::npos);
}

// Rewrites a container's metadata in place (integers, or strings of the same length, so its size stays).
inline std::string with_manifest(const std::string& bytes, const std::function<void(Manifest&)>& edit) {
  ByteView view({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "c");
  auto h = format::read_header(view);
  REQUIRE(h.ok());
  auto m = format::decode_metadata(ByteView(view.span().subspan(h->metadata_offset, h->metadata_size), "c"));
  REQUIRE(m.ok());
  edit(*m);
  auto meta = format::encode_metadata(*m);
  REQUIRE(meta.size() == h->metadata_size);
  format::Header nh = *h;
  auto hb = format::encode_header(nh);
  nh.checksum = format::header_checksum(ByteView(hb), ByteView(meta));
  hb = format::encode_header(nh);
  std::string out = bytes;
  std::memcpy(out.data(), hb.data(), hb.size());
  std::memcpy(out.data() + h->metadata_offset, meta.data(), meta.size());
  return out;
}

// Writes the segments of the container at `from` to `to` under an edited manifest of any size (more libraries
// sharing the same segments, say), through the library's own writer.
// Every segment of c, to be written again with the writer; each keeps its place modulo 64 KiB.
inline std::vector<format::PendingSegment> segments_of(const format::Container& c) {
  std::vector<format::PendingSegment> pending;
  for (uint32_t i = 0; i < c.manifest().segments.size(); ++i) {
    const auto& s = c.manifest().segments[i];
    pending.push_back({s.kind, s.name, c.segment(i), s.offset});
  }
  return pending;
}

inline void rewrite_container(const std::filesystem::path& from, const std::filesystem::path& to,
                              const std::function<void(Manifest&)>& edit) {
  auto c = format::Container::open(from);
  REQUIRE(c.ok());
  std::vector<format::PendingSegment> pending = segments_of(*c);
  Manifest m = c->manifest();
  edit(m);
  auto written = format::write_container(to, std::move(m), pending);
  INFO((written.ok() ? std::string() : written.error().message));
  REQUIRE(written.ok());
}

}  // namespace mpspack::test
