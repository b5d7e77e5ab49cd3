#include "mpspack/pt2/package.hpp"
#include "mpspack/pt2/wrapper_constants.hpp"

#include "fixtures.hpp"
#include "zip_writer.hpp"

#include <catch2/catch.hpp>
#include <unistd.h>
#include <zip.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>

using namespace mpspack;
using namespace mpspack::pt2;
using mpspack::test::write_zip;
using mpspack::test::ZipEntry;
namespace fs = std::filesystem;

namespace {

fs::path pt2_fixture(const char* name) { return test::fixtures_dir() / "pt2" / name; }

// CRC-32 (IEEE), written here so the check does not rely on libzip.
uint32_t crc32_of(const uint8_t* p, uint64_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (uint64_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// A fresh folder under the build tree for files the tests make.
fs::path scratch(const std::string& name) {
  fs::path d = test::binary_dir() / "test-scratch" / "pt2";
  fs::create_directories(d);
  return d / name;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<ZipEntry> minimal_pt2(const std::string& root) {
  return {{root + "/archive_format", "pt2"}, {root + "/archive_version", "0"}, {root + "/byteorder", "little"}};
}

}  // namespace

TEST_CASE("pt2: the default package lists one CPU model with embedded weights") {
  auto path = pt2_fixture("pkg.pt2");
  MPK_REQUIRE_FIXTURE(path);
  auto pkg = Pt2Package::open(path);
  REQUIRE(pkg.ok());
  CHECK(pkg->root() == "pkg");
  REQUIRE(pkg->models().size() == 1);
  const Pt2Model& m = pkg->models()[0];
  CHECK(m.name == "model");
  CHECK(m.library_entry.rfind("pkg/data/aotinductor/model/", 0) == 0);
  CHECK(m.library_entry.size() > 11);
  CHECK(m.library_entry.substr(m.library_entry.size() - 11) == ".wrapper.so");
  CHECK(m.wrapper_cpp_entry == m.library_entry.substr(0, m.library_entry.size() - 3) + ".cpp");
  CHECK(m.weights_entry.empty());
  CHECK(m.cubin_entries.empty());
  CHECK(m.device() == "cpu");
  CHECK(m.metadata.at("AOTI_PLATFORM") == "linux");
}

TEST_CASE("pt2: the blob package names its weights blob, the CUDA package its cubin") {
  auto blob = pt2_fixture("blob.pt2");
  auto cuda = pt2_fixture("cuda.pt2");
  MPK_REQUIRE_FIXTURE(blob);
  MPK_REQUIRE_FIXTURE(cuda);
  auto b = Pt2Package::open(blob);
  REQUIRE(b.ok());
  REQUIRE(b->models().size() == 1);
  CHECK(b->models()[0].weights_entry.find("_weights.blob") != std::string::npos);
  REQUIRE(b->find(b->models()[0].weights_entry) != nullptr);
  CHECK(b->find(b->models()[0].weights_entry)->size == 128);

  auto c = Pt2Package::open(cuda);
  REQUIRE(c.ok());
  REQUIRE(c->models().size() == 1);
  CHECK(c->models()[0].device() == "cuda");
  CHECK(c->models()[0].metadata.at("AOTI_COMPUTE_CAPABILITY") == "90");
  REQUIRE(c->models()[0].cubin_entries.size() == 1);
  CHECK(c->models()[0].cubin_entries[0].find(".cubin") != std::string::npos);
  CHECK(c->models()[0].weights_entry.empty());
}

TEST_CASE("pt2: extract streams an entry byte for byte") {
  for (const char* name : {"pkg.pt2", "blob.pt2", "cuda.pt2"}) {
    auto path = pt2_fixture(name);
    MPK_REQUIRE_FIXTURE(path);
    auto pkg = Pt2Package::open(path);
    REQUIRE(pkg.ok());
    const Pt2Model& m = pkg->models()[0];
    std::vector<std::string> wanted = {m.library_entry, m.wrapper_cpp_entry};
    if (!m.weights_entry.empty()) wanted.push_back(m.weights_entry);
    for (const auto& c : m.cubin_entries) wanted.push_back(c);
    for (const auto& entry : wanted) {
      INFO(name << ": " << entry);
      auto f = pkg->extract(entry);
      REQUIRE(f.ok());
      const Pt2Entry* e = pkg->find(entry);
      REQUIRE(e != nullptr);
      CHECK(f->size() == e->size);
      CHECK(crc32_of(f->data(), f->size()) == e->crc32);
      CHECK(f->name() == path.string() + ":" + entry);
    }
    auto so = pkg->extract(m.library_entry);
    REQUIRE(so.ok());
    REQUIRE(so->size() > 4);
    CHECK(std::memcmp(so->data(),
                      "\x7f"
                      "ELF",
                      4) == 0);

    // And against an independent extractor, when the machine has one.
    if (std::system("command -v unzip >/dev/null 2>&1") == 0) {
      fs::path out = scratch(std::string(name) + ".so");
      std::string cmd = "unzip -p '" + path.string() + "' '" + m.library_entry + "' > '" + out.string() + "'";
      REQUIRE(std::system(cmd.c_str()) == 0);
      std::string want = read_file(out);
      REQUIRE(want.size() == so->size());
      CHECK(std::memcmp(want.data(), so->data(), want.size()) == 0);
    } else {
      WARN("skipped: unzip is not installed; compared against the zip directory's CRC only");
    }
  }
}

TEST_CASE("pt2: read_text caps the size and refuses unknown entries") {
  auto path = pt2_fixture("pkg.pt2");
  MPK_REQUIRE_FIXTURE(path);
  auto pkg = Pt2Package::open(path);
  REQUIRE(pkg.ok());
  const auto& m = pkg->models()[0];
  auto small = pkg->read_text(m.wrapper_cpp_entry, 100);
  REQUIRE_FALSE(small.ok());
  CHECK(small.error().message.find("more than the") != std::string::npos);
  auto text = pkg->read_text(m.wrapper_cpp_entry, 1 << 20);
  REQUIRE(text.ok());
  CHECK(text->size() == pkg->find(m.wrapper_cpp_entry)->size);
  auto none = pkg->extract("pkg/no/such/entry");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("no such entry") != std::string::npos);
}

TEST_CASE("pt2: the wrapper's constant table matches the Linear(8,4) model and tiles the blob") {
  for (const char* name : {"pkg.pt2", "blob.pt2", "cuda.pt2"}) {
    auto path = pt2_fixture(name);
    MPK_REQUIRE_FIXTURE(path);
    INFO(name);
    auto pkg = Pt2Package::open(path);
    REQUIRE(pkg.ok());
    const auto& m = pkg->models()[0];
    auto text = pkg->read_text(m.wrapper_cpp_entry, 16 << 20);
    REQUIRE(text.ok());
    auto table = parse_wrapper_constants(*text, m.wrapper_cpp_entry);
    REQUIRE(table.ok());
    // Inductor inlines the 4-element bias into the kernel as literals, so the only constant
    // the library holds is the weight.
    REQUIRE(table->size() == 1);
    const ConstantInfo& w = (*table)[0];
    CHECK(w.name == "l_weight");
    CHECK(w.fqn == "l.weight");
    CHECK(w.dtype == dtype::float32);
    CHECK(w.shape == std::vector<int64_t>{4, 8});
    CHECK(w.stride == std::vector<int64_t>{8, 1});
    CHECK(w.storage_offset == 0);
    CHECK(w.size == 128);
    CHECK(w.offset == 0);
    CHECK(w.type == 1);
    CHECK_FALSE(w.from_folded);
    if (!m.weights_entry.empty()) {
      auto blob_size = wrapper_blob_size(*table);
      REQUIRE(blob_size.ok());
      CHECK(*blob_size == pkg->find(m.weights_entry)->size);
      uint64_t end = 0;
      for (const auto& c : *table) {
        CHECK(c.offset == end);
        end += c.size;
      }
      CHECK(end == pkg->find(m.weights_entry)->size);
    }
  }
}

TEST_CASE("pt2: constant offsets skip folded constants and follow data_size") {
  std::string text = R"(
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map)
    : AOTInductorModelBase(1,
                           1,
                           3,
                           device_str) {
    constants_info_[0].name = "a";
    constants_info_[0].dtype = cached_torch_dtype_bfloat16;
    constants_info_[0].offset = 0;
    constants_info_[0].data_size = 192;
    constants_info_[0].from_folded = false;
    constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Buffer);
    constants_info_[0].shape = {3L, 32L};
    constants_info_[0].stride = {32L, 1L};
    constants_info_[0].original_fqn = "blk.a";
    constants_info_[1].name = "folded";
    constants_info_[1].dtype = cached_torch_dtype_float32;
    constants_info_[1].offset = 0;
    constants_info_[1].data_size = 64;
    constants_info_[1].from_folded = true;
    constants_info_[1].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::FoldedConstant);
    constants_info_[1].shape = {16};
    constants_info_[1].stride = {1};
    constants_info_[2].name = "b\"q";
    constants_info_[2].dtype = cached_torch_dtype_int64;
    constants_info_[2].offset = 2;
    constants_info_[2].data_size = 64;
    constants_info_[2].from_folded = false;
    constants_info_[2].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::TensorConstant);
    constants_info_[2].shape = {};
    constants_info_[2].stride = {};
    constants_info_[2].original_fqn = "b;q";
    if (constants_info_[0].name == "x") {}
})";
  auto t = parse_wrapper_constants(text, "synthetic.cpp");
  REQUIRE(t.ok());
  REQUIRE(t->size() == 3);
  CHECK((*t)[0].dtype == dtype::bfloat16);
  CHECK((*t)[0].shape == std::vector<int64_t>{3, 32});
  CHECK((*t)[0].type == 2);
  CHECK((*t)[0].offset == 0);
  CHECK((*t)[1].from_folded);
  CHECK((*t)[1].type == 4);
  CHECK((*t)[1].fqn.empty());
  CHECK((*t)[2].name == "b\"q");
  CHECK((*t)[2].fqn == "b;q");
  CHECK((*t)[2].offset == 192);  // the folded constant takes no room
  CHECK((*t)[2].storage_offset == 2);
  CHECK((*t)[2].shape.empty());
  CHECK(wrapper_blob_size(*t).value() == 256);
}

