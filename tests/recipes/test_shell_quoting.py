"""One shell quoting for every rendered command: a shell given the text runs the argv, only.

Users paste servewise's commands into shells. Whatever a recipe or a flag holds (newlines,
``$``, quotes, ``$(command)``, unicode), the shell must get back exactly the words rendered,
and never run a second command. The check runs the rendered text in ``bash`` itself.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.errors import UsageError
from servewise.recipes.launches import Launch, shell_join, shell_quote, shell_text
from servewise.recipes.renderers import render

#: Words the renderers leave to the shell on purpose ($HEAD_IP, $HOME/...): they expand.
_ENV = {"PATH": "/usr/bin:/bin", "HEAD_IP": "10.0.0.1", "HOME": "/home/u"}


def _bash_words(text: str) -> list[str]:
    """The argv bash builds from ``text`` (printed NUL-separated, nothing run)."""
    script = "printf '%s\\0' " + text
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=_ENV,
                          capture_output=True, check=True, timeout=10)
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


_WORD = st.text(st.characters(exclude_characters="\0", exclude_categories=["Cs"]),
                max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=6))
def test_the_shell_gets_back_every_word(argv: list[str]) -> None:
    literal = [w for w in argv if shell_quote(w) == w or shell_quote(w) == f'"{w}"']
    for word in literal:  # left to the shell: plain characters and one $NAME, nothing else
        assert all(c.isalnum() or c in "_./:@%+,=-$*() " for c in word), word
    expected = [_expand(w) if w in literal else w for w in argv]
    assert _bash_words(shell_text(argv)) == expected
    assert _bash_words(shell_join(argv)) == argv


def _expand(word: str) -> str:
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                           f"printf '%s' {shell_quote(word)}"], env=_ENV,
                          capture_output=True, check=True, timeout=10)
    return done.stdout.decode()


@pytest.mark.parametrize("word", ["$HOME\n", "$HOME\nid", "x\n; id", "$(id)", "`id`",
                                  "a'b", 'a"b', "--x=$(id)", "$HOME;id", "🙂 é"])
def test_a_hostile_recipe_argument_stays_one_word(word: str) -> None:
    launch = Launch("vllm", "org/m", ("--served-model-name", word), image="vllm/vllm-openai:v1")
    for fmt in ("vllm", "docker"):
        rendered = render(launch, fmt)
        words = _bash_words(rendered.shell.strip())
        assert words == [_expand(w) if shell_quote(w) in (w, f'"{w}"') else w
                         for w in rendered.argv]
        assert word in words  # one word, as written: nothing expanded, nothing run
        assert "uid=" not in " ".join(words)


def test_a_variable_with_a_trailing_newline_is_quoted() -> None:
    # `$` in a regex also matches before a final newline: the match must be the whole word
    assert shell_quote("$HOME\n") == "'$HOME\n'"
    assert shell_quote("$HEAD_IP") == "$HEAD_IP"
    assert shell_quote("$HOME/.cache") == '"$HOME/.cache"'
    assert shell_quote("$((LWS_WORKER_INDEX * 2))") == '"$((LWS_WORKER_INDEX * 2))"'
    assert shell_quote("$(id)") == "'$(id)'"


def test_a_nul_byte_is_refused() -> None:
    with pytest.raises(UsageError, match="NUL"):
        shell_text(["vllm", "serve", "a\0b"])
    with pytest.raises(UsageError, match="NUL"):
        render(Launch("vllm", "org/m", ("--x", "a\0b")), "vllm")


def test_the_kubernetes_script_quotes_a_command_substitution() -> None:
    launch = Launch("vllm", "org/m", ("--served-model-name", "$(id)"),
                    image="vllm/vllm-openai:v1", nodes=2, gpus=8)
    script = render(launch, "k8s").shell
    assert "'$(id)'" in script and '"$(id)"' not in script
    assert '"$LWS_LEADER_ADDRESS"' in script  # the leader's address still expands
