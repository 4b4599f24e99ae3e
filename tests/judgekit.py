"""A real HTTP server on 127.0.0.1 playing an OpenAI-compatible chat model, for
the judge's tests and benchmark.

``FakeModel(script)`` runs an asyncio server in a thread; ``script(request)``
gets the parsed request (``body``: the JSON, ``headers``: lower-cased names,
``n``: the call number) and returns a :class:`Reply`. The server keeps
connections alive like a real one, so the client's pool is exercised.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass
class Reply:
    content: str | None = None  # the chat message's content
    status: int = 200
    raw: bytes | None = None  # the whole body, instead of a chat completion
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    refusal: str | None = None
    usage: dict | None = None


def verdict(supported: bool, correct: bool | None, reason: str = "ok") -> Reply:
    return Reply(orjson.dumps({"supported": supported, "correct": correct, "reason": reason}).decode())


class FakeModel:
    def __init__(self, script: Callable[[dict], Reply], port: int = 0):
        self.script = script
        self.requests: list[dict] = []
        self.keep = True  # keep each request (tests look at them); a long-running server does not
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = port

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, model: str = "judge-model") -> str:
        return f"openai:{self.base}#{model}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._conn, "127.0.0.1", self.port, backlog=512)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        for t in asyncio.all_tasks(self._loop):  # connections still open: end them cleanly
            t.cancel()
        self._loop.run_until_complete(asyncio.sleep(0.01))
        self._loop.run_until_complete(server.wait_closed())
        self._loop.close()

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, _, v = line.partition(":")
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                with self._lock:
                    req = {"body": orjson.loads(body), "headers": headers, "n": len(self.requests)}
                    if self.keep:
                        self.requests.append(req)
                    else:
                        self.requests.append({"n": req["n"]})
                reply = self.script(req)
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                if reply.raw is not None:
                    data = reply.raw
                else:
                    message: dict = {"role": "assistant", "content": reply.content}
                    if reply.refusal is not None:
                        message["refusal"] = reply.refusal
                    obj: dict = {"choices": [{"index": 0, "message": message}]}
                    if reply.usage is not None:
                        obj["usage"] = reply.usage
                    data = orjson.dumps(obj)
                extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
                writer.write(
                    (
                        f"HTTP/1.1 {reply.status} X\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(data)}\r\n{extra}\r\n"
                    ).encode("latin-1")
                    + data
                )
                await writer.drain()
        finally:
            writer.close()


_NUM = re.compile(r"\d+")
_WORD = re.compile(r"[\w@.]+")
_NUMBER_WORDS = {"uno": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6", "siete": "7"}


def _words(text: str, numbers: bool) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.strip(".")
        w = _NUMBER_WORDS.get(w, w) if numbers else w
        if w.isdigit() or len(w) > 3:
            out.append(w)
    return out


def rule_judge(req: dict) -> Reply:
    """A deterministic stand-in judge for demos and benchmarks. A model named ``*small*``
    checks only that the answer's digits are in the sources; any other reads number
    words too and wants 70 % of the answer's words in the sources. ``correct``: every
    word of the reference is in the answer."""
    careful = "small" not in str(req["body"].get("model"))
    user = req["body"]["messages"][1]["content"]
    blocks = user.split("\n\n")
    sources = " ".join(b for b in blocks if b.startswith("["))
    answer = next((b.split(": ", 1)[1] for b in blocks if b.split(":")[0] in ANSWER_LABELS), "")
    answer = re.sub(r"\[[^\]]*\]", "", answer)
    ref = next((b.split(":", 1)[1] for b in blocks if b.split(":")[0] in REFERENCE_LABELS), None)
    src, ans = set(_words(sources, careful)), _words(answer, careful)
    supported = all(w in src for w in ans if w.isdigit())
    if careful and ans:
        supported = supported and sum(w in src for w in ans) >= 0.7 * len(ans)
    correct = None
    if ref is not None:
        correct = all(w in ans for w in _words(ref, careful))
    reason = "todo sale de las fuentes" if supported else "la respuesta dice algo que no está en las fuentes"
    return verdict(supported, correct, reason)


ANSWER_LABELS = ("Answer", "Respuesta", "Antwort", "Antwoord")
REFERENCE_LABELS = (
    "Reference",
    "Referencia",
    "Referenz",
    "Referentie",
    "The answer must say (in meaning)",
    "La respuesta debe decir (en el sentido)",
    "Die Antwort muss (im Sinn) sagen",
    "Het antwoord moet (in betekenis) zeggen",
)


def main() -> None:
    """``python -m tests.judgekit PORT [DELAY_MS [fixed]]``: serve :func:`rule_judge` (or one
    fixed verdict) until Ctrl-C."""
    import sys
    import time

    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    delay = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0

    fixed = len(sys.argv) > 3 and sys.argv[3] == "fixed"  # benchmarks: the client's cost, not the rule's
    constant = verdict(True, True, "bien").content

    def script(req: dict) -> Reply:
        if fixed:
            return Reply(constant, delay=delay)
        r = rule_judge(req)
        r.delay = delay
        return r

    m = FakeModel(script, port=port)
    m.keep = False
    with m:
        print(f"stand-in judge on {m.base}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
