"""Engine settings and their command-line spellings in vLLM and SGLang, both ways.

One table (``knowledge/data/engine_flags.toml``) says how each engine spells each setting
the planner, recipes, diagnose and launch talk about, version by version. Everything that
reads or writes an engine command line goes through it::

    settings = EngineSettings(tensor_parallel_size=2, max_model_len=250_000,
                              gpu_memory_utilization=0.95, kv_cache_dtype="fp8")
    to_argv("vllm", settings)
    # ['--tensor-parallel-size', '2', '--max-model-len', '250000',
    #  '--gpu-memory-utilization', '0.95', '--kv-cache-dtype', 'fp8']
    from_argv("sglang", ["--tp", "8", "--mem-fraction-static", "0.88"]).mem_fraction_static
    # 0.88

A setting one engine lacks (``--mem-fraction-static`` is SGLang's) is an error when written
for the other, naming the counterpart. A ``flags.toml`` in ``$SERVEWISE_DATA_DIR`` adds
settings or overrides shipped ones by ``id``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge._load import (
    DataFileError,
    EntryReader,
    RawEntry,
    check_unique,
    load_table,
    shipped_entries,
)
from servewise.knowledge.argv import flag_key
from servewise.knowledge.engines import serving_engines
from servewise.versions import EngineVersion

FILENAME = "engine_flags.toml"
TABLE = "setting"
ENGINES = serving_engines()
"""The engines this table spells settings for (``serves = true`` in ``engines.toml``)."""
KINDS = ("int", "float", "str", "bool", "json")
_SETTING_FIELDS = frozenset({"id", "kind", "description", "counterpart", "source", "flag"})
_FLAG_FIELDS = frozenset(
    {"engine", "name", "aliases", "false_name", "inverted", "since", "until", "human"}
)
AUTO = -1
"""An ``int`` setting read from ``auto`` (or ``-1``) where the spelling is ``human``: vLLM's
``--max-model-len auto`` fits the context to the memory left for the KV cache."""


@dataclass(frozen=True)
class EngineSettings:
    """What an engine command line sets, by setting id; ``None`` means left at the default.

    ``extra`` keeps the arguments the table does not know, in order, so nothing a user wrote
    is lost on the way through ``from_argv`` and ``to_argv``. JSON settings
    (``speculative_config``, ``compilation_config``) hold their JSON text.
    """

    model: str | None = None
    served_model_name: str | None = None
    host: str | None = None
    port: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    enable_expert_parallel: bool | None = None
    expert_parallel_size: int | None = None
    enable_dp_attention: bool | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    mem_fraction_static: float | None = None
    kv_cache_memory_bytes: int | None = None
    max_total_tokens: int | None = None
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    chunked_prefill_size: int | None = None
    enforce_eager: bool | None = None
    enable_prefix_caching: bool | None = None
    tokenizer_mode: str | None = None
    trust_remote_code: bool | None = None
    dtype: str | None = None
    quantization: str | None = None
    speculative_config: str | None = None
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_draft_model_path: str | None = None
    attention_backend: str | None = None
    moe_runner_backend: str | None = None
    cuda_graph_max_bs: int | None = None
    compilation_config: str | None = None
    distributed_executor_backend: str | None = None
    nnodes: int | None = None
    node_rank: int | None = None
    dist_init_addr: str | None = None
    headless: bool | None = None
    enable_metrics: bool | None = None
    extra: tuple[str, ...] = field(default=())

    def replace(self, **changes: Any) -> EngineSettings:
        """A copy with ``changes`` applied (a value of ``None`` unsets a setting)."""
        return dataclasses.replace(self, **changes)

    def given(self) -> dict[str, Any]:
        """The settings that are set, by id (``extra`` left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "extra" and getattr(self, f.name) is not None}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the settings that are set, and ``extra``."""
        return {**self.given(), "extra": list(self.extra)}


SETTING_IDS = tuple(f.name for f in fields(EngineSettings) if f.name != "extra")
"""Every setting id, in the order argv is written."""


@dataclass(frozen=True)
class FlagSpelling:
    """How one engine spells one setting, for a range of its versions."""

    engine: str
    name: str
    aliases: tuple[str, ...] = ()
    false_name: str | None = None
    inverted: bool = False
    since: EngineVersion | None = None
    until: EngineVersion | None = None
    human: bool = False
    """The engine reads the value as vLLM's ``human_readable_int_or_auto`` does: ``32k``
    (10^3), ``32K`` (2^10), ``1.5m``, ``auto`` or ``-1`` (:data:`AUTO`)."""

    def applies(self, version: EngineVersion | None) -> bool:
        """Whether the spelling is right for ``version`` (``None``: the newest release)."""
        if version is None:
            return self.until is None
        if self.since is not None and version < self.since:
            return False
        return self.until is None or version < self.until

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling the engine reads, the written one first."""
        extra = (self.false_name,) if self.false_name else ()
        return (self.name, *self.aliases, *extra)


