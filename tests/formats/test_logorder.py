"""A log pasted newest first (from a log console) is put back in log order."""

from __future__ import annotations

from servewise.formats.logorder import in_log_order, newest_first

CONSOLE = """\
ERROR 2025-04-07T19:13:52.318307161Z [2025-04-07 19:13:52] Received sigquit from a child process.
ERROR 2025-04-07T19:13:52.317869663Z KeyError: 'model.layers.55.mlp.gate_up_proj.input_scale'
ERROR 2025-04-07T19:13:52.317867517Z param = params_dict[name]
ERROR 2025-04-07T19:13:52.317865848Z File "/sgl/models/llama.py", line 508, in load_weights
ERROR 2025-04-07T19:13:52.317853689Z Traceback (most recent call last):
"""


def test_timestamps_that_only_go_back_mean_newest_first() -> None:
    assert newest_first(CONSOLE)
    ordered = in_log_order(CONSOLE).splitlines()
    assert ordered[0].endswith("Traceback (most recent call last):")
    assert ordered[-1].endswith("Received sigquit from a child process.")


def test_a_log_in_order_or_without_enough_timestamps_is_left_alone() -> None:
    forward = "\n".join(reversed(CONSOLE.splitlines())) + "\n"
    assert not newest_first(forward) and in_log_order(forward) == forward
    two = "\n".join(CONSOLE.splitlines()[:2]) + "\n"
    assert not newest_first(two)  # one step back is not enough to turn a paste around
    mixed = CONSOLE.replace("19:13:52.317867517", "19:13:59.000000000")
    assert not newest_first(mixed)  # a step forward: not a console's order
    assert not newest_first("Traceback (most recent call last):\nValueError: x\n")
