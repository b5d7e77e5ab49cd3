// Signing and verifying containers as DSSE envelopes over in-toto statements (signature.hpp; docs/SIGNING.md).
#include "mpspack/sign/signature.hpp"

#include "mpspack/fd_io.hpp"
#include "mpspack/format/hash.hpp"
#include "mpspack/json_fields.hpp"
#include "mpspack/version.hpp"

#include <nlohmann/json.hpp>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace mpspack::sign {
namespace {

using Json = nlohmann::ordered_json;

// Read in pieces that stay in a core's L2 (512 KiB and up on the machines we measured) while SHA-256 reads them
// again: a little faster than format::verify's 1 MiB with the slower hash (bench/sign_throughput.sh).
constexpr uint64_t kReadStep = 256ull << 10;
static_assert(kShardBytes % format::kHashChunkBytes == 0, "a shard is whole XXH3 chunks (Xxh3Check)");
constexpr uint64_t kProgressStep = 64ull << 20;

// The recorded XXH3 of the segment bytes a subject covers, checked as they stream past: the whole segment's, or
// each 16 MiB chunk's where the segment records chunks (format::kHashChunkBytes; a subject of a chunked segment
// starts on a chunk boundary, since shards are whole chunks).
class Xxh3Check {
 public:
  Xxh3Check(const format::Container& c, const Subject& s) : c_(c), subject_(s) {
    if (s.segment < 0) return;
    const SegmentInfo& seg = c.manifest().segments[size_t(s.segment)];
    // A large segment without chunk hashes (format 1.0) has only its whole XXH3, which a shard cannot check alone.
    if (!seg.chunk_xxh3.empty() || (s.begin == 0 && s.size == seg.size)) segment_ = &seg;
  }
  void update(const uint8_t* p, uint64_t n) {
    if (!segment_) return;
    while (n > 0) {
      const uint64_t take = segment_->chunk_xxh3.empty() ? n : std::min(n, format::kHashChunkBytes - in_chunk_);
      hasher_.update(p, take);
      p += take, n -= take, in_chunk_ += take;
      if (!segment_->chunk_xxh3.empty() && in_chunk_ == format::kHashChunkBytes) finish_chunk();
    }
  }
  // After the last byte: the first mismatch, if any.
  std::optional<Error> result() {
    if (segment_ && (in_chunk_ > 0 || subject_.size == 0)) finish_chunk();
    return problem_;
  }

