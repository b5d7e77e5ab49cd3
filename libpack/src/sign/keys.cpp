// Key files (PEM around PKCS#8 or SubjectPublicKeyInfo DER) and the signatures of Ed25519 and ECDSA P-256, through
// Nettle's hogweed (keys.hpp; docs/SIGNING.md, "Keys").
#include "mpspack/sign/keys.hpp"

#include "der.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/hash.hpp"

#include <nettle/base64.h>
#include <nettle/bignum.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/eddsa.h>
#include <nettle/sha2.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

namespace mpspack::sign {
namespace {

constexpr uint64_t kKeyFileBytes = 64 << 10;  // a PEM key is a few hundred bytes

// The OIDs' DER values.
constexpr std::array<uint8_t, 3> kOidEd25519 = {0x2b, 0x65, 0x70};                              // 1.3.101.112
constexpr std::array<uint8_t, 7> kOidEcPublicKey = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};  // 1.2.840.10045.2.1
constexpr std::array<uint8_t, 8> kOidP256 = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};   // 1.2.840.10045.3.1.7

// SubjectPublicKeyInfo up to the key bytes (the BIT STRING's unused-bits byte included): the key id is the SHA-256
// of this prefix and the key.
constexpr std::array<uint8_t, 12> kSpkiEd25519 = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                                  0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
constexpr std::array<uint8_t, 26> kSpkiP256 = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
                                               0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
                                               0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00};

