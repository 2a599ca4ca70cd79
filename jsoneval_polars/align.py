"""Align lists of records between GT and AIO and give every leaf its final path (SPEC §5).

Lists are aligned one nesting depth at a time. At each depth the candidate (GT item, AIO item)
pairs of every list instance in the batch are built with one join, their match-field
similarities computed in bulk, and the matching is chosen:

* ``index``   -- item i matches item i;
* ``greedy``  -- vectorized: a pair that is the best (similarity desc, GT index, AIO index) for
  both its GT item and its AIO item is always taken by the sequential greedy algorithm, so each
  round takes all such mutual-best pairs and drops the pairs they block; rounds repeat until no
  candidate is left;
* ``optimal`` -- scipy's linear assignment per list instance (a Python loop over instances: the
  solver has no batched form).

A list instance is identified by (document, list attribute, canonical parent item), where the
canonical id of an AIO item is the id of the GT item it matched, or its own id when unmatched.
That is how nested lists are aligned within their matched parent pair.

Candidates: an instance with at most ``DENSE_PAIRS`` (GT item, AIO item) pairs takes all its
pairs (one join for all such instances of the batch); an ``index`` instance takes its i-i pairs;
a larger ``greedy`` or ``optimal`` instance takes only the pairs whose similarity can reach the
threshold, found chunk by chunk of GT items (:func:`_bounded_pairs`), so memory stays linear in
list length. Pairs below the threshold are never matched, so leaving them out changes nothing.

Index lists and dense greedy lists (all their pairs built) are matched by the native kernel
when it is built (``src/matching.rs``, :data:`MATCH_NATIVELY`): it takes each instance's items
and match fields, looks the members up, scores the pairs with the same rules and takes them in
the same order, without a candidate table. The Polars path below is its reference and matches
the optimal and large instances. When every list of the batch has configured match fields and is
matched greedily or by index (the usual config), the kernel also finds each depth's instances
from the items themselves (:func:`_configured_matches`), and no instance or field table is built.

Strings are joined and grouped only on the small item and path tables: list attributes and
member names are dictionary-encoded once per batch, and every leaf leaves here with a path id
(``pid``, UInt32) numbered in the sort order of the path strings, so that later stages pair,
sort and group leaves on integers and decode strings only for the output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .config import Config, ListMethod
from .flatten import Flattened, _native, member_segment
from .schemas import ALIGNMENTS
from .scorers import TEXT_CAP
from .similarity import capped_text, levenshtein_similarity
from .readers import member_keys

_SCALAR_KINDS = ["null", "bool", "int", "float", "string"]
_KEY = ["doc", "la", "pcanon"]  # list instance; la = list attribute id
#: The methods whose instances src/matching.rs matches (the dense ones, for greedy).
_KERNEL_METHODS = (ListMethod.GREEDY, ListMethod.INDEX)

#: The alignments table of a batch: the output table's columns, keyed by ``doc`` (the batch's
#: document number) until the batch core attaches the doc ids.
ALIGNMENT_SCHEMA = {"doc": pl.UInt32, **{c: t for c, t in ALIGNMENTS.items() if c != "doc_id"}}
LEAF_COLUMNS = ["doc", "pid", "kind", "text", "is_null"]

#: A greedy or optimal list instance with more (GT item, AIO item) pairs than this is aligned
#: from the pairs that can reach its threshold only (:func:`_bounded_pairs`).
DENSE_PAIRS = 4096
#: Cells (GT items x AIO items) of one chunk of :func:`_bounded_pairs`: ~20 MB of work arrays.
CHUNK_CELLS = 1 << 20
#: A list with more matched pairs than this counts its order's concordant pairs in chunks.
ORDER_JOIN = 256
#: (pair, match field) cells a large instance may keep for exact scoring (about 2 GB of work
#: in _pair_similarity); a document with an instance over it is not aligned but reported.
CANDIDATE_CELLS = 20_000_000
#: Index lists and greedy lists of at most DENSE_PAIRS pairs are matched by the native kernel
#: (src/matching.rs) when it is built; the rest of this module is its reference.
MATCH_NATIVELY = _native is not None
#: Rounding margin between a bound computed here and the exact mean of _pair_similarity.
_MARGIN = 1e-9


@dataclass
class Aligned:
    # LEAF_COLUMNS of each leaf; pid indexes ``paths``. A side with an empty array facing a
    # list of records has ``keep``, false for those leaves (classify.pair_leaves skips them)
    gt: pl.DataFrame
    aio: pl.DataFrame
    alignments: pl.DataFrame
    # one row per distinct final path, in sort order of ``path`` (row i has pid i): path,
    # attribute, key. Attribute and key are functions of the path (the path with indices
    # written [], and its last object key: flatten.py's contract), so one row per path holds.
    paths: pl.DataFrame
    # documents left out because a list instance kept more candidate pairs than
    # CANDIDATE_CELLS allows: doc -> message (their leaves and alignments are dropped)
    failed: dict[int, str] = field(default_factory=dict)


def encode(values: list[pl.Series]) -> tuple[pl.Series, list[pl.Series]]:
    """Dictionary-encode string columns together: (sorted distinct values, UInt32 ids), so
    that id order is string order. The native kernel hashes each value once (src/dictionary.rs)
    where Polars' unique, sort and Enum cast below hash each column twice."""
    if _native is not None and all(v.dtype == pl.String for v in values):
        names, ids = _native.encode([v.to_frame("v") for v in values])
        return (pl.DataFrame(names).to_series().alias(values[0].name),
                [pl.DataFrame(i).to_series().alias(v.name) for i, v in zip(ids, values,
                                                                            strict=True)])
    return encode_by_polars(values)


def encode_by_polars(values: list[pl.Series]) -> tuple[pl.Series, list[pl.Series]]:
    """:func:`encode` by Polars' unique, sort and Enum cast (the pure-Python build's)."""
    dictionary = pl.concat([v.unique() for v in values]).unique().sort()
    enum = pl.Enum(dictionary)
    return dictionary, [v.cast(enum).to_physical().cast(pl.UInt32) for v in values]


def _ids(names: pl.Series, wanted: list[str]) -> dict[str, int]:
    """Ids of the ``wanted`` names present in the dictionary ``names``."""
    pos = {n: i for i, n in enumerate(names.to_list())} if wanted else {}
    return {w: pos[w] for w in wanted if w in pos}


def _list_settings(config: Config, la_ids: dict[str, int]) -> pl.DataFrame:
    rows = [
        (la_ids[name], lc.threshold, lc.method.value)
        for name, lc in config.lists.items()
        if name in la_ids
    ]
    return pl.DataFrame(
        rows,
        schema={"la": pl.UInt32, "threshold": pl.Float64, "method": pl.String},
        orient="row",
    )


