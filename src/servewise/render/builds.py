"""Human output for the commands about builds as a whole: ``version`` and ``diff``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from servewise.versions import VersionReading

_VERSION_FIELDS = (
    ("form", "read as"), ("engine", "engine"), ("package", "package"),
    ("repository", "repository"), ("tag", "tag"), ("digest", "digest"),
    ("channel", "channel"), ("version", "version"), ("base_version", "release"),
    ("pre", "pre-release"), ("post", "post-release"), ("dev", "dev number"),
    ("commits_since_tag", "commits since tag"), ("local", "local part"),
    ("commit", "commit"), ("build_date", "build date"), ("cuda", "CUDA"),
    ("variant", "variant"),
)


def version_table(reading: VersionReading) -> Table:
    """The parts of one version string or tag, then what they mean."""
    table = Table(title=reading.input, title_justify="left", show_header=False)
    table.add_column("field", style="dim")
    table.add_column("value")
    for key, label in _VERSION_FIELDS:
        value = getattr(reading, key)
        if value is None or value == "":
            continue
        if key == "pre":
            value = f"{value[0]}{value[1]}"
        table.add_row(label, Text(str(value)))
    table.add_row("floating", "yes: the publisher moves it" if reading.floating else "no")
    table.add_row("official build possible",
                  "yes" if reading.official_build_possible else Text("no (a local build)",
                                                                      style="bold yellow"))
    for index, sentence in enumerate(reading.meaning):
        table.add_row("meaning" if index == 0 else "", Text(sentence))
    return table