TEST_CASE("pt2: hostile wrapper text gives errors, never a crash") {
  auto bad = [](std::string body) {
    std::string text = "AOTInductorModel::AOTInductorModel() {\n" + body + "\n}";
    return parse_wrapper_constants(text, "bad.cpp");
  };
  CHECK(parse_wrapper_constants("int main() {}", "x.cpp").error().kind == Error::Kind::NotThisFormat);
  CHECK(parse_wrapper_constants("", "x.cpp").error().kind == Error::Kind::NotThisFormat);
  // A wrapper without constants is a valid empty table.
  CHECK(bad("").value().empty());
  const std::string ok0 = "constants_info_[0].name = \"w\"; constants_info_[0].dtype = cached_torch_dtype_float32;"
                          "constants_info_[0].data_size = 64; constants_info_[0].shape = {4}; "
                          "constants_info_[0].stride = {1};";
  CHECK(bad(ok0).ok());
  auto e = bad(ok0 + "constants_info_[0].data_size = 64;");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message.find("assigned twice") != std::string::npos);
  CHECK_FALSE(bad(ok0 + "constants_info_[2].name = \"x\";").ok());               // gap
  CHECK_FALSE(bad("constants_info_[0].name = \"w\";").ok());                     // missing fields
  CHECK_FALSE(bad("constants_info_[99999999999999999999].name = \"w\";").ok());  // overflow
  CHECK_FALSE(bad("constants_info_[5000000].name = \"w\";").ok());               // too many
  CHECK_FALSE(bad("constants_info_[0].name = \"unterminated").ok());
  CHECK_FALSE(bad("constants_info_[0].data_size = -5;").ok());
  CHECK_FALSE(bad("constants_info_[0].dtype = cached_torch_dtype_quaternion;").ok());
  CHECK_FALSE(bad("constants_info_[0].shape = {1, 2").ok());
  CHECK_FALSE(bad("constants_info_[0].shape = {" + std::string(10000, '1') + "};").ok());
  CHECK_FALSE(bad("constants_info_[0].offset = 1 << 70;").ok());
  CHECK_FALSE(bad("constants_info_[0].data_size = " + std::string(2000, '9')).ok());
  std::string shape_mismatch = ok0;
  shape_mismatch.replace(shape_mismatch.find("stride = {1}"), 12, "stride = {1, 1}");
  CHECK_FALSE(bad(shape_mismatch).ok());
  // Declared count disagrees with the table.
  CHECK_FALSE(parse_wrapper_constants(
                  "AOTInductorModel::AOTInductorModel() : AOTInductorModelBase(1, 1, 2, d) {" + ok0 + "}", "x.cpp")
                  .ok());

  // Every prefix of the real wrapper and random byte flips: results or errors, no crash.
  auto path = pt2_fixture("pkg.pt2");
  MPK_REQUIRE_FIXTURE(path);
  auto pkg = Pt2Package::open(path);
  REQUIRE(pkg.ok());
  auto text = pkg->read_text(pkg->models()[0].wrapper_cpp_entry, 16 << 20);
  REQUIRE(text.ok());
  size_t start = text->find("constants_info_[0]");
  REQUIRE(start != std::string::npos);
  for (size_t n = start - 200; n < start + 800 && n < text->size(); ++n)
    (void)parse_wrapper_constants(std::string_view(*text).substr(0, n), "prefix");
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string t = *text;
    for (int k = 0; k < 8; ++k) t[start + rng() % 600] = static_cast<char>(rng() % 256);
    (void)parse_wrapper_constants(t, "flipped");
  }
}

