"""The SSE decoder against the WHATWG event-stream examples, cut at random places."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.formats.sse import SseDecoder, SseEvent
from support.pieces import cut

# The examples of html.spec.whatwg.org §9.2 "Server-sent events" (the event stream format).
STOCK = b"data: YHOO\ndata: +2\ndata: 10\n\n"
IDS = (b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
       b"data:  third event\n")
EMPTY = b"data\n\ndata\ndata\n\ndata:"
SPACE = b"data:test\n\ndata: test\n\n"
TYPES = (b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n"
         b"event: add\ndata: 113411\n\n")

EXAMPLES: list[tuple[bytes, list[SseEvent]]] = [
    (STOCK, [SseEvent("YHOO\n+2\n10")]),
    # The third event is never closed by a blank line, so it is not dispatched.
    (IDS, [SseEvent("first event", id="1"), SseEvent("second event", id="")]),
    (IDS + b"\n", [SseEvent("first event", id="1"), SseEvent("second event", id=""),
                   SseEvent(" third event", id="")]),
    # "data" alone is an empty data line; the unterminated "data:" at the end is discarded.
    (EMPTY, [SseEvent(""), SseEvent("\n")]),
    (SPACE, [SseEvent("test"), SseEvent("test")]),
    (TYPES, [SseEvent("73857293", "add"), SseEvent("2153", "remove"),
             SseEvent("113411", "add")]),
]


def decode(pieces: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    decoder.close()
    return events



def with_line_ending(data: bytes, ending: bytes) -> bytes:
    return data.replace(b"\n", ending)


@pytest.mark.parametrize(("stream", "expected"), EXAMPLES)
def test_whatwg_examples_in_one_piece(stream: bytes, expected: list[SseEvent]) -> None:
    assert decode([stream]) == expected


@pytest.mark.parametrize(("stream", "expected"), EXAMPLES)
def test_whatwg_examples_byte_by_byte(stream: bytes, expected: list[SseEvent]) -> None:
    assert decode([stream[i:i + 1] for i in range(len(stream))]) == expected


@settings(max_examples=300, deadline=None)
@given(example=st.sampled_from(EXAMPLES),
       ending=st.sampled_from([b"\n", b"\r\n", b"\r"]),
       bom=st.booleans(),
       points=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_random_chunk_boundaries_and_line_endings(
    example: tuple[bytes, list[SseEvent]], ending: bytes, bom: bool, points: list[int]
) -> None:
    stream, expected = example
    data = (b"\xef\xbb\xbf" if bom else b"") + with_line_ending(stream, ending)
    assert decode(cut(data, points)) == expected


def test_crlf_split_between_pieces_is_one_line_end() -> None:
    # "\r" ends one piece and "\n" starts the next: one line end, not an empty line.
    assert decode([b"data: a\r", b"\ndata: b\r\n\r\n"]) == [SseEvent("a\nb")]
    # A lone CR followed by a CR is an empty line.
    assert decode([b"data: a\r", b"\r"]) == [SseEvent("a")]


def test_only_one_leading_bom_is_dropped() -> None:
    assert decode([b"\xef\xbb", b"\xbfdata: x\n\n"]) == [SseEvent("x")]
    # A second BOM is part of the field name, so the line is an unknown field.
    assert decode([b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n"]) == []


def test_id_persists_retry_and_nul() -> None:
    decoder = SseDecoder()
    events = decoder.feed(b"id: 7\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\n"
                          b"retry: 2500\nretry: soon\n: comment\nfoo: bar\ndata: d\n\n")
    assert [e.id for e in events] == ["7", "7", "7", "7"]  # the id with U+0000 is ignored
    assert decoder.retry_ms == 2500  # "soon" is not digits and is ignored
    assert events[-1] == SseEvent("d", id="7")


def test_utf8_split_inside_a_character_and_invalid_bytes() -> None:
    text = "data: héllo → 世界\n\n".encode()
    assert decode([text[:9], text[9:10], text[10:]]) == [SseEvent("héllo → 世界")]
    assert decode([b"data: \xff\xfe ok\n\n"]) == [SseEvent("\ufffd\ufffd ok")]


def test_openai_stream_shape() -> None:
    body = b'data: {"choices":[{"text":" a"}]}\n\ndata: {"choices":[]}\n\ndata: [DONE]\n\n'
    assert [e.data for e in decode([body])] == ['{"choices":[{"text":" a"}]}',
                                                 '{"choices":[]}', "[DONE]"]


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n",
                                                     blacklist_categories=("Cs",)),
                               max_size=30), min_size=1, max_size=6),
       spaces=st.lists(st.booleans(), min_size=6, max_size=6),
       with_id=st.booleans())
def test_one_event_per_piece_equals_the_general_path(values: list[str], spaces: list[bool],
                                                    with_id: bool) -> None:
    # A piece holding exactly one one-line event takes the decoder's fast path; the same
    # bytes fed one at a time take the general path. Both give the same events.
    pieces = [b"id: 7\n\n"] if with_id else []
    pieces += [b"data:" + (b" " if space else b"") + value.encode() + b"\n\n"
               for value, space in zip(values, spaces, strict=False)]
    whole = b"".join(pieces)
    assert decode(pieces) == decode([whole[i:i + 1] for i in range(len(whole))])
