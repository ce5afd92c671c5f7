"""A synthetic OpenAI-compatible streaming server that sends tokens on an exact schedule.

It exists to check a benchmark client against the truth: every response is generated on a
schedule (time to first token, inter-token gap, tokens per chunk) and the server records
when each request's head reached it (the kernel's receive time of the segment) and when each
chunk left (``time.perf_counter()`` right after the write, the same system-wide monotonic
clock as the client's). Clients are compared with those recorded times, not with the
schedule, so a late server does not make a client wrong. As the reference clock it asks for
a raised scheduling priority (root may have it), so that on a busy machine it is woken
promptly when a request arrives.

It speaks plain HTTP/1.1 with keep-alive on raw asyncio streams, chunked transfer encoding
and ``TCP_NODELAY``. Endpoints:

* ``POST /v1/completions`` and ``POST /v1/chat/completions`` (streaming, or one JSON answer
  when ``"stream"`` is false); honours ``max_tokens``, ``stream_options.include_usage``,
  ``stream_options.continuous_usage_stats`` and ``return_token_ids``.
* ``POST /tokenize`` and ``POST /detokenize`` in vLLM's shape, over a toy word tokenizer: one
  token per whitespace-separated word, plus a BOS token with ``add_special_tokens``.
* ``GET /v1/models``, ``GET /health``; ``GET /_records`` (what was received and sent) and
  ``POST /_reset`` (forget it).

Behaviour comes from the server's defaults (:class:`Behaviour`, set with ``--config JSON``)
and, per request, from a directive in the prompt (or the last chat message):
``[[sse {"status": 500}]]`` overrides any :class:`Behaviour` field for that request.

Run it alone with ``python tests/support/sse_server.py [--port N] [--cpu K] [--config JSON]``;
it prints ``listening on PORT`` once ready. Tests use :func:`start_sse_server`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsIndex

import httpx

DIRECTIVE = "[[sse "

BOS_ID = 1
FIRST_WORD_ID = 100


@dataclass
class Behaviour:
    """How the server answers one request; every field can be overridden per request."""

    ttft_s: float = 0.05
    """Delay from receiving the request to the first token."""
    ttft_jitter_s: float = 0.0
    """A uniform random extra delay in [0, this) added to ``ttft_s`` (seeded per request)."""
    itl_s: float = 0.01
    """Gap between consecutive tokens."""
    itl_jitter_s: float = 0.0
    """A uniform random extra gap in [0, this) added to each token gap."""
    chunks: list[int] = field(default_factory=lambda: [1])
    """Tokens per chunk, cycled: ``[1, 3]`` sends 1, 3, 1, 3, ... tokens per chunk."""
    tokens: int | None = None
    """Output tokens; ``None`` means ``max_tokens`` (as with ``ignore_eos``)."""
    status: int = 200
    """Answer with this HTTP status (and an error body) instead of streaming."""
    header_delay_s: float = 0.0
    """Wait this long before sending the response headers (slow headers)."""
    disconnect_after: int | None = None
    """Close the connection after sending this many tokens."""
    error_after: int | None = None
    """Send an error event (vLLM's shape) after this many tokens, then end the stream."""
    malformed_after: int | None = None
    """Send an event whose data is not JSON after this many tokens."""
    stall_after: int | None = None
    """Pause ``stall_s`` seconds after this many tokens."""
    stall_s: float = 0.0
    usage: bool = True
    """Honour ``stream_options.include_usage`` (a final usage chunk)."""
    continuous_usage: bool = True
    """Honour ``stream_options.continuous_usage_stats`` (usage in every chunk)."""
    token_ids: bool = True
    """Honour ``return_token_ids`` (token ids in every chunk)."""
    line_ending: str = "\n"
    """Line ending of the event stream: ``\\n``, ``\\r\\n`` or ``\\r``."""
    comments: bool = False
    """Send a ``: ping`` comment before every chunk."""
    seed: int = 0
    dialect: str = "vllm"
    """Whose stream to speak: ``vllm``, ``sglang``, ``tgi``, ``llamacpp`` or ``openai`` (see
    :data:`support.sse_dialects.DIALECTS` for what each sends, and where that
    was read)."""
    done: bool = True
    """End the stream with ``data: [DONE]`` (some servers do not)."""
    final_text_usage: bool = False
    """Put the final usage on the last text-carrying event instead of a usage-only event."""
    reasoning_tokens: int = 0
    """Send the first N tokens as reasoning deltas (chat only)."""
    reasoning_field: str = "reasoning_content"
    """The delta field reasoning goes in: ``reasoning_content`` (vLLM < 0.10, SGLang,
    DeepSeek) or ``reasoning`` (vLLM's newer name)."""
    tool_tokens: int = 0
    """Send the N tokens after the reasoning as tool-call argument deltas (chat only)."""
    empty_events: bool = False
    """Send an event with an empty delta before every token-bearing event."""
    ttft_per_active_s: float = 0.0
    """A known load curve: each request in flight when this one arrives (itself included)
    adds this much to its time to first token, so TTFT = ``ttft_s`` + this x in flight."""


@dataclass
class Record:
    """What happened to one request, in the server's clock (``time.perf_counter()``)."""

    request_id: str
    path: str
    received: float
    """When the bytes that completed the request's head reached the server's socket."""
    max_tokens: int
    prompt_tokens: int
    status: int = 200
    headers_sent: float | None = None
    sends: list[tuple[float, int]] = field(default_factory=list)
    """``(time, tokens)`` for each chunk that carried tokens, right after it was written."""
    buffered_writes: int = 0
    """Writes that did not reach the kernel at once (the client was not reading)."""
    outcome: str = "pending"
    """``ok``, ``status``, ``disconnect``, ``error_event``, ``malformed`` or ``client_gone``."""


class _Tokenizer:
    """One token per whitespace-separated word; ids assigned on first sight."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: dict[int, str] = {}

    def encode(self, text: str, special: bool) -> list[int]:
        out = [BOS_ID] if special else []
        for word in text.split():
            token = self.ids.get(word)
            if token is None:
                token = FIRST_WORD_ID + len(self.ids)
                self.ids[word] = token
                self.words[token] = word
            out.append(token)
        return out

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.words.get(i, "<unk>") for i in ids if i != BOS_ID)


def _prompt_text(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return prompt
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        content = messages[-1].get("content", "")
        return content if isinstance(content, str) else json.dumps(content)
    return ""


def _overrides(text: str) -> dict[str, Any]:
    start = text.find(DIRECTIVE)
    if start < 0:
        return {}
    end = text.find("]]", start)
    found: dict[str, Any] = json.loads(text[start + len(DIRECTIVE): end])
    return found


class SyntheticServer:
    """The asyncio server; :meth:`serve` runs it until cancelled."""

    def __init__(self, defaults: Behaviour, model: str = "synthetic") -> None:
        self.defaults = defaults
        self.model = model
        self.records: list[Record] = []
        self.tokenizer = _Tokenizer()
        self._count = 0
        self._active = 0
        self._rng = random.Random(defaults.seed)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                # When the bytes that completed the head came off the socket.
                arrived = reader.fed_at if isinstance(reader, _StampedReader) else \
                    time.perf_counter()
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                keep = await self._route(method, path.split("?")[0], headers, body, writer,
                                         arrived)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _route(self, method: str, path: str, headers: dict[str, str], body: bytes,
                     writer: asyncio.StreamWriter, arrived: float) -> bool:
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            self._active += 1
            try:
                return await self._generate(path, headers, json.loads(body or b"{}"), writer,
                                            arrived)
            finally:
                self._active -= 1
        if method == "GET" and path == "/_records":
            await self._json(writer, 200, [dataclasses.asdict(r) for r in self.records])
        elif method == "POST" and path == "/_reset":
            self.records.clear()
            await self._json(writer, 200, {"ok": True})
        elif method == "GET" and path == "/v1/models":
            owner = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llamacpp",
                     "openai": "system"}.get(self.defaults.dialect, self.model)
            await self._json(writer, 200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "owned_by": owner,
                 "max_model_len": 1 << 20}]})
        elif method == "GET" and path == "/health":
            await self._json(writer, 200, {})
        elif method == "POST" and path == "/tokenize" and self.defaults.dialect == "vllm":
            request = json.loads(body)
            ids = self.tokenizer.encode(request.get("prompt", ""),
                                        request.get("add_special_tokens", True))
            await self._json(writer, 200, {"count": len(ids), "max_model_len": 1 << 20,
                                           "tokens": ids, "token_strs": None})
        elif method == "POST" and path == "/detokenize":
            tokens = json.loads(body).get("tokens", [])
            await self._json(writer, 200, {"prompt": self.tokenizer.decode(tokens)})
        else:
            await self._json(writer, 404, {"error": {"message": f"no route {method} {path}",
                                                     "code": 404}})
        return True

    async def _json(self, writer: asyncio.StreamWriter, status: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload
        )
        await writer.drain()

    async def _generate(self, path: str, headers: dict[str, str], body: dict[str, Any],
                        writer: asyncio.StreamWriter, received: float) -> bool:
        # The schedule runs from when the request's head was read, on the loop's clock.
        loop = asyncio.get_running_loop()
        start = loop.time() - (time.perf_counter() - received)
        self._count += 1
        text = _prompt_text(body)
        overrides = _overrides(text)
        behaviour = dataclasses.replace(self.defaults, **overrides) if overrides else \
            self.defaults
        rng = self._rng if behaviour.seed == self.defaults.seed else random.Random(behaviour.seed)
        max_tokens = int(body.get("max_tokens") or 16)
        prompt_tokens = len(text.split()) + 1  # what /tokenize counts, BOS included
        record = Record(headers.get("x-request-id", f"anon-{self._count}"), path, received,
                        max_tokens, prompt_tokens)
        self.records.append(record)
        if behaviour.status != 200:
            record.status = behaviour.status
            record.outcome = "status"
            await self._json(writer, behaviour.status, {"error": {
                "message": f"synthetic failure {behaviour.status}", "type": "Synthetic",
                "code": behaviour.status}})
            return True
        if not body.get("stream"):
            await self._json(writer, 400, {"error": {"message": "only streaming is served",
                                                     "code": 400}})
            return True
        options = body.get("stream_options") or {}
        dialect = behaviour.dialect
        usage = behaviour.usage and (bool(options.get("include_usage")) or dialect == "llamacpp")
        continuous = (behaviour.continuous_usage and dialect in ("vllm", "sglang")
                      and bool(options.get("continuous_usage_stats")))
        ids = behaviour.token_ids and dialect == "vllm" and bool(body.get("return_token_ids"))
        chat = path.endswith("chat/completions")
        total = behaviour.tokens if behaviour.tokens is not None else max_tokens
        end = behaviour.line_ending
        null_usage = ',"usage":null' if dialect == "tgi" or (dialect == "openai" and usage) \
            else ""

        def event(data: str) -> bytes:
            piece = (": ping" + end if behaviour.comments else "") + "data: " + data + end + end
            raw = piece.encode()
            return b"%x\r\n%s\r\n" % (len(raw), raw)

        async def wait_until(target: float) -> None:
            delay = target - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)

        def send(data: bytes) -> float:
            writer.write(data)
            if writer.transport.get_write_buffer_size():
                record.buffered_writes += 1
            return time.perf_counter()

        def usage_json(done: int) -> str:
            return (f'{{"prompt_tokens":{prompt_tokens},"completion_tokens":{done},'
                    f'"total_tokens":{prompt_tokens + done}}}')

        await wait_until(start + behaviour.header_delay_s)
        send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n")
        record.headers_sent = time.perf_counter()
        ident = json.dumps(record.request_id)
        kind = "chat.completion.chunk" if chat else "text_completion"
        head = (f'{{"id":{ident},"object":"{kind}","created":0,'
                f'"model":{json.dumps(self.model)},"choices":[')

        def choice(delta: str, finish: str = "null", extra: str = "") -> str:
            if chat:
                return (f'{{"index":0,"delta":{{{delta}}},"logprobs":null,'
                        f'"finish_reason":{finish}{extra}}}')
            text = json.loads("{" + delta + "}").get("content") or "" if delta else ""
            return (f'{{"index":0,"text":{json.dumps(text)},"logprobs":null,'
                    f'"finish_reason":{finish}{extra}}}')

        if chat and dialect != "tgi":
            role = {"vllm": '"role":"assistant","content":""',
                    "sglang": '"role":"assistant","content":""',
                    "llamacpp": '"role":"assistant","content":null',
                    "openai": '"role":"assistant","content":"","refusal":null'}[dialect]
            tail = f',"usage":{usage_json(0)}' if continuous and dialect == "vllm" else null_usage
            send(event(head + choice(role) + "]" + tail + "}"))
        due = (start + behaviour.ttft_s + rng.random() * behaviour.ttft_jitter_s
               + behaviour.ttft_per_active_s * self._active)
        sent = 0
        number = 0
        finish_inline = dialect in ("vllm", "tgi") or behaviour.final_text_usage
        try:
            while sent < total:
                size = min(behaviour.chunks[number % len(behaviour.chunks)], total - sent)
                for step in range(size):
                    if step or number:
                        due += behaviour.itl_s + rng.random() * behaviour.itl_jitter_s
                    if behaviour.stall_after is not None and sent + step == behaviour.stall_after:
                        due += behaviour.stall_s
                await wait_until(due)
                if behaviour.empty_events:
                    send(event(head + choice('"content":""' if chat else "") + "]"
                               + null_usage + "}"))
                words = "".join(f" w{sent + i}" for i in range(size))
                last = sent + size == total
                finish = '"length"' if last and finish_inline else "null"
                id_list = ",".join(str(FIRST_WORD_ID + sent + i) for i in range(size))
                token_part = f',"token_ids":[{id_list}]' if ids else ""
                role_part = '"role":"assistant",' if dialect == "tgi" else ""
                if chat and sent < behaviour.reasoning_tokens:
                    delta = f'"{behaviour.reasoning_field}":{json.dumps(words)}'
                elif chat and sent < behaviour.reasoning_tokens + behaviour.tool_tokens:
                    opening = sent == behaviour.reasoning_tokens
                    name = ',"name":"lookup"' if opening else ""
                    delta = (f'{role_part}"tool_calls":[{{"index":0'
                             + (',"id":"call-0","type":"function"' if opening else "")
                             + f',"function":{{"arguments":{json.dumps(words)}{name}}}}}]')
                else:
                    delta = f'{role_part}"content":{json.dumps(words)}'
                tail = "]"
                if continuous or (last and behaviour.final_text_usage and usage):
                    tail += f',"usage":{usage_json(sent + size)}'
                else:
                    tail += null_usage
                record.sends.append((send(event(head + choice(delta, finish, token_part) + tail
                                                + "}")), size))
                sent += size
                number += 1
                if behaviour.disconnect_after is not None and sent >= behaviour.disconnect_after:
                    record.outcome = "disconnect"
                    writer.transport.abort()
                    return False
                if behaviour.error_after is not None and sent >= behaviour.error_after:
                    record.outcome = "error_event"
                    send(event('{"error":{"message":"synthetic engine error","type":'
                               '"InternalServerError","param":null,"code":500}}'))
                    break
                if behaviour.malformed_after is not None and sent >= behaviour.malformed_after:
                    record.outcome = "malformed"
                    send(event("this is not json"))
                    break
            final_done = record.outcome == "pending"
            if final_done and not finish_inline:
                if dialect == "llamacpp":
                    send(event(head + choice("", '"length"') + f'],"usage":{usage_json(sent)},'
                               '"timings":{"prompt_n":1,"predicted_n":' + str(sent) + "}}"))
                    usage = False
                elif dialect == "sglang":
                    send(event(head + choice("", '"length"', ',"matched_stop":null') + "]}"))
                else:
                    send(event(head + choice("", '"length"') + "]" + null_usage + "}"))
            if behaviour.final_text_usage:
                usage = False
            if usage:
                usage_id = '""' if dialect == "tgi" else ident
                send(event(f'{{"id":{usage_id},"choices":[],"usage":{usage_json(sent)}}}'))
            send((event("[DONE]") if behaviour.done else b"") + b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            record.outcome = "client_gone"
            return False
        if record.outcome == "pending":
            record.outcome = "ok"
        return True


class _StampedReader(asyncio.StreamReader):
    """Notes when the bytes it was last fed reached this machine (see :class:`_Stamped`)."""

    fed_at = 0.0
    stamp: float | None = None
    """The kernel's receive time of the next bytes fed, when it gave one."""

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.fed_at = self.stamp if self.stamp is not None else time.perf_counter()
        self.stamp = None
        super().feed_data(data)


#: Linux's ``SO_TIMESTAMPNS`` (the kernel's receive time of the data each read returns).
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_STAMP_SPACE = socket.CMSG_SPACE(16)


class _Stamped(asyncio.StreamReaderProtocol):
    """A connection read with ``recvmsg``, so each read carries the kernel's receive time.

    The loop reads every ready socket in one pass and the handlers run one after another, so
    the time a handler sees a request is later than its arrival by the work of every other
    stream in that pass. The kernel's timestamp of the segment (``SO_TIMESTAMPNS``, on the
    real-time clock, turned into ``perf_counter()`` time at each read) is when the request
    reached the server, whatever the loop was doing; where the socket gives none, the read's
    own time is used. Reads go through a duplicate of the socket's descriptor with the
    transport's own reading paused; writes stay with the transport.
    """

    def __init__(self, server: SyntheticServer) -> None:
        self._stamped = _StampedReader(limit=2**16)
        super().__init__(self._stamped, server.handle)
        self._sock: socket.socket | None = None
        self._link: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert isinstance(transport, asyncio.Transport)
        self._link = transport
        fileno = transport.get_extra_info("socket").fileno()
        try:
            sock = socket.socket(fileno=os.dup(fileno))
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        except OSError:
            return  # the transport keeps reading, with the read's own time
        sock.setblocking(False)
        self._sock = sock
        transport.pause_reading()
        asyncio.get_running_loop().add_reader(sock.fileno(), self._read)

    def _read(self) -> None:
        assert self._sock is not None
        try:
            data, ancillary, _, _ = self._sock.recvmsg(2**16, _STAMP_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close()
            if self._link is not None:
                self._link.abort()
            return
        if not data:
            self._close()
            if not self.eof_received() and self._link is not None:
                self._link.close()
            return
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                seconds, nanoseconds = int.from_bytes(payload[:8], sys.byteorder), \
                    int.from_bytes(payload[8:16], sys.byteorder)
                self._stamped.stamp = (seconds + nanoseconds / 1e9
                                       - (time.time() - time.perf_counter()))
        self.data_received(data)

    def _close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._close()
        super().connection_lost(exc)


async def _main(port: int, defaults: Behaviour, model: str) -> None:
    server = SyntheticServer(defaults, model)
    loop = asyncio.get_running_loop()
    listener = await loop.create_server(lambda: _Stamped(server), "127.0.0.1", port,
                                        backlog=4096)
    bound = listener.sockets[0].getsockname()[1]
    sys.stdout.write(f"listening on {bound}\n")
    sys.stdout.flush()
    async with listener:
        await listener.serve_forever()


@dataclass(frozen=True)
class SseServerHandle:
    """A running synthetic server (a child process)."""

    base_url: str
    process: subprocess.Popen[bytes]

    def records(self) -> list[dict[str, Any]]:
        """Everything received and sent since the last reset."""
        found: list[dict[str, Any]] = httpx.get(f"{self.base_url}/_records", timeout=30).json()
        return found

    def reset(self) -> None:
        """Forget the records so far."""
        httpx.post(f"{self.base_url}/_reset", timeout=30).raise_for_status()


@contextlib.contextmanager
def start_sse_server(defaults: Behaviour | None = None, *, model: str = "synthetic",
                     cpu: int | None = None) -> Iterator[SseServerHandle]:
    """Run the server in a child process (pinned to ``cpu`` if given); stop it afterwards."""
    config = json.dumps(dataclasses.asdict(defaults or Behaviour()))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--port", "0", "--config", config,
           "--model", model]
    if cpu is not None:
        cmd += ["--cpu", str(cpu)]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"synthetic server did not start: {line!r}")
        yield SseServerHandle(f"http://127.0.0.1:{int(line.split()[-1])}", process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def main() -> None:
    """Command line: ``--port``, ``--cpu``, ``--config`` (a :class:`Behaviour` as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cpu", type=int, default=None, help="pin the server to this core")
    parser.add_argument("--config", default="{}", help="Behaviour defaults as JSON")
    parser.add_argument("--model", default="synthetic")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    # The server's clock is the reference: ask to be woken promptly when the machine is busy
    # (root may raise its own priority; anyone else keeps the default).
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    defaults = Behaviour(**json.loads(args.config))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.port, defaults, args.model))


if __name__ == "__main__":
    main()


def truth(record: dict[str, Any]) -> dict[str, Any]:
    """What a perfect client would measure for one recorded request (seconds).

    ``ttft`` and ``e2e`` run from the server's receipt of the request to the first and last
    token-bearing chunk leaving; ``itl`` holds k samples of gap / k for a chunk of k tokens.
    """
    sends = record["sends"]
    received = record["received"]
    tokens = sum(k for _, k in sends)
    ttft = sends[0][0] - received
    e2e = sends[-1][0] - received
    itl: list[float] = []
    for (before, _), (at, k) in itertools.pairwise(sends):
        itl.extend([(at - before) / k] * k)
    return {"ttft": ttft, "e2e": e2e, "tokens": tokens, "itl": itl,
            "tpot": (e2e - ttft) / (tokens - 1) if tokens > 1 else None}
