// Signing keys: Ed25519 and ECDSA P-256 keys read from the PEM files OpenSSL writes (`openssl genpkey`: PKCS#8
// "PRIVATE KEY"; `openssl pkey -pubout`: SubjectPublicKeyInfo "PUBLIC KEY"), and the signatures they make. The
// arithmetic is Nettle's (hogweed); mpspack only reads the key files (der.hpp) and encodes ECDSA signatures in
// DER, as the DSSE and cosign tools exchange them. docs/SIGNING.md describes both.
#pragma once

#include "mpspack/result.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mpspack::sign {

enum class KeyAlgorithm { Ed25519, EcdsaP256 };

const char* to_string(KeyAlgorithm a);  // "ed25519", "ecdsa-p256"

// A public key, to verify with. `key_id` is the lowercase hex SHA-256 of its SubjectPublicKeyInfo DER, what
// `openssl pkey -pubin -in PUB.pem -outform DER | sha256sum` prints: signatures name the key they were made with.
class PublicKey {
 public:
  // Reads a "PUBLIC KEY" PEM file. A private key, an encrypted key, another algorithm or another curve is refused
  // with one line naming the file and what the key is.
  static Result<PublicKey> load(const std::filesystem::path& path);
  // From SubjectPublicKeyInfo DER bytes; `what` names them in errors.
  static Result<PublicKey> from_spki(std::span<const uint8_t> der, const std::string& what);

  KeyAlgorithm algorithm() const { return algorithm_; }
  const std::string& key_id() const { return key_id_; }
  // True when `signature` (Ed25519: 64 bytes; ECDSA: DER Ecdsa-Sig-Value over SHA-256(message)) is this key's
  // signature of `message`.
  bool verify(std::span<const uint8_t> message, std::span<const uint8_t> signature) const;

 private:
  KeyAlgorithm algorithm_ = KeyAlgorithm::Ed25519;
  std::vector<uint8_t> point_;  // Ed25519: the 32-byte key; P-256: 0x04 || X || Y
  std::string key_id_;
  friend struct KeyReader;
  friend class PrivateKey;
};

class PrivateKey {
 public:
  // Reads a "PRIVATE KEY" (unencrypted PKCS#8) PEM file, as `openssl genpkey -algorithm ed25519` or
  // `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` write it.
  static Result<PrivateKey> load(const std::filesystem::path& path);
  // From PKCS#8 PrivateKeyInfo DER bytes; `what` names them in errors.
  static Result<PrivateKey> from_pkcs8(std::span<const uint8_t> der, const std::string& what);

  PrivateKey();
  ~PrivateKey();
  PrivateKey(PrivateKey&&) noexcept;
  PrivateKey& operator=(PrivateKey&&) noexcept;

  KeyAlgorithm algorithm() const { return public_.algorithm(); }
  const PublicKey& public_key() const { return public_; }
  // The signature of `message` (Ed25519: 64 bytes, deterministic; ECDSA P-256: SHA-256 of the message, a random
  // nonce from getrandom(), DER encoded).
  Result<std::vector<uint8_t>> sign(std::span<const uint8_t> message) const;

 private:
  struct Secret;  // wiped when destroyed
  std::unique_ptr<Secret> secret_;
  PublicKey public_;
  friend struct KeyReader;
};

// Standard base64 (RFC 4648, with padding), as DSSE writes its payload and signatures.
std::string base64_encode(std::span<const uint8_t> bytes);
// Decodes standard base64 (padding required, no whitespace); an error says `what` is not base64.
Result<std::vector<uint8_t>> base64_decode(std::string_view text, std::string_view what);

}  // namespace mpspack::sign
