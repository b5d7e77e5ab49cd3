// fuzz_signature: what a signature check parses from untrusted bytes (docs/SIGNING.md): a key file's DER
// (SubjectPublicKeyInfo, PKCS#8 PrivateKeyInfo), a DSSE envelope (JSON, base64, the statement), and a signature
// checked with a key. The first byte picks which; the rest is the input. For the signature: a SubjectPublicKeyInfo
// of its own length (the second byte), then the signature, checked over a fixed message. Also checked: a key that
// parsed has a 64-hex-digit key id, and a private key verifies its own signature.
#include "fuzz_support.hpp"
#include "mpspack/sign/signature.hpp"

#include <string_view>

using namespace mpspack;

namespace {

constexpr std::string_view kMessage = "DSSEv1 28 application/vnd.in-toto+json 2 {}";

std::span<const uint8_t> message() { return {reinterpret_cast<const uint8_t*>(kMessage.data()), kMessage.size()}; }

void public_key(std::span<const uint8_t> in) {
  auto key = sign::PublicKey::from_spki(in, "fuzz.pub");
  if (key.ok() && key->key_id().size() != 64) fuzz::property_failed("a key id is not 64 hex digits");
}

void private_key(std::span<const uint8_t> in) {
  auto key = sign::PrivateKey::from_pkcs8(in, "fuzz.pem");
  if (!key.ok()) return;
  auto sig = key->sign(message());
  if (!sig.ok() || !key->public_key().verify(message(), *sig))
    fuzz::property_failed("a private key's signature does not verify with its public key");
}

void signature(std::span<const uint8_t> in) {
  if (in.empty() || in[0] >= in.size()) return;
  auto key = sign::PublicKey::from_spki(in.subspan(1, in[0]), "fuzz.pub");
  if (key.ok()) (void)key->verify(message(), in.subspan(1 + in[0]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: public_key(in); break;
    case 1: private_key(in); break;
    case 2: (void)sign::summarize(in, "fuzz.sig"); break;
    default: signature(in); break;
  }
  return 0;
}
