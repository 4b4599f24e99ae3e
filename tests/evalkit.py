"""Helpers for the evaluation tests: a small Spanish test set on disk and real
HTTP servers on 127.0.0.1 (ok, slow, failing, malformed, flaky, OpenAI-style)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHUNKS = [
    {"id": "entrega-1", "text": "La entrega a una oficina de mensajería cuesta 3 €."},
    {"id": "entrega-2", "text": "Tu pedido llega en dos días laborables."},
    {"id": "devolver-1", "text": "Puedes devolver tu compra en 14 días."},
    {"id": "devolver-2", "text": "Te devolvemos el dinero en cinco días."},
    {"id": "garantía-1", "text": "La garantía dura dos años para los aparatos eléctricos."},
    {"id": "rückgabe-1", "text": "Horario de atención: de lunes a viernes."},
]

YAML = """\
# small test set written by the tests
version: 1
corpus: shop.chunks.jsonl
language: es
k: 2
cases:
  - id: precio-oficina
    topic: precio oficina
    question: cuánto cuesta la entrega a una oficina de mensajería
    expected: [entrega-1]
    must_contain: ["3 €"]
  - id: plazo-devolución
    topic: plazo devolución
    question: en cuántos días puedo devolver la compra
    expected: [devolver-1]
    must_contain: ["14 días"]
  - id: dinero
    topic: dinero
    question: cuándo me devolvéis el dinero
    expected: [devolver-2]
    must_contain: ["cinco días"]
  - id: garantía
    topic: garantía
    question: cuánto dura la garantía de un aparato
    expected: [garantía-1]
    answer: La garantía dura tres años
  - id: domingo
    topic: domingo
    question: abren los domingos por la tarde
    unanswerable: true
"""


def write_testset(dir: Path, yaml: str = YAML, chunks=CHUNKS, name: str = "shop.yaml") -> Path:
    dir.mkdir(parents=True, exist_ok=True)
    (dir / "shop.chunks.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks), encoding="utf-8"
    )
    p = dir / name
    p.write_text(yaml, encoding="utf-8")
    return p


def answer_for(question: str) -> dict:
    """A deterministic fake RAG: finds the chunk by a keyword and quotes it."""
    for kw, cid in (
        ("oficina", "entrega-1"),
        ("devolver", "devolver-1"),
        ("dinero", "devolver-2"),
        ("garantía", "garantía-1"),
    ):
        if kw in question:
            text = next(c["text"] for c in CHUNKS if c["id"] == cid)
            return {"ranking": [cid, "entrega-2"], "scores": [2.0, 0.5], "answer": f"{text} [{cid}]"}
    return {"ranking": ["entrega-2"], "scores": [0.1], "answer": "No lo sé."}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype="application/json"):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        srv = self.server
        with srv.lock:
            srv.requests.append((self.path, raw, dict(self.headers)))
            held = srv.hold_after is not None and len(srv.requests) > srv.hold_after
        if held:  # answer no more until the test releases the server
            srv.release.wait(30)
        try:
            req = json.loads(raw)
        except ValueError:
            return self._send(400, b'{"error": "bad request"}')
        path = self.path
        if path.startswith("/slow"):
            # one case is slower than any timeout the tests use
            time.sleep(2.0 if "domingo" in req.get("question", "") else srv.latency)
            return self._send(200, json.dumps(answer_for(req["question"])).encode())
        if path.startswith("/fail"):
            return self._send(500, b"internal error: database is down")
        if path.startswith("/bad"):
            return self._send(200, b'{"ranking": ["entrega-1", ')
        if path.startswith("/flaky"):
            with srv.lock:
                seen = srv.seen.setdefault(req["id"], 0)
                srv.seen[req["id"]] = seen + 1
            if seen == 0:
                return self._send(503, b"try again")
            return self._send(200, json.dumps(answer_for(req["question"])).encode())
        if path.startswith("/wrongtype"):
            return self._send(200, b'{"ranking": "entrega-1", "answer": "x"}')
        if path.startswith("/v1/chat/completions") or path.startswith("/openai/v1/chat/completions"):
            msgs = req["messages"]
            user = msgs[-1]["content"]
            first = user.split("[", 1)[1].split("]", 1)[0] if "[" in user else None
            if srv.latency:
                time.sleep(srv.latency)
            content = f"Según la fuente, sí. [{first}]" if first else "No lo sé."
            body = {
                "choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 100 + len(user) // 100},
            }
            return self._send(200, json.dumps(body).encode())
        if path.startswith("/openai-bad/v1/chat/completions"):
            return self._send(200, b"<html>not json</html>", "text/html")
        if path.startswith("/openai-fail/v1/chat/completions"):
            return self._send(500, b"model crashed")
        if srv.latency:
            time.sleep(srv.latency)
        return self._send(200, json.dumps(answer_for(req["question"])).encode())


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # clients that time out close early: not news
        pass


class Server:
    """A real HTTP server on 127.0.0.1 in a background thread."""

    def __init__(self, latency: float = 0.0, hold_after: int | None = None):
        """``hold_after``: requests after that many wait until :meth:`release` is called."""
        self.httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.lock = threading.Lock()
        self.httpd.requests = []
        self.httpd.seen = {}
        self.httpd.latency = latency
        self.httpd.hold_after = hold_after
        self.httpd.release = threading.Event()
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def release(self) -> None:
        self.httpd.release.set()

    @property
    def requests(self):
        return self.httpd.requests

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
