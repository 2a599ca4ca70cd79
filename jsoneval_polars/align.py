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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from .config import Config, ListMethod
from .flatten import Flattened
from .similarity import levenshtein_similarity

_SCALAR_KINDS = ["null", "bool", "int", "float", "string"]
_KEY = ["doc", "list_attribute", "pcanon"]

ALIGNMENT_SCHEMA = {
    "doc": pl.UInt32,
    "list_path": pl.String,
    "gt_index": pl.Int32,
    "aio_index": pl.Int32,
    "similarity": pl.Float64,
    "order_correct": pl.Boolean,
    "order_score": pl.Float64,
}


@dataclass
class Aligned:
    gt: pl.DataFrame  # leaves with their final ``path``
    aio: pl.DataFrame
    alignments: pl.DataFrame


def _list_settings(config: Config) -> pl.DataFrame:
    rows = [
        (name, lc.threshold, lc.method.value, lc.match_fields is not None)
        for name, lc in config.lists.items()
    ]
    return pl.DataFrame(
        rows,
        schema={
            "list_attribute": pl.String,
            "threshold": pl.Float64,
            "method": pl.String,
            "configured_fields": pl.Boolean,
        },
        orient="row",
    )


def _match_fields(g: pl.DataFrame, gt_members: pl.DataFrame, config: Config) -> pl.DataFrame:
    """(doc, list_attribute, pcanon, field) for every GT list instance at this depth."""
    configured = pl.DataFrame(
        [
            (name, f.field, f.compare.value, f.prefix)
            for name, lc in config.lists.items()
            if lc.match_fields
            for f in lc.match_fields
        ],
        schema={
            "list_attribute": pl.String,
            "field": pl.String,
            "compare": pl.String,
            "prefix": pl.Int64,
        },
        orient="row",
    )
    names = [n for n, lc in config.lists.items() if lc.match_fields is not None]
    instances = g.select(_KEY).unique()
    explicit = instances.filter(pl.col("list_attribute").is_in(names)).join(
        configured, on="list_attribute"
    )
    default = (
        g.filter(~pl.col("list_attribute").is_in(names))
        .join(gt_members, left_on="gt_item", right_on="item")
        .filter(pl.col("kind").is_in(_SCALAR_KINDS))
        .select(*_KEY, pl.col("member").alias("field"))
        .unique()
        .with_columns(pl.lit("auto").alias("compare"), pl.lit(None, pl.Int64).alias("prefix"))
    )
    return pl.concat([explicit, default])


def _pair_similarity(
    cand: pl.DataFrame, fields: pl.DataFrame, gt_members: pl.DataFrame, aio_members: pl.DataFrame
) -> pl.DataFrame:
    """Mean match-field similarity of each candidate pair (0 when no field counts)."""
    gm = gt_members.select(
        pl.col("item").alias("gt_item"),
        pl.col("member").alias("field"),
        pl.col("kind").alias("gt_kind"),
        pl.col("text").alias("gt_text"),
        pl.col("is_null").alias("gt_null"),
    )
    am = aio_members.select(
        pl.col("item").alias("aio_item"),
        pl.col("member").alias("field"),
        pl.col("text").alias("aio_text"),
        pl.col("is_null").alias("aio_null"),
    )
    pf = (
        cand.select(*_KEY, "gt_item", "aio_item")
        .join(fields, on=_KEY)
        .join(gm, on=["gt_item", "field"], how="left")
        .join(am, on=["aio_item", "field"], how="left")
        .with_columns(
            pl.col("gt_null").fill_null(True),
            pl.col("aio_null").fill_null(True),
            _prefixed("gt_text"),
            _prefixed("aio_text"),
        )
        .with_row_index("_r")
    )
    fuzzy = (pl.col("compare") == "fuzzy") | (
        (pl.col("compare") == "auto") & (pl.col("gt_kind") == "string")
    )
    lev_rows = pf.filter(~pl.col("gt_null") & ~pl.col("aio_null") & fuzzy)
    lev = lev_rows.select("_r", levenshtein_similarity(lev_rows, "gt_text", "aio_text").alias("_lev"))
    pf = pf.join(lev, on="_r", how="left").with_columns(
        pl.when(pl.col("gt_null") & pl.col("aio_null"))
        .then(None)
        .when(pl.col("gt_null") | pl.col("aio_null"))
        .then(0.0)
        .when(fuzzy)
        .then(pl.col("_lev"))
        .otherwise((pl.col("gt_text") == pl.col("aio_text")).cast(pl.Float64))
        .alias("_fsim")
    )
    means = pf.group_by("gt_item", "aio_item").agg(pl.col("_fsim").mean().alias("similarity"))
    return cand.join(means, on=["gt_item", "aio_item"], how="left").with_columns(
        pl.col("similarity").fill_null(0.0)
    )


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
        g_vals, g_pos = np.unique(gi, return_inverse=True)
        a_vals, a_pos = np.unique(ai, return_inverse=True)
        sims = group["similarity"].to_numpy()
        ok = sims >= group["threshold"].to_numpy()
        s = np.zeros((len(g_vals), len(a_vals)))
        s[g_pos, a_pos] = np.where(ok, sims, 0.0)
        rows, cols = linear_sum_assignment(s, maximize=True)
        chosen = np.zeros_like(s, dtype=bool)
        chosen[rows, cols] = True
        picked.append(group.filter(pl.Series(chosen[g_pos, a_pos] & ok)))
    return pl.concat(picked) if picked else cand.clear()


