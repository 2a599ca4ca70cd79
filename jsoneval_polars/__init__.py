"""jsoneval_polars: columnar scoring of structured AI output against ground truth."""

from .config import Config, ConfigError, load_config, parse_config
from .gate import RunFailed, check_run
from .ingest import InputError
from .pipeline import Result, evaluate

__all__ = [
    "Config",
    "ConfigError",
    "InputError",
    "Result",
    "RunFailed",
    "check_run",
    "evaluate",
    "load_config",
    "parse_config",
]
__version__ = "0.1.0"