TEST_CASE("pt2: packages with pickled weights or no library are refused") {
  auto pickled_path = scratch("pickled.pt2");
  auto entries = minimal_pt2("pickled");
  entries.push_back({"pickled/data/aotinductor/model/abc.wrapper.so", "\x7f"
                                                                      "ELF fake"});
  entries.push_back({"pickled/data/aotinductor/model/abc.wrapper.cpp", "// wrapper"});
  entries.push_back({"pickled/data/weights/weight_0", "PK...torch.save"});
  entries.push_back({"pickled/data/weights/model_weights_config.json", "{}"});
  write_zip(pickled_path, entries);
  auto p = Pt2Package::open(pickled_path);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().kind == Error::Kind::Unsupported);
  CHECK(p.error().message == pickled_path.string() +
                                 ": weights are pickled (package_constants_on_disk_format=pickle_weights); mpspack "
                                 "needs binary_blob or embedded weights");

  auto nolib_path = scratch("nolib.pt2");
  entries = minimal_pt2("nolib");
  entries.push_back({"nolib/data/aotinductor/model/abc.wrapper.cpp", "// wrapper"});
  entries.push_back({"nolib/models/model.json", "{}"});
  write_zip(nolib_path, entries);
  auto n = Pt2Package::open(nolib_path);
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().kind == Error::Kind::Unsupported);
  CHECK(n.error().message == nolib_path.string() + ": no compiled model library (*.so) in the package");
}

