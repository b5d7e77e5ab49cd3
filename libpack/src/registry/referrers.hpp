// Signatures in a registry as OCI 1.1 referrers: an artifact manifest (artifactType and layer
// application/vnd.dsse.envelope.v1+json, the empty config) whose `subject` is the container's manifest, found
// through the referrers API (GET /v2/<name>/referrers/<digest>) or, where the registry has none (Distribution 2.8),
// through the referrers tag schema: an image index tagged "sha256-<hex of the subject's digest>" that lists them.
#pragma once

#include "client.hpp"
#include "oci_manifest.hpp"

namespace mpspack::registry {

// Uploads `envelope` and its manifest with `subject` (the container's manifest); where the registry does not say
// it indexed the subject (no OCI-Subject header), adds the manifest to the referrers tag's index. Returns the
// signature manifest's digest.
Result<std::string> attach_signature(Client& client, HttpSession& session, const Descriptor& subject,
                                     std::string_view envelope);

// The envelopes attached to the manifest `subject_digest` (at most a few dozen are read); empty when none.
Result<std::vector<std::string>> fetch_signatures(Client& client, HttpSession& session,
                                                  const std::string& subject_digest);

}  // namespace mpspack::registry
