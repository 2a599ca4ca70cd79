//! A batch's leaf paths (align.py's `_leaf_paths`): a leaf's final path is its item's rendered
//! prefix and its own suffix, and a batch has few distinct (prefix, suffix) combinations, so
//! paths are built and sorted per combination, not per leaf.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::dictionary::Encoder;
use crate::row_of::RowOf;

/// One side's leaves: the item each belongs to (negative at the top level) and its suffix id.
pub struct Leaves<'a> {
    pub item: &'a [i64],
    pub suffix: &'a [u32],
}

/// One side's items and the id of each one's rendered prefix.
pub struct Prefixes<'a> {
    pub item: &'a [i64],
    pub prefix: &'a [u32],
}

/// The distinct combinations in order of first appearance (GT leaves, then AIO leaves):
/// prefix (0 for none, else prefix id + 1), suffix id, and the side and row of the leaf that
/// showed it first; `of_leaves[side][row]` is each leaf's combination.
#[derive(Debug, Default, PartialEq)]
pub struct Combinations {
    pub prefix: Vec<u32>,
    pub suffix: Vec<u32>,
    pub side: Vec<u8>,
    pub row: Vec<u32>,
    pub of_leaves: [Vec<u32>; 2],
}

/// Combinations (prefix, suffix) a table indexed by both is kept for, beyond one per leaf: a
/// batch has a few dozen prefixes and a few hundred suffixes, and a read of the table costs
/// less than a hash of the pair.
const DENSE_SLACK: usize = 1 << 16;

/// A leaf of an item without a prefix (or at the top level) has prefix 0. `n_prefixes` and
/// `n_suffixes` bound the ids (a table over them when it is small, else a hash map).
pub fn combinations(
    sides: [&Leaves; 2],
    prefixes: [&Prefixes; 2],
    n_prefixes: usize,
    n_suffixes: usize,
) -> Combinations {
    let n_leaves = sides[0].item.len() + sides[1].item.len();
    let cells = (n_prefixes + 1).saturating_mul(n_suffixes);
    let mut dense = (cells <= n_leaves + DENSE_SLACK).then(|| vec![u32::MAX; cells]);
    let mut hashed: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut out = Combinations::default();
    for (s, (leaves, prefixes)) in sides.into_iter().zip(prefixes).enumerate() {
        let prefix_row = RowOf::new(prefixes.item);
        let mut of_leaves = Vec::with_capacity(leaves.item.len());
        for (row, (&item, &suffix)) in leaves.item.iter().zip(leaves.suffix).enumerate() {
            let prefix = match prefix_row.get(item) {
                Some(row) if item >= 0 => prefixes.prefix[row] + 1,
                _ => 0,
            };
            let slot = match dense.as_mut() {
                Some(table) => &mut table[prefix as usize * n_suffixes + suffix as usize],
                None => hashed.entry((prefix, suffix)).or_insert(u32::MAX),
            };
            if *slot == u32::MAX {
                out.prefix.push(prefix);
                out.suffix.push(suffix);
                out.side.push(s as u8);
                out.row.push(row as u32);
                *slot = (out.prefix.len() - 1) as u32;
            }
            of_leaves.push(*slot);
        }
        out.of_leaves[s] = of_leaves;
    }
    out
}

/// The paths of a batch's leaves: the distinct paths in string order, for each path id the
/// side and row of the first leaf (in GT then AIO order) that has it, and each leaf's path id.
#[derive(Debug, PartialEq)]
pub struct LeafPaths {
    pub paths: Vec<String>,
    pub first: Vec<(u8, u32)>,
    pub pid: [Vec<u32>; 2],
}

/// Each leaf's path, prefix + suffix: `prefix_names` and `suffix_names` are the strings of
/// the ids the prefixes and leaves hold.
pub fn leaf_paths(
    sides: [&Leaves; 2],
    prefixes: [&Prefixes; 2],
    prefix_names: &[&str],
    suffix_names: &[&str],
) -> LeafPaths {
    let c = combinations(sides, prefixes, prefix_names.len(), suffix_names.len());
    let texts: Vec<String> = (c.prefix.iter().zip(&c.suffix))
        .map(|(&p, &s)| {
            let prefix = if p == 0 {
                ""
            } else {
                prefix_names[p as usize - 1]
            };
            [prefix, suffix_names[s as usize]].concat()
        })
        .collect();
    let mut encoder = Encoder::default();
    let first_seen: Vec<u32> = texts.iter().map(|t| encoder.id(t)).collect();
    let (sorted, rank) = encoder.finish();
    let of_combination: Vec<u32> = first_seen.iter().map(|&i| rank[i as usize]).collect();
    let mut first = vec![(u8::MAX, 0); sorted.len()];
    for (k, &pid) in of_combination.iter().enumerate() {
        if first[pid as usize].0 == u8::MAX {
            first[pid as usize] = (c.side[k], c.row[k]);
        }
    }
    let pid = c
        .of_leaves
        .map(|of| of.iter().map(|&k| of_combination[k as usize]).collect());
    LeafPaths {
        paths: sorted.into_iter().map(str::to_string).collect(),
        first,
        pid,
    }
}

