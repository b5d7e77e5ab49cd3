"""A registry front that demands the distribution spec's token flow, for the auth tests.

Requests to /v2/... without `Authorization: Bearer <token>` get 401 with
`WWW-Authenticate: Bearer realm="http://HOST/token",service="mpspack-test",scope="repository:NAME:ACTIONS"`;
GET /token?service=...&scope=... with Basic credentials of one of `users` answers {"token": ...} for the actions
of that scope the user may do. A token that does not allow what a request does gets 403. Requests that carry a
valid token are forwarded to the real docker-registry behind it, Host header kept, so the Locations it gives
point back here."""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import re
import secrets
import threading
import urllib.parse


class TokenProxy:
    def __init__(self, upstream: str, users: dict[str, tuple[str, set[str]]]):
        self.upstream = upstream
        self.users = users  # name -> (password, actions it may do: {"pull", "push"})
        self.tokens: dict[str, set[str]] = {}  # token -> "repository:NAME:ACTION" it allows
        self.token_requests = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/token"):
                    return proxy.issue(self)
                proxy.forward(self)

            do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = lambda self: proxy.forward(self)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def reply(handler, status: int, body: bytes = b"", headers: dict | None = None):
        handler.send_response(status)
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)

    def issue(self, handler):
        self.token_requests += 1
        query = urllib.parse.parse_qs(urllib.parse.urlparse(handler.path).query)
        auth = handler.headers.get("Authorization", "")
        user = next((u for u, (password, _) in self.users.items()
                     if auth == "Basic " + base64.b64encode(f"{u}:{password}".encode()).decode()), None)
        if user is None:
            return self.reply(handler, 401, b'{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}')
        granted = set()
        for scope in query.get("scope", []):
            kind, name, actions = scope.split(":")
            granted |= {f"{kind}:{name}:{a}" for a in actions.split(",") if a in self.users[user][1]}
        token = secrets.token_hex(16)
        self.tokens[token] = granted
        self.reply(handler, 200, json.dumps({"token": token}).encode(), {"Content-Type": "application/json"})

    def forward(self, handler):
        path = urllib.parse.urlparse(handler.path).path
        match = re.match(r"/v2/(.+?)/(blobs|manifests|tags)/", path)
        name = match.group(1) if match else ""
        action = "pull" if handler.command in ("GET", "HEAD") else "push"
        needed = f"repository:{name}:{action}"
        auth = handler.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        if path != "/v2/" and token in self.tokens and needed not in self.tokens[token]:
            return self.reply(handler, 403, b'{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}',
                              {"Content-Type": "application/json"})
        if path != "/v2/" and token not in self.tokens:
            challenge = (f'Bearer realm="http://{self.host}/token",service="mpspack-test",'
                         f'scope="repository:{name}:{action}"')
            return self.reply(handler, 401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token needed"}]}',
                              {"WWW-Authenticate": challenge, "Content-Type": "application/json"})
        length = int(handler.headers.get("Content-Length", 0) or 0)
        body = handler.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(self.upstream, timeout=60)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("authorization", "connection")}
        conn.request(handler.command, handler.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        out = {k: v for k, v in r.getheaders() if k.lower() not in ("content-length", "connection", "transfer-encoding")}
        self.reply(handler, r.status, data, out)
        conn.close()
