"""Public registries and PyPI, for real: Docker Hub's anonymous token flow and a PyPI wheel.

Marked ``online`` (skipped by default); run with ``pytest -m online``.
"""

from __future__ import annotations

import pytest

from servewise.inspect.scan import scan_build
from servewise.inspect.tags import list_tags
from servewise.sources import SourceOptions

pytestmark = pytest.mark.online


def test_docker_hub_multi_arch_image() -> None:
    amd = scan_build("hello-world:latest", options=SourceOptions())
    arm = scan_build("hello-world:latest", options=SourceOptions(platform="linux/arm64"))
    assert amd.metadata["digest"] == arm.metadata["digest"]
    assert amd.metadata["manifest_digest"] != arm.metadata["manifest_digest"]
    assert amd.metadata["platform"] == "linux/amd64" and amd.metadata["created"]


def test_docker_hub_tags() -> None:
    listed = list_tags("library/hello-world", match="^linux$")
    assert [t.tag for t in listed.tags] == ["linux"] and listed.tags[0].created


def test_pypi_wheel_by_range_requests() -> None:
    report = scan_build("pypi:sgl-deep-gemm==0.2.5")
    assert report.metadata["range_requests"] is True
    (library,) = [lib for lib in report.libraries if lib.path.endswith("_C.so")]
    assert "sm_120" in library.dispatch