 private:
  void finish_chunk() {
    const uint64_t computed = hasher_.digest(), at = subject_.begin + done_, length = in_chunk_;
    hasher_.reset();
    done_ += length;
    in_chunk_ = 0;
    const bool chunked = !segment_->chunk_xxh3.empty();
    const uint64_t k = at / format::kHashChunkBytes;
    const uint64_t recorded =
        chunked ? (k < segment_->chunk_xxh3.size() ? segment_->chunk_xxh3[k] : ~computed) : segment_->xxh3;
    if (computed == recorded || problem_) return;
    const std::string chunk = chunked ? fmt::format("chunk {} (bytes {:#x}-{:#x}) has ", k, at, at + length) : "";
    problem_ = make_error(Error::Kind::Corrupt,
                          "{}: segment {} ('{}', {} bytes at {:#x}) is damaged: {}XXH3 {:016x}, recorded {:016x}; "
                          "a damaged container is not signed",
                          c_.name(), subject_.segment, segment_->name, segment_->size, segment_->offset, chunk,
                          computed, recorded);
  }
  const format::Container& c_;
  const Subject& subject_;
  const SegmentInfo* segment_ = nullptr;
  format::Xxh3Stream hasher_;
  uint64_t in_chunk_ = 0, done_ = 0;
  std::optional<Error> problem_;
};

// Reads [s.offset, s.offset + s.size) into a page-aligned buffer with pread (format::verify's way and reason:
// faster than faulting the mapping in, and a read error is an error, not SIGBUS) and hashes it.
Status hash_one(const format::Container& c, Subject& s, uint8_t* buffer, bool check_xxh3,
                const std::function<void(uint64_t)>& count) {
  format::Sha256Stream sha;
  std::optional<Xxh3Check> xxh3;
  if (check_xxh3) xxh3.emplace(c, s);
  const int fd = c.file().fd();
  for (uint64_t done = 0; done < s.size;) {
    const uint64_t want = std::min(s.size - done, kReadStep);
    const uint8_t* p = c.file().data() + s.offset + done;
    if (fd >= 0) {
      uint64_t got = 0;
      const bool read = pread_exact(fd, buffer, want, s.offset + done, got);
      if (!read || got != want)
        return make_error(Error::Kind::Io, "{}: cannot read {} at offset {:#x}: {}", c.name(), s.name,
                          s.offset + done + got, !read ? std::strerror(errno) : "the file ended early");
      p = buffer;
    }
    sha.update(p, want);
    if (xxh3) xxh3->update(p, want);
    done += want;
    count(want);
  }
  s.sha256 = sha.hex_digest();
  if (xxh3)
    if (auto problem = xxh3->result()) return *problem;
  return {};
}

// The cores this process may run on (its affinity mask, as taskset or a container narrows it), so that the hash
// threads do not outnumber them.
unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The first non-zero byte outside the header, the metadata and the segments, if any: the signature covers the
// rest, and the format requires these bytes to be zero.
std::optional<Error> padding_problem(const format::Container& c) {
  std::vector<std::pair<uint64_t, uint64_t>> used{{0, c.header().header_size},
                                                  {c.header().metadata_offset, c.header().metadata_size}};
  for (const auto& s : c.manifest().segments) used.emplace_back(s.offset, s.size);
  std::sort(used.begin(), used.end());
  const uint8_t* p = c.file().data();
  uint64_t cursor = 0;
  used.emplace_back(c.file().size(), 0);
  for (const auto& [offset, size] : used) {
    for (uint64_t i = cursor; i < offset; ++i)
      if (p[i] != 0)
        return make_error(Error::Kind::Corrupt, "{}: byte {:#x}, outside every signed range, is {:#04x}, not zero",
                          c.name(), i, p[i]);
    cursor = std::max(cursor, offset + size);
  }
  return std::nullopt;
}

std::string list_or_none(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? "none" : out;
}

Json predicate(const format::Container& c) {
  const Manifest& m = c.manifest();
  Json libraries = Json::array(), sources = Json::array();
  for (const auto& l : m.libraries)
    libraries.push_back({{"name", l.name},
                         {"device", l.device},
                         {"machine", l.machine},
                         {"abi", l.abi},
                         {"flavour", to_string(l.flavour)},
                         {"original_size", l.original_size},
                         {"original_sha256", l.original_sha256}});
  for (const auto& s : m.sources)
    sources.push_back({{"name", s.name}, {"kind", s.kind}, {"size", s.size}, {"sha256", s.sha256}});
  return Json{
      {"serialization", {{"method", "mpspack-container"}, {"hash_type", "sha256"}, {"shard_size", kShardBytes}}},
      {"container",
       {{"format_version", fmt::format("{}.{}", c.header().version_major, c.header().version_minor)},
        {"file_size", c.file().size()},
        {"producer", m.producer},
        {"producer_version", m.producer_version}}},
      {"libraries", libraries},
      {"sources", sources},
      {"signer", {{"tool", "mpspack"}, {"version", version_string()}}}};
}

std::string statement(const format::Container& c, const std::vector<Subject>& subjects) {
  Json list = Json::array();
  for (const auto& s : subjects) list.push_back({{"name", s.name}, {"digest", {{"sha256", s.sha256}}}});
  Json st{{"_type", kStatementType}, {"subject", list}, {"predicateType", kPredicateType}, {"predicate", predicate(c)}};
  return st.dump();
}

// An envelope's fields, checked for form: the payload decoded, the signatures with their key ids.
struct Envelope {
  std::vector<uint8_t> payload;
  struct Signature {
    std::string key_id;
    std::string sig_b64;
  };
  std::vector<Signature> signatures;
};

Result<Envelope> parse_envelope(std::span<const uint8_t> bytes, const std::string& name) {
  auto bad = [&](std::string_view why) {
    return make_error(Error::Kind::Corrupt, "{}: not a DSSE envelope mpspack reads: {}", name, why);
  };
  if (bytes.size() > kEnvelopeBytes) return bad(fmt::format("{} bytes, more than {}", bytes.size(), kEnvelopeBytes));
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object (truncated or garbled?)");
  const auto type = j.find("payloadType"), payload = j.find("payload"), sigs = j.find("signatures");
  if (type == j.end() || !type->is_string()) return bad("no payloadType");
  if (*type != kPayloadType)
    return bad(fmt::format("payloadType is '{}', not '{}'", type->get<std::string>(), kPayloadType));
  if (payload == j.end() || !payload->is_string()) return bad("no payload");
  if (sigs == j.end() || !sigs->is_array() || sigs->empty()) return bad("no signatures");
  Envelope e;
  MPK_TRY(e.payload, base64_decode(payload->get_ref<const std::string&>(), name + ": the payload"));
  for (const auto& s : *sigs) {
    if (!s.is_object() || !s.contains("sig") || !s["sig"].is_string()) return bad("a signature without 'sig'");
    const auto keyid = s.find("keyid");
    e.signatures.push_back(
        {keyid != s.end() && keyid->is_string() ? keyid->get<std::string>() : "", s["sig"].get<std::string>()});
  }
  return e;
}

// Which of the envelope's signatures is `key`'s over the PAE; an error naming the key and the envelope otherwise.
Status check_signature(const Envelope& e, const std::string& name, const PublicKey& key) {
  const std::string p =
      pae(kPayloadType, std::string_view(reinterpret_cast<const char*>(e.payload.data()), e.payload.size()));
  const std::span<const uint8_t> message(reinterpret_cast<const uint8_t*>(p.data()), p.size());
  std::vector<std::string> ids;
  std::optional<Error> failed;  // of a signature that was this key's to check
  for (const auto& s : e.signatures) {
    ids.push_back(s.key_id.empty() ? "(none)" : s.key_id);
    if (!s.key_id.empty() && s.key_id != key.key_id()) continue;  // made by another key
    auto sig = base64_decode(s.sig_b64, name + ": a signature");
    if (sig.ok() && key.verify(message, *sig)) return {};
    if (!failed)
      failed = sig.ok() ? make_error(Error::Kind::Corrupt,
                                     "{}: the signature of key id {} does not verify (damaged, "
                                     "or made over other content)",
                                     name, key.key_id())
                        : sig.error();
  }
  if (failed) return *failed;
  return make_error(Error::Kind::Corrupt, "{}: not signed by this key (key id {}); signed by key id {}", name,
                    key.key_id(), list_or_none(ids));
}

// The statement's subjects as name and digest, after its type and predicate type were checked.
Result<std::vector<std::pair<std::string, std::string>>> statement_subjects(const std::vector<uint8_t>& payload,
                                                                            const std::string& name) {
  auto bad = [&](std::string_view why) {
    return make_error(Error::Kind::Corrupt, "{}: the signed statement {}", name, why);
  };
  const auto j = nlohmann::json::parse(payload.begin(), payload.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("is not a JSON object");
  if (string_field(j, "_type") != kStatementType) return bad(fmt::format("is not an in-toto {}", kStatementType));
  if (string_field(j, "predicateType") != kPredicateType) {
    const auto field = j.find("predicateType");  // shown as JSON: a string quoted, any other type as it is
    return bad(
        fmt::format("has predicateType {}, not \"{}\"", field == j.end() ? "none" : field->dump(), kPredicateType));
  }
  const auto list = j.find("subject");
  if (list == j.end() || !list->is_array()) return bad("has no subject list");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : *list) {
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string() || !s.contains("digest") ||
        !s["digest"].is_object() || !s["digest"].contains("sha256") || !s["digest"]["sha256"].is_string())
      return bad("has a subject without a name and a sha256 digest");
    out.emplace_back(s["name"].get<std::string>(), s["digest"]["sha256"].get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<Subject> plan_subjects(const format::Container& c) {
  const auto& h = c.header();
  std::vector<Subject> out{{"header", 0, h.header_size, ""}, {"metadata", h.metadata_offset, h.metadata_size, ""}};
  const auto& segments = c.manifest().segments;
  for (uint32_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    const std::string base = fmt::format("segment/{}/{}", i, s.name);
    if (s.size <= kShardBytes) {
      out.push_back({base, s.offset, s.size, "", int64_t(i), 0});
      continue;
    }
    for (uint64_t begin = 0; begin < s.size; begin += kShardBytes) {
      const uint64_t end = std::min(s.size, begin + kShardBytes);
      out.push_back({fmt::format("{}:{}:{}", base, begin, end), s.offset + begin, end - begin, "", int64_t(i), begin});
    }
  }
  return out;
}

Status hash_subjects(const format::Container& c, std::vector<Subject>& subjects, unsigned threads,
                     const format::Progress& progress, bool check_xxh3) {
  if (threads == 0) threads = usable_cores();
  uint64_t total = 0;
  for (const auto& s : subjects) total += s.size;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex report_lock;
  std::vector<std::optional<Error>> problems(subjects.size());
  auto count = [&](uint64_t n) {
    const uint64_t before = done.fetch_add(n), after = before + n;
    if (progress && (after / kProgressStep != before / kProgressStep || after == total)) {
      std::lock_guard lock(report_lock);
      progress(after, total);
    }
  };
  auto work = [&] {
    std::unique_ptr<uint8_t, decltype(&std::free)> buffer(static_cast<uint8_t*>(std::aligned_alloc(4096, kReadStep)),
                                                          &std::free);
    for (size_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < subjects.size();) {
      Status st = buffer ? hash_one(c, subjects[k], buffer.get(), check_xxh3, count)
                         : Status(make_error(Error::Kind::Runtime, "{}: out of memory for a read buffer", c.name()));
      if (!st.ok()) {
        problems[k] = st.error();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, subjects.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& p : problems)
    if (p) return *p;
  return {};
}

std::string pae(std::string_view type, std::string_view body) {
  return fmt::format("DSSEv1 {} {} {} {}", type.size(), type, body.size(), body);
}

Result<std::string> sign(const format::Container& c, const PrivateKey& key, unsigned threads,
                         const format::Progress& progress) {
  if (auto p = padding_problem(c)) return *p;
  std::vector<Subject> subjects = plan_subjects(c);
  MPK_CHECK(hash_subjects(c, subjects, threads, progress, true));
  const std::string payload = statement(c, subjects);
  const std::string message = pae(kPayloadType, payload);
  MPK_TRY(auto sig, key.sign(std::span(reinterpret_cast<const uint8_t*>(message.data()), message.size())));
  Json envelope{{"payloadType", kPayloadType},
                {"payload", base64_encode(std::span(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()))},
                {"signatures", Json::array({{{"keyid", key.public_key().key_id()}, {"sig", base64_encode(sig)}}})}};
  return envelope.dump() + "\n";
}

// The checks in the order docs/SIGNING.md gives them ("Verifying"), each with the one line it fails with.
Result<Verified> verify(const format::Container& c, std::span<const uint8_t> bytes, const std::string& name,
                        const PublicKey& key, unsigned threads, const format::Progress& progress) {
  MPK_TRY(Envelope e, parse_envelope(bytes, name));
  MPK_CHECK(check_signature(e, name, key));
  MPK_TRY(auto signed_subjects, statement_subjects(e.payload, name));
  std::vector<Subject> subjects = plan_subjects(c);
  // The names fix every range (offsets come from the signed header): a different list is another container.
  if (signed_subjects.size() != subjects.size())
    return make_error(Error::Kind::Corrupt,
                      "{}: {} lists {} signed ranges, the container has {}: a signature of "
                      "another container",
                      c.name(), name, signed_subjects.size(), subjects.size());
  for (size_t i = 0; i < subjects.size(); ++i)
    if (signed_subjects[i].first != subjects[i].name)
      return make_error(Error::Kind::Corrupt,
                        "{}: {} signs '{}' where the container has '{}': a signature of "
                        "another container",
                        c.name(), name, signed_subjects[i].first, subjects[i].name);
  MPK_CHECK(hash_subjects(c, subjects, threads, progress));
  Verified v{key.key_id(), subjects.size(), 0};
  for (size_t i = 0; i < subjects.size(); ++i) {
    const Subject& s = subjects[i];
    v.bytes_hashed += s.size;
    if (s.sha256 == signed_subjects[i].second) continue;
    const char* hint = s.name == "header" ? " (a signature of another container, or a changed header)" : "";
    return make_error(Error::Kind::Corrupt,
                      "{}: {} ({} bytes at {:#x}) does not match the signature {}: SHA-256 {}, "
                      "signed {}{}",
                      c.name(), s.name, s.size, s.offset, name, s.sha256, signed_subjects[i].second, hint);
  }
  if (auto p = padding_problem(c)) return *p;
  return v;
}

Result<EnvelopeSummary> summarize(std::span<const uint8_t> bytes, const std::string& name) {
  MPK_TRY(Envelope e, parse_envelope(bytes, name));
  EnvelopeSummary s;
  for (const auto& sig : e.signatures) s.key_ids.push_back(sig.key_id);
  const auto j = nlohmann::json::parse(e.payload.begin(), e.payload.end(), nullptr, false);
  s.predicate_type = string_field(j, "predicateType");
  return s;
}

std::filesystem::path default_signature_path(const std::filesystem::path& container) {
  return std::filesystem::path(container.string() + ".sig");
}

Result<Verified> verify_files(const format::Container& c, const std::filesystem::path& public_key_path,
                              const std::optional<std::filesystem::path>& signature_path, unsigned threads,
                              const format::Progress& progress) {
  MPK_TRY(PublicKey key, PublicKey::load(public_key_path));
  const std::filesystem::path sig = signature_path ? *signature_path : default_signature_path(c.file().path());
  auto file = MappedFile::open(sig);
  if (!file.ok()) {
    if (!signature_path && file.error().kind == Error::Kind::Io && !std::filesystem::exists(sig))
      return make_error(Error::Kind::Io, "{}: no signature beside it ({} does not exist; --signature names another)",
                        c.name(), sig.string());
    return file.error();
  }
  if (file->size() > kEnvelopeBytes)
    return make_error(Error::Kind::Corrupt, "{}: {} bytes, too large for a signature (at most {})", sig.string(),
                      file->size(), kEnvelopeBytes);
  return verify(c, file->view().span(), sig.string(), key, threads, progress);
}

}  // namespace mpspack::sign
