"""A registry front that demands the distribution spec's token flow, for the auth tests.

Requests to /v2/... without `Authorization: Bearer <token>` get 401 with
`WWW-Authenticate: Bearer realm="http://HOST/token",service="mpspack-test",scope="repository:NAME:ACTIONS"`;
GET /token?service=...&scope=... with Basic credentials of one of `users` answers {"token": ...} for the actions
of that scope the user may do. A token that does not allow what a request does gets 403. Requests that carry a
valid token are forwarded to the real docker-registry behind it, Host header kept, so the Locations it gives
point back here."""

from __future__ import annotations

import base64
import http.server
import json
import re
import secrets
import urllib.parse

from loopback import LoopbackServer, read_body, relay, reply


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

        self.loopback = LoopbackServer(Handler)
        self.host = self.loopback.host

    def stop(self):
        self.loopback.stop()

    def issue(self, handler):
        self.token_requests += 1
        query = urllib.parse.parse_qs(urllib.parse.urlparse(handler.path).query)
        auth = handler.headers.get("Authorization", "")
        user = next((u for u, (password, _) in self.users.items()
                     if auth == "Basic " + base64.b64encode(f"{u}:{password}".encode()).decode()), None)
        if user is None:
            return reply(handler, 401, b'{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}')
        granted = set()
        for scope in query.get("scope", []):
            kind, name, actions = scope.split(":")
            granted |= {f"{kind}:{name}:{a}" for a in actions.split(",") if a in self.users[user][1]}
        token = secrets.token_hex(16)
        self.tokens[token] = granted
        reply(handler, 200, json.dumps({"token": token}).encode(), {"Content-Type": "application/json"})

    def forward(self, handler):
        path = urllib.parse.urlparse(handler.path).path
        match = re.match(r"/v2/(.+?)/(blobs|manifests|tags)/", path)
        name = match.group(1) if match else ""
        action = "pull" if handler.command in ("GET", "HEAD") else "push"
        needed = f"repository:{name}:{action}"
        auth = handler.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        if path != "/v2/" and token in self.tokens and needed not in self.tokens[token]:
            return reply(handler, 403, b'{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}',
                         {"Content-Type": "application/json"})
        if path != "/v2/" and token not in self.tokens:
            challenge = (f'Bearer realm="http://{self.host}/token",service="mpspack-test",'
                         f'scope="repository:{name}:{action}"')
            return reply(handler, 401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token needed"}]}',
                         {"WWW-Authenticate": challenge, "Content-Type": "application/json"})
        relay(handler, self.upstream, read_body(handler), drop_headers=("authorization",))
