"""HTTP/1.1 response heads and body framing, fed in random pieces."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats.http1 import BodyReader, ResponseHead, parse_head
from support.pieces import cut


def head(**headers: str) -> ResponseHead:
    return ResponseHead(200, "OK", {k.replace("_", "-"): v for k, v in headers.items()})


def test_parse_head() -> None:
    found = parse_head(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                       b"Set-Cookie: a=1\r\nset-cookie: b=2\r\nConnection: close\r\n")
    assert (found.status, found.reason) == (200, "OK")
    assert found.content_type == "text/event-stream"
    assert found.headers["set-cookie"] == "a=1, b=2"
    assert not found.keep_alive
    assert parse_head(b"HTTP/1.0 404\r\n").reason == "" and parse_head(b"HTTP/1.1 204 X").keep_alive


@pytest.mark.parametrize("data", [b"SSH-2.0-OpenSSH\r\n", b"HTTP/1.1 abc OK\r\n",
                                  b"HTTP/2 200\r\n", b"HTTP/1.1 200 OK\r\nno colon here\r\n",
                                  b"HTTP/1.1 200 OK\r\n Folded: x\r\n"])
def test_bad_heads(data: bytes) -> None:
    with pytest.raises(FormatError):
        parse_head(data)


def chunked(pieces: list[bytes], extension: bool) -> bytes:
    ext = b";name=value" if extension else b""
    body = b"".join(b"%x%s\r\n%s\r\n" % (len(p), ext, p) for p in pieces if p)
    return body + b"0\r\nTrailer: x\r\n\r\n"



@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.binary(max_size=40), max_size=8), extension=st.booleans(),
       points=st.lists(st.integers(min_value=0, max_value=1000), max_size=15))
def test_chunked_bodies_in_any_pieces(pieces: list[bytes], extension: bool,
                                      points: list[int]) -> None:
    reader = BodyReader(head(transfer_encoding="chunked"))
    out = b"".join(part for piece in cut(chunked(pieces, extension), points)
                   for part in reader.feed(piece))
    assert out == b"".join(pieces)
    assert reader.done


def test_content_length_and_close_delimited_bodies() -> None:
    reader = BodyReader(head(content_length="5"))
    assert reader.feed(b"he") == [b"he"] and not reader.done
    assert reader.feed(b"llo") == [b"llo"] and reader.done
    with pytest.raises(FormatError):
        BodyReader(head(content_length="3")).feed(b"four")
    assert BodyReader(head(content_length="0")).done
    reader = BodyReader(head())
    assert reader.until_close and reader.feed(b"anything") == [b"anything"]
    assert BodyReader(ResponseHead(204, "", {})).done


@pytest.mark.parametrize("data", [b"zz\r\n", b"5\r\nhelloXX\r\n", b"0\r\n\r\nextra", b"1" * 5000])
def test_bad_chunked_bodies(data: bytes) -> None:
    with pytest.raises(FormatError):
        BodyReader(head(transfer_encoding="chunked")).feed(data)
