"""A registry front with the OCI 1.1 referrers API, which Debian's docker-registry (Distribution 2.8) lacks: every
request is forwarded to the registry behind it, a manifest PUT that names a `subject` is answered with the
OCI-Subject header and remembered, and GET /v2/<name>/referrers/<digest> lists what was remembered for that
digest (filtered by ?artifactType=). push --sign then takes the API path, and pull --key finds the signature
through the API, not through the referrers tag."""

from __future__ import annotations

import hashlib
import http.client
import http.server
import json
import threading
import urllib.parse

from loopback import LoopbackServer, read_body, reply


class ReferrersProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream
        self.lock = threading.Lock()
        self.referrers: dict[tuple[str, str], list[dict]] = {}  # (repository, subject digest) -> descriptors
        self.api_calls = 0  # GETs of the referrers API answered
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if "/referrers/" in self.path:
                    return proxy.list_referrers(self)
                proxy.forward(self)

            do_HEAD = do_POST = do_PATCH = do_DELETE = do_PUT = lambda self: proxy.forward(self)

        self.loopback = LoopbackServer(Handler)
        self.host = self.loopback.host

    def stop(self):
        self.loopback.stop()

    def forward(self, handler):
        body = read_body(handler)
        conn = http.client.HTTPConnection(self.upstream, timeout=60)
        headers = {k: v for k, v in handler.headers.items() if k.lower() != "connection"}
        conn.request(handler.command, handler.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        out = {k: v for k, v in r.getheaders() if k.lower() not in ("content-length", "connection", "transfer-encoding")}
        conn.close()
        path = urllib.parse.urlparse(handler.path).path
        if handler.command == "PUT" and "/manifests/" in path and r.status == 201 and body:
            manifest = json.loads(body)
            if "subject" in manifest:
                repo = path[len("/v2/"):path.index("/manifests/")]
                entry = {"mediaType": manifest["mediaType"], "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                         "size": len(body), "artifactType": manifest.get("artifactType", "")}
                with self.lock:
                    self.referrers.setdefault((repo, manifest["subject"]["digest"]), []).append(entry)
                out["OCI-Subject"] = manifest["subject"]["digest"]
        reply(handler, r.status, data, out)

    def list_referrers(self, handler):
        url = urllib.parse.urlparse(handler.path)
        repo, digest = url.path[len("/v2/"):].split("/referrers/")
        wanted = urllib.parse.parse_qs(url.query).get("artifactType", [None])[0]
        with self.lock:
            self.api_calls += 1
            found = [d for d in self.referrers.get((repo, digest), []) if wanted in (None, d["artifactType"])]
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": found}
        reply(handler, 200, json.dumps(index).encode(), {"Content-Type": "application/vnd.oci.image.index.v1+json"})
