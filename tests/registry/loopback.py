"""What the test proxies in front of the docker-registry share: a threaded HTTP server on a free loopback port,
replies with a body, and relaying a request to the registry with its answer passed back."""

from __future__ import annotations

import http.client
import http.server
import threading


class LoopbackServer:
    """Serves `handler_class` on 127.0.0.1 (a free port, `host` "127.0.0.1:PORT") on a thread until stop()."""

    def __init__(self, handler_class):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def reply(handler, status: int, body: bytes = b"", headers: dict | None = None):
    handler.send_response(status)
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def read_body(handler) -> bytes | None:
    length = int(handler.headers.get("Content-Length", 0) or 0)
    return handler.rfile.read(length) if length else None


def relay(handler, upstream: str, body: bytes | None, drop_headers: tuple[str, ...] = ()):
    """`handler`'s request, with `body`, sent to `upstream` (Host header kept, so the Locations the registry gives
    point back at the proxy), less the headers named in `drop_headers`; its answer replied as it came."""
    conn = http.client.HTTPConnection(upstream, timeout=60)
    dropped = {"connection", *drop_headers}
    headers = {k: v for k, v in handler.headers.items() if k.lower() not in dropped}
    conn.request(handler.command, handler.path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    out = {k: v for k, v in r.getheaders() if k.lower() not in ("content-length", "connection", "transfer-encoding")}
    reply(handler, r.status, data, out)
    conn.close()
