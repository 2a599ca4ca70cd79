"""What a file's first bytes say about its text: a UTF-8 byte order mark, UTF-16 or UTF-32
text, a compressed file. And small side files (a config, a mapping, confidences) read as
UTF-8 text the way JSON readers read it: a leading BOM dropped, any other encoding named in
one line instead of a traceback from the decoder."""

from __future__ import annotations

import errno
import os
from pathlib import Path

UTF8_BOM = b"\xef\xbb\xbf"
_TO_UTF8 = "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"
#: How files that are not UTF-8 text begin: (magic bytes, what the file is, what to do). None of
#: these bytes can open UTF-8 JSON text, so no file of records with a bad first line is refused.
NOT_UTF8_TEXT = (
    (b"\xff\xfe\x00\x00", "UTF-32 text", "convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)"),
    (b"\x00\x00\xfe\xff", "UTF-32 text", "convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)"),
    (b"\xff\xfe", "UTF-16 text", _TO_UTF8),
    (b"\xfe\xff", "UTF-16 text", _TO_UTF8),
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (unzstd)"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz)"),
    (b"PK\x03\x04", "a zip archive", "extract it first"),
)


#: Why lines found in a file cannot be read from it any more.
SHRUNK = "the file is shorter than when it was scanned"


def read_exactly(path: str | Path, start: int, size: int) -> bytes:
    """``size`` bytes of a file from byte ``start``: lines found in it earlier. An OSError
    naming the file when it holds fewer now (it was cut short since)."""
    with open(path, "rb") as f:
        data = os.pread(f.fileno(), size, start)
    if len(data) != size:
        raise OSError(errno.EIO, SHRUNK, str(path))
    return data


def not_utf8_text(head: bytes) -> tuple[str, str] | None:
    """(what the file is, what to do) when a file beginning with ``head`` cannot be UTF-8
    text: a UTF-16 or UTF-32 byte order mark or NUL bytes, or a compressed file's magic
    bytes; None otherwise.

    >>> not_utf8_text("{}".encode("utf-16"))[0], not_utf8_text(UTF8_BOM + b"{}")
    ('UTF-16 text', None)
    """
    for magic, what, fix in NOT_UTF8_TEXT:
        if head.startswith(magic):
            return what, fix
    if b"\x00" in head[:4]:
        return "UTF-16 or UTF-32 text (it holds NUL bytes)", _TO_UTF8
    return None


def decode(data: bytes) -> str:
    """A side file's bytes as text, a leading BOM dropped (Windows editors write one, and
    JSON text may begin with it); a ValueError saying what the bytes are when they are not
    UTF-8 text.

    >>> decode(UTF8_BOM + b'{"a": 1}')
    '{"a": 1}'
    >>> decode(b"caf\\xe9")
    Traceback (most recent call last):
    ValueError: not UTF-8 text: byte 0xe9 at byte 3
    """
    problem = not_utf8_text(data[:4096])
    if problem is not None:
        raise ValueError(f"{problem[0]}, not UTF-8: {problem[1]}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at byte {exc.start}"
                         ) from None
