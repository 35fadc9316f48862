"""The resident's wire format: a message is a list of byte strings, each sent as a 4-byte
big-endian length and the bytes. The client sends one message and shuts its side; the
resident sends TAKEN the moment it starts the call (never after the call's start-by time),
then answers one message and closes; a call it declines before starting it is answered at
once, without TAKEN. No json, no struct: the client imports neither."""

# 2: a call carries the input files its caller read; 3: its caller's umask and its start-by time
MAGIC = b"stet-resident 3"
MOST = 256 << 20  # bytes of one message, at most (a propose's input is bounded far below)
TAKEN = b"+"  # never the first byte of a message (a length's high byte)
# Seconds past a call's start-by time the client still waits for TAKEN. The resident starts a
# call only if it has the call's turn by that time and its TAKEN is with the client within
# half of this: then the client, looking last after all of it, has seen the mark. Else one of
# them declines, never both do the call.
GRACE = 2.0


def pack(parts: list[bytes]) -> bytes:
    out = bytearray()
    for part in parts:
        out += len(part).to_bytes(4, "big")
        out += part
    return bytes(out)


def unpack(data: bytes) -> list[bytes] | None:
    """The parts of one whole message; None when it is cut short or not one."""
    parts = split(data)
    if not parts or parts[0] != MAGIC:
        return None
    return parts


def split(data: bytes) -> list[bytes] | None:
    """The parts `pack` made of a list; None when `data` is cut short."""
    parts: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            return None
        size = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if at + size > len(data):
            return None
        parts.append(data[at : at + size])
        at += size
    return parts


def peer_uid(sock: object) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux SO_PEERCRED), or None
    where the system cannot tell."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # type: ignore[attr-defined]
    import sys

    return int.from_bytes(raw[4:8], sys.byteorder)  # struct ucred: pid, uid, gid
