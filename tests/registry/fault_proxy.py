"""A registry front that breaks uploads on purpose, for the resume tests.

Every request is forwarded to the real docker-registry behind it, Host header kept, so the upload Locations it
gives point back here; it counts the PATCH requests and bytes it forwards, and the bytes by upload session.
Armed with `fail_after(k, mode)`, it forwards k more PATCHes, then answers every further one itself, without
forwarding it, until reset(): `"drop"` closes the connection without a reply (so that curl's retry of a request
on a reused connection that closed fails too), `"500"` answers HTTP 500. Other requests are always forwarded."""

from __future__ import annotations

import http.server
import threading
import urllib.parse

from loopback import LoopbackServer, read_body, relay, reply


def upload_session(url: str) -> str:
    """The <uuid> of a .../blobs/uploads/<uuid>?... location or path."""
    return urllib.parse.urlparse(url).path.rstrip("/").rsplit("/", 1)[-1]


class FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream
        self.lock = threading.Lock()
        self.patches = 0        # PATCHes forwarded since reset()
        self.patch_bytes = 0    # their body bytes
        self.session_bytes: dict[str, int] = {}  # the same by upload session (the <uuid> of /blobs/uploads/<uuid>)
        self.faults = 0         # PATCHes answered with a fault
        self.fail_in: int | None = None  # PATCHes still to forward before the faults; None: none armed
        self.mode = "drop"
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = lambda self: proxy.forward(self)
            do_PATCH = lambda self: proxy.patch(self)

        self.loopback = LoopbackServer(Handler)
        self.host = self.loopback.host

    def stop(self):
        self.loopback.stop()

    def reset(self):
        with self.lock:
            self.patches = self.patch_bytes = self.faults = 0
            self.session_bytes = {}
            self.fail_in = None

    def fail_after(self, k: int, mode: str):
        assert mode in ("drop", "500")
        with self.lock:
            self.fail_in, self.mode = k, mode

    def patch(self, handler):
        body = read_body(handler)
        with self.lock:
            fault = self.fail_in == 0
            if fault:
                self.faults += 1
            elif self.fail_in is not None:
                self.fail_in -= 1
        if fault and self.mode == "drop":
            handler.close_connection = True  # no status line at all: the client sees the connection end
            return
        if fault:
            return reply(handler, 500, b'{"errors":[{"code":"UNKNOWN","message":"injected fault"}]}',
                         {"Content-Type": "application/json"})
        session = upload_session(handler.path)
        with self.lock:
            self.patches += 1
            self.patch_bytes += len(body or b"")
            self.session_bytes[session] = self.session_bytes.get(session, 0) + len(body or b"")
        self.forward(handler, body)

    def forward(self, handler, body: bytes | None = None):
        relay(handler, self.upstream, body if handler.command == "PATCH" else read_body(handler))