def _matches(cand: pl.DataFrame, config: Config) -> pl.DataFrame:
    cand = cand.join(_list_settings(config), on="list_attribute", how="left").with_columns(
        pl.col("threshold").fill_null(config.list_config("").threshold),
        pl.col("method").fill_null(config.list_config("").method.value),
    )
    eligible = pl.col("similarity") >= pl.col("threshold")
    by_index = cand.filter(
        (pl.col("method") == ListMethod.INDEX.value) & (pl.col("gt_index") == pl.col("aio_index"))
    )
    greedy = _greedy(cand.filter((pl.col("method") == ListMethod.GREEDY.value) & eligible))
    optimal = _optimal(cand.filter(pl.col("method") == ListMethod.OPTIMAL.value))
    cols = ["gt_item", "aio_item", "similarity"]
    return pl.concat([by_index.select(cols), greedy.select(cols), optimal.select(cols)])


def _order_metrics(matched: pl.DataFrame) -> pl.DataFrame:
    """order_correct / order_score per (doc, list_path) from the matched index pairs."""
    m = matched.select("doc", "list_path", "gt_index", "aio_index")
    pairs = (
        m.join(m, on=["doc", "list_path"], suffix="_r")
        .filter(pl.col("gt_index") < pl.col("gt_index_r"))
        .group_by("doc", "list_path")
        .agg(
            pl.len().alias("_n_pairs"),
            (pl.col("aio_index") < pl.col("aio_index_r")).sum().alias("_concordant"),
        )
    )
    return pairs.select(
        "doc",
        "list_path",
        (pl.col("_concordant") == pl.col("_n_pairs")).alias("order_correct"),
        (pl.col("_concordant") / pl.col("_n_pairs")).alias("order_score"),
    )


def align(gt: Flattened, aio: Flattened, config: Config) -> Aligned:
    """Match list items, then render every leaf's final path (GT indices for matched items)."""
    gt_members, aio_members = (
        pl.concat(
            [
                side.leaves.filter(pl.col("member").is_not_null()).select(
                    "item", "member", "kind", "text", "is_null"
                ),
                *([side.members] if side.members is not None else []),
            ]
        )
        for side in (gt, aio)
    )
    max_depth = max(
        gt.items["depth"].max() or 0,  # type: ignore[operator]
        aio.items["depth"].max() or 0,  # type: ignore[operator]
    )
    prefix_schema = {"item": pl.Int64, "prefix": pl.String, "canon": pl.Int64}
    gt_prefix = [pl.DataFrame(schema=prefix_schema)]
    aio_prefix = [pl.DataFrame(schema=prefix_schema)]
    rows = []
    for depth in range(1, max_depth + 1):
        g = _with_parent(gt.items.filter(pl.col("depth") == depth), gt_prefix[-1]).rename(
            {"item": "gt_item", "index": "gt_index"}
        )
        a = _with_parent(aio.items.filter(pl.col("depth") == depth), aio_prefix[-1]).rename(
            {"item": "aio_item", "index": "aio_index"}
        )
        cand = g.select(*_KEY, "gt_item", "gt_index").join(
            a.select(*_KEY, "aio_item", "aio_index"), on=_KEY
        )
        cand = _pair_similarity(cand, _match_fields(g, gt_members, config), gt_members, aio_members)
        matched = _matches(cand, config)

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
        gt_prefix.append(_item_prefix(g, "gt_item", "gt_index", "gt_item"))
        aio_prefix.append(_item_prefix(a, "aio_item", "final_index", "canon"))

        rows.append(
            a.select(
                "doc", "list_path", "gt_index", pl.col("aio_index"), "similarity",
            )
        )
        rows.append(
            g.join(matched, on="gt_item", how="anti").select(
                "doc",
                "list_path",
                "gt_index",
                pl.lit(None, pl.Int32).alias("aio_index"),
                pl.lit(None, pl.Float64).alias("similarity"),
            )
        )

    if rows:
        alignments = pl.concat(rows)
        order = _order_metrics(alignments.filter(pl.col("gt_index").is_not_null() & pl.col("aio_index").is_not_null()))
        alignments = (
            alignments.join(order, on=["doc", "list_path"], how="left")
            .with_columns(pl.col("order_correct").fill_null(True), pl.col("order_score").fill_null(1.0))
            .sort("doc", "list_path", "gt_index", "aio_index", nulls_last=True)
            .select(list(ALIGNMENT_SCHEMA))
        )
    else:
        alignments = pl.DataFrame(schema=ALIGNMENT_SCHEMA)

    gt_lists = alignments.filter(pl.col("gt_index").is_not_null()).select("doc", "list_path")
    aio_lists = alignments.filter(pl.col("aio_index").is_not_null()).select("doc", "list_path")
    return Aligned(
        _final_paths(gt.leaves, pl.concat(gt_prefix), aio_lists),
        _final_paths(aio.leaves, pl.concat(aio_prefix), gt_lists),
        alignments,
    )


def _with_parent(items: pl.DataFrame, parent_prefix: pl.DataFrame) -> pl.DataFrame:
    """Attach the parent's rendered path and canonical id (-1 and "" at the top level)."""
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


def _final_paths(
    leaves: pl.DataFrame, prefixes: pl.DataFrame, other_side_lists: pl.DataFrame
) -> pl.DataFrame:
    """path = item prefix + suffix; an empty array facing a list of records is dropped."""
    out = leaves.join(prefixes.select("item", "prefix"), on="item", how="left").with_columns(
        (pl.col("prefix").fill_null("") + pl.col("suffix")).alias("path")
    )
    facing = other_side_lists.unique().with_columns(pl.lit(True).alias("_facing"))
    out = out.join(
        facing, left_on=["doc", "path"], right_on=["doc", "list_path"], how="left"
    ).filter(~(pl.col("empty_array") & pl.col("_facing").fill_null(False)))
    return out.drop("prefix", "_facing")
