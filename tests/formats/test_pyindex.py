"""Package index pages (PEP 691 JSON, PEP 503 HTML) and wheel file names."""

from __future__ import annotations

import json

import pytest

from servewise.errors import FormatError
from servewise.formats import pyindex


def test_wheel_names_and_preference() -> None:
    name = pyindex.parse_wheel_name("vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl")
    assert name is not None and (name.name, name.version) == ("vllm", "0.33.0")
    assert name.supports("x86_64") and not name.supports("aarch64")
    torch = pyindex.parse_wheel_name("torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    pure = pyindex.parse_wheel_name("Flash_Attn-2.8.0.post2-py3-none-any.whl")
    assert torch is not None and pure is not None and pure.name == "flash-attn"
    assert pure.supports("aarch64")
    assert name.rank() > (*torch.rank()[:1], 0, 0) and torch.rank() > pure.rank()
    multi = pyindex.parse_wheel_name("x-1-cp39-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64"
                                     ".whl")
    assert multi is not None and multi.supports(None, "manylinux2014_aarch64")
    assert pyindex.parse_wheel_name("vllm-0.33.0.tar.gz") is None


def test_json_and_html_pages() -> None:
    sha = "b" * 64
    json_page = json.dumps({"meta": {"api-version": "1.1"}, "files": [{
        "filename": "a-1-py3-none-any.whl", "url": "../../files/a-1-py3-none-any.whl",
        "hashes": {"sha256": sha}, "size": 5, "upload-time": "2026-01-01T00:00:00Z",
        "yanked": False}]}).encode()
    (one,) = pyindex.parse_simple_json(json_page, "https://idx.example/simple/a/")
    assert one.url == "https://idx.example/files/a-1-py3-none-any.whl"
    assert (one.sha256, one.size, one.upload_time) == (sha, 5, "2026-01-01T00:00:00Z")
    html_page = (b'<html><a href="/f/a-1-py3-none-any.whl#sha256=' + sha.encode() + b'">'
                 b'a-1-py3-none-any.whl</a><a href="/f/a-0.whl" data-yanked="">a-0.whl</a></html>')
    first, second = pyindex.parse_simple_html(html_page, "https://idx.example/simple/a/")
    assert first.url == "https://idx.example/f/a-1-py3-none-any.whl" and first.sha256 == sha
    assert second.yanked
    with pytest.raises(FormatError):
        pyindex.parse_simple_json(b'{"files": [{"filename": 3}]}', "https://x/")
