"""Knowledge shipped as data: the GPU catalog, known engine libraries, model families.

Each table is a TOML file in ``servewise/knowledge/data/`` with a source per
entry; a file of the same name in ``$SERVEWISE_DATA_DIR`` (default
``~/.config/servewise/``) adds entries or overrides shipped ones by ``id``.
"""

from servewise.knowledge._load import DataFileError, user_data_dir
from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog
from servewise.knowledge.libraries import KnownLibrary, LibraryTable, load_library_table
from servewise.knowledge.models import ModelFamily, ModelTable, load_model_table

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
