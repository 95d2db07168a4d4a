#!/usr/bin/env python3
"""tests/server/ws-raw.py - WebSocket frames a well-behaved client never
sends, from a raw socket (standard library only), for websocket.sh.

Usage: ws-raw.py HOST PORT PATH CASE; prints one line: the HTTP status,
then what came back ("close CODE", "pong PAYLOAD", "eof").
CASE: unmasked (a text frame without a mask: 1002), ping (answered with
a pong of the same payload), rsv (reserved bits: 1002), bigcontrol (a
ping of 126 bytes: 1002), cont (a continuation first: 1002), badutf8
(text that is not UTF-8: 1007).
"""
import base64
import os
import socket
import struct
import sys

host, port, path, case = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.create_connection((host, port), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)).encode())
head = b""
while b"\r\n\r\n" not in head:
    chunk = s.recv(1)
    if not chunk:
        break
    head += chunk
status = head.split(b" ", 2)[1].decode() if head else "none"


def frame(op, payload, mask=True, first=0x80):
    h = bytes([first | op])
    n = len(payload)
    h += bytes([(0x80 if mask else 0) | n]) if n < 126 else bytes([(0x80 if mask else 0) | 126]) + struct.pack(">H", n)
    if not mask:
        return h + payload
    m = os.urandom(4)
    return h + m + bytes(b ^ m[i % 4] for i, b in enumerate(payload))


frames = {
    "unmasked": frame(1, b'{"type":"init"}', mask=False),
    "ping": frame(9, b"hello"),
    "rsv": frame(1, b"x", first=0xc0),
    "bigcontrol": frame(9, b"x" * 126),
    "cont": frame(0, b"x"),
    "badutf8": frame(1, b"\xff\xfe"),
}
s.sendall(frames[case])


def read_exact(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


try:
    while True:
        h = read_exact(2)
        op, n = h[0] & 0x0f, h[1] & 0x7f
        if n == 126:
            n = struct.unpack(">H", read_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", read_exact(8))[0]
        p = read_exact(n)
        if op == 8:
            print(status, "close", struct.unpack(">H", p[:2])[0] if len(p) >= 2 else "")
            break
        if op == 10:
            print(status, "pong", p.decode())
            break
except (EOFError, OSError):
    print(status, "eof")