@dataclass(frozen=True)
class Setting:
    """One engine setting and its spellings."""

    id: str
    kind: str
    description: str
    spellings: tuple[FlagSpelling, ...]
    sources: tuple[str, ...]
    counterpart: str | None = None

    def spelling(self, engine: str, version: EngineVersion | None = None) -> FlagSpelling | None:
        """The spelling ``engine`` uses at ``version``, or None when it has no such setting."""
        for spelling in self.spellings:
            if spelling.engine == engine and spelling.applies(version):
                return spelling
        return None

    def engines(self) -> tuple[str, ...]:
        """The engines that have this setting."""
        return tuple(dict.fromkeys(s.engine for s in self.spellings))


class FlagTable:
    """Every setting, looked up by id or by an engine's flag."""

    def __init__(self, settings: Iterable[Setting]) -> None:
        self._settings = {setting.id: setting for setting in settings}
        self._by_flag: dict[tuple[str, str], list[tuple[Setting, FlagSpelling]]] = {}
        for setting in self._settings.values():
            for spelling in setting.spellings:
                for name in spelling.names:
                    self._by_flag.setdefault((spelling.engine, name), []).append(
                        (setting, spelling))

    def __iter__(self) -> Any:
        return iter(self._settings.values())

    def setting(self, setting_id: str) -> Setting:
        """The setting called ``setting_id``."""
        try:
            return self._settings[setting_id]
        except KeyError:
            raise UsageError(f"unknown engine setting {setting_id!r}",
                             hint="known settings: " + ", ".join(self._settings),
                             found=setting_id) from None

    def nearest_spelling(self, setting_id: str, engine: str,
                         version: EngineVersion | None = None
                         ) -> tuple[FlagSpelling, bool] | None:
        """How ``engine`` writes ``setting_id`` at ``version``, else its counterpart setting
        (SGLang's ``--mem-fraction-static`` for ``gpu_memory_utilization``): the spelling and
        whether it is the counterpart's; None when the engine has neither."""
        setting = self.setting(setting_id)
        spelling = setting.spelling(engine, version)
        if spelling is not None:
            return spelling, False
        if setting.counterpart:
            other = self.setting(setting.counterpart).spelling(engine, version)
            if other is not None:
                return other, True
        return None

    def lookup(self, engine: str, flag: str, version: EngineVersion | None = None
               ) -> tuple[Setting, FlagSpelling] | None:
        """The setting ``engine`` reads from ``flag`` (any spelling of any version), or None.

        A spelling of the version wins; one of another version is still read (a recipe
        written for an older release), so nothing a user wrote is silently dropped.
        """
        fallback: tuple[Setting, FlagSpelling] | None = None
        if engine == "vllm" and flag.startswith("--"):
            # vLLM's FlexibleArgumentParser reads --max_model_len as --max-model-len
            flag = flag_key(flag)
        for setting, spelling in self._by_flag.get((engine, flag), ()):
            if spelling.applies(version) or version is None:
                return setting, spelling
            fallback = fallback or (setting, spelling)
        return fallback


def _check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", hint="give vllm or sglang", found=engine)
    return engine


def flag_for(engine: str, setting_id: str, version: EngineVersion | str | None = None,
             table: FlagTable | None = None) -> str:
    """The flag ``engine`` spells ``setting_id`` with (``--max-model-len``, ``--context-length``).

    Raises :class:`UsageError` when the engine has no such setting, naming the counterpart.
    """
    flags = table or load_flag_table()
    setting = flags.setting(setting_id)
    return _spelling_or_error(flags, setting, _check_engine(engine), _version(version)).name


def _version(version: EngineVersion | str | None) -> EngineVersion | None:
    return None if version is None else EngineVersion.coerce(version)


