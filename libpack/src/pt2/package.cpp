// .pt2 packages through libzip: a real zip reader (zip64, stored and deflated entries, CRC-32
// checked at the end of every stream) instead of a hand-rolled central-directory walker.
//
// open():   open_input_file -> zip_fdopen(CHECKCONS) -> list entries with caps -> find the root -> check
//           archive_format -> collect model folders -> refuse pickled weights / no library.
// extract(): stream the entry in 1 MiB chunks into an anonymous temp file -> check size -> map.
#include "mpspack/pt2/package.hpp"
#include "mpspack/fd_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpspack/file.hpp"
#include "mpspack/text.hpp"
#include "zip_api.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace mpspack::pt2 {
namespace {

// Hostile-input caps. Real packages hold a dozen entries with names under 200 bytes.
constexpr uint64_t kMaxEntries = 1u << 16;
constexpr size_t kMaxNameLength = 1024;
constexpr uint64_t kMaxMetadataSize = 1u << 20;
constexpr size_t kMaxMetadataDepth = 64;  // torch writes one flat object of strings
constexpr uint64_t kMaxArchiveFormatSize = 64;
constexpr size_t kChunk = 1u << 20;

constexpr std::string_view kAotiFolder = "data/aotinductor/";
constexpr std::string_view kPickledWeightsFolder = "data/weights/";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// An entry name for a one-line message: escaped as every name mpspack prints, and cut at 200 bytes.
std::string printable(std::string_view s) {
  std::string out = text::printable(s.substr(0, 200));
  if (s.size() > 200) out += "...";
  return out;
}

struct ZipCloser {
  const ZipApi* api = nullptr;
  void operator()(zip_t* z) const {
    if (z) api->zip_discard(z);  // read-only: never write anything back
  }
};
struct ZipFileCloser {
  const ZipApi* api = nullptr;
  void operator()(zip_file_t* f) const {
    if (f) api->zip_fclose(f);
  }
};

std::string zip_error_text(const ZipApi& api, int code) {
  zip_error_t e;
  api.zip_error_init_with_code(&e, code);
  std::string s = api.zip_error_strerror(&e);
  api.zip_error_fini(&e);
  return s;
}

// True when the file starts with a zip local-header or end-of-central-directory signature:
// such a file is a damaged zip, not some other format.
bool starts_like_zip(int fd) {
  uint8_t magic[4] = {};
  ssize_t n = ::pread(fd, magic, 4, 0);
  return n == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

// An fd for an anonymous file: O_TMPFILE in $TMPDIR (disk-backed, so multi-GB weights do not sit
// in RAM), falling back to /tmp and then memfd_create where O_TMPFILE is not supported.
Result<int> anonymous_file(const std::string& what) {
  std::vector<std::string> dirs;
  if (const char* t = std::getenv("TMPDIR"); t && *t) dirs.emplace_back(t);
  dirs.emplace_back("/tmp");
  for (const auto& d : dirs) {
    int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
  }
  int fd = memfd_create("mpspack-pt2-entry", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  return make_error(Error::Kind::Io, "{}: cannot create a temporary file: {}", what, std::strerror(errno));
}

Status write_temp(int fd, const uint8_t* p, uint64_t n, const std::string& what) {
  if (!write_all(fd, p, n))
    return make_error(Error::Kind::Io, "{}: writing the temporary file failed: {}", what, std::strerror(errno));
  return {};
}

// Counts how deep objects and arrays nest, and stops the parse past kMaxMetadataDepth. nlohmann's parser and
// its destructor do not recurse, but dump() does: a value nested 100,000 deep would overflow the stack there.
class DepthLimit : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool too_deep = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool enter() {
    too_deep = ++depth_ > kMaxMetadataDepth;
    return !too_deep;
  }
  bool leave() {
    --depth_;
    return true;
  }
  size_t depth_ = 0;
};

Result<std::map<std::string, std::string>> parse_metadata(const std::string& text, const std::string& what) {
  DepthLimit depth;
  nlohmann::json::sax_parse(text, &depth, nlohmann::json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  if (depth.too_deep)
    return make_error(Error::Kind::Unsupported, "{}: JSON nested more than {} levels deep", what, kMaxMetadataDepth);
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(Error::Kind::Corrupt, "{}: is not a JSON object", what);
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return out;
}

}  // namespace

struct Pt2Package::Impl {
  const ZipApi* api = nullptr;
  std::unique_ptr<zip_t, ZipCloser> zip;
  std::unordered_map<std::string, uint64_t> index;  // entry name -> zip index
  std::mutex mutex;                                 // a zip_t is not thread-safe
};

std::string Pt2Model::device() const {
  auto it = metadata.find("AOTI_DEVICE_KEY");
  return it == metadata.end() ? std::string() : it->second;
}

Pt2Package::Pt2Package() = default;
Pt2Package::Pt2Package(Pt2Package&&) noexcept = default;
Pt2Package& Pt2Package::operator=(Pt2Package&&) noexcept = default;
Pt2Package::~Pt2Package() = default;

const Pt2Entry* Pt2Package::find(const std::string& entry) const {
  auto it = impl_->index.find(entry);
  return it == impl_->index.end() ? nullptr : &entries_[it->second];
}

namespace {

// Hands the fd to libzip; CHECKCONS makes it compare the central directory with the local headers, so a
// damaged archive is refused here rather than halfway through an extract. On success the zip owns fd.
Result<zip_t*> open_zip(const ZipApi& zip, const std::filesystem::path& path, const std::string& name) {
  MPK_TRY(int fd, open_input_file(path));
  int zerr = 0;
  zip_t* z = zip.zip_fdopen(fd, ZIP_CHECKCONS, &zerr);  // read-only
  if (z) return z;
  const bool looks_like_zip = starts_like_zip(fd);
  ::close(fd);
  if (zerr == ZIP_ER_NOZIP) {
    if (looks_like_zip)
      return make_error(Error::Kind::Corrupt,
                        "{}: starts like a zip but has no readable central directory "
                        "(truncated?)",
                        name);
    return make_error(Error::Kind::NotThisFormat, "{}: is not a zip archive (so not a .pt2)", name);
  }
  if (zerr == ZIP_ER_OPEN || zerr == ZIP_ER_READ || zerr == ZIP_ER_SEEK || zerr == ZIP_ER_MEMORY ||
      zerr == ZIP_ER_NOENT)
    return make_error(Error::Kind::Io, "{}: cannot read the zip: {}", name, zip_error_text(zip, zerr));
  return make_error(Error::Kind::Corrupt, "{}: damaged zip archive: {}", name, zip_error_text(zip, zerr));
}

// Zip entry i, with the hostile-input caps: a readable header, a bounded non-empty name, the sizes, CRC and
// method every later step relies on, no encryption, and a stored entry whose two sizes agree.
Result<Pt2Entry> read_entry(const ZipApi& zip, zip_t* z, zip_uint64_t i, const std::string& name) {
  zip_stat_t s;
  zip.zip_stat_init(&s);
  if (zip.zip_stat_index(z, i, 0, &s) != 0 || !(s.valid & ZIP_STAT_NAME) || !s.name)
    return make_error(Error::Kind::Corrupt, "{}: zip entry {} has no readable header", name, i);
  size_t len = strnlen(s.name, kMaxNameLength + 1);
  if (len > kMaxNameLength)
    return make_error(Error::Kind::Corrupt, "{}: zip entry {} has a name longer than {} bytes", name, i,
                      kMaxNameLength);
  if (len == 0) return make_error(Error::Kind::Corrupt, "{}: zip entry {} has an empty name", name, i);
  const zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC | ZIP_STAT_COMP_METHOD;
  if ((s.valid & need) != need)
    return make_error(Error::Kind::Corrupt, "{}: zip entry {} ({}) lacks size, CRC or method", name, i,
                      printable(s.name));
  if ((s.valid & ZIP_STAT_ENCRYPTION_METHOD) && s.encryption_method != ZIP_EM_NONE)
    return make_error(Error::Kind::Unsupported, "{}: zip entry {} is encrypted", name, printable(s.name));
  Pt2Entry e;
  e.name.assign(s.name, len);
  e.size = s.size;
  e.compressed_size = s.comp_size;
  e.crc32 = s.crc;
  e.stored = s.comp_method == ZIP_CM_STORE;
  if (e.stored && e.size != e.compressed_size)
    return make_error(Error::Kind::Corrupt, "{}: stored zip entry {} declares size {:#x} but {:#x} stored bytes", name,
                      printable(e.name), e.size, e.compressed_size);
  return e;
}

// Every entry, in zip order, so that entries[i] is zip index i (extract and read_text open by that index).
Status list_entries(const ZipApi& zip, zip_t* z, const std::string& name, std::vector<Pt2Entry>& entries,
                    std::unordered_map<std::string, uint64_t>& index) {
  zip_int64_t count = zip.zip_get_num_entries(z, 0);
  if (count < 0) return make_error(Error::Kind::Corrupt, "{}: cannot count the zip entries", name);
  if (static_cast<uint64_t>(count) > kMaxEntries)
    return make_error(Error::Kind::Unsupported, "{}: {} zip entries, more than the {} allowed", name, count,
                      kMaxEntries);
  for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(count); ++i) {
    MPK_TRY(Pt2Entry e, read_entry(zip, z, i, name));
    if (!index.emplace(e.name, entries.size()).second)
      return make_error(Error::Kind::Corrupt, "{}: zip entry {} appears twice", name, printable(e.name));
    entries.push_back(std::move(e));
  }
  return {};
}

// The root folder: the one `<root>/archive_format` (or a bare `archive_format`, root "").
Result<std::string> find_root(const std::vector<Pt2Entry>& entries, const std::string& name) {
  std::vector<std::string> roots;
  for (const auto& e : entries) {
    if (e.name == "archive_format") roots.emplace_back("");
    else if (ends_with(e.name, "/archive_format") &&
             e.name.find('/') == e.name.size() - std::string_view("/archive_format").size())
      roots.push_back(e.name.substr(0, e.name.find('/')));
  }
  if (roots.empty())
    return make_error(Error::Kind::NotThisFormat, "{}: a zip archive but not a .pt2 package (no archive_format entry)",
                      name);
  if (roots.size() > 1)
    return make_error(Error::Kind::Corrupt, "{}: {} archive_format entries (roots '{}' and '{}')", name, roots.size(),
                      printable(roots[0]), printable(roots[1]));
  return std::move(roots[0]);
}

// archive_format must say "pt2": other torch zips (torch.save, torch.export's .pt2 without AOTInductor
// output) carry a different word there.
Status check_archive_format(const Pt2Package& pkg, const std::string& prefix, const std::string& name) {
  auto fmt_entry = prefix + "archive_format";
  MPK_TRY(std::string format, pkg.read_text(fmt_entry, kMaxArchiveFormatSize));
  while (!format.empty() && (format.back() == '\n' || format.back() == '\r' || format.back() == ' ')) format.pop_back();
  if (format != "pt2")
    return make_error(Error::Kind::NotThisFormat, "{}: {} says '{}', not 'pt2' (not an AOTInductor package)", name,
                      printable(fmt_entry), printable(format));
  return {};
}

struct ModelFolders {
  std::map<std::string, std::vector<std::string>> files;  // model -> entries in it (recursive)
  bool pickled = false;  // the package stores its weights pickled, which mpspack cannot read
};

// Model folders: <prefix>data/aotinductor/<model>/...; one walk over the entries also notes pickled weights.
ModelFolders collect_model_folders(const std::vector<Pt2Entry>& entries, const std::string& prefix,
                                   const std::string& aoti) {
  ModelFolders out;
  for (const auto& e : entries) {
    std::string_view n = e.name;
    if (starts_with(n, prefix + std::string(kPickledWeightsFolder)) || ends_with(n, "weights_config.json"))
      out.pickled = true;
    if (!starts_with(n, aoti)) continue;
    std::string_view rest = n.substr(aoti.size());
    auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) continue;  // a file directly in aotinductor/
    if (ends_with(n, "/")) continue;                              // a folder entry
    out.files[std::string(rest.substr(0, slash))].push_back(e.name);
  }
  return out;
}

// The library: a `.so` directly in the folder; torch 2.11 calls it `<hash>.wrapper.so`. Empty when the
// folder has none (it is then no model).
Result<std::string> find_library(const std::string& model_name, const std::vector<std::string>& files,
                                 const std::string& dir, const std::string& name) {
  std::vector<std::string> libs;
  for (const auto& f : files)
    if (ends_with(f, ".so") && f.find('/', dir.size()) == std::string::npos) libs.push_back(f);
  if (libs.size() > 1) {
    std::vector<std::string> wrappers;
    for (const auto& l : libs)
      if (ends_with(l, ".wrapper.so")) wrappers.push_back(l);
    if (wrappers.size() != 1)
      return make_error(Error::Kind::Unsupported, "{}: model '{}' has {} compiled libraries ({} and {}); expected one",
                        name, printable(model_name), libs.size(), printable(libs[0]), printable(libs[1]));
    libs = wrappers;
  }
  return libs.empty() ? std::string() : libs[0];
}

Error pickled_weights_error(const std::string& name) {
  return make_error(Error::Kind::Unsupported,
                    "{}: weights are pickled (package_constants_on_disk_format=pickle_weights); "
                    "mpspack needs binary_blob or embedded weights",
                    name);
}

// The entries of one model beside its library, named after the library's stem, and its metadata parsed.
Result<Pt2Model> describe_model(const Pt2Package& pkg, const std::string& model_name,
                                const std::vector<std::string>& files, std::string library, bool pickled) {
  const std::string& name = pkg.name();
  Pt2Model m;
  m.name = model_name;
  m.library_entry = std::move(library);
  const std::string stem = m.library_entry.substr(0, m.library_entry.size() - 3);
  auto pick = [&](const std::string& entry) { return pkg.find(entry) ? entry : std::string(); };
  m.wrapper_cpp_entry = pick(stem + ".cpp");
  m.weights_entry = pick(stem + "_weights.blob");
  m.metadata_entry = pick(stem + "_metadata.json");
  if (m.weights_entry.empty()) {  // older naming: a single *_weights.blob in the folder
    std::vector<std::string> blobs;
    for (const auto& f : files)
      if (ends_with(f, "_weights.blob")) blobs.push_back(f);
    if (blobs.size() == 1) m.weights_entry = blobs[0];
  }
  for (const auto& f : files)
    if (ends_with(f, ".cubin")) m.cubin_entries.push_back(f);
  std::sort(m.cubin_entries.begin(), m.cubin_entries.end());
  if (!m.metadata_entry.empty()) {
    MPK_TRY(std::string text, pkg.read_text(m.metadata_entry, kMaxMetadataSize));
    MPK_TRY(m.metadata, parse_metadata(text, name + ":" + printable(m.metadata_entry)));
  }
  if (pickled && m.weights_entry.empty()) return pickled_weights_error(name);
  return m;
}

// One model per folder that holds a library; a package with none is refused, naming pickled weights when
// that is why.
Result<std::vector<Pt2Model>> collect_models(const Pt2Package& pkg, const std::string& aoti,
                                             const ModelFolders& folders) {
  std::vector<Pt2Model> models;
  for (const auto& [model_name, files] : folders.files) {
    MPK_TRY(std::string library, find_library(model_name, files, aoti + model_name + "/", pkg.name()));
    if (library.empty()) continue;
    MPK_TRY(Pt2Model m, describe_model(pkg, model_name, files, std::move(library), folders.pickled));
    models.push_back(std::move(m));
  }
  if (models.empty()) {
    if (folders.pickled) return pickled_weights_error(pkg.name());
    return make_error(Error::Kind::Unsupported, "{}: no compiled model library (*.so) in the package", pkg.name());
  }
  return models;
}

}  // namespace

