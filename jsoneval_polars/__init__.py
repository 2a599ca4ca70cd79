"""jsoneval_polars: columnar scoring of structured AI output against ground truth.

The names below load their modules (and Polars) when first used, not on ``import
jsoneval_polars``: so the ``jsoneval`` command can answer a Ctrl-C while its libraries load
(``__main__.main``), and a module of the package is imported without all the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from .config import Config, ConfigError, load_config, parse_config  # noqa: F401
    from .gate import RunFailed, check_run  # noqa: F401
    from .ingest import InputError  # noqa: F401
    from .pipeline import Result, evaluate  # noqa: F401

#: Each public name and the module that defines it.
_HOMES = {
    "Config": "config",
    "ConfigError": "config",
    "InputError": "ingest",
    "Result": "pipeline",
    "RunFailed": "gate",
    "check_run": "gate",
    "evaluate": "pipeline",
    "load_config": "config",
    "parse_config": "config",
}
__all__ = list(_HOMES)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
