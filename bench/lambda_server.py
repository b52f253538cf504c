#!/usr/bin/env python3
"""A Lambda-compatible Invoke endpoint for the lambda benchmark: asyncio,
HTTP/1.1 keep-alive, every call answered after --delay-ms (default 10)
with a small JSON object.  Signatures are not checked here (the tests'
server, tests/lambda/server.py, does): the benchmark measures the
clients.  Standard library only.

Usage: lambda_server.py --port-file F [--delay-ms 10]
"""
import argparse
import asyncio
import os
import sys

ANSWER = b'{"ok": true, "n": 1}'
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"X-Amz-Executed-Version: 1\r\nContent-Length: %d\r\n\r\n" % len(ANSWER))


async def serve(reader, writer, delay):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            await asyncio.sleep(delay)
            writer.write(HEAD + ANSWER)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--delay-ms", type=float, default=10.0)
    a = p.parse_args()
    delay = a.delay_ms / 1000.0
    srv = await asyncio.start_server(lambda r, w: serve(r, w, delay),
                                     "127.0.0.1", 0, backlog=4096)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.sockets[0].getsockname()[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    async with srv:
        await srv.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