bool same(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// What an algorithm OID is, for the refusal of a key of another kind.
std::string algorithm_name(std::span<const uint8_t> oid) {
  const std::string dotted = der::oid_text(oid);
  if (dotted == "1.2.840.113549.1.1.1") return "an RSA key";
  if (dotted == "1.3.101.113") return "an Ed448 key";
  if (dotted == "1.3.101.110" || dotted == "1.3.101.111") return "an X25519/X448 key (for key agreement, not signing)";
  if (dotted == "1.2.840.10040.4.1") return "a DSA key";
  return "a key of algorithm " + dotted;
}

std::string curve_name(std::span<const uint8_t> oid) {
  const std::string dotted = der::oid_text(oid);
  if (dotted == "1.3.132.0.34") return "P-384";
  if (dotted == "1.3.132.0.35") return "P-521";
  if (dotted == "1.3.132.0.10") return "secp256k1";
  return dotted;
}

constexpr const char* kKinds = "mpspack signs with Ed25519 or ECDSA P-256 keys";

// Which of the two the AlgorithmIdentifier names; an error for anything else.
Result<KeyAlgorithm> read_algorithm(der::Reader& r, const std::string& what) {
  MPK_TRY(der::Element alg, r.expect(der::kSequence, "the AlgorithmIdentifier"));
  der::Reader a = r.enter(alg);
  MPK_TRY(der::Element oid, a.expect(der::kOid, "the algorithm OID"));
  if (same(oid.value, kOidEd25519)) {
    MPK_CHECK(a.finish("the Ed25519 AlgorithmIdentifier"));
    return KeyAlgorithm::Ed25519;
  }
  if (!same(oid.value, kOidEcPublicKey))
    return make_error(Error::Kind::Unsupported, "{}: {}; {}", what, algorithm_name(oid.value), kKinds);
  MPK_TRY(der::Element curve, a.next("the EC parameters"));
  if (curve.tag != der::kOid)
    return make_error(Error::Kind::Unsupported, "{}: an EC key with explicit curve parameters; {}", what, kKinds);
  if (!same(curve.value, kOidP256))
    return make_error(Error::Kind::Unsupported, "{}: an EC key on curve {}; {}", what, curve_name(curve.value), kKinds);
  MPK_CHECK(a.finish("the EC AlgorithmIdentifier"));
  return KeyAlgorithm::EcdsaP256;
}

// The PEM block's DER bytes: the first "-----BEGIN <label>-----" ... "-----END <label>-----" of the file, which
// must be `want`; a key of the other role, an encrypted or a legacy key is refused by name.
Result<std::vector<uint8_t>> read_pem(const std::filesystem::path& path, std::string_view want) {
  const std::string what = path.string();
  MPK_TRY(MappedFile f, MappedFile::open(path));
  if (f.size() > kKeyFileBytes)
    return make_error(Error::Kind::Invalid, "{}: {} bytes, too large for a key file (at most {})", what, f.size(),
                      kKeyFileBytes);
  const std::string_view text(reinterpret_cast<const char*>(f.data()), f.size());
  const size_t begin = text.find("-----BEGIN ");
  const size_t label_end = begin == text.npos ? text.npos : text.find("-----", begin + 11);
  if (label_end == text.npos)
    return make_error(Error::Kind::NotThisFormat, "{}: not a PEM key file (no \"-----BEGIN ...-----\" line)", what);
  const std::string label(text.substr(begin + 11, label_end - begin - 11));
  if (label != want) {
    std::string why = "a PEM \"" + label + "\" block";
    if (label == "ENCRYPTED PRIVATE KEY")
      why = "an encrypted private key (decrypt it: openssl pkey -in KEY -out PLAIN)";
    else if (label == "PUBLIC KEY") why = "a public key";
    else if (label == "PRIVATE KEY") why = "a private key (give its public key: openssl pkey -in KEY -pubout)";
    else if (label == "EC PRIVATE KEY") why = "a SEC 1 EC key (convert it: openssl pkcs8 -topk8 -nocrypt -in KEY)";
    return make_error(Error::Kind::Invalid, "{}: {}, not the \"{}\" this command reads", what, why, want);
  }
  const std::string end_line = "-----END " + label + "-----";
  const size_t body = label_end + 5, end = text.find(end_line, body);
  if (end == text.npos) return make_error(Error::Kind::Corrupt, "{}: no \"{}\" line", what, end_line);
  std::string b64;
  for (char ch : text.substr(body, end - body))
    if (ch != '\n' && ch != '\r' && ch != ' ' && ch != '\t') b64 += ch;
  return base64_decode(b64, what + ": the PEM body");
}

std::string key_id_of(std::span<const uint8_t> prefix, std::span<const uint8_t> key) {
  format::Sha256Stream s;
  s.update(prefix.data(), prefix.size());
  s.update(key.data(), key.size());
  return s.hex_digest();
}

// 0x04 || X || Y of a point, each coordinate 32 bytes.
std::vector<uint8_t> encode_point(const ecc_point& p) {
  mpz_t x, y;
  mpz_init(x);
  mpz_init(y);
  ecc_point_get(&p, x, y);
  std::vector<uint8_t> out(65);
  out[0] = 0x04;
  nettle_mpz_get_str_256(32, out.data() + 1, x);
  nettle_mpz_get_str_256(32, out.data() + 33, y);
  mpz_clear(x);
  mpz_clear(y);
  return out;
}

struct Point {
  ecc_point p;
  Point() { ecc_point_init(&p, nettle_get_secp_256r1()); }
  ~Point() { ecc_point_clear(&p); }
  Point(const Point&) = delete;
  Point& operator=(const Point&) = delete;
  // From 0x04 || X || Y; false when the point is not on the curve.
  bool set(std::span<const uint8_t> uncompressed) {
    mpz_t x, y;
    nettle_mpz_init_set_str_256_u(x, 32, uncompressed.data() + 1);
    nettle_mpz_init_set_str_256_u(y, 32, uncompressed.data() + 33);
    const bool ok = ecc_point_set(&p, x, y) == 1;
    mpz_clear(x);
    mpz_clear(y);
    return ok;
  }
};

void sha256_raw(std::span<const uint8_t> message, uint8_t digest[SHA256_DIGEST_SIZE]) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, message.size(), message.data());
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
}

}  // namespace

const char* to_string(KeyAlgorithm a) { return a == KeyAlgorithm::Ed25519 ? "ed25519" : "ecdsa-p256"; }

