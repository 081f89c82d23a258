"""Turning a file's bytes into the text the frontends read, and back (the one place).

* A file that starts with a UTF-32 or UTF-16 byte-order mark is decoded in that encoding.
* Otherwise a NUL byte anywhere makes the file binary: it is not analysed.
* A Python file is decoded as Python decodes it (PEP 263 coding line, UTF-8 BOM:
  :func:`tokenize.detect_encoding`); everything else is UTF-8.

Undecodable bytes are kept as lone surrogates (``surrogateescape``) and there is no newline
translation, so fix offsets are offsets into this text and :func:`encode` gives the original
bytes back.
"""

from __future__ import annotations

import codecs
import io
import os
import stat

from .records import record

# UTF-32-LE's mark begins with UTF-16-LE's: the longer marks are tried first
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@record(frozen=True)
class Source:
    text: str
    encoding: str = "utf-8"  # a Python codec name
    bom: bytes = b""  # a UTF-16/UTF-32 byte-order mark, written back before the text


def _python_encoding(data: bytes) -> str:
    # no coding declaration in the first two lines: UTF-8, as tokenize (~2 ms to import) says
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in (data if second < 0 else data[:second]):
        return "utf-8"
    import tokenize

    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown or contradictory coding line: read it as UTF-8
        return "utf-8"
    return "utf-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def decode(data: bytes, language: str | None = None) -> Source | None:
    """The file's text, or None for a binary file."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Source(data[len(bom) :].decode(encoding), encoding, bom)
            except UnicodeDecodeError:
                return None
    if b"\0" in data:
        return None
    encoding = _python_encoding(data) if language == "python" else "utf-8"
    try:
        text = data.decode(encoding, errors="surrogateescape")
    except (UnicodeDecodeError, LookupError):  # a codec without surrogateescape support
        encoding, text = "utf-8", data.decode("utf-8", errors="surrogateescape")
    return Source(text, encoding)


def encode(text: str, source: Source | None = None) -> bytes:
    """``text`` as bytes in the encoding ``source`` was read in (default UTF-8)."""
    if source is None:
        return text.encode("utf-8", errors="surrogateescape")
    if source.bom:
        return source.bom + text.encode(source.encoding)
    return text.encode(source.encoding, errors="surrogateescape")


def read_regular(path: str, display: str) -> tuple[bytes | None, str | None]:
    """The bytes of the regular file ``path``, or None and a one-line error naming it as
    ``display`` (a FIFO or device is refused: reading it could block the run)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None, f"{display}: not a regular file"
        with open(path, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        return None, f"{display}: {exc.strerror or exc}"
