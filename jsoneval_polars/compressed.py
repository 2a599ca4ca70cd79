"""Compressed JSON inputs (gzip, zstd, bzip2): each is decompressed once, as a stream, to a
plain copy in a folder of the run's, and the run reads the copy as it reads any NDJSON file or
JSON array. The drivers read records back by byte offset, which a compressed stream cannot
seek to. What the user sees names their own file: the copy's path is replaced by it in the
errors table and in a raised input error. The copies are removed when the run ends, however it
ends.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from .ingest import InputError, InputFileError, codec_of, plain_name


@contextlib.contextmanager
def plain_copies(sources: Mapping[str, Any], parent: str | Path | None = None
                 ) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """``sources`` (side -> input) with each compressed file replaced by a decompressed copy in
    a new folder under ``parent`` (default: the system's temporary folder), and the names to
    show for the copies (copy path -> the user's path). Input errors raised inside name the
    user's files; the folder is removed on exit."""
    codecs = {side: codec_of(source) for side, source in sources.items()}
    if not any(codecs.values()):
        yield dict(sources), {}
        return
    if parent is not None:  # the output's parent, which the run makes anyway
        Path(parent).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=".jsoneval-input-", dir=parent))
    names: dict[str, str] = {}
    try:
        plain = dict(sources)
        jobs = []
        for side, codec in codecs.items():
            if codec:
                original = Path(sources[side])
                copy = folder / f"{side}-{plain_name(original.name)}"
                jobs.append((original, copy, codec))
                plain[side] = copy
                names[str(copy)] = str(sources[side])
        # both sides at once: pyarrow decompresses without the GIL
        with ThreadPoolExecutor(len(jobs)) as pool:
            for done in [pool.submit(_decompress, *job) for job in jobs]:
                done.result()
        try:
            yield plain, names
        except InputError as exc:  # worded with a copy's path: say the user's instead
            message = str(exc)
            for copy, original in names.items():
                message = message.replace(copy, original)
            if message == str(exc):
                raise
            raise type(exc)(message) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def with_names(errors: pl.DataFrame, names: Mapping[str, str]) -> pl.DataFrame:
    """The errors table with each copy's path in ``file`` replaced by the user's."""
    if not names or "file" not in errors.columns:
        return errors
    return errors.with_columns(pl.col("file").replace(dict(names)))


def inputs_named(inputs: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A manifest's ``inputs`` entries with each copy's path replaced by the user's."""
    out = {}
    for side, entry in inputs.items():
        if isinstance(entry, dict) and entry.get("path") in names:
            original = names[entry["path"]]
            entry = {**entry, "path": original, "bytes": Path(original).stat().st_size}
        out[side] = entry
    return out


def _decompress(source: Path, target: Path, codec: str) -> None:
    import pyarrow as pa

    try:
        with pa.CompressedInputStream(pa.OSFile(str(source)), codec) as stream, \
                open(target, "wb") as out:
            while chunk := stream.read(16 << 20):
                out.write(chunk)
    except (pa.ArrowException, OSError) as exc:
        # a corrupt stream; or no room for the copy (an errno), where the folder matters
        where = f" to {target.parent}" if getattr(exc, "errno", None) else ""
        raise InputFileError(f"{source}: cannot decompress it as {codec}{where}: "
                             f"{str(exc).strip() or type(exc).__name__}") from None


def reads_compressed(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """``evaluate(gt, aio, ...)`` that reads compressed files through plain copies (in the
    system's temporary folder, removed when it returns): its Result's errors and manifest name
    the user's files."""

    @functools.wraps(evaluate)
    def run(gt: Any, aio: Any, *args: Any, **kwargs: Any) -> Any:
        with plain_copies({"gt": gt, "aio": aio}) as (plain, names):
            result = evaluate(plain["gt"], plain["aio"], *args, **kwargs)
        if names:
            result.errors = with_names(result.errors, names)
            result.manifest["inputs"] = inputs_named(result.manifest.get("inputs", {}), names)
        return result

    return run