def _match_fields(
    g: pl.DataFrame, gt_members: pl.DataFrame, config: Config, la_ids: dict, field_ids: dict
) -> pl.DataFrame:
    """(doc, la, pcanon, field, fuzzy_cfg, auto, prefix, slot) for every GT list instance
    here; ``slot`` is a configured field's position in its list's match_fields (null for the
    default fields)."""
    configured = pl.DataFrame(
        [
            (la_ids[name], field_ids[f.field], f.compare.value, f.prefix, slot)
            for name, lc in config.lists.items()
            if lc.match_fields and name in la_ids
            for slot, f in enumerate(lc.match_fields)
        ],
        schema={"la": pl.UInt32, "field": pl.UInt32, "compare": pl.String, "prefix": pl.Int64,
                "slot": pl.Int64},
        orient="row",
    )
    names = [la_ids[n] for n, lc in config.lists.items() if lc.match_fields is not None
             and n in la_ids]
    configured_list = pl.col("la").is_in(pl.Series(names, dtype=pl.UInt32).implode())
    # selected before filtering: an eager filter copies every column of the items
    keys = g.select(*_KEY, "gt_item")
    explicit = keys.filter(configured_list).select(_KEY).unique().join(configured, on="la")
    default = (
        keys.filter(~configured_list)
        .join(
            gt_members.select("item", "field", "kind").filter(pl.col("kind").is_in(_SCALAR_KINDS)),
            left_on="gt_item",
            right_on="item",
        )
        .select(*_KEY, "field")
        .unique()
        .with_columns(pl.lit("auto").alias("compare"), pl.lit(None, pl.Int64).alias("prefix"),
                      pl.lit(None, pl.Int64).alias("slot"))
    )
    return pl.concat([explicit, default]).select(
        *_KEY,
        "field",
        (pl.col("compare") == "fuzzy").alias("fuzzy_cfg"),
        (pl.col("compare") == "auto").alias("auto"),
        "prefix",
        "slot",
    )


def _with_field_thresholds(
    fields: pl.DataFrame, config: Config, la_names: pl.Series, field_names: pl.Series
) -> pl.DataFrame:
    """Add ``fthr``: the field_thresholds entry of each match field (its item attribute
    ``list[].field``, else its bare name), null for none. Below it, a match field compared by
    Levenshtein scores 0 (DECISIONS.md 54)."""
    if not config.field_thresholds or fields.height == 0:
        return fields.with_columns(pl.lit(None, pl.Float64).alias("fthr"))
    pairs = fields.select("la", "field").unique()
    thresholds = [
        config.per_field("field_thresholds",
                         la_names[la] + "[]" + member_segment(field_names[f]), field_names[f])
        for la, f in pairs.iter_rows()
    ]
    return fields.join(
        pairs.with_columns(pl.Series("fthr", thresholds, dtype=pl.Float64)),
        on=["la", "field"], how="left", maintain_order="left",
    )


def _pair_similarity(
    cand: pl.DataFrame, fields: pl.DataFrame, gt_members: pl.DataFrame, aio_members: pl.DataFrame
) -> pl.DataFrame:
    """Mean match-field similarity of each candidate pair (0 when no field counts).

    Needs each candidate's list ``method`` and ``threshold``. Levenshtein runs only where its
    value can matter: on the index pairs of index lists, and for greedy and optimal lists on
    the pairs whose similarity can still reach the threshold, bounded above from the text
    lengths (distance >= length difference). The other pairs keep that bound, which leaves them
    below the threshold: they are never matched and their similarity is never shown.
    """
    used = fields["field"].unique()
    gm = gt_members.filter(pl.col("field").is_in(used.implode())).select(
        pl.col("item").alias("gt_item"),
        "field",
        pl.col("kind").alias("gt_kind"),
        pl.col("text").alias("gt_text"),
        pl.col("is_null").alias("gt_null"),
        pl.col("key").alias("gt_key"),
    )
    am = aio_members.filter(pl.col("field").is_in(used.implode())).select(
        pl.col("item").alias("aio_item"),
        "field",
        pl.col("text").alias("aio_text"),
        pl.col("is_null").alias("aio_null"),
        pl.col("key").alias("aio_key"),
    )
    cand = cand.with_row_index("_c")
    pf = (
        cand.select(*_KEY, "_c", "gt_item", "aio_item")
        .join(fields, on=_KEY)
        .join(gm, on=["gt_item", "field"], how="left")
        .join(am, on=["aio_item", "field"], how="left")
        .with_columns(
            pl.col("gt_null").fill_null(True),
            pl.col("aio_null").fill_null(True),
            _prefixed("gt_text"),
            _prefixed("aio_text"),
        )
    )
    # under auto a GT date string compares as a date (DECISIONS.md 51), other strings by
    # Levenshtein; exact comparisons are by value (keys: readers.member_keys) unless prefixed
    fuzzy = pl.col("fuzzy_cfg") | (
        pl.col("auto") & (pl.col("gt_kind") == "string") & pl.col("gt_key").is_null()
    )
    same = (pl.col("gt_text") == pl.col("aio_text")) | (
        pl.col("prefix").is_null() & (pl.col("gt_key") == pl.col("aio_key"))
    ).fill_null(False)
    lev_row = ~pl.col("gt_null") & ~pl.col("aio_null") & fuzzy.fill_null(False)
    n_gt, n_aio = (pl.col(c).str.len_chars().cast(pl.Int64) for c in ("gt_text", "aio_text"))
    below = pl.col("fthr").is_not_null() & (pl.col("_lev_value") < pl.col("fthr"))
    longest = pl.max_horizontal(n_gt, n_aio)
    pf = pf.with_columns(
        lev_row.alias("_lev_row"),
        pl.when(lev_row)
        .then(pl.when(longest == 0).then(1.0).otherwise(1.0 - (n_gt - n_aio).abs() / longest))
        .alias("_bound"),
    )
    one_field = fields.height == fields.select(_KEY).n_unique()

    def per_candidate(lev: pl.Expr) -> pl.Series:
        fsim = (
            pl.when(pl.col("gt_null") & pl.col("aio_null"))
            .then(None)
            .when(pl.col("gt_null") | pl.col("aio_null"))
            .then(0.0)
            .when(pl.col("_lev_row"))
            # a bound below the field's threshold is 0 too: the similarity is no higher
            .then(pl.when(below).then(0.0).otherwise(pl.col("_lev_value")))
            .otherwise(same.cast(pl.Float64))
        )
        frame = pf.with_columns(lev.alias("_lev_value"))
        if one_field:  # one row per candidate: no mean needed
            means = frame.select("_c", fsim.alias("s"))
        else:
            means = frame.group_by("_c").agg(fsim.mean().alias("s"))
        sim = np.zeros(cand.height)
        means = means.drop_nulls("s")
        sim[means["_c"].to_numpy()] = means["s"].to_numpy()
        return pl.Series("similarity", sim)

    exact = cand.select(
        pl.when(pl.col("method") == ListMethod.INDEX.value)
        .then(pl.col("gt_index") == pl.col("aio_index"))
        # the margin covers any rounding difference between the two means
        .otherwise(per_candidate(pl.col("_bound")) >= pl.col("threshold") - 1e-9)
    ).to_series()
    at = pf.select(pl.col("_lev_row") & pl.lit(exact).gather(pl.col("_c"))).to_series().arg_true()
    lev = levenshtein_similarity(pf[at].select("gt_text", "aio_text"), "gt_text", "aio_text")
    pf = pf.with_columns(pf["_bound"].scatter(at, lev).alias("_lev"))
    return cand.drop("_c").with_columns(per_candidate(pl.col("_lev")))