Result<PublicKey> PublicKey::load(const std::filesystem::path& path) {
  MPK_TRY(auto der, read_pem(path, "PUBLIC KEY"));
  return from_spki(der, path.string());
}

Result<PublicKey> PublicKey::from_spki(std::span<const uint8_t> bytes, const std::string& what) {
  der::Reader top(bytes, what);
  MPK_TRY(der::Element spki, top.expect(der::kSequence, "the SubjectPublicKeyInfo"));
  MPK_CHECK(top.finish("the key file's DER"));
  der::Reader r = top.enter(spki);
  PublicKey k;
  MPK_TRY(k.algorithm_, read_algorithm(r, what));
  MPK_TRY(der::Element bits, r.expect(der::kBitString, "the public key BIT STRING"));
  MPK_CHECK(r.finish("the SubjectPublicKeyInfo"));
  if (bits.value.empty() || bits.value[0] != 0)
    return make_error(Error::Kind::Corrupt, "{}: the public key BIT STRING has unused bits", what);
  const auto key = bits.value.subspan(1);
  if (k.algorithm_ == KeyAlgorithm::Ed25519) {
    if (key.size() != ED25519_KEY_SIZE)
      return make_error(Error::Kind::Corrupt, "{}: an Ed25519 public key of {} bytes, not 32", what, key.size());
    k.key_id_ = key_id_of(kSpkiEd25519, key);
  } else {
    if (key.size() != 65 || key[0] != 0x04)
      return make_error(Error::Kind::Unsupported,
                        "{}: the P-256 public key is not an uncompressed point (65 bytes from 0x04; openssl pkey "
                        "-pubout writes that form)",
                        what);
    Point p;
    if (!p.set(key)) return make_error(Error::Kind::Corrupt, "{}: the P-256 public key is not on the curve", what);
    k.key_id_ = key_id_of(kSpkiP256, key);
  }
  k.point_.assign(key.begin(), key.end());
  return k;
}

bool PublicKey::verify(std::span<const uint8_t> message, std::span<const uint8_t> signature) const {
  if (algorithm_ == KeyAlgorithm::Ed25519)
    return signature.size() == ED25519_SIGNATURE_SIZE &&
           ed25519_sha512_verify(point_.data(), message.size(), message.data(), signature.data()) == 1;
  der::Reader top(signature, "signature");
  auto seq = top.expect(der::kSequence, "Ecdsa-Sig-Value");
  if (!seq.ok() || !top.finish("").ok()) return false;
  der::Reader r = top.enter(*seq);
  auto re = r.expect(der::kInteger, "r");
  auto se = r.expect(der::kInteger, "s");
  if (!re.ok() || !se.ok() || !r.finish("").ok()) return false;
  auto rv = der::unsigned_integer(*re, "signature", "r"), sv = der::unsigned_integer(*se, "signature", "s");
  if (!rv.ok() || !sv.ok() || rv->size() > 32 || sv->size() > 32) return false;
  Point p;
  if (!p.set(point_)) return false;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_raw(message, digest);
  dsa_signature sig;
  dsa_signature_init(&sig);
  nettle_mpz_set_str_256_u(sig.r, rv->size(), rv->data());
  nettle_mpz_set_str_256_u(sig.s, sv->size(), sv->data());
  const bool ok = ecdsa_verify(&p.p, sizeof digest, digest, &sig) == 1;
  dsa_signature_clear(&sig);
  return ok;
}

// The secret half: Ed25519's 32-byte seed, or the P-256 scalar.
struct PrivateKey::Secret {
  std::array<uint8_t, 32> seed{};
  ecc_scalar scalar;
  bool has_scalar = false;
  ~Secret() {
    if (has_scalar) ecc_scalar_clear(&scalar);
    volatile uint8_t* p = seed.data();  // the seed does not outlive the key
    for (size_t i = 0; i < seed.size(); ++i) p[i] = 0;
  }
};

