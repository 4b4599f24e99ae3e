"""A real HTTP server on 127.0.0.1 playing an OpenAI-compatible chat model, for
the judge's tests and benchmark.

``FakeModel(script)`` runs an asyncio server in a thread; ``script(request)``
gets the parsed request (``body``: the JSON, ``headers``: lower-cased names,
``n``: the call number) and returns a :class:`Reply`. The server keeps
connections alive like a real one, so the client's pool is exercised.
"""

from __future__ import annotations

import asyncio
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
    def __init__(self, script: Callable[[dict], Reply]):
        self.script = script
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

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
        server = self._loop.run_until_complete(asyncio.start_server(self._conn, "127.0.0.1", 0, backlog=512))
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
                    self.requests.append(req)
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
