// Detached signatures of containers: a DSSE envelope (payloadType "application/vnd.in-toto+json") whose payload is
// an in-toto Statement v1 listing the SHA-256 of the container's header, its metadata block and every segment (the
// segments larger than kShardBytes as consecutive shards), and whose predicate says what the container holds.
// docs/SIGNING.md is the format's specification; sign() and verify() are `mpspack sign` and `verify --key`.
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/sign/keys.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::sign {

inline constexpr const char* kPayloadType = "application/vnd.in-toto+json";
inline constexpr const char* kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr const char* kPredicateType = "https://mpspack/signature/v1.0";
// The media type of the envelope as a file and as an OCI artifact (push --sign).
inline constexpr const char* kEnvelopeMediaType = "application/vnd.dsse.envelope.v1+json";
// A segment larger than this is listed as shards of this size (the last one shorter), hashed on every core.
inline constexpr uint64_t kShardBytes = 64ull << 20;
// An envelope file larger than this is refused unread (a 1 TiB container lists about 16,000 subjects, 2 MiB).
inline constexpr uint64_t kEnvelopeBytes = 64ull << 20;

// One subject of the statement: a named byte range of the container and its SHA-256.
struct Subject {
  std::string name;  // "header", "metadata", "segment/<index>/<name>" or "segment/<index>/<name>:<begin>:<end>"
  uint64_t offset = 0, size = 0;  // in the file
  std::string sha256;             // lowercase hex; empty until hashed
  int64_t segment = -1;           // the segment it is (part of); -1 for the header and the metadata
  uint64_t begin = 0;             // where in the segment it starts
};

// The subjects a signature of `c` lists, in order, not hashed yet. A verifier derives the same list from the
// container it checks.
std::vector<Subject> plan_subjects(const format::Container& c);

// Hashes every subject's bytes on up to `threads` threads (0: one per core the process may run on); reads with
// pread like format::verify. With `check_xxh3`, the same pass checks the segments' recorded XXH3 (the whole
// segment's, or each 16 MiB chunk's where chunks are recorded: shards start on chunk boundaries), and a damaged
// segment is an error in format::verify's words.
Status hash_subjects(const format::Container& c, std::vector<Subject>& subjects, unsigned threads,
                     const format::Progress& progress = {}, bool check_xxh3 = false);

// The DSSE pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in decimal.
std::string pae(std::string_view payload_type, std::string_view payload);

// The signature of `c` as the envelope's JSON text (one line and a newline). Refuses a damaged container (a
// segment whose XXH3 differs from the recorded one, checked in the same pass as the SHA-256) and one whose padding
// is not zero: a signature vouches for an intact container, so verify() need not check the XXH3 again.
Result<std::string> sign(const format::Container& c, const PrivateKey& key, unsigned threads = 0,
                         const format::Progress& progress = {});

struct Verified {
  std::string key_id;
  size_t subjects = 0;
  uint64_t bytes_hashed = 0;
};

// Checks `envelope` (the signature file's bytes; `envelope_name` names it in errors) against `c` and `key`: the
// envelope's form, that one of its signatures is `key`'s over the PAE, the statement's type, predicate type and
// subject names against the container's own, every subject's SHA-256, and the padding. The error is one line
// naming the file and what failed (Kind::Corrupt for a signature or container that does not match).
Result<Verified> verify(const format::Container& c, std::span<const uint8_t> envelope, const std::string& envelope_name,
                        const PublicKey& key, unsigned threads = 0, const format::Progress& progress = {});

// What an envelope says without checking it (inspect): the key ids of its signatures and its predicate type.
struct EnvelopeSummary {
  std::vector<std::string> key_ids;
  std::string predicate_type;
};
Result<EnvelopeSummary> summarize(std::span<const uint8_t> envelope, const std::string& envelope_name);

// Where a container's signature is looked for when not named: "<container>.sig" beside it.
std::filesystem::path default_signature_path(const std::filesystem::path& container);

// Loads the signature file (at most kEnvelopeBytes) and verifies `c` against it with the key in `public_key_path`.
Result<Verified> verify_files(const format::Container& c, const std::filesystem::path& public_key_path,
                              const std::optional<std::filesystem::path>& signature_path, unsigned threads = 0,
                              const format::Progress& progress = {});

}  // namespace mpspack::sign