PrivateKey::PrivateKey() = default;
PrivateKey::~PrivateKey() = default;
PrivateKey::PrivateKey(PrivateKey&&) noexcept = default;
PrivateKey& PrivateKey::operator=(PrivateKey&&) noexcept = default;

// Builds PrivateKey from PKCS#8's parts (a friend, so the parsing stays out of the header).
struct KeyReader {
  static Status ed25519(PrivateKey& k, std::span<const uint8_t> inner, const std::string& what) {
    der::Reader r(inner, what);
    MPK_TRY(der::Element seed, r.expect(der::kOctetString, "the Ed25519 private key"));
    MPK_CHECK(r.finish("the Ed25519 private key"));
    if (seed.value.size() != 32)
      return make_error(Error::Kind::Corrupt, "{}: an Ed25519 private key of {} bytes, not 32", what,
                        seed.value.size());
    k.secret_ = std::make_unique<PrivateKey::Secret>();
    std::copy(seed.value.begin(), seed.value.end(), k.secret_->seed.begin());
    std::array<uint8_t, 32> pub;
    ed25519_sha512_public_key(pub.data(), k.secret_->seed.data());
    k.public_.algorithm_ = KeyAlgorithm::Ed25519;
    k.public_.point_.assign(pub.begin(), pub.end());
    k.public_.key_id_ = key_id_of(kSpkiEd25519, pub);
    return {};
  }

  static Status p256(PrivateKey& k, std::span<const uint8_t> inner, const std::string& what) {
    der::Reader top(inner, what);
    MPK_TRY(der::Element seq, top.expect(der::kSequence, "the ECPrivateKey"));
    MPK_CHECK(top.finish("the ECPrivateKey"));
    der::Reader r = top.enter(seq);
    MPK_TRY(der::Element version, r.expect(der::kInteger, "the ECPrivateKey version"));
    if (version.value.size() != 1 || version.value[0] != 1)
      return make_error(Error::Kind::Unsupported, "{}: ECPrivateKey version is not 1", what);
    MPK_TRY(der::Element d, r.expect(der::kOctetString, "the EC private key"));
    if (d.value.empty() || d.value.size() > 32)
      return make_error(Error::Kind::Corrupt, "{}: a P-256 private key of {} bytes", what, d.value.size());
    k.secret_ = std::make_unique<PrivateKey::Secret>();
    ecc_scalar_init(&k.secret_->scalar, nettle_get_secp_256r1());
    k.secret_->has_scalar = true;
    mpz_t z;
    nettle_mpz_init_set_str_256_u(z, d.value.size(), d.value.data());
    const bool in_range = ecc_scalar_set(&k.secret_->scalar, z) == 1;
    mpz_clear(z);
    if (!in_range) return make_error(Error::Kind::Corrupt, "{}: the P-256 private key is out of range", what);
    Point pub;
    ecc_point_mul_g(&pub.p, &k.secret_->scalar);
    k.public_.algorithm_ = KeyAlgorithm::EcdsaP256;
    k.public_.point_ = encode_point(pub.p);
    k.public_.key_id_ = key_id_of(kSpkiP256, k.public_.point_);
    return {};  // the optional parameters and public key that may follow are not needed
  }
};

Result<PrivateKey> PrivateKey::load(const std::filesystem::path& path) {
  MPK_TRY(auto bytes, read_pem(path, "PRIVATE KEY"));
  auto key = from_pkcs8(bytes, path.string());
  volatile uint8_t* p = bytes.data();  // the DER held the secret
  for (size_t i = 0; i < bytes.size(); ++i) p[i] = 0;
  return key;
}

