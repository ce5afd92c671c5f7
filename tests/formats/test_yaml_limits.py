"""YAML with limits: alias bombs and deep nesting are refused before anything is built."""

from __future__ import annotations

import pytest
import yaml

from servewise.formats.yaml_limits import YamlLimitError, check_yaml_shape, load_yaml_limited


def bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines)


def test_an_alias_bomb_is_refused_with_what_was_found() -> None:
    with pytest.raises(YamlLimitError) as info:
        load_yaml_limited(bomb(10), source="bomb.yaml")
    assert info.value.source == "bomb.yaml" and "aliases expanded" in info.value.expected


def test_ordinary_aliases_still_load() -> None:
    assert load_yaml_limited("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}
    check_yaml_shape(bomb(4))  # 9^4 nodes: fine


def test_nesting_is_bounded() -> None:
    with pytest.raises(YamlLimitError, match="levels"):
        check_yaml_shape("[" * 200 + "]" * 200)
    with pytest.raises(yaml.YAMLError):
        check_yaml_shape("[" * 5000 + "]" * 5000)  # libyaml's own limit: not YAML to us
