"""``servewise plan`` and ``servewise model``: the light command-line path.

These two commands answer in a fraction of a second, so their path imports neither typer
nor rich: the arguments are parsed with :mod:`argparse`, the output is plain text or JSON.
:func:`main` is the console entry point; it runs ``plan`` and ``model`` itself and hands
every other command to the Typer app of :mod:`servewise.cli` (which also lists these two,
forwarding to :func:`run`). stdout carries data; stderr errors, warnings and notes. Exit
codes: 0 fine, 1 the plan does not fit, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from servewise.errors import ServewiseError, UsageError

FAST_COMMANDS = ("plan", "model")

PLAN_HELP = ("Memory plan: what vLLM or SGLang will log at startup for MODEL on these GPUs "
             "(weights, KV pool, tokens, concurrency, or the error), and the settings and "
             "parallel layouts that fit.")
MODEL_HELP = ("A model's shape, weight bytes by role and dtype, and KV bytes per token, from "
              "a folder, a bundled card or the Hugging Face Hub.")


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}", hint=f"`{self.prog} --help` lists the options")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction, found {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], found {text!r}")
    return value


def _model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a folder with config.json, an org/name Hub repository "
                        "(hub:org/name skips the cards), or a bundled card id")
    parser.add_argument("--revision", help="Hub branch, tag or commit (default main)")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not use the local store for Hub metadata")
    parser.add_argument("--json", action="store_true", dest="as_json",
                        help="print JSON to stdout")


def model_parser() -> argparse.ArgumentParser:
    """The ``servewise model`` parser."""
    parser = _Parser(prog="servewise model", description=MODEL_HELP)
    _model_args(parser)
    parser.add_argument("--tensors", action="store_true",
                        help="also list every tensor (experts grouped as experts.*)")
    parser.add_argument("--kv-cache-dtype", default="auto", help="KV dtype for the per-token "
                        "figures (auto, fp8, ...)")
    return parser


def plan_parser() -> argparse.ArgumentParser:
    """The ``servewise plan`` parser."""
    parser = _Parser(prog="servewise plan", description=PLAN_HELP)
    _model_args(parser)
    parser.add_argument("--gpu", required=True, metavar="NAME:COUNT",
                        help="GPU name (see `servewise gpus`, or cpu) and GPUs per node")
    parser.add_argument("--nodes", type=_positive, default=1, help="nodes (default 1)")
    parser.add_argument("--gpu-memory", help="memory per GPU (95.59GiB, 96GB): for GPUs the "
                        "catalog lacks, or to use the driver's figure")
    parser.add_argument("--compute-capability", help="MAJOR.MINOR, for GPUs the catalog lacks")
    parser.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    parser.add_argument("--engine-version", help="engine version (0.19.0, "
                        "0.26.1rc1.dev229+g6f91edf96, V0); default: the latest read")
    parser.add_argument("--tp", type=_positive, help="tensor-parallel size")
    parser.add_argument("--pp", type=_positive, help="pipeline-parallel size")
    parser.add_argument("--dp", type=_positive, help="data-parallel size")
    parser.add_argument("--ep", type=_positive,
                        help="expert-parallel size (vLLM: --enable-expert-parallel; TP x DP)")
    parser.add_argument("--kv-cache-dtype", default="auto")
    parser.add_argument("--block-size", type=_positive)
    parser.add_argument("--max-model-len", type=_positive)
    parser.add_argument("--max-num-seqs", type=_positive)
    parser.add_argument("--max-num-batched-tokens", type=_positive)
    memory = parser.add_mutually_exclusive_group()
    memory.add_argument("--gpu-memory-utilization", type=_fraction)
    memory.add_argument("--mem-fraction-static", type=_fraction)
    memory.add_argument("--kv-cache-memory", metavar="BYTES",
                        help="a fixed KV pool per GPU (vLLM --kv-cache-memory-bytes; CPU "
                        "backend: VLLM_CPU_KVCACHE_SPACE GiB); 1073741824, 1GiB, 512MiB")
    parser.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs")
    parser.add_argument("--speculative", action="store_true",
                        help="load the MTP draft layers (speculative decoding)")
    parser.add_argument("--context", type=_positive,
                        help="report the concurrency at this context length")
    return parser


def _store(no_cache: bool) -> Any:
    if no_cache:
        return None
    from servewise.store import Store

    try:
        return Store()
    except ServewiseError as error:
        _say("warning", f"{error.message}; reading without the store")
        return None


def _load(args: argparse.Namespace) -> Any:
    from servewise.plan.resolve import load_model, reads_hub

    store = _store(args.no_cache) if reads_hub(args.model, args.revision) else None
    try:
        return load_model(args.model, revision=args.revision, store=store)
    finally:
        if store is not None:
            store.close()


def _say(label: str, text: str) -> None:
    sys.stderr.write(f"{label}: {text}\n")


def _emit(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def run_model(argv: Sequence[str]) -> int:
    """``servewise model``."""
    args = model_parser().parse_args(list(argv))
    from servewise.plan.report import model_report

    model = _load(args)
    report = model_report(model, kv_cache_dtype=args.kv_cache_dtype, tensors=args.tensors)
    if args.as_json:
        _emit(report)
    else:
        from servewise.render.plan_text import model_text

        sys.stdout.write(model_text(report))
    return 0


def settings_from(args: argparse.Namespace) -> tuple[Any, bool]:
    """:class:`~servewise.plan.startup.Settings` from parsed ``plan`` arguments."""
    from servewise.plan.device import parse_size
    from servewise.plan.startup import Settings
    from servewise.plan.weights import Parallel

    explicit = any(v is not None for v in (args.tp, args.pp, args.dp, args.ep))
    tp, pp, dp = args.tp or 1, args.pp or 1, args.dp or 1
    expert = False
    if args.ep is not None and args.ep > 1:
        if args.ep != tp * dp:
            raise UsageError(
                f"--ep {args.ep} must equal TP x DP ({tp * dp}): experts are spread over "
                "every tensor- and data-parallel rank",
                hint="drop --ep, or set it to --tp times --dp", ep=args.ep,
            )
        expert = True
    kv_memory = None
    if args.kv_cache_memory is not None:
        text = str(args.kv_cache_memory)
        kv_memory = int(text) if text.isdigit() else parse_size(text, "--kv-cache-memory")
    settings = Settings(
        engine=args.engine,
        engine_version=args.engine_version,
        layout=Parallel(tp, pp, dp, expert),
        kv_cache_dtype=args.kv_cache_dtype,
        block_size=args.block_size,
        max_model_len=args.max_model_len,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        gpu_memory_utilization=args.gpu_memory_utilization,
        mem_fraction_static=args.mem_fraction_static,
        kv_cache_memory_bytes=kv_memory,
        enforce_eager=args.enforce_eager,
        speculative=args.speculative,
    )
    return settings, explicit


def run_plan(argv: Sequence[str]) -> int:
    """``servewise plan``."""
    args = plan_parser().parse_args(list(argv))
    from servewise.knowledge.accounting import load_engine_constants
    from servewise.plan.device import find_device, parse_gpu_arg
    from servewise.plan.planner import make_plan

    name, count = parse_gpu_arg(args.gpu)
    settings, explicit = settings_from(args)
    memory = args.gpu_memory
    if name.strip().lower() == "cpu" and memory is None and args.kv_cache_memory is not None:
        memory = str(settings.kv_cache_memory_bytes) + "B"
    device = find_device(name, memory=memory, capability=args.compute_capability)
    model = _load(args)
    plan = make_plan(model, device, settings, load_engine_constants(), gpus_per_node=count,
                     nodes=args.nodes, context=args.context, explicit_layout=explicit)
    if args.as_json:
        _emit(plan.to_dict())
    else:
        from servewise.render.plan_text import plan_text

        for note in plan.notes:
            _say("note", note)
        sys.stdout.write(plan_text(plan.to_dict()))
    return 0 if plan.fits else 1


def run(command: str, argv: Sequence[str]) -> int:
    """Run ``plan`` or ``model`` with ``argv``; errors are rendered, the exit code returned."""
    as_json = "--json" in argv
    try:
        return run_plan(argv) if command == "plan" else run_model(argv)
    except ServewiseError as error:
        if as_json:
            _emit(error.to_dict())
        else:
            _say("error", error.message)
            if error.hint:
                _say("hint", error.hint)
        return error.exit_code


def main() -> None:
    """Console entry point: ``plan`` and ``model`` here, everything else through Typer."""
    argv = sys.argv[1:]
    if argv and argv[0] in FAST_COMMANDS:
        raise SystemExit(run(argv[0], argv[1:]))
    from servewise.cli import main as typer_main

    typer_main()
