"""Events against rules: which rule an event matches, its phase, the facts around it.

:class:`Classifier` sees every parsed line (for facts: the memory fraction the
engine ran with, the GPU's memory, a new engine start, a deliberate shutdown, the
phase the start-up entered) and every event (a traceback, a record, an exception
line), and turns each event into a :class:`Match`: a wrapper or noise line, a
cause or symptom with its rule and fields, an unclassified error, or nothing.
Wrappers that quote their inner message (``Worker failed with error '…'``) have
that message classified too, in the phase the wrapper names.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import TypeVar

import ahocorasick_rs

from servewise.diagnose.attribute import attribute_path, paths_in
from servewise.diagnose.fields import convert, extract_groups, extract_lists
from servewise.diagnose.result import FieldValue
from servewise.diagnose.ruleset import Rule, RuleSet, Signature
from servewise.diagnose.tables import Fact
from servewise.formats.logevents import Event
from servewise.formats.logline import LogLine
from servewise.knowledge.patterns import compiled_literals

__all__ = ["Classifier", "Match"]

_PATHS = re.compile(r"(?<!\S)[^\s/]*/\S*")
"""A word with a slash in it; anchored at the word's start so a long word without one costs
one look, not one per character."""
_Key = TypeVar("_Key")
_Value = TypeVar("_Value")
_ERROR_START = re.compile(
    r"(?:terminate called after throwing|Segmentation fault|Aborted|Fatal Python error|"
    r"\*\*\* .*(?:signal|SIG\w+)|.*\bAssertion [`'\"].*[`'\"] failed|(?:CUDA|HIP) error: |"
    r"\S+:\d+: GGML_ASSERT\(.*\) failed|\S+/fattn[\w-]*\.cuh?:\d+: fatal error$|"
    r"(?:\w+: )?couldn't bind (?:to server socket|HTTP server socket)|Failed, NCCL error |"
    r"\[TM\]\[(?:ERROR|FATAL)\] )")
"""Errors by their start; a bare ``CUDA error: …`` too (a C++ check's). ggml's bare ``fatal
error`` names what failed in its flash-attention code (no kernel for the case), where nothing
is printed before it (elsewhere, as after ``CUDA error``, the lines above say what). A llama.cpp
(or llamafile) server that cannot bind its socket says so without a level, then exits. A C++
check's own format names an error too: TensorRT-LLM's NCCLCHECK (``Failed, NCCL error FILE:LINE
'MESSAGE'``) and lmdeploy TurboMind's logger (``[TM][ERROR] ...``)."""
_FATAL = re.compile(r"\b(?:fatal|FATAL) ?(?:error)?:")
_TERMINATE = "terminate called after throwing an instance of"


def _error_text(text: str) -> bool:
    """Whether a message without a level or exception reads as an error: it starts as one
    (``terminate called…``, a failed assertion) or says ``fatal error:`` (looked for only where
    the word is, not at every character). A C++ abort's ``terminate called after throwing``
    counts anywhere in it: a paste whose lines were joined (a wrap undone) puts it mid-line."""
    return _ERROR_START.match(text) is not None or _TERMINATE in text or (
        ("fatal" in text or "FATAL" in text) and _FATAL.search(text) is not None)
_BENIGN_EXCEPTIONS = re.compile(
    r"(?:^|\.)(?:KeyboardInterrupt|CancelledError|SystemExit|GeneratorExit|StopIteration|"
    r"\w*Warning)$"
)
_ENGINES = ("vllm", "sglang", "tgi", "tensorrt_llm", "llama.cpp")
CUT_TAIL = 400
CUT_KEYWORD = 14
"""A keyword this long or longer is distinctive enough to name its rule in a cut message
("out of memory" is not: every OOM rule has it)."""
"""How many characters a cut message may keep after a rule's keyword and still count as cut
right after its distinctive part."""
_BACKTRACE_LINE = re.compile(r"^\s*(?:frame #\d+: |Exception raised from \S+ at \S+ "
                             r"\(most recent call first\):$)")
_Hit = tuple[Signature, dict[str, FieldValue], str]
"""A rule's signature that matched, the fields it read, and the message it quotes ('' none)."""
_HISTORY = 64
_MEMO = 4096
"""Entries each of the classifier's memos keeps (paths and their engine, a text's paths and
candidate rules, an event's phases): the same frames and messages recur in every run of a
long log. A memo that fills is emptied and starts again."""
_QUOTED_ERROR = re.compile(r"\b(?:[A-Za-z]\w*(?:Error|Exception)|[Ee]rror|[Ff]ailed|[Ff]ailure|"
                           r"[Ff]atal)\b")
"""What makes a message a wrapper quotes an error of its own (not 'see above')."""
_ERRORISH = re.compile(r"\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]atal|[Ee]xception|WARN|"
                       r"[Cc]annot find|[Nn]ot found|No such file)\b")


@dataclass
class Match:
    """What one event is, for root-cause selection."""

    kind: str
    """``cause``, ``symptom``, ``wrapper``, ``noise``, ``error`` (unclassified) or ``none``."""
    event: Event
    run: int
    rule: Rule | None = None
    signature: Signature | None = None
    fields: dict[str, FieldValue] = field(default_factory=dict)
    phases: tuple[str, ...] = ()
    phase_evidence: bool = False
    """The phase or ``evidence_any`` condition was met by the event itself."""
    quoted: bool = False
    """Found only inside a wrapper's message."""
    inner: list[Match] = field(default_factory=list)
    """For a wrapper: what its quoted message is."""
    shutdown: bool = False
    """The event came after a deliberate shutdown of the same run."""
    cut: bool = False
    """Matched by a keyword at the end of a message cut short (no signature could match)."""


@dataclass
class _Run:
    index: int
    start_line: int
    engine: str | None = None
    facts: dict[str, tuple[int, FieldValue]] = field(default_factory=dict)
    stages: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=_HISTORY))
    shutdown_line: int | None = None
    progressed: bool = False
    serving_line: int | None = None