Result<PrivateKey> PrivateKey::from_pkcs8(std::span<const uint8_t> bytes, const std::string& what) {
  der::Reader top(bytes, what);
  MPK_TRY(der::Element info, top.expect(der::kSequence, "the PrivateKeyInfo"));
  MPK_CHECK(top.finish("the key file's DER"));
  der::Reader r = top.enter(info);
  MPK_TRY(der::Element version, r.expect(der::kInteger, "the PrivateKeyInfo version"));
  if (version.value.size() != 1 || version.value[0] > 1)
    return make_error(Error::Kind::Unsupported, "{}: PrivateKeyInfo version is not 0 or 1", what);
  MPK_TRY(KeyAlgorithm alg, read_algorithm(r, what));
  MPK_TRY(der::Element inner, r.expect(der::kOctetString, "the private key OCTET STRING"));
  PrivateKey k;
  MPK_CHECK(alg == KeyAlgorithm::Ed25519 ? KeyReader::ed25519(k, inner.value, what)
                                         : KeyReader::p256(k, inner.value, what));
  return k;
}

namespace {

struct RandomSource {
  bool failed = false;
};

// Nettle's randomness callback for the ECDSA nonce: getrandom(), which blocks only until the kernel's pool is
// seeded once after boot. A failure is recorded and the signature discarded by the caller.
void random_bytes(void* ctx, size_t length, uint8_t* dst) {
  auto* source = static_cast<RandomSource*>(ctx);
  while (length > 0) {
    const ssize_t n = getrandom(dst, length, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      source->failed = true;
      std::memset(dst, 0, length);
      return;
    }
    dst += n;
    length -= size_t(n);
  }
}

}  // namespace

Result<std::vector<uint8_t>> PrivateKey::sign(std::span<const uint8_t> message) const {
  if (!secret_) return make_error(Error::Kind::Invalid, "no private key loaded");
  if (algorithm() == KeyAlgorithm::Ed25519) {
    std::vector<uint8_t> sig(ED25519_SIGNATURE_SIZE);
    ed25519_sha512_sign(public_.point_.data(), secret_->seed.data(), message.size(), message.data(), sig.data());
    return sig;
  }
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_raw(message, digest);
  RandomSource source;
  dsa_signature sig;
  dsa_signature_init(&sig);
  ecdsa_sign(&secret_->scalar, &source, random_bytes, sizeof digest, digest, &sig);
  std::array<uint8_t, 32> r, s;
  nettle_mpz_get_str_256(32, r.data(), sig.r);
  nettle_mpz_get_str_256(32, s.data(), sig.s);
  dsa_signature_clear(&sig);
  if (source.failed)
    return make_error(Error::Kind::Runtime, "cannot sign: getrandom() failed: {}", std::strerror(errno));
  return der::encode_signature(r, s);
}

std::string base64_encode(std::span<const uint8_t> bytes) {
  std::string out(BASE64_ENCODE_RAW_LENGTH(bytes.size()), '\0');
  base64_encode_raw(out.data(), bytes.size(), bytes.data());
  return out;
}

Result<std::vector<uint8_t>> base64_decode(std::string_view text, std::string_view what) {
  // Nettle's decoder skips whitespace and stops at the padding; DSSE's fields have neither inside, so both are
  // refused here before it runs.
  const size_t pad = text.size() >= 2 && text.substr(text.size() - 2) == "==" ? 2
                     : !text.empty() && text.back() == '='                    ? 1
                                                                              : 0;
  bool alphabet = text.size() % 4 == 0;
  for (size_t i = 0; alphabet && i < text.size() - pad; ++i) {
    const char ch = text[i];
    alphabet =
        (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
  }
  if (!alphabet) return make_error(Error::Kind::Corrupt, "{} is not base64", what);
  std::vector<uint8_t> out(BASE64_DECODE_LENGTH(text.size()));
  base64_decode_ctx ctx;
  base64_decode_init(&ctx);
  size_t n = out.size();
  if (!base64_decode_update(&ctx, &n, out.data(), text.size(), text.data()) || !base64_decode_final(&ctx))
    return make_error(Error::Kind::Corrupt, "{} is not base64", what);
  out.resize(n);
  return out;
}

}  // namespace mpspack::sign
