"""Print `name==minimum` for every dependency pyproject.toml declares (and the named extras),
so CI can install the lowest declared versions and prove the `>=` bounds are true.

    python .ci/lowest_requirements.py dev > lowest.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
project = tomllib.loads(pyproject.read_text())["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += project["optional-dependencies"][extra]
pins: dict[str, str] = {}
for req in requirements:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+).*", req)
    if not m:
        sys.exit(f"{req!r}: every dependency needs a '>=' lower bound")
    name = m.group(1).lower()
    pins[name] = max(pins.get(name, m.group(3)), m.group(3),
                     key=lambda v: tuple(map(int, v.split("."))))
print("\n".join(f"{name}=={version}" for name, version in pins.items()))