class Classifier:
    """Facts from lines, matches from events; one per log."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        tables = rules.tables
        # One automaton per question: which facts or phase markers a line may hold, which
        # rules an event's text may match; then only those are tried.
        self._line_facts: dict[int, Fact] = {}
        self._line_markers: dict[int, str] = {}
        words: list[str] = []
        for fact in tables.facts:
            for keyword in fact.keywords:
                self._line_facts[len(words)] = fact
                words.append(keyword)
        for phase in tables.phases:
            for marker in phase.markers:
                self._line_markers[len(words)] = phase.id
                words.append(marker)
        self._line_automaton = ahocorasick_rs.AhoCorasick(words)
        self._serving = next((p for p in tables.phases if p.id == "serving"), None)
        # Each phase's message patterns with the literals one of which every match holds: a
        # long message (a config dump) is searched only by the patterns it has a literal of.
        self._phase_messages = tuple(
            (phase, tuple((p, compiled_literals(p)) for p in phase.messages))
            for phase in tables.phases)
        self._matching = rules.by_kind("wrapper", "noise")
        self._causes = (*rules.by_kind("cause", "symptom"), *rules.signal_rules)
        rule_words: list[str] = []
        self._word_rules: list[Rule] = []
        for rule in (*self._matching, *self._causes):
            for keyword in rule.keywords:
                rule_words.append(keyword)
                self._word_rules.append(rule)
        self._rule_automaton = ahocorasick_rs.AhoCorasick(rule_words)
        self._order = {rule.id: index for index, rule in enumerate((*self._matching,
                                                                     *self._causes))}
        self._runs: deque[_Run] = deque([_Run(0, 0)], maxlen=8)
        self.sources: dict[str, int] = {}
        self.hints: dict[str, int] = {}
        """Engines named by matched wrapper rules that belong to one engine only."""
        self.paths: dict[str, int] = {}
        """Engines whose code the events' paths and frames name (``…/sglang/srt/…``)."""
        self._path_engines: dict[str, str | None] = {}
        self._text_paths: dict[str, tuple[str, ...]] = {}
        self._text_rules: dict[str, tuple[Rule, ...]] = {}
        self._event_phases: dict[tuple[object, ...], tuple[str, ...]] = {}
        self.last_line: tuple[int, str] | None = None
        """The last non-empty line parsed (where a log without an error stops)."""
        self.milestone: tuple[int, str] | None = None
        """The last start-up milestone line (where a start that hangs stopped)."""

    @property
    def run_count(self) -> int:
        """Engine runs seen so far (at least one)."""
        return self.run.index + 1

    # -- lines -----------------------------------------------------------------

    @property
    def run(self) -> _Run:
        """The engine run the log is in now."""
        return self._runs[-1]

    def line(self, line: LogLine) -> None:
        """Read the facts, phase markers and run boundaries of one line."""
        if line.source in _ENGINES:
            self.sources[line.source] = self.sources.get(line.source, 0) + 1
        text = line.text
        if text.strip():
            self.last_line = (line.number, text)
        hits = self._line_automaton.find_matches_as_indexes(text, overlapping=True)
        if not hits:
            return
        seen: set[int] = set()
        marked = False
        for index, _, _ in hits:
            if index in seen:
                continue
            seen.add(index)
            phase = self._line_markers.get(index)
            if phase is not None:
                if phase == "serving" and self.run.serving_line is None:
                    self.run.serving_line = line.number
                if not marked:
                    self.run.stages.append((line.number, phase))
                    self.milestone = (line.number, text)
                    self.run.progressed = True
                    marked = True
                continue
            fact = self._line_facts[index]
            for pattern in fact.patterns:
                found = pattern.search(text)
                if found is not None:
                    self._fact(fact.id, fact.kind, fact.engine, found, line.number)
                    break

    def _fact(self, ident: str, kind: str, engine: str | None, found: re.Match[str],
              number: int) -> None:
        if kind == "run_start":
            run = self.run
            if run.progressed or run.shutdown_line is not None:
                self._runs.append(_Run(run.index + 1, number))
            self.run.engine = self.run.engine or engine
            version = found.groupdict().get("version")
            if version:
                self.run.facts.setdefault("engine_version", (number, version))
            return
        if kind == "shutdown":
            if self.run.shutdown_line is None:
                self.run.shutdown_line = number
            return
        groups = [value for value in found.groupdict().values() if value is not None]
        if groups:
            value = convert(ident, groups[0])
            if value is not None:
                self.run.facts[ident] = (number, value)

    def mark_failure(self) -> None:
        """A failure was seen in the current run (a later engine start begins a new run)."""
        self.run.progressed = True

    # -- events ----------------------------------------------------------------

    def _run_of(self, line: int) -> _Run:
        for run in reversed(self._runs):
            if run.start_line <= line:
                return run
        return self._runs[0]

    def engine(self, run: _Run | None = None) -> str | None:
        """The engine of a run: its start line, else the most common line format, else the
        engine one-engine wrappers name, else the engine whose code paths name most."""
        run = run or self.run
        if run.engine:
            return run.engine
        for votes in (self.sources, self.hints, self.paths):
            if votes:
                return max(votes.items(), key=lambda item: item[1])[0]
        return None

    def facts(self, line: int) -> dict[str, FieldValue]:
        """The facts of the run that ``line`` is in (values seen anywhere in that run)."""
        return {name: value for name, (_, value) in self._run_of(line).facts.items()}

    def serving_line(self, run: int) -> int | None:
        """The line where run ``run`` came up and began serving, if it did."""
        for item in self._runs:
            if item.index == run:
                return item.serving_line
        return None

    def request_error(self, match: Match) -> bool:
        """Whether an unclassified error failed one request of a running server (not the
        server): it came after the server came up, and the code that raised it answers one
        request, or its message is about one request."""
        event = match.event
        serving = self.serving_line(match.run)
        phase = self._serving
        if serving is None:
            # An excerpt from a running server (it shows no start at all): an error raised by
            # code that only ever answers a request failed that request.
            if match.rule is not None or phase is None or not self._no_start(match.run):
                return False
            if match.kind == "wrapper":
                # A traceback cut before its exception: what raised is its innermost frame
                # outside the standard library (a handler awaiting the engine's output
                # re-raises the engine's own failure, which is not the request's).
                inner = self._innermost(event)
                return inner is not None and any(p.search(inner)
                                                 for p in phase.request_handlers)
            return (any(p.search(frame.path) for p in phase.request_handlers
                        for frame in event.frames)
                    or any(p.search(event.text) for p in phase.request_messages))
        if event.first_line < serving:
            return False
        if match.rule is not None:
            return match.rule.category == "request_error"  # a rule says it is about a request
        if phase is None:
            return False
        if any(p.search(frame.path) for p in phase.request_frames for frame in event.frames):
            return True
        texts = [event.text, event.header or ""]
        return any(p.search(text) for p in phase.request_messages for text in texts)

    def _innermost(self, event: Event) -> str | None:
        """The path of ``event``'s innermost frame outside generic code (the standard
        library, PyTorch's call plumbing), or None."""
        for frame in reversed(event.frames):
            found = attribute_path(frame.path, self.rules.tables, include_generic=True)
            if found is None or not found[0].generic:
                return frame.path
        return None

    def stalled(self) -> str | None:
        """The phase the last run was in when the log ended, when it started up and never
        came up, failed or stopped: a start that hangs (or was still going when the log was
        cut)."""
        run = self.run
        if run.serving_line is not None or run.shutdown_line is not None or not run.stages:
            return None
        phase = run.stages[-1][1]
        return None if phase == "serving" else phase

    def _no_start(self, index: int) -> bool:
        """Whether run ``index`` shows no engine start and no start-up phase."""
        run = next((r for r in self._runs if r.index == index), None)
        return run is not None and not _started(run)

    def came_up(self) -> bool:
        """Whether the last run reached serving or was shut down: a log of a server, not
        only of a failure."""
        return self.run.serving_line is not None or self.run.shutdown_line is not None

    def seen_up_only(self) -> bool:
        """Whether the last run shows only a server already up: it came up, with no engine
        start and no start-up phase before that (an excerpt pasted from the running server,
        not a whole log, so a failure may lie outside it)."""
        run = self.run
        return run.serving_line is not None and run.shutdown_line is None and not _started(run)

    def stage(self, line: int) -> str | None:
        """The last phase a marker line (or a wrapper that names one) entered before ``line``."""
        run = self._run_of(line)
        stage, at = None, -1
        for number, phase in run.stages:
            if at <= number <= line:
                stage, at = phase, number
        return stage

    def phases_of(self, event: Event) -> tuple[str, ...]:
        """Phases the event itself names: its frames' functions, then its message."""
        functions = tuple(frame.function for frame in event.frames)
        innermost = event.frames[-1].path if event.frames else None
        built = tuple(frame.path for frame in event.frames if frame.function == "__init__")
        key = (functions, innermost, built, event.text)
        known = self._event_phases.get(key)
        if known is None:
            known = self._phases(functions, innermost, built, _PATHS.sub(" ", event.text))
            _remember(self._event_phases, key, known)
        return known

    def _phases(self, functions: tuple[str, ...], innermost: str | None,
                built: tuple[str, ...], message: str) -> tuple[str, ...]:
        found: list[str] = []
        for phase, messages in self._phase_messages:
            if any(p.search(f) for p in phase.functions for f in functions) or any(
                _may_match(literals, message) and p.search(message) is not None
                for p, literals in messages
            ) or (innermost is not None and any(p.search(innermost) for p in phase.innermost)
                  ) or any(p.search(path) for p in phase.builders for path in built):
                found.append(phase.id)
        return tuple(found)

    def classify(self, event: Event) -> Match:
        """What ``event`` is."""
        text = event.text
        self._vote_paths(event)
        candidates = self._candidates(text)
        run = self._run_of(event.first_line)
        if not candidates and event.kind == "record" and event.level in ("info", "debug",
                                                                         "warning"):
            return Match("none", event, run.index)  # no rule can match, and not an error
        shutdown = run.shutdown_line is not None and run.shutdown_line < event.first_line
        # An exception is a wrapper by its own first line; a wrapper's words further down are
        # lines the message ran into (TGI's "Error: ShardCannotStart" after a shard's OOM).
        head = text.split("\n", 1)[0] if event.exception is not None else text
        chosen: tuple[Rule, _Hit] | None = None
        for rule in candidates:
            if rule.kind not in ("wrapper", "noise"):
                continue
            hit = self._try(rule, event, head, ())
            if hit is not None and (chosen is None or (hit[2] and not chosen[1][2])):
                chosen = (rule, hit)
                if hit[2]:
                    break  # a wrapper that quotes the error says more than one that does not
        if chosen is not None:
            return self._wrapper(event, run, chosen[0], chosen[1], shutdown)
        cause = self._cause(event, text=text, implied=(), run=run.index, candidates=candidates)
        if cause is not None:
            cause.shutdown = shutdown
            return cause
        if (event.kind == "traceback" and event.exception is None and not event.message.strip()
                ) or _only_backtrace(text):
            # A traceback cut before its exception (the excerpt ends in its frames), or a C++
            # backtrace pasted without the message above it: it shows where, not what; like a
            # wrapper, it says the cause is missing from the excerpt.
            return Match("wrapper", event, run.index, shutdown=shutdown)
        if self._error_like(event):
            return Match("error", event, run.index, shutdown=shutdown)
        return Match("none", event, run.index, shutdown=shutdown)

    def _wrapper(self, event: Event, run: _Run, rule: Rule,
                 hit: _Hit, shutdown: bool) -> Match:
        """The match of a wrapper (or noise) rule, with the error it quotes classified again."""
        match = Match(rule.kind, event, run.index, rule, hit[0], hit[1], shutdown=shutdown)
        if rule.phase and rule.kind == "wrapper":
            # A wrapper that names its phase marks it, like a milestone, for the errors
            # logged after it (V0's dead engine loop, then the worker's OOM).
            run.stages.append((event.first_line, rule.phase))
        if len(rule.engines) == 1:
            name = engine_name(rule.engines[0])
            self.hints[name] = self.hints.get(name, 0) + 1
        inner = hit[2]
        if not inner and event.exception is not None:
            head, _, rest = event.text.partition("\n")
            if head.rstrip().endswith(":") and rest.strip():
                # An exception whose first line ends in a colon introduces what its message
                # goes on to quote (torch's 'Error building extension 'x':' then the build's
                # output): the lines below are the wrapper's quote.
                inner = rest.strip()[:4096]
        if inner and rule.kind == "wrapper":
            quoted = Event(kind="exception", process=event.process,
                           first_line=event.first_line, last_line=event.first_line,
                           message=inner, level=event.level, source=event.source,
                           role=event.role, ranks=event.ranks)
            implied = (rule.phase,) if rule.phase else self._method_phases(hit[1])
            inner_match = self._cause(quoted, text=inner, implied=implied, run=run.index)
            if inner_match is None:
                # A wrapper quoting another wrapper (SGLang's capture failure quoting
                # torch.compile's 'An exception occurred in a subprocess'): still no cause.
                inner_match = self._quoted_wrapper(quoted, inner, run.index)
            if inner_match is None and _QUOTED_ERROR.search(inner) is not None:
                # An error no rule knows, quoted whole: it is in the excerpt (an ``unclassified``
                # with its library), not missing from it.
                inner_match = Match("error", quoted, run.index)
            if inner_match is not None:
                inner_match.quoted = True
                match.inner.append(inner_match)
        return match

    def _quoted_wrapper(self, event: Event, text: str, run: int) -> Match | None:
        """The match of the first wrapper rule whose signature ``text`` (quoted) matches."""
        for rule in self._candidates(text):
            if rule.kind == "wrapper":
                hit = self._try(rule, event, text, ())
                if hit is not None:
                    return Match("wrapper", event, run, rule, hit[0], hit[1])
        return None

    def _vote_paths(self, event: Event) -> None:
        """Count the engines whose code the event names, once per engine per event."""
        if not event.frames and "/" not in event.text and "\\" not in event.text:
            return
        named: set[str] = set()
        named_paths = self._text_paths.get(event.text)
        if named_paths is None:
            named_paths = tuple(paths_in(event.text))
            _remember(self._text_paths, event.text, named_paths)
        for path in (*(frame.path for frame in event.frames), *named_paths):
            if path not in self._path_engines:
                found = attribute_path(path, self.rules.tables, include_generic=True)
                _remember(self._path_engines, path,
                          found[0].engine if found is not None else None)
            engine = self._path_engines[path]
            if engine:
                named.add(engine)
        for engine in named:
            self.paths[engine] = self.paths.get(engine, 0) + 1

    def _method_phases(self, fields: dict[str, FieldValue]) -> tuple[str, ...]:
        """Phases a wrapper's ``method`` names (V0: ``while processing method load_model``)."""
        method = fields.get("method")
        if not isinstance(method, str):
            return ()
        return tuple(phase.id for phase in self.rules.tables.phases
                     if any(pattern.search(method) for pattern in phase.functions))

    def _candidates(self, text: str) -> tuple[Rule, ...]:
        """The rules one of whose keywords is in ``text``, in rule order."""
        known = self._text_rules.get(text)
        if known is None:
            found = {id(self._word_rules[i]): self._word_rules[i]
                     for i, _, _ in self._rule_automaton.find_matches_as_indexes(
                         text, overlapping=True)}
            known = tuple(sorted(found.values(), key=lambda rule: self._order[rule.id]))
            _remember(self._text_rules, text, known)
        return known

    def _cause(self, event: Event, *, text: str, implied: tuple[str, ...], run: int,
               candidates: tuple[Rule, ...] | None = None) -> Match | None:
        rules = [rule for rule in (candidates if candidates is not None
                                   else self._candidates(text))
                 if rule.kind in ("cause", "symptom") and not (
                     rule.table and event.level in ("info", "debug", "warning"))]
        if not rules:
            return None
        own = self.phases_of(event)
        phases = own or implied
        if not phases:
            stage = self.stage(event.first_line)
            phases = (stage,) if stage else ()
        best: Match | None = None
        for rule in rules:
            hit = self._try(rule, event, text, phases)
            if hit is None:
                continue
            signature, fields, _ = hit
            evidence = bool(rule.phases and set(rule.phases) & set(own or implied)) or bool(
                rule.evidence_any or rule.evidence_facts)
            candidate = Match(rule.kind, event, run, rule, signature, fields, phases, evidence)
            if best is None or _rank(candidate) > _rank(best):
                best = candidate
        if (best is None or (best.rule is not None and best.rule.table)) and (
                event.exception is not None or event.level in ("error", "critical", "fatal")
                or _ERRORISH.search(text) is not None):
            # A rule's distinctive keyword at the end of a message cut short says more than a
            # knowledge table's general signal in the same message.
            cut = self._cut(event, text, [r for r in rules if not r.table], phases, run)
            best = cut or best
        return best

    def _cut(self, event: Event, text: str, rules: list[Rule], phases: tuple[str, ...],
             run: int) -> Match | None:
        """A message cut short after its distinctive part: a rule's keyword (a distinctive
        one, :data:`CUT_KEYWORD` characters or more) within the last :data:`CUT_TAIL`
        characters of an error's text, where no signature could match the rest that is
        missing."""
        end = len(text.rstrip())
        best: Match | None = None
        for rule in rules:
            if not rule.cut or (rule.exclude and any(p.search(text) for p in rule.exclude)):
                continue
            if rule.phases and not set(rule.phases) & set(phases):
                continue
            if not self._evidence_met(rule, event, text):
                continue
            for keyword in rule.keywords:
                at = text.rfind(keyword)
                if len(keyword) < CUT_KEYWORD or at < 0 or end - (at + len(keyword)) > CUT_TAIL:
                    continue
                candidate = Match(rule.kind, event, run, rule, None, {}, phases, False, cut=True)
                if best is None or _rank(candidate) > _rank(best):
                    best = candidate
                break
        return best

    def _try(self, rule: Rule, event: Event, text: str,
             phases: tuple[str, ...]) -> _Hit | None:
        for signature in rule.signatures:
            if not _may_match(signature.required, text):
                continue  # no literal a match needs is there: the regex cannot match
            found = signature.pattern.search(text)
            if found is None:
                continue
            if rule.exclude and any(p.search(text) for p in rule.exclude):
                return None
            if rule.phases and not set(rule.phases) & set(phases):
                return None
            if not self._evidence_met(rule, event, text):
                return None
            fields: dict[str, FieldValue] = {}
            extract_groups(found, fields)
            for pattern in (signature.pattern, *rule.extract):
                extract_lists(pattern, text, fields)
                if pattern is not signature.pattern:
                    extra = pattern.search(text)
                    if extra is not None:
                        extract_groups(extra, fields)
            inner = found.groupdict().get("inner") or ""
            return signature, fields, inner.strip()
        return None

    def _evidence_met(self, rule: Rule, event: Event, text: str) -> bool:
        """Whether the rule's evidence condition holds (true when it has none): one of its
        ``evidence_any`` patterns in the event, or one of its ``evidence_facts`` in the run."""
        if not (rule.evidence_any or rule.evidence_facts):
            return True
        return self._evidence(rule, event, text) or self._fact_evidence(rule, event)

    def _fact_evidence(self, rule: Rule, event: Event) -> bool:
        """Whether a fact the run logged before the event is evidence the rule accepts."""
        if not rule.evidence_facts:
            return False
        facts = self.facts(event.first_line)
        return any(name in facts and pattern.search(str(facts[name])) is not None
                   for name, pattern in rule.evidence_facts)

    @staticmethod
    def _evidence(rule: Rule, event: Event, text: str) -> bool:
        message = _PATHS.sub(" ", text)
        places = [part for frame in event.frames for part in (frame.function, frame.path)]
        return any(p.search(message) or any(p.search(place) for place in places)
                   for p in rule.evidence_any)

    @staticmethod
    def _error_like(event: Event) -> bool:
        if event.exception is not None:
            return _BENIGN_EXCEPTIONS.search(event.exception) is None
        if event.kind == "traceback":
            return bool(event.frames)
        if event.level in ("error", "critical", "fatal"):
            # A paste that begins inside a traceback leaves a frame's source line (and its
            # carets) on their own: a fragment of the traceback below, not an error.
            return bool(event.message.strip()) and not all(
                line[:1].isspace() or not line.strip() for line in event.message.splitlines())
        return _error_text(event.message)


def _started(run: _Run) -> bool:
    """Whether ``run`` shows its engine starting: a start line, a version, a start-up phase."""
    return run.engine is not None or "engine_version" in run.facts or any(
        phase != "serving" for _, phase in run.stages)


def _rank(match: Match) -> tuple[int, int]:
    rule = match.rule
    assert rule is not None
    return (rule.precedence, match.signature.literal if match.signature is not None else 0)


def _only_backtrace(text: str) -> bool:
    """Whether ``text`` is only the lines of a C++ backtrace (c10's ``Exception raised from …
    (most recent call first):`` and ``frame #N:`` lines), with no message."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_BACKTRACE_LINE.match(line) for line in lines)


def engine_name(spec: str) -> str:
    """``vllm<0.8`` → ``vllm``."""
    return re.split(r"[<>=!]", spec, maxsplit=1)[0]


def _remember(memo: dict[_Key, _Value], key: _Key, value: _Value) -> None:
    """Keep ``value`` for ``key`` in a bounded memo (emptied when it holds :data:`_MEMO`)."""
    if len(memo) >= _MEMO:
        memo.clear()
    memo[key] = value


def _may_match(literals: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` holds one of the literals a match needs (true when none is known)."""
    return not literals or any(literal in text for literal in literals)