def _spelling_or_error(table: FlagTable, setting: Setting, engine: str,
                       version: EngineVersion | None) -> FlagSpelling:
    spelling = setting.spelling(engine, version)
    if spelling is not None:
        return spelling
    at = f" {version}" if version is not None else ""
    message = f"{engine}{at} has no {setting.id.replace('_', '-')} setting"
    hint = f"{setting.description}"
    if setting.counterpart:
        other = table.setting(setting.counterpart).spelling(engine, version)
        if other is not None:
            hint = f"{engine} spells the counterpart {other.name}; {setting.description}"
    owners = [s for s in setting.spellings if s.engine == engine]
    if owners:
        ranges = ", ".join(_range_text(s) for s in owners)
        message += f" (its spelling {owners[0].name} exists for {ranges})"
    raise UsageError(message, hint=hint, setting=setting.id, engine=engine,
                     version=str(version) if version else None)


def _range_text(spelling: FlagSpelling) -> str:
    low = f">= {spelling.since}" if spelling.since else ""
    high = f"< {spelling.until}" if spelling.until else ""
    return " and ".join(part for part in (low, high) if part) or "every version"


def to_argv(engine: str, settings: EngineSettings,
            version: EngineVersion | str | None = None, *,
            table: FlagTable | None = None, model_positional: bool = False) -> list[str]:
    """The command-line arguments that set ``settings`` on ``engine`` at ``version``.

    Settings are written in :class:`EngineSettings` field order, then ``extra`` as given.
    ``model_positional`` writes the model as the first, bare argument (``vllm serve MODEL``).
    """
    flags = table or load_flag_table()
    engine = _check_engine(engine)
    at = _version(version)
    argv: list[str] = []
    for setting_id, value in settings.given().items():
        if setting_id == "model" and model_positional:
            argv.insert(0, str(value))
            continue
        setting = flags.setting(setting_id)
        spelling = _spelling_or_error(flags, setting, engine, at)
        argv.extend(_write(setting, spelling, value))
    return [*argv, *settings.extra]


def _write(setting: Setting, spelling: FlagSpelling, value: Any) -> list[str]:
    if setting.kind == "bool":
        on = bool(value) != spelling.inverted
        if on:
            return [spelling.name]
        if spelling.false_name:
            return [spelling.false_name]
        return []  # the engine's default is off and it has no flag for "off"
    if setting.kind == "json":
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        return [spelling.name, text]
    if spelling.human and value == AUTO:
        return [spelling.name, "auto"]
    return [spelling.name, _number_text(value)]


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and value > 1:
        return str(int(value))
    return str(value)


def from_argv(engine: str, argv: Sequence[str], version: EngineVersion | str | None = None,
              *, table: FlagTable | None = None) -> EngineSettings:
    """The settings an engine's arguments set (``--flag value``, ``--flag=value``, bools).

    The first bare argument is the model (as ``vllm serve MODEL``). Arguments the table does
    not know go to ``extra`` with the value that follows them. A value that is not of the
    setting's kind is a :class:`UsageError` naming the flag.
    """
    flags = table or load_flag_table()
    engine = _check_engine(engine)
    at = _version(version)
    values: dict[str, Any] = {}
    extra: list[str] = []
    items = list(argv)
    index = 0
    while index < len(items):
        token = items[index]
        index += 1
        if not token.startswith("-") or token == "-":
            if "model" not in values and not extra:
                values["model"] = token
            else:
                extra.append(token)
            continue
        name, has_inline, inline = token.partition("=")
        found = flags.lookup(engine, name, at)
        if found is None:
            extra.append(token)
            if not has_inline and index < len(items) and not items[index].startswith("-"):
                extra.append(items[index])
                index += 1
            continue
        setting, spelling = found
        if setting.kind == "bool":
            value: Any = name != spelling.false_name
            if has_inline:
                value = _bool_text(inline, name)
            values[setting.id] = value != spelling.inverted
            continue
        if has_inline:
            text = inline
        elif index < len(items):
            text = items[index]
            index += 1
        else:
            raise UsageError(f"{name} needs a value", hint=setting.description, flag=name)
        values[setting.id] = _read(setting, name, text, spelling.human)
    return EngineSettings(**values, extra=tuple(extra))


