"""A hostile HTTP server on 127.0.0.1 for the ``http:`` and ``openai:`` systems.

Raw sockets and one thread per connection, so a test can send what no framework
would: interim 1xx answers, wrong Content-Length, huge bodies, slow replies, a
connection closed mid-body. ``respond(request)`` returns the pieces to send in
order: bytes are written, a number sleeps that many seconds, :data:`CLOSE` closes
the connection. Pieces may come from a generator, so a 200 MB answer is never
held in the test's memory.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

CLOSE = object()


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    conn: int  # connection number (from 0)
    n: int  # request number on that connection (from 0)
    json: dict = field(default_factory=dict)

    @property
    def basic(self) -> str | None:
        """The decoded ``user:password`` of a Basic Authorization header."""
        auth = self.headers.get("authorization", "")
        if not auth.startswith("Basic "):
            return None
        return base64.b64decode(auth[6:]).decode()


def answer(obj, status: str = "200 OK", headers: str = "") -> bytes:
    body = json.dumps(obj, ensure_ascii=False).encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{headers}\r\n"
    ).encode() + body


def chat(content: str) -> dict:
    return {"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 7}}


class HostileServer:
    def __init__(self, respond: Callable[[Request], Iterable]):
        self.respond = respond
        self.requests: list[Request] = []
        self.connections = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/ask", userinfo: str = "") -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while True:
            try:
                s, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                n = self.connections
                self.connections += 1
                self._open.append(s)
            threading.Thread(target=self._serve, args=(s, n), daemon=True).start()

    def _serve(self, s: socket.socket, conn: int) -> None:
        f = s.makefile("rb")
        n = 0
        try:
            while True:
                line = f.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers = {}
                while True:
                    h = f.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = h.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = f.read(int(headers.get("content-length", "0")))
                try:
                    parsed = json.loads(body) if body else {}
                except ValueError:
                    parsed = {}
                req = Request(method, path, headers, body, conn, n, parsed)
                with self._lock:
                    self.requests.append(req)
                for piece in self.respond(req):
                    if piece is CLOSE:
                        s.close()
                        return
                    if isinstance(piece, (int, float)):
                        time.sleep(piece)
                    else:
                        s.sendall(piece)
                n += 1
        except OSError:  # the client went away: that is its right
            return
        finally:
            try:
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self._sock.close()
        with self._lock:
            for s in self._open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
