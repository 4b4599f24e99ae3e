"""The small HTTP client: content-length, chunked, connection close, stale keep-alive."""

import asyncio

from ragtriage.core.systems.wire import HttpPool


async def serve(handler):
    srv = await asyncio.start_server(handler, "127.0.0.1", 0)
    return srv, f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/x?y=1"


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    n = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
    return head, await reader.readexactly(n)


async def test_chunked_and_keepalive_reuse():
    seen = []

    async def handler(reader, writer):
        try:
            while True:
                head, body = await read_request(reader)
                seen.append((head.split(b"\r\n")[0], body))
                writer.write(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"4\r\n{\"a\"\r\n3;x=1\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n"
                )
                await writer.drain()
        except asyncio.IncompleteReadError:
            writer.close()

    srv, url = await serve(handler)
    pool = HttpPool(url, {"Authorization": "Bearer k"})
    assert await pool.post(url, b"{}") == (200, b'{"a": 1}')
    assert await pool.post(url, b"[1]") == (200, b'{"a": 1}')
    assert seen[0][0] == b"POST /x?y=1 HTTP/1.1" and seen[1][1] == b"[1]"
    assert len(pool._idle) == 1  # one connection, reused
    await pool.aclose()
    srv.close()


async def test_connection_close_and_stale_connection_is_replaced():
    conns = []

    async def handler(reader, writer):
        conns.append(1)
        await read_request(reader)
        # answers once, then closes (a server dropping idle keep-alive connections)
        writer.write(b"HTTP/1.1 500 Internal\r\nContent-Length: 4\r\n\r\noops")
        await writer.drain()
        writer.close()

    srv, url = await serve(handler)
    pool = HttpPool(url)
    assert await pool.post(url, b"{}") == (500, b"oops")
    await asyncio.sleep(0.05)
    assert await pool.post(url, b"{}") == (500, b"oops")  # stale idle connection: retried on a new one
    assert len(conns) == 2
    await pool.aclose()
    srv.close()


async def test_http10_body_until_close():
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\n\r\nhello")
        await writer.drain()
        writer.close()

    srv, url = await serve(handler)
    pool = HttpPool(url)
    assert await pool.post(url, b"{}") == (200, b"hello")
    assert pool._idle == []
    srv.close()
