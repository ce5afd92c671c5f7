"""servewise: get a large language model serving on your GPUs, right the first time."""

__version__ = "0.1.0"