TEST_CASE("pt2: deflated entries and zips that are not .pt2") {
  auto path = scratch("deflated.pt2");
  std::string lib = "\x7f"
                    "ELF" +
                    std::string(300000, 'x');
  for (size_t i = 0; i < lib.size(); i += 97) lib[i] = static_cast<char>(i);
  auto entries = minimal_pt2("d");
  entries.push_back({"d/data/aotinductor/m/h.wrapper.so", lib, /*deflate=*/true});
  entries.push_back({"d/data/aotinductor/m/h.wrapper_metadata.json", R"({"AOTI_DEVICE_KEY": "cpu", "n": 3})", true});
  write_zip(path, entries);
  auto pkg = Pt2Package::open(path);
  REQUIRE(pkg.ok());
  REQUIRE(pkg->models().size() == 1);
  CHECK(pkg->models()[0].name == "m");
  CHECK(pkg->models()[0].metadata.at("n") == "3");
  CHECK_FALSE(pkg->find("d/data/aotinductor/m/h.wrapper.so")->stored);
  auto f = pkg->extract("d/data/aotinductor/m/h.wrapper.so");
  REQUIRE(f.ok());
  REQUIRE(f->size() == lib.size());
  CHECK(std::memcmp(f->data(), lib.data(), lib.size()) == 0);

  auto not_pt2 = scratch("torchsave.zip");
  write_zip(not_pt2, {{"archive/data.pkl", "x"}, {"archive/version", "3"}});
  auto r = Pt2Package::open(not_pt2);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::NotThisFormat);

  auto wrong_format = scratch("wrongformat.zip");
  write_zip(wrong_format, {{"x/archive_format", "pt3"}});
  r = Pt2Package::open(wrong_format);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::NotThisFormat);
  CHECK(r.error().message.find("'pt3'") != std::string::npos);

  auto bad_meta = scratch("badmeta.pt2");
  entries = minimal_pt2("b");
  entries.push_back({"b/data/aotinductor/m/h.wrapper.so", "\x7f"
                                                          "ELF"});
  entries.push_back({"b/data/aotinductor/m/h.wrapper_metadata.json", "{not json"});
  write_zip(bad_meta, entries);
  r = Pt2Package::open(bad_meta);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Corrupt);
}