Result<Pt2Package> Pt2Package::open(const std::filesystem::path& path) {
  Pt2Package pkg;
  pkg.name_ = path.string();
  pkg.impl_ = std::make_unique<Impl>();
  const std::string& name = pkg.name_;

  auto api = zip_api();
  if (!api.ok()) return api.error().context(name + ": cannot read .pt2 packages");
  pkg.impl_->api = *api;
  MPK_TRY(zip_t * z, open_zip(**api, path, name));
  pkg.impl_->zip = std::unique_ptr<zip_t, ZipCloser>(z, ZipCloser{*api});
  MPK_CHECK(list_entries(**api, z, name, pkg.entries_, pkg.impl_->index));
  MPK_TRY(pkg.root_, find_root(pkg.entries_, name));
  const std::string prefix = pkg.root_.empty() ? "" : pkg.root_ + "/";
  MPK_CHECK(check_archive_format(pkg, prefix, name));
  const std::string aoti = prefix + std::string(kAotiFolder);
  MPK_TRY(pkg.models_, collect_models(pkg, aoti, collect_model_folders(pkg.entries_, prefix, aoti)));
  return pkg;
}

Result<MappedFile> Pt2Package::extract(const std::string& entry) const {
  const std::string what = name_ + ":" + printable(entry);
  auto it = impl_->index.find(entry);
  if (it == impl_->index.end()) return make_error(Error::Kind::Invalid, "{}: no such entry in the package", what);
  const Pt2Entry& e = entries_[it->second];

  MPK_TRY(int fd, anonymous_file(what));
  // Owns fd until handed to MappedFile.
  struct FdGuard {
    int fd;
    ~FdGuard() {
      if (fd >= 0) ::close(fd);
    }
  } guard{fd};

  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    std::unique_ptr<zip_file_t, ZipFileCloser> zf(impl_->api->zip_fopen_index(impl_->zip.get(), it->second, 0),
                                                  ZipFileCloser{impl_->api});
    if (!zf)
      return make_error(Error::Kind::Corrupt, "{}: cannot open the entry: {}", what,
                        impl_->api->zip_strerror(impl_->zip.get()));
    std::vector<uint8_t> buf(static_cast<size_t>(std::min<uint64_t>(kChunk, e.size + 1)));
    uint64_t total = 0;
    for (;;) {
      zip_int64_t n = impl_->api->zip_fread(zf.get(), buf.data(), buf.size());
      if (n < 0)
        return make_error(Error::Kind::Corrupt, "{}: reading the entry failed after {:#x} bytes: {}", what, total,
                          impl_->api->zip_file_strerror(zf.get()));
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
      if (total > e.size)
        return make_error(Error::Kind::Corrupt, "{}: entry inflates past its declared size {:#x}", what, e.size);
      MPK_CHECK(write_temp(fd, buf.data(), static_cast<uint64_t>(n), what));
    }
    if (total != e.size)
      return make_error(Error::Kind::Corrupt, "{}: entry ends after {:#x} bytes but declares {:#x} (truncated?)", what,
                        total, e.size);
  }
  guard.fd = -1;
  return MappedFile::from_fd(fd, what);
}