def _instances(
    g: pl.DataFrame, a: pl.DataFrame, settings: pl.DataFrame, config: Config
) -> pl.DataFrame:
    """The list instances at one depth with items on both sides: their ``method``,
    ``threshold`` and sizes ``_n_gt`` and ``_n_aio``."""
    return _with_settings(
        g.group_by(_KEY).agg(pl.len().cast(pl.Int64).alias("_n_gt")).join(
            a.group_by(_KEY).agg(pl.len().cast(pl.Int64).alias("_n_aio")), on=_KEY
        ),
        settings,
        config,
    )


_BY_INDEX = pl.col("method") == ListMethod.INDEX.value


def _dense() -> pl.Expr:
    """Greedy and optimal instances whose pairs are all built (DENSE_PAIRS, read when called:
    tests lower it)."""
    return ~_BY_INDEX & (pl.col("_n_gt") * pl.col("_n_aio") <= DENSE_PAIRS)


def _by_kernel() -> pl.Expr:
    """The instances src/matching.rs matches: every pair of them would be built anyway."""
    return _BY_INDEX | (_dense() & (pl.col("method") == ListMethod.GREEDY.value))


def _candidates(
    g: pl.DataFrame,
    a: pl.DataFrame,
    sizes: pl.DataFrame,
    fields: pl.DataFrame,
    gt_members: pl.DataFrame,
    aio_members: pl.DataFrame,
    la_names: pl.Series,
    failed: dict[int, str],
) -> pl.DataFrame:
    """The (GT item, AIO item) pairs to score of the instances ``sizes`` (:func:`_instances`),
    with each instance's ``method``, ``threshold``, ``_n_gt`` and ``_n_aio`` (see the module
    docstring). An instance that keeps too many pairs adds its document to ``failed`` and
    contributes none."""
    gk = g.select(*_KEY, "gt_item", "gt_index")
    ak = a.select(*_KEY, "aio_item", "aio_index")
    by_index, dense = _BY_INDEX, _dense()
    parts = [
        gk.join(sizes.filter(dense), on=_KEY).join(ak, on=_KEY),
        gk.join(sizes.filter(by_index), on=_KEY)
        .join(ak, left_on=[*_KEY, "gt_index"], right_on=[*_KEY, "aio_index"])
        .with_columns(pl.col("gt_index").alias("aio_index")),
    ]
    large = sizes.filter(~by_index & ~dense)
    if large.height:
        keys = large.select(_KEY)
        g_large = gk.join(keys, on=_KEY, how="semi").partition_by(_KEY, as_dict=True)
        a_large = ak.join(keys, on=_KEY, how="semi").partition_by(_KEY, as_dict=True)
        f_large = fields.join(keys, on=_KEY, how="semi").partition_by(_KEY, as_dict=True)
        # the members of these instances' items only, looked up once per field below
        gm = gt_members.join(gk.join(keys, on=_KEY, how="semi"), left_on="item",
                             right_on="gt_item", how="semi")
        am = aio_members.join(ak.join(keys, on=_KEY, how="semi"), left_on="item",
                              right_on="aio_item", how="semi")
        for row in large.iter_rows(named=True):
            key = tuple(row[k] for k in _KEY)
            if row["doc"] in failed:
                continue
            try:
                pairs = _bounded_pairs(
                    g_large[key].sort("gt_index"),
                    a_large[key].sort("aio_index"),
                    f_large[key] if key in f_large else fields.clear(),
                    gm,
                    am,
                    row["threshold"],
                )
            except _TooManyPairs as e:
                failed[row["doc"]] = (
                    f"list '{la_names[row['la']]}' of {row['_n_gt']} x {row['_n_aio']} items: "
                    f"{e.kept:,} or more pairs reach its threshold {row['threshold']} over "
                    f"{e.fields} match fields (limit {CANDIDATE_CELLS:,} pair-fields); the "
                    "document is left out: raise the list's threshold or name its match_fields"
                )
                continue
            parts.append(pairs.join(large, on=_KEY))
    cols = [*_KEY, "gt_item", "gt_index", "aio_item", "aio_index", "threshold", "method",
            "_n_gt", "_n_aio"]
    return pl.concat([p.select(cols) for p in parts])


class _TooManyPairs(Exception):
    def __init__(self, kept: int, fields: int) -> None:
        super().__init__(kept, fields)
        self.kept, self.fields = kept, fields


def _field_values(items: pl.Series, members: pl.DataFrame, match_field: dict) -> pl.DataFrame:
    """text (prefix and cap applied, "" when null), is_null and kind of one match field of
    ``items``, in their order; a member an item lacks is null."""
    text = pl.col("text")
    if match_field["prefix"] is not None:
        text = text.str.slice(0, match_field["prefix"])
    return (
        pl.DataFrame({"item": items})
        .join(
            members.filter(pl.col("field") == match_field["field"]).select(
                "item", "kind", "text", "is_null", "key"
            ),
            on="item",
            how="left",
            maintain_order="left",
        )
        .select(
            text.alias("text"),
            pl.col("is_null").fill_null(True),
            pl.col("kind"),
            pl.col("key") if match_field["prefix"] is None else pl.lit(None, pl.String),
        )
        .with_columns(capped_text("text").fill_null(""))
    )


