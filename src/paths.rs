//! Leaves identified by their (item prefix, suffix) combination (align.py's `_leaf_paths`):
//! a leaf's final path is its item's rendered prefix and its own suffix, and a batch has few
//! distinct combinations, so paths are built and sorted per combination, not per leaf.

use rustc_hash::FxHashMap;

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

/// A leaf of an item without a prefix (or at the top level) has prefix 0.
pub fn combinations(sides: [&Leaves; 2], prefixes: [&Prefixes; 2]) -> Combinations {
    let mut out = Combinations::default();
    let mut seen: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    for (s, (leaves, prefixes)) in sides.into_iter().zip(prefixes).enumerate() {
        let prefix_row = RowOf::new(prefixes.item);
        let mut of_leaves = Vec::with_capacity(leaves.item.len());
        for (row, (&item, &suffix)) in leaves.item.iter().zip(leaves.suffix).enumerate() {
            let prefix = match prefix_row.get(item) {
                Some(row) if item >= 0 => prefixes.prefix[row] + 1,
                _ => 0,
            };
            let id = *seen.entry((prefix, suffix)).or_insert_with(|| {
                out.prefix.push(prefix);
                out.suffix.push(suffix);
                out.side.push(s as u8);
                out.row.push(row as u32);
                (out.prefix.len() - 1) as u32
            });
            of_leaves.push(id);
        }
        out.of_leaves[s] = of_leaves;
    }
    out
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
        let c = combinations([&gt, &aio], [&g_prefix, &a_prefix]);
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
        let c = combinations([&early, &early], [&prefixes, &prefixes]);
        assert_eq!(
            (c.prefix, c.of_leaves),
            (vec![0, 1], [vec![0, 1], vec![0, 1]])
        );
    }
}