Result<std::string> Pt2Package::read_text(const std::string& entry, uint64_t max_size) const {
  const std::string what = name_ + ":" + printable(entry);
  auto it = impl_->index.find(entry);
  if (it == impl_->index.end()) return make_error(Error::Kind::Invalid, "{}: no such entry in the package", what);
  const Pt2Entry& e = entries_[it->second];
  if (e.size > max_size)
    return make_error(Error::Kind::Unsupported, "{}: {:#x} bytes, more than the {:#x} allowed", what, e.size, max_size);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::unique_ptr<zip_file_t, ZipFileCloser> zf(impl_->api->zip_fopen_index(impl_->zip.get(), it->second, 0),
                                                ZipFileCloser{impl_->api});
  if (!zf)
    return make_error(Error::Kind::Corrupt, "{}: cannot open the entry: {}", what,
                      impl_->api->zip_strerror(impl_->zip.get()));
  std::string text(static_cast<size_t>(e.size), '\0');
  uint64_t total = 0;
  char extra;
  while (total < e.size) {
    zip_int64_t n = impl_->api->zip_fread(zf.get(), text.data() + total, e.size - total);
    if (n < 0)
      return make_error(Error::Kind::Corrupt, "{}: reading the entry failed: {}", what,
                        impl_->api->zip_file_strerror(zf.get()));
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
  }
  // One more read reaches the end of the stream, where libzip checks the CRC.
  zip_int64_t more = total == e.size ? impl_->api->zip_fread(zf.get(), &extra, 1) : 0;
  if (more < 0)
    return make_error(Error::Kind::Corrupt, "{}: reading the entry failed: {}", what,
                      impl_->api->zip_file_strerror(zf.get()));
  if (total != e.size || more > 0)
    return make_error(Error::Kind::Corrupt, "{}: entry holds {} bytes than its declared {:#x}", what,
                      more > 0 ? "more" : "fewer", e.size);
  return text;
}

}  // namespace mpspack::pt2