def _bounded_pairs(
    g: pl.DataFrame,
    a: pl.DataFrame,
    fields: pl.DataFrame,
    gt_members: pl.DataFrame,
    aio_members: pl.DataFrame,
    threshold: float,
) -> pl.DataFrame:
    """The pairs of one list instance (``g``, ``a`` sorted by index) whose mean match-field
    similarity (SPEC §5) can reach ``threshold``; no list of all pairs is built.

    GT items are taken in chunks of ``CHUNK_CELLS`` cells. Exact fields (compared by canonical
    equality) are summed first, on integer codes; a pair that cannot reach the threshold even
    if every remaining Levenshtein field scored 1 gets no Levenshtein call (a dense block of
    pairs goes to rapidfuzz's ``cdist`` as a matrix, sparse pairs to ``cpdist``).
    Levenshtein runs with ``score_cutoff`` = the lowest value one
    field can have in a mean of ``k`` fields that reaches the threshold, 1 − k·(1 − threshold):
    below it a pair is out whatever its other fields, so rapidfuzz may stop early and report 0.
    The kept pairs are then scored exactly by :func:`_pair_similarity`.
    """
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    n, m = g.height, a.height
    exact_fields, lev_fields = [], []
    for f in fields.iter_rows(named=True):
        gv = _field_values(g["gt_item"], gt_members, f)
        av = _field_values(a["aio_item"], aio_members, f)
        codes = pl.concat([gv["text"], av["text"]]).rank("dense").to_numpy()
        g_null = gv["is_null"].to_numpy()
        a_null = av["is_null"].to_numpy()
        if g_null.all() and a_null.all():
            continue  # a match field these lists do not have: left out of every mean
        string = ((gv["kind"] == "string") & gv["key"].is_null()).fill_null(False).to_numpy()
        lev = ~g_null & (f["fuzzy_cfg"] | (f["auto"] & string))
        # one comparison per pair: a GT code of -1 (null, or compared by Levenshtein) and an
        # AIO code of -2 (null) equal nothing; so for the value keys (dates, numbers)
        g_code = np.where(~g_null & ~lev, codes[:n], -1).astype(np.int32)
        a_code = np.where(~a_null, codes[n:], -2).astype(np.int32)
        keys = pl.concat([gv["key"], av["key"]])
        key_codes = None
        if keys.null_count() < len(keys):
            k = keys.rank("dense").fill_null(-1).to_numpy()
            key_codes = (np.where(~g_null & ~lev & (k[:n] >= 0), k[:n], -3).astype(np.int32),
                         np.where(~a_null & (k[n:] >= 0), k[n:], -4).astype(np.int32))
        both_null = (g_null, a_null) if g_null.any() and a_null.any() else None
        exact_fields.append((both_null, g_code, a_code, key_codes))
        if lev.any():
            lev_fields.append((lev, gv["text"].to_list(), av["text"].to_list(), a_null,
                               f["fthr"] or 0.0))
    cutoff = max(0.0, 1.0 - len(exact_fields) * (1.0 - threshold) - 1e-6)
    rows = max(1, CHUNK_CELLS // max(m, 1))
    found_g, found_a = [], []
    kept = 0
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        total = np.zeros((hi - lo, m))
        count: np.ndarray | int = 0  # fields in each pair's mean: not null on both sides
        for both_null, g_code, a_code, key_codes in exact_fields:
            if both_null is None:
                count = count + 1
            else:
                count = count + ~(both_null[0][lo:hi, None] & both_null[1][None, :])
            same = g_code[lo:hi, None] == a_code[None, :]
            if key_codes is not None:
                same |= key_codes[0][lo:hi, None] == key_codes[1][None, :]
            total += same
        remaining = np.zeros(hi - lo, dtype=np.int32)  # Levenshtein fields still to add
        for lev, *_ in lev_fields:
            remaining += lev[lo:hi]
        for lev, g_text, a_text, a_null, f_threshold in lev_fields:
            reach = (total + remaining[:, None]) >= (threshold - _MARGIN) * count
            reach &= lev[lo:hi, None] & ~a_null[None, :]
            rows_lev = np.flatnonzero(reach.any(axis=1))
            cols = np.flatnonzero(reach.any(axis=0))
            n_reach = int(reach.sum())
            # below its field threshold a field scores 0, which rapidfuzz's cutoff gives
            score = {"scorer": Levenshtein.normalized_similarity,
                     "score_cutoff": max(cutoff, f_threshold),
                     "dtype": np.float64, "workers": -1}
            if 4 * n_reach >= len(rows_lev) * len(cols) > 0:  # dense: the block, as a matrix
                total[np.ix_(rows_lev, cols)] += process.cdist(
                    [g_text[lo + i] for i in rows_lev], [a_text[j] for j in cols], **score
                )
            elif n_reach:  # sparse (exact fields already rule most pairs out): those pairs
                ri, ci = np.nonzero(reach)
                total[ri, ci] += process.cpdist(
                    [g_text[lo + i] for i in ri], [a_text[j] for j in ci], **score
                )
            remaining = remaining - lev[lo:hi]
        # a mean over no field is 0, which reaches only a threshold of 0
        keep = (total >= (threshold - _MARGIN) * count) & ((count > 0) | (threshold <= 0))
        gi, ai = np.nonzero(keep)
        found_g.append(gi + lo)
        found_a.append(ai)
        kept += len(gi)
        if kept * max(len(exact_fields), 1) > CANDIDATE_CELLS:
            raise _TooManyPairs(kept, len(exact_fields))
    gi = np.concatenate(found_g) if found_g else np.zeros(0, dtype=np.int64)
    ai = np.concatenate(found_a) if found_a else np.zeros(0, dtype=np.int64)
    return g[gi].select(*_KEY, "gt_item", "gt_index").with_columns(
        a["aio_item"].gather(ai), a["aio_index"].gather(ai)
    )


def _native_matches(
    sizes: pl.DataFrame,
    g: pl.DataFrame,
    a: pl.DataFrame,
    fields: pl.DataFrame,
    gt_members: pl.DataFrame,
    aio_members: pl.DataFrame,
) -> pl.DataFrame:
    """:func:`_matches` of :func:`_pair_similarity` for the instances ``sizes`` (index lists
    and dense greedy lists), by src/matching.rs: (gt_item, aio_item, similarity) of the
    matched pairs. The kernel gathers each instance's items, match fields and members from the
    depth's tables as they are, by instance key; no candidate table is built. Means of three
    or more fields may differ from this module's in the last bit: Polars' group mean does not
    sum in a fixed order."""
    return pl.DataFrame(_native.match_items(
        sizes.select(*_KEY, _BY_INDEX.alias("by_index"), "threshold"),
        g.select(*_KEY, pl.col("gt_item").alias("item"), pl.col("gt_index").alias("index")),
        a.select(*_KEY, pl.col("aio_item").alias("item"), pl.col("aio_index").alias("index")),
        fields.select(*_KEY, "field", pl.col("fuzzy_cfg").alias("fuzzy"), "auto", "prefix",
                      pl.col("fthr").alias("threshold"), "slot"),
        gt_members, aio_members, TEXT_CAP,
    ))


def _prefixed(text: str) -> pl.Expr:
    return (
        pl.when(pl.col("prefix").is_not_null())
        .then(pl.col(text).str.slice(0, pl.col("prefix")))
        .otherwise(pl.col(text))
        .alias(text)
    )


def _greedy(cand: pl.DataFrame) -> pl.DataFrame:
    taken = []
    c = cand.sort(["similarity", "gt_index", "aio_index"], descending=[True, False, False])
    while c.height:
        best = c.filter(
            pl.col("gt_item").is_first_distinct() & pl.col("aio_item").is_first_distinct()
        )
        taken.append(best)
        c = c.filter(
            ~pl.col("gt_item").is_in(best["gt_item"].implode())
            & ~pl.col("aio_item").is_in(best["aio_item"].implode())
        )
    return pl.concat(taken) if taken else cand.clear()


def _optimal(cand: pl.DataFrame) -> pl.DataFrame:
    """Linear assignment on the full GT x AIO matrix of each list instance, sub-threshold
    entries zeroed; assigned pairs below the threshold are then dropped (DECISIONS.md 10)."""
    if cand.height == 0:
        return cand
    from scipy.optimize import linear_sum_assignment  # ~1 s to import: only when used

    picked = []
    for group in cand.partition_by(_KEY, maintain_order=True):
        gi = group["gt_index"].to_numpy()
        ai = group["aio_index"].to_numpy()
        sims = group["similarity"].to_numpy()
        ok = sims >= group["threshold"].to_numpy()
        # the whole GT x AIO matrix, also when only the pairs that can reach the threshold are
        # candidates: the others are zeros either way, and the solver's ties depend on the shape
        s = np.zeros((group["_n_gt"][0], group["_n_aio"][0]))
        s[gi, ai] = np.where(ok, sims, 0.0)
        rows, cols = linear_sum_assignment(s, maximize=True)
        chosen = np.zeros_like(s, dtype=bool)
        chosen[rows, cols] = True
        picked.append(group.filter(pl.Series(chosen[gi, ai] & ok)))
    return pl.concat(picked) if picked else cand.clear()


def _with_settings(cand: pl.DataFrame, settings: pl.DataFrame, config: Config) -> pl.DataFrame:
    return cand.join(settings, on="la", how="left").with_columns(
        pl.col("threshold").fill_null(config.list_config("").threshold),
        pl.col("method").fill_null(config.list_config("").method.value),
    )


def _matches(cand: pl.DataFrame) -> pl.DataFrame:
    eligible = pl.col("similarity") >= pl.col("threshold")
    by_index = cand.filter(
        (pl.col("method") == ListMethod.INDEX.value) & (pl.col("gt_index") == pl.col("aio_index"))
    )
    greedy = _greedy(cand.filter((pl.col("method") == ListMethod.GREEDY.value) & eligible))
    optimal = _optimal(cand.filter(pl.col("method") == ListMethod.OPTIMAL.value))
    cols = ["gt_item", "aio_item", "similarity"]
    return pl.concat([by_index.select(cols), greedy.select(cols), optimal.select(cols)])


def _alignments_by_polars(rows: pl.DataFrame) -> pl.DataFrame:
    """The alignments table of a batch from its depths' rows (doc, list_path, gt_index,
    aio_index, similarity): each list's order metrics on its rows (a list without a pair of
    matched pairs is in order), sorted by doc, list_path, gt_index, aio_index (nulls last)."""
    matched = rows.filter(pl.col("gt_index").is_not_null() & pl.col("aio_index").is_not_null())
    order = _order_metrics_by_polars(matched.select("doc", "list_path", "gt_index", "aio_index"))
    return (
        rows.join(order, on=["doc", "list_path"], how="left")
        .with_columns(pl.col("order_correct").fill_null(True), pl.col("order_score").fill_null(1.0))
        .sort("doc", "list_path", "gt_index", "aio_index", nulls_last=True)
        .select(list(ALIGNMENT_SCHEMA))
    )


def _native_alignments(rows: pl.DataFrame) -> pl.DataFrame:
    """:func:`_alignments_by_polars` by the native kernel (src/ordering.rs) in one call."""
    table = _native.alignments(
        rows.select("doc", "list_path", "gt_index", "aio_index", "similarity"))
    return pl.DataFrame(table).select(list(ALIGNMENT_SCHEMA))


def _order_metrics_by_polars(m: pl.DataFrame) -> pl.DataFrame:
    """order_correct / order_score per (doc, list_path) from the matched index pairs (doc,
    list_path, gt_index, aio_index), for the lists with at least one pair of pairs. Lists of
    up to ORDER_JOIN matched pairs count their concordant pairs of pairs with one self-join
    for all of them; a longer list counts them in chunks (:func:`_concordant`), so that a
    list of n pairs never holds n² rows."""
    long = m.group_by("doc", "list_path").agg(pl.len().alias("_n")).filter(
        pl.col("_n") > max(ORDER_JOIN, 1)  # a list of one pair has no pair of pairs
    )
    short = m.join(long, on=["doc", "list_path"], how="anti")
    pairs = (
        short.join(short, on=["doc", "list_path"], suffix="_r")
        .filter(pl.col("gt_index") < pl.col("gt_index_r"))
        .group_by("doc", "list_path")
        .agg(
            pl.len().alias("_n_pairs"),
            (pl.col("aio_index") < pl.col("aio_index_r")).sum().alias("_concordant"),
        )
    )
    if long.height:
        rows = [
            (group["doc"][0], group["list_path"][0], group.height * (group.height - 1) // 2,
             _concordant(group.sort("gt_index")["aio_index"].to_numpy()))
            for group in m.join(long, on=["doc", "list_path"], how="semi").partition_by(
                "doc", "list_path"
            )
        ]
        pairs = pl.concat(
            [pairs, pl.DataFrame(rows, schema=pairs.schema, orient="row")], how="vertical"
        )
    return pairs.select(
        "doc",
        "list_path",
        (pl.col("_concordant") == pl.col("_n_pairs")).alias("order_correct"),
        (pl.col("_concordant") / pl.col("_n_pairs")).alias("order_score"),
    )


def _concordant(aio: np.ndarray) -> int:
    """Pairs i < j with aio[i] < aio[j], counted CHUNK_CELLS comparisons at a time."""
    n = len(aio)
    position = np.arange(n)
    step = max(1, CHUNK_CELLS // max(n, 1))
    count = 0
    for lo in range(0, n, step):
        block = slice(lo, min(n, lo + step))
        later = position[block, None] < position[None, :]
        count += int(((aio[block, None] < aio[None, :]) & later).sum())
    return count


def _members(gt: Flattened, aio: Flattened, config: Config, la_names: pl.Series):
    """Item members of each side (item, field id, kind, text, is_null) and the field ids.

    When every list in the batch has configured match fields, only those members are kept;
    a list with default match fields may compare any member.
    """
    configured = pl.Series(
        [f.field for lc in config.lists.values() if lc.match_fields for f in lc.match_fields],
        dtype=pl.String,
    )
    explicit = {n for n, lc in config.lists.items() if lc.match_fields is not None}
    needed = pl.col("member").is_not_null()
    if all(name in explicit for name in la_names.to_list()):
        # a few names are compared one by one: cheaper than hashing every member's name
        needed = (pl.any_horizontal(pl.col("member") == name for name in configured.unique())
                  if 0 < configured.len() <= 8 else pl.col("member").is_in(configured.implode()))
    sides = [
        pl.concat(
            [
                # selected first: an eager filter copies every column of the leaves
                side.leaves.select("item", "member", "kind", "text", "is_null").filter(needed),
                # the members the walk keeps apart (containers in items): mostly none
                *([side.members.filter(needed)] if side.members is not None
                  and side.members.height else []),
            ]
        )
        for side in (gt, aio)
    ]
    names, (g_field, a_field, _) = encode([sides[0]["member"], sides[1]["member"], configured])
    gt_members, aio_members = (
        s.select("item", f.alias("field"), "kind", "text", "is_null")
        for s, f in zip(sides, (g_field, a_field), strict=True)
    )
    gt_members, aio_members = member_keys(gt_members, aio_members, config.date_order)
    return gt_members, aio_members, _ids(names, configured.to_list()), names


def align(gt: Flattened, aio: Flattened, config: Config) -> Aligned:
    """Match list items, then render every leaf's final path (GT indices for matched items)."""
    la_names, (g_la, a_la) = encode([gt.items["list_attribute"], aio.items["list_attribute"]])
    gt_items = gt.items.with_columns(g_la.alias("la"))
    aio_items = aio.items.with_columns(a_la.alias("la"))
    la_ids = _ids(la_names, list(config.lists))
    settings = _list_settings(config, la_ids)
    gt_members, aio_members, field_ids, field_names = _members(gt, aio, config, la_names)
    max_depth = max(
        gt.items["depth"].max() or 0,  # type: ignore[operator]
        aio.items["depth"].max() or 0,  # type: ignore[operator]
    )
    prefix_schema = {"item": pl.Int64, "prefix": pl.String, "canon": pl.Int64}
    gt_prefix = [pl.DataFrame(schema=prefix_schema)]
    aio_prefix = [pl.DataFrame(schema=prefix_schema)]
    rows = []
    failed: dict[int, str] = {}
    configured = (_configured_lists(config, la_names, la_ids, field_ids) if MATCH_NATIVELY
                  else None)
    for depth in range(1, max_depth + 1):
        g = _with_parent(gt_items.filter(pl.col("depth") == depth), gt_prefix[-1]).rename(
            {"item": "gt_item", "index": "gt_index"}
        )
        a = _with_parent(aio_items.filter(pl.col("depth") == depth), aio_prefix[-1]).rename(
            {"item": "aio_item", "index": "aio_index"}
        )
        matched = None  # (gt_item, aio_item, similarity) of the matched pairs
        if configured is not None:
            matched = _configured_matches(g, a, configured, gt_members, aio_members)
        if matched is None:
            matched = _depth_matches(g, a, config, settings, (gt_members, aio_members),
                                     (la_names, la_ids), (field_names, field_ids), failed)

        finish = _finish_depth_by_polars if _native is None else _native_finish_depth
        g_prefix, a_prefix, depth_rows = finish(g, a, matched)
        gt_prefix.append(g_prefix)
        aio_prefix.append(a_prefix)
        rows.append(depth_rows)

    if rows:
        finish_lists = _alignments_by_polars if _native is None else _native_alignments
        alignments = finish_lists(pl.concat(rows))
    else:
        alignments = pl.DataFrame(schema=ALIGNMENT_SCHEMA)

    leaves = gt.leaves, aio.leaves
    if failed:
        kept = ~pl.col("doc").is_in(pl.Series(list(failed), dtype=pl.UInt32).implode())
        alignments = alignments.filter(kept)
        leaves = gt.leaves.filter(kept), aio.leaves.filter(kept)
    gt_lists = alignments.filter(pl.col("gt_index").is_not_null()).select("doc", "list_path")
    aio_lists = alignments.filter(pl.col("aio_index").is_not_null()).select("doc", "list_path")
    leaf_paths = _leaf_paths if _native is None else _native_leaf_paths
    g_leaves, a_leaves, paths = leaf_paths(
        leaves, (pl.concat(gt_prefix), pl.concat(aio_prefix)), (aio_lists, gt_lists)
    )
    return Aligned(g_leaves, a_leaves, alignments, paths, failed)


def _depth_matches(
    g: pl.DataFrame, a: pl.DataFrame, config: Config, settings: pl.DataFrame,
    members: tuple[pl.DataFrame, pl.DataFrame], lists: tuple[pl.Series, dict],
    names: tuple[pl.Series, dict], failed: dict[int, str],
) -> pl.DataFrame:
    """(gt_item, aio_item, similarity) of one depth's matched pairs: each instance's match
    fields and sizes as tables, the kernel's instances matched by it, the others from their
    candidate pairs (a document whose instance is too large goes to ``failed``)."""
    (gt_members, aio_members), (la_names, la_ids), (field_names, field_ids) = (
        members, lists, names)
    fields = _with_field_thresholds(
        _match_fields(g, gt_members, config, la_ids, field_ids), config, la_names, field_names,
    )
    sizes = _instances(g, a, settings, config)
    parts = []
    if MATCH_NATIVELY:
        by_kernel = sizes.filter(_by_kernel())
        if by_kernel.height:  # else the kernel would only read the tables
            parts.append(_native_matches(by_kernel, g, a, fields, gt_members, aio_members))
        sizes = sizes.filter(~_by_kernel())
    if sizes.height or not parts:
        cand = _candidates(g, a, sizes, fields, gt_members, aio_members, la_names, failed)
        parts.append(_matches(_pair_similarity(cand, fields, gt_members, aio_members)))
    return pl.concat(parts) if len(parts) > 1 else parts[0]


def _configured_lists(
    config: Config, la_names: pl.Series, la_ids: dict[str, int], field_ids: dict[str, int]
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """The batch's lists as :func:`_configured_matches` takes them when each one has configured
    match fields and is matched greedily or by index (the common case, and every depth's):
    their settings (la, by_index, threshold) and match fields (la, field, fuzzy, auto, prefix,
    threshold, slot), as :func:`_match_fields` and :func:`_with_field_thresholds` would give
    every instance; None otherwise."""
    lists, fields = [], []
    for name in la_names.to_list():
        lc = config.lists.get(name)
        if lc is None or not lc.match_fields or lc.method not in _KERNEL_METHODS:
            return None
        la = la_ids[name]
        lists.append((la, lc.method == ListMethod.INDEX, lc.threshold))
        for slot, f in enumerate(lc.match_fields):
            threshold = (config.per_field("field_thresholds", name + "[]" + member_segment(f.field),
                                          f.field) if config.field_thresholds else None)
            fields.append((la, field_ids[f.field], f.compare.value == "fuzzy",
                           f.compare.value == "auto", f.prefix, threshold, slot))
    return (
        pl.DataFrame(lists, schema={"la": pl.UInt32, "by_index": pl.Boolean,
                                    "threshold": pl.Float64}, orient="row"),
        pl.DataFrame(fields, schema={"la": pl.UInt32, "field": pl.UInt32, "fuzzy": pl.Boolean,
                                     "auto": pl.Boolean, "prefix": pl.Int64,
                                     "threshold": pl.Float64, "slot": pl.Int64}, orient="row"),
    )


def _configured_matches(
    g: pl.DataFrame, a: pl.DataFrame, configured: tuple[pl.DataFrame, pl.DataFrame],
    gt_members: pl.DataFrame, aio_members: pl.DataFrame,
) -> pl.DataFrame | None:
    """:func:`_depth_matches` by the kernel alone, for lists given by :func:`_configured_lists`:
    it finds the instances from the items themselves (src/matching.rs, ``configured_lists``),
    so no instance or field table is built here. None when an instance is not the kernel's
    (a greedy one of more than DENSE_PAIRS pairs)."""
    lists, fields = configured
    table = _native.match_configured(
        g.select(*_KEY, pl.col("gt_item").alias("item"), pl.col("gt_index").alias("index")),
        a.select(*_KEY, pl.col("aio_item").alias("item"), pl.col("aio_index").alias("index")),
        lists, fields, gt_members, aio_members, TEXT_CAP, DENSE_PAIRS,
    )
    return None if table is None else pl.DataFrame(table)


def _native_finish_depth(
    g: pl.DataFrame, a: pl.DataFrame, matched: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """:func:`_finish_depth_by_polars` by the native kernel (src/depth.rs)."""
    def items(side: pl.DataFrame, name: str) -> pl.DataFrame:
        return side.select("doc", "la", "pcanon", pl.col(f"{name}_item").alias("item"),
                           pl.col(f"{name}_index").alias("index"), "parent_prefix",
                           "list_suffix")

    g_prefix, a_prefix, rows = _native.finish_depth(items(g, "gt"), items(a, "aio"), matched)
    return pl.DataFrame(g_prefix), pl.DataFrame(a_prefix), pl.DataFrame(rows)


def _finish_depth_by_polars(
    g: pl.DataFrame, a: pl.DataFrame, matched: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One depth's items once matched (``matched``: gt_item, aio_item, similarity): each
    side's (item, prefix, canon), the prefix rendered at the item's final index, and the
    depth's alignment rows (every AIO item, then the GT items left unmatched). An unmatched
    AIO item is placed after its list's GT items, in AIO order; its canonical id is its own,
    a matched one's is its GT partner's."""
    a = a.join(matched, on="aio_item", how="left").join(
        g.select("gt_item", "gt_index"), on="gt_item", how="left"
    )
    n_gt = g.group_by(_KEY).agg(pl.len().cast(pl.Int32).alias("_n_gt"))
    unmatched_rank = (
        # one list: Polars 2.1 ignores an expression passed after a list in over()
        pl.col("aio_index").rank("ordinal").over([*_KEY, pl.col("gt_item").is_null()]) - 1
    )
    a = a.join(n_gt, on=_KEY, how="left").with_columns(
        pl.coalesce(
            pl.col("gt_index"), pl.col("_n_gt").fill_null(0) + unmatched_rank.cast(pl.Int32)
        ).alias("final_index"),
        pl.coalesce("gt_item", "aio_item").alias("canon"),
        (pl.col("parent_prefix") + pl.col("list_suffix")).alias("list_path"),
    )
    g = g.with_columns((pl.col("parent_prefix") + pl.col("list_suffix")).alias("list_path"))
    rows = pl.concat([
        a.select("doc", "list_path", "gt_index", "aio_index", "similarity"),
        g.join(matched, on="gt_item", how="anti").select(
            "doc",
            "list_path",
            "gt_index",
            pl.lit(None, pl.Int32).alias("aio_index"),
            pl.lit(None, pl.Float64).alias("similarity"),
        ),
    ])
    return (_item_prefix(g, "gt_item", "gt_index", "gt_item"),
            _item_prefix(a, "aio_item", "final_index", "canon"), rows)


def _with_parent(items: pl.DataFrame, parent_prefix: pl.DataFrame) -> pl.DataFrame:
    """Attach the parent's rendered path and canonical id (-1 and "" at the top level)."""
    if parent_prefix.height == 0:  # the top level: no join to make
        return items.with_columns(pl.lit("").alias("parent_prefix"),
                                  pl.lit(-1, pl.Int64).alias("pcanon"))
    return items.join(
        parent_prefix.rename({"item": "parent", "prefix": "parent_prefix", "canon": "pcanon"}),
        on="parent",
        how="left",
    ).with_columns(pl.col("parent_prefix").fill_null(""), pl.col("pcanon").fill_null(-1))


def _item_prefix(items: pl.DataFrame, item: str, index: str, canon: str) -> pl.DataFrame:
    return items.select(
        pl.col(item).alias("item"),
        (pl.col("list_path") + "[" + pl.col(index).cast(pl.String) + "]").alias("prefix"),
        pl.col(canon).alias("canon"),
    )


def _lookup(keys: pl.Series, table_keys: pl.Series, values: pl.Series) -> pl.Series:
    """values[i] where table_keys[i] == key, for each key (null for none); keys are non-negative
    integers. A dense array when the keys span little (item ids are numbered consecutively,
    path combinations are few), else a hash lookup."""
    span = int(max(keys.max() or 0, table_keys.max() or 0)) + 1  # type: ignore[arg-type]
    if span > 4 * (len(keys) + len(table_keys)) + (1 << 20):
        return keys.replace_strict(table_keys, values, default=None, return_dtype=values.dtype)
    pos = np.full(span, -1, dtype=np.int64)
    pos[table_keys.to_numpy()] = np.arange(len(table_keys))
    at = pl.DataFrame({"at": pos[keys.to_numpy()]})
    return values.gather(at.select(pl.when(pl.col("at") >= 0).then(pl.col("at"))).to_series())


def _combinations(
    leaves: tuple[pl.DataFrame, pl.DataFrame],
    prefixes: tuple[pl.DataFrame, pl.DataFrame],
    prefix_ids: list[pl.Series],
    suffix_ids: list[pl.Series],
) -> tuple[pl.DataFrame, list[pl.Series]]:
    """The distinct (item prefix, suffix) combinations of both sides' leaves in order of first
    appearance, with the attribute and key of the leaf that showed each first (prefix: 0 for
    none, else prefix id + 1), and per side each leaf's combination (an index into them)."""
    n_suffix = 1 + max((int(s.max()) for s in suffix_ids if len(s)), default=0)
    combos = []
    for side, prefix, pfx, sfx in zip(leaves, prefixes, prefix_ids, suffix_ids, strict=True):
        item_prefix = _lookup(side["item"].clip(0), prefix["item"], pfx + 1).fill_null(0)
        at_top = side["item"] < 0  # top-level leaves (item -1) have no prefix
        combos.append(
            (item_prefix.set(at_top, 0).cast(pl.UInt64) * n_suffix + sfx).alias("_combo")
        )
    # one row per combination (attribute and key are functions of the path, so any leaf's do)
    reps = pl.concat(
        [
            side.select("attribute", "key").with_columns(c)
            for side, c in zip(leaves, combos, strict=True)
        ]
    ).filter(pl.col("_combo").is_first_distinct())
    index = pl.Series(range(reps.height), dtype=pl.UInt32)
    return (
        reps.select(
            (pl.col("_combo") // n_suffix).cast(pl.UInt32).alias("prefix"),
            (pl.col("_combo") % n_suffix).cast(pl.UInt32).alias("suffix"),
            "attribute", "key",
        ),
        [_lookup(c, reps["_combo"], index) for c in combos],
    )


def _leaf_paths(
    leaves: tuple[pl.DataFrame, pl.DataFrame],
    prefixes: tuple[pl.DataFrame, pl.DataFrame],
    other_side_lists: tuple[pl.DataFrame, pl.DataFrame],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Each side's leaves with ``pid``, and the table of paths (see :class:`Aligned`).

    path = item prefix + suffix. Rather than concatenating and hashing a string per leaf, a leaf
    is first identified by its (prefix id, suffix id) combination, of which a batch has few; the
    strings are built and sorted per combination, and an empty array facing a list of records
    on the other side is marked not to be paired (``keep``).
    """
    prefix_names, prefix_ids = encode([p["prefix"] for p in prefixes])
    suffix_names, suffix_ids = encode([side["suffix"] for side in leaves])
    reps, combos = _combinations(leaves, prefixes, prefix_ids, suffix_ids)
    reps = reps.with_columns(
        (
            pl.lit(pl.concat([pl.Series([""]), prefix_names])).gather(pl.col("prefix"))
            + pl.lit(suffix_names).gather(pl.col("suffix"))
        ).alias("path")
    )
    path_names, (combo_pid,) = encode([reps["path"]])
    paths = (
        reps.select(combo_pid.alias("pid"), "attribute", "key")
        .unique(subset="pid", keep="first", maintain_order=True)
        .sort("pid")
        .select(path_names.alias("path"), "attribute", "key")
    )
    out = []
    for side, combo, lists in zip(leaves, combos, other_side_lists, strict=True):
        pid = combo_pid.gather(combo)
        side = side.select("doc", pid.alias("pid"), "kind", "text", "is_null", "empty_array")
        # only the (few) empty arrays need the string join against the other side's lists
        empty = side["empty_array"].arg_true()
        if len(empty):
            facing = empty.gather(
                side[empty].select("doc", pl.lit(path_names).gather(pl.col("pid")).alias("path"))
                .with_row_index("_r")
                .join(lists, left_on=["doc", "path"], right_on=["doc", "list_path"], how="semi")
                ["_r"]
            )
        else:
            facing = empty
        if len(facing):  # marked, not filtered out: pair_leaves skips them
            keep = np.ones(side.height, dtype=bool)
            keep[facing.to_numpy()] = False
            out.append(side.select(*LEAF_COLUMNS, pl.Series("keep", keep)))
        else:
            out.append(side.select(LEAF_COLUMNS))
    return out[0], out[1], paths


def _native_leaf_paths(
    leaves: tuple[pl.DataFrame, pl.DataFrame],
    prefixes: tuple[pl.DataFrame, pl.DataFrame],
    other_side_lists: tuple[pl.DataFrame, pl.DataFrame],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """:func:`_leaf_paths` by the native kernel (src/paths.rs) in one call: the strings of the
    prefixes and suffixes read once, the combinations in a table over their ids, the paths
    built, sorted and looked up there; only the labels of each path's first leaf are
    gathered here."""
    paths, *sides = _native.leaf_paths(
        [side.select("item", "suffix", "doc", "empty_array") for side in leaves],
        [p.select("item", "prefix") for p in prefixes],
        [lists.select("doc", "list_path") for lists in other_side_lists],
    )
    paths = pl.DataFrame(paths)
    first = paths["row"].cast(pl.Int64) + paths["side"].cast(pl.Int64) * leaves[0].height
    labels = pl.concat([side.select("attribute", "key") for side in leaves])[first]
    out = []
    for side, columns in zip(leaves, sides, strict=True):
        columns = pl.DataFrame(columns)  # pid, and keep when an empty array is not paired
        out.append(side.select("doc", columns["pid"], "kind", "text", "is_null",
                               *columns.get_columns()[1:]))
    return out[0], out[1], pl.concat([paths.select("path"), labels], how="horizontal")
