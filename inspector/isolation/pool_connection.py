"""The pool's wire: length-prefixed JSON frames over an AF_UNIX socket, and dialling a daemon.

The design is in `inspector.isolation.pool`."""

from __future__ import annotations

import errno
import json
import os
import select
import socket
import struct
import threading
import time
from typing import Any

from .pool_keys import MAX_FRAME, socket_address, peer_uid


# ---- frames --------------------------------------------------------------------------------------

class Connection:
    """Length-prefixed JSON frames (8-byte big-endian length, then the JSON) on a stream socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.frames: list[dict[str, Any]] = []
        self.eof = False
        self._send_lock = threading.Lock()

    def send(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj, default=str).encode()
        with self._send_lock:
            self.sock.sendall(struct.pack(">Q", len(data)) + data)

    def _split(self) -> None:
        while len(self.buf) >= 8:
            n = struct.unpack(">Q", bytes(self.buf[:8]))[0]
            if n > MAX_FRAME:
                raise OSError(errno.EPROTO, "frame too large")
            if len(self.buf) < 8 + n:
                break
            self.frames.append(json.loads(bytes(self.buf[8:8 + n])))
            del self.buf[:8 + n]

    def poll(self, timeout: float) -> list[dict[str, Any]] | None:
        """The frames there are, waiting up to `timeout` seconds for one ([] when none came);
        None once the peer has closed and every frame was read."""
        end = time.monotonic() + timeout
        while not self.frames and not self.eof:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                break
            try:
                data = self.sock.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                self.eof = True
                break
            self.buf += data
            self._split()
        if not self.frames and self.eof:
            return None
        out, self.frames = self.frames, []
        return out

    def read_one(self, timeout: float) -> dict[str, Any] | None:
        """The next frame, or None (the peer closed, or nothing came within `timeout`)."""
        frames = self.poll(timeout)
        if not frames:
            return None
        self.frames = frames[1:] + self.frames
        return frames[0]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def dial(sock_path: str, timeout: float = 5.0) -> Connection:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(timeout)
        with socket_address(sock_path) as addr:
            sock.connect(addr)
        sock.settimeout(None)
        if peer_uid(sock) != os.getuid():
            raise OSError(errno.EPERM, f"{sock_path} is served by another user")
    except BaseException:
        sock.close()
        raise
    return Connection(sock)
