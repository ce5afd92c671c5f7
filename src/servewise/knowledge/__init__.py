"""Knowledge shipped as data: the GPU catalog, known engine libraries, model families.

Each table is a TOML file in ``servewise/knowledge/data/`` with a source per
entry; a file of the same name in ``$SERVEWISE_DATA_DIR`` (default
``~/.config/servewise/``) adds entries or overrides shipped ones by ``id``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servewise.knowledge._load import DataFileError, user_data_dir
    from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog
    from servewise.knowledge.libraries import KnownLibrary, LibraryTable, load_library_table
    from servewise.knowledge.models import ModelFamily, ModelTable, load_model_table

#: Where each name lives: imported on first use, so a command that needs one table (the
#: planner's accounting constants) does not pay for the others at start-up.
_HOMES = {
    "DataFileError": "_load", "user_data_dir": "_load",
    "Gpu": "gpus", "GpuCatalog": "gpus", "load_gpu_catalog": "gpus",
    "KnownLibrary": "libraries", "LibraryTable": "libraries", "load_library_table": "libraries",
    "ModelFamily": "models", "ModelTable": "models", "load_model_table": "models",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "DataFileError",
    "Gpu",
    "GpuCatalog",
    "KnownLibrary",
    "LibraryTable",
    "ModelFamily",
    "ModelTable",
    "load_gpu_catalog",
    "load_library_table",
    "load_model_table",
    "user_data_dir",
]
