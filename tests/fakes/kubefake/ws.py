"""kubefake/ws.py - the server side of RFC 6455, as much as pods/exec needs.

The handshake answers 101 with Sec-WebSocket-Accept and the subprotocol
the server picked; frames from the client must be masked (a protocol error
closes with 1002 otherwise); fragmented messages are joined; pings are
answered; a close is echoed.  Messages to the client are single unmasked
binary frames.
"""
import base64
import hashlib
import socket
import struct
import threading

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 64 << 20


class Closed(Exception):
    def __init__(self, code=1006, reason=""):
        super().__init__("closed %d %s" % (code, reason))
        self.code, self.reason = code, reason


def accept_key(key):
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


class WebSocket:
    def __init__(self, sock, rfile):
        self.sock = sock
        self.rfile = rfile
        self.wlock = threading.Lock()
        self.closed = False
        self.close_sent = False

    # -- reading --

    def _read(self, n):
        b = self.rfile.read(n)
        if b is None or len(b) < n:
            raise Closed(1006, "connection lost")
        return b

    def _frame(self):
        h = self._read(2)
        fin, opcode = h[0] & 0x80, h[0] & 0x0F
        if h[0] & 0x70:
            self.close(1002, "reserved bits set")
            raise Closed(1002, "reserved bits")
        masked, n = h[1] & 0x80, h[1] & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        if not masked:
            self.close(1002, "client frames must be masked")
            raise Closed(1002, "unmasked frame")
        if n > MAX_MESSAGE:
            self.close(1009, "message too big")
            raise Closed(1009, "too big")
        mask = self._read(4)
        data = bytearray(self._read(n))
        for i in range(n):
            data[i] ^= mask[i & 3]
        return fin, opcode, bytes(data)

    def receive(self):
        """The next data message as (opcode, bytes); Closed at the end."""
        parts, first = [], None
        while True:
            fin, op, data = self._frame()
            if op == 0x8:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else 1005
                if not self.close_sent:
                    self.close(code if code != 1005 else 1000)
                raise Closed(code, data[2:].decode("utf-8", "replace"))
            if op == 0x9:
                self._send(0xA, data)
                continue
            if op == 0xA:
                continue
            if op in (0x1, 0x2):
                if first is not None:
                    self.close(1002, "new message inside a fragmented one")
                    raise Closed(1002, "bad fragment")
                first = op
            elif op != 0x0 or first is None:
                self.close(1002, "unexpected opcode %d" % op)
                raise Closed(1002, "bad opcode")
            parts.append(data)
            if fin:
                return first, b"".join(parts)

    # -- writing --

    def _send(self, opcode, data):
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
        with self.wlock:
            if self.close_sent:
                raise Closed(1006, "already closed")
            try:
                self.sock.sendall(head + data)
            except OSError:
                raise Closed(1006, "connection lost")
            if opcode == 0x8:
                self.close_sent = True

    def send_binary(self, data):
        self._send(0x2, data)

    def send_text(self, data):
        self._send(0x1, data.encode() if isinstance(data, str) else data)

    def close(self, code=1000, reason=""):
        try:
            self._send(0x8, struct.pack("!H", code) + reason.encode()[:120])
        except Closed:
            pass

    def drop(self):
        """Cut the TCP connection without a close frame (a fault)."""
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