def _bool_text(text: str, flag: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise UsageError(f"{flag}={text}: expected true or false", found=text, flag=flag)


_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_int(text: str) -> int:
    """A number as vLLM's ``human_readable_int_or_auto`` reads it (vllm/engine/arg_utils.py):
    ``auto`` or ``-1`` → :data:`AUTO`; ``25.6k`` → 25,600 (lower case: powers of 10);
    ``32K`` → 32,768 (upper case: powers of 2, whole numbers only); else a whole number.
    Raises ValueError otherwise."""
    value = text.strip()
    if value == "-1" or value.lower() == "auto":
        return AUTO
    if value and value[-1] in _DECIMAL:
        number = float(value[:-1]) if value[:-1].replace(".", "", 1).isdigit() else None
        if number is not None:
            return int(number * _DECIMAL[value[-1]])
    if value and value[-1] in _BINARY and value[:-1].isdigit():
        return int(value[:-1]) * _BINARY[value[-1]]
    number_value = int(value)
    if number_value < 0:
        raise ValueError(value)
    return number_value


def _read(setting: Setting, flag: str, text: str, human: bool = False) -> Any:
    try:
        if setting.kind == "int" and human:
            return human_int(text)
        if setting.kind == "int":
            return int(text)
        if setting.kind == "float":
            return float(text)
        if setting.kind == "json":
            json.loads(text)
            return text
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected {_KIND_WORDS[setting.kind]}",
                         hint=setting.description, flag=flag, found=text) from None
    return text


_KIND_WORDS = {"int": "a whole number (vLLM's length flags also take 32k, 1M or auto)",
               "float": "a number", "json": "JSON text", "str": "text",
               "bool": "nothing or true/false"}


def _spelling_from(raw: dict[str, Any], entry: RawEntry, index: int) -> FlagSpelling:
    try:
        return _read_spelling(EntryReader(RawEntry(raw, entry.file, entry.index, entry.user),
                                          _FLAG_FIELDS))
    except DataFileError as error:
        inner = error.fields.get("field")
        raise DataFileError(
            error.message.rsplit(": ", 1)[-1], file=entry.file, entry=entry.label,
            field=f"flag[{index}].{inner}", expected=error.fields.get("expected"),
            found=error.fields.get("found"),
        ) from None


def _read_spelling(reader: EntryReader) -> FlagSpelling:
    engine = reader.string("engine")
    if engine not in ENGINES:
        raise reader.error("engine", "unknown engine", expected=" or ".join(ENGINES),
                           found=engine)
    name = reader.string("name")
    if not name.startswith("-"):
        raise reader.error("name", "a flag starts with -", expected="--flag-name", found=name)

    return FlagSpelling(
        engine=engine, name=name, aliases=reader.strings("aliases", required=False),
        false_name=reader.optional_string("false_name") or None,
        inverted=reader.boolean("inverted", default=False),
        since=reader.optional_version("since"), until=reader.optional_version("until"),
        human=reader.boolean("human", default=False),
    )


def setting_from_entry(entry: RawEntry) -> Setting:
    """Validate one ``[[setting]]`` entry and build its :class:`Setting`."""
    reader = EntryReader(entry, _SETTING_FIELDS)
    ident = reader.string("id")
    if ident not in SETTING_IDS:
        raise reader.error("id", "no EngineSettings field has this name",
                           expected="one of " + ", ".join(SETTING_IDS), found=ident)
    kind = reader.string("kind")
    if kind not in KINDS:
        raise reader.error("kind", "unknown kind", expected=", ".join(KINDS), found=kind)
    raw_flags = entry.data.get("flag", [])
    if not isinstance(raw_flags, list) or not raw_flags or not all(
            isinstance(item, dict) for item in raw_flags):
        raise reader.error("flag", "each setting needs [[setting.flag]] tables",
                           expected="at least one [[setting.flag]]")
    spellings = tuple(_spelling_from(raw, entry, i) for i, raw in enumerate(raw_flags))
    return Setting(
        id=ident, kind=kind, description=reader.string("description"), spellings=spellings,
        sources=reader.sources(), counterpart=reader.optional_string("counterpart") or None,
    )


def _build(entries: list[RawEntry]) -> FlagTable:
    check_unique(entries)
    settings = [setting_from_entry(entry) for entry in entries]
    known = {setting.id for setting in settings}
    for setting, entry in zip(settings, entries, strict=True):
        if setting.counterpart and setting.counterpart not in known:
            raise DataFileError(f"counterpart {setting.counterpart!r} is no setting",
                                file=entry.file, field=f"{entry.label}.counterpart",
                                found=setting.counterpart)
    return FlagTable(settings)


@functools.cache
def _shipped() -> FlagTable:
    return _build(list(shipped_entries(FILENAME, TABLE)))


def load_flag_table(user_dir: Path | None = None) -> FlagTable:
    """The shipped flag table plus ``engine_flags.toml`` from the user data folder."""
    return load_table(FILENAME, TABLE, user_dir, _shipped, _build)


__all__ = [
    "AUTO", "ENGINES", "SETTING_IDS", "EngineSettings", "FlagSpelling", "FlagTable", "Setting",
    "flag_for", "from_argv", "human_int", "load_flag_table", "to_argv",
]