/// Which leaves to pair: all but an empty array (`empty`) whose path is a list the other side
/// has in the same document (`lists`: doc, list path), a list of records facing it.
pub fn kept(
    pid: &[u32],
    empty: &[bool],
    doc: &[u32],
    paths: &[String],
    lists: &FxHashSet<(u32, &str)>,
) -> Vec<bool> {
    (pid.iter().zip(empty).zip(doc))
        .map(|((&p, &e), &d)| !(e && lists.contains(&(d, paths[p as usize].as_str()))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_share_a_combination_across_sides() {
        let gt = Leaves {
            item: &[-1, 0, 0, 1],
            suffix: &[5, 2, 3, 2],
        };
        let aio = Leaves {
            item: &[-1, 10, 11],
            suffix: &[5, 2, 2],
        };
        // GT items 0 and 1 render prefixes 7 and 8; AIO item 10 renders 7, item 11 none
        let g_prefix = Prefixes {
            item: &[0, 1],
            prefix: &[7, 8],
        };
        let a_prefix = Prefixes {
            item: &[10],
            prefix: &[7],
        };
        let c = combinations([&gt, &aio], [&g_prefix, &a_prefix], 9, 6);
        assert_eq!(c.prefix, vec![0, 8, 8, 9, 0]);
        assert_eq!(c.suffix, vec![5, 2, 3, 2, 2]);
        assert_eq!(
            (&c.side, &c.row),
            (&vec![0, 0, 0, 0, 1], &vec![0, 1, 2, 3, 2])
        );
        assert_eq!(c.of_leaves, [vec![0, 1, 2, 3], vec![0, 1, 4]]);
        // the same with ids far apart (the hash map), and items before the first prefixed one
        let far = |items: &[i64]| -> Vec<i64> {
            items
                .iter()
                .map(|&i| if i < 0 { i } else { i << 40 })
                .collect()
        };
        let (gi, ai, gp, ap) = (
            far(gt.item),
            far(aio.item),
            far(g_prefix.item),
            far(a_prefix.item),
        );
        // (ids bounds too wide for a table: the combinations by hash as well)
        let sparse = combinations(
            [&Leaves { item: &gi, ..gt }, &Leaves { item: &ai, ..aio }],
            [
                &Prefixes {
                    item: &gp,
                    ..g_prefix
                },
                &Prefixes {
                    item: &ap,
                    ..a_prefix
                },
            ],
            1 << 20,
            1 << 20,
        );
        assert_eq!(sparse, c);
        let early = Leaves {
            item: &[3, 5],
            suffix: &[1, 1],
        };
        let prefixes = Prefixes {
            item: &[5, 9],
            prefix: &[0, 1],
        };
        let c = combinations([&early, &early], [&prefixes, &prefixes], 2, 2);
        assert_eq!(
            (c.prefix, c.of_leaves),
            (vec![0, 1], [vec![0, 1], vec![0, 1]])
        );
    }

    #[test]
    fn paths_are_prefix_and_suffix_in_string_order() {
        // GT: a top-level leaf "total", two leaves of item 0 (prefix "items[0]"); AIO: item 10
        // renders "items[1]", and its leaf shares a suffix with GT's
        let gt = Leaves {
            item: &[-1, 0, 0],
            suffix: &[0, 1, 2],
        };
        let aio = Leaves {
            item: &[10, -1],
            suffix: &[1, 0],
        };
        let g_prefix = Prefixes {
            item: &[0],
            prefix: &[0],
        };
        let a_prefix = Prefixes {
            item: &[10],
            prefix: &[1],
        };
        let p = leaf_paths(
            [&gt, &aio],
            [&g_prefix, &a_prefix],
            &["items[0]", "items[1]"],
            &["total", ".sku", ".qty"],
        );
        assert_eq!(
            p.paths,
            ["items[0].qty", "items[0].sku", "items[1].sku", "total"]
        );
        assert_eq!(p.pid, [vec![3, 1, 0], vec![2, 3]]);
        // each path's first leaf: GT rows first, then the AIO's own path
        assert_eq!(p.first, [(0, 2), (0, 1), (1, 0), (0, 0)]);
        let lists: FxHashSet<(u32, &str)> =
            [(7, "items[0].qty"), (8, "total")].into_iter().collect();
        let keep = kept(
            &[0, 0, 3],
            &[true, false, true],
            &[7, 7, 7],
            &p.paths,
            &lists,
        );
        assert_eq!(keep, [false, true, true]);
    }
}
