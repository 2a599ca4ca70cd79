import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# the tests' own helper modules (reference.py, conformance.py, strategies.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Property tests draw the same examples on every run: a user's first `pytest` (and every CI run)
# must not depend on a lucky draw, and a failure is reproduced by running the test again. No
# shrinking here: the failing draw is printed as found, at once, instead of minutes of shrinking.
#
# Longer random exploration is opt-in:
#     python -m pytest tests/test_properties.py --hypothesis-profile=explore
# draws new examples on every run, remembers failures in .hypothesis/ and shrinks them, for at
# most EXPLORE_SHRINK_SECONDS per failure.
DETERMINISTIC = settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    print_blob=True,
)
EXPLORE_SHRINK_SECONDS = 60
settings.register_profile(
    "explore",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    phases=tuple(Phase),
    print_blob=True,
)
settings.load_profile("deterministic")  # the plugin's --hypothesis-profile, when given, wins


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: runs on a local Spark session (needs pyspark)")
    if config.getoption("hypothesis_profile", None) == "explore":
        # Hypothesis bounds shrinking at 300 s per failure, a constant it does not expose as a
        # setting; shorter keeps an exploration run bounded.
        from hypothesis.internal.conjecture import engine

        if hasattr(engine, "MAX_SHRINKING_SECONDS"):
            engine.MAX_SHRINKING_SECONDS = EXPLORE_SHRINK_SECONDS


_RECURSION_LIMIT = sys.getrecursionlimit()


@pytest.fixture(autouse=True)
def _same_recursion_limit():
    """Every test starts with the interpreter's recursion limit: it decides whether a deeply
    nested document parses, and a library (seen after a Spark session) may have raised it."""
    sys.setrecursionlimit(_RECURSION_LIMIT)
    yield


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def messy(tmp_path: Path) -> tuple[Path, Path]:
    deep = '{"doc_id":"deep","a":' + "[" * 1100 + "]" * 1100 + "}"
    gt = _write(
        tmp_path / "gt.ndjson",
        [
            '{"doc_id":"1","a":1}',
            '{"doc_id":"2","a":NaN,"b":1e400}',
            "not json",
            "[1,2]",
            '{"doc_id":"1","a":2}',
            '{"doc_id":"3","a":1,"a":2}',
            '{"doc_id":"4","big":123456789012345678901234567890}',
            '{"doc_id":"5","s":"\\ud800"}',
            deep,
            '"a string root"',
        ],
    )
    aio = _write(
        tmp_path / "aio.ndjson",
        [
            '{"doc_id":"1","a":1}',
            '{"doc_id":"2","a":null}',
            '{"doc_id":"3","a":2}',
            '{"doc_id":"4","big":123456789012345678901234567891}',
            '{"doc_id":"5","s":"x"}',
            '{"doc_id":"7","x":[1,{"a":1}]}',
            "{broken",
        ],
    )
    return gt, aio


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole test run (getOrCreate: shared by every module that
    asks for one), skipped when pyspark is absent. Small Arrow batches, so partitions arrive in
    several batches."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install -e '.[spark]'")
    import os

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("jsoneval-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
