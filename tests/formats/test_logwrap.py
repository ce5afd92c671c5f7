"""Hard-wrapped pastes: found by their width, joined again; tables and runs of records are not."""

from __future__ import annotations

from servewise.formats.logwrap import unwrapped, word_wrap_width, wrap_width

MESSAGE = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on "
           "memory. Memory on the node (IP: 10.0.167.26, ID: abd406d415bd2b74a5e281968fd76aa2"
           "00d56e4529fd1c1cd4373840) where the task was running was 29.63GB / 31.11GB (0.952), "
           "which exceeds the memory usage threshold of 0.95. Ray killed this worker because it "
           "was the most recently scheduled task.")


def _terminal(text: str, width: int) -> str:
    return "\n".join(line[i:i + width] for line in text.split("\n")
                     for i in range(0, max(len(line), 1), width)) + "\n"


def test_a_terminal_wrap_is_found_and_joined() -> None:
    text = "INFO starting\n" + MESSAGE + "\nINFO done"
    wrapped = _terminal(text, 100)
    assert wrap_width(wrapped) == 100
    assert unwrapped(wrapped) == text + "\n"


def test_an_unwrapped_log_is_returned_as_it_is() -> None:
    text = "INFO starting\n" + MESSAGE + "\nINFO done\n"
    assert unwrapped(text) is text


def test_tables_runs_of_records_and_frames_are_not_wraps() -> None:
    row = ("| tensorrt_llm | 1 | UNAVAILABLE: Internal: unexpected error when creating model "
           + "x" * 30)
    table = "\n".join(f"{row[:-len(str(n))]}{n}|" for n in range(5)) + "\n"
    records = "".join(f"2024-09-25T15:04:34.6{n}Z ERROR warmup: Server error: CANCELLED "
                      + "y" * 40 + "\n" for n in range(10, 15))
    frames = "".join(f'  File "/usr/lib/python3.10/site-packages/vllm/worker/model_runner_{n}.py", '
                     f"line 1{n}, in run\n    self.execute_model(x)\n" for n in range(10, 14))
    for text in (table, records, frames):
        assert wrap_width(text) is None


def _fold(text: str, width: int, *, keep_space: bool) -> str:
    """Wrap at the last space that fits, the way ``fold -s`` (space kept at the end of the
    line) or an editor's hard wrap (space dropped) does."""
    out: list[str] = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width if keep_space else width + 1)
            out.append(line[:cut + 1] if keep_space else line[:cut])
            line = line[cut + 1:]
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_wrap_at_word_breaks_is_found_and_joined() -> None:
    """With the space at the break kept (``fold -s``) or dropped (an editor's hard wrap)."""
    start = "INFO 12-03 10:41:07 starting the engine with tensor_parallel_size=2 on two GPUs"
    text = f"{start}\n{MESSAGE}\nINFO done"
    for keep_space in (True, False):
        wrapped = _fold(text, len(start), keep_space=keep_space)
        assert wrap_width(wrapped) is None
        assert word_wrap_width(wrapped) == len(start)
        assert unwrapped(wrapped) == text + "\n"


def test_record_runs_rules_and_padded_rows_are_not_word_wraps() -> None:
    nccl = "".join(f"gpu2-ru7:214{n}:2555 [{n}] NCCL INFO Ring 00 : {n}[3d000] -> {n + 1}[3e000] "
                   f"via direct shared memory and more words\n" for n in range(5))
    ruled = ("ValueError: Engine world size (2 * 1) != Runtime world size (1) and so on\n"
             + "-" * 74 + "\nPrimary job  terminated normally, but 1 process returned\n"
             "a non-zero exit code. Per user-direction, the job has been aborted here.\n"
             + "-" * 74 + "\n")
    padded = "".join(f"{'local-llm | model ' + str(n):<70}\nnext cell {n}\n" for n in range(4))
    for text in (nccl, ruled, padded):
        assert word_wrap_width(text) is None
        assert unwrapped(text) is text