TEST_CASE("pt2: non-zip, truncated and damaged files are refused") {
  auto text = scratch("notzip.pt2");
  write_file(text, "this is not a zip file at all, just some text\n");
  auto r = Pt2Package::open(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::NotThisFormat);
  CHECK(r.error().message.find(text.string()) == 0);

  auto empty = scratch("empty.pt2");
  write_file(empty, "");
  CHECK_FALSE(Pt2Package::open(empty).ok());

  CHECK(Pt2Package::open(scratch("does-not-exist.pt2")).error().kind == Error::Kind::Io);
  CHECK(Pt2Package::open(scratch("")).error().kind == Error::Kind::Invalid);  // a folder

  auto path = pt2_fixture("pkg.pt2");
  MPK_REQUIRE_FIXTURE(path);
  std::string bytes = read_file(path);
  for (size_t keep : {bytes.size() / 2, bytes.size() - 30, size_t(100)}) {
    INFO("kept " << keep << " bytes");
    auto cut = scratch("truncated.pt2");
    write_file(cut, bytes.substr(0, keep));
    auto t = Pt2Package::open(cut);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().kind == Error::Kind::Corrupt);
  }

  // A flipped byte inside a stored entry: the directory is fine, the CRC check at the end of
  // the stream catches it.
  auto pkg = Pt2Package::open(path);
  REQUIRE(pkg.ok());
  std::string cpp = *pkg->read_text(pkg->models()[0].wrapper_cpp_entry, 1 << 20);
  size_t at = bytes.find(cpp.substr(0, 4000));
  REQUIRE(at != std::string::npos);
  std::string damaged = bytes;
  damaged[at + 1000] ^= 0x20;
  auto dpath = scratch("damaged.pt2");
  write_file(dpath, damaged);
  auto d = Pt2Package::open(dpath);
  REQUIRE(d.ok());
  auto x = d->extract(d->models()[0].wrapper_cpp_entry);
  REQUIRE_FALSE(x.ok());
  CHECK(x.error().kind == Error::Kind::Corrupt);
  CHECK_FALSE(d->read_text(d->models()[0].wrapper_cpp_entry, 1 << 20).ok());
}

TEST_CASE("pt2: metadata JSON nested past the depth limit is refused, not a stack overflow") {
  // 100,000 nested objects fit in the 1 MiB metadata cap; re-serializing them recursively overflowed the stack.
  const std::string nested = mpspack::test::nested_metadata_json(100000);
  auto path = scratch("deep.pt2");
  auto entries = minimal_pt2("deep");
  entries.push_back({"deep/data/aotinductor/m/h.wrapper.so", "\x7f"
                                                             "ELF"});
  entries.push_back({"deep/data/aotinductor/m/h.wrapper_metadata.json", nested, /*deflate=*/true});
  write_zip(path, entries);
  auto r = Pt2Package::open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("h.wrapper_metadata.json") != std::string::npos);
  CHECK(r.error().message.find("nested more than 64 levels") != std::string::npos);

  // Nesting within the limit is read, the value kept as its JSON text.
  std::string shallow = R"({"AOTI_DEVICE_KEY": "cpu", "x": [[[1]]]})";
  entries.back().data = shallow;
  write_zip(path, entries);
  auto ok = Pt2Package::open(path);
  REQUIRE(ok.ok());
  CHECK(ok->models()[0].metadata.at("x") == "[[[1]]]");
}
