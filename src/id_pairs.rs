//! The pairing of two sides' records by id (SPEC §9; `ingest.pair_records` when both sides
//! carry ids): the first record of an id is the one paired, a repeated id and a record
//! without one are left out and reported. The pairs come in the GT's order, each GT record
//! with the AIO record of its id (or none), then the AIO records whose id the GT lacks, in
//! the AIO's order. One hash of each id, where the Polars path groups, joins and anti-joins
//! the ids of both sides.

use rustc_hash::FxHashMap;

/// A record left out: its row, and the row of its id's first record (None: it has no id).
pub type LeftOut = (u32, Option<u32>);

/// Rows of the records paired, pair by pair, and of the records left out, side by side.
#[derive(Debug, PartialEq, Eq)]
pub struct IdPairs {
    /// each pair's GT row; None for an AIO record without a GT one
    pub gt: Vec<Option<u32>>,
    /// each pair's AIO row; None for a GT record without an AIO one
    pub aio: Vec<Option<u32>>,
    /// the records left out of each side (GT, AIO), in row order
    pub left_out: [Vec<LeftOut>; 2],
}

/// Pair the records whose ids are `gt` and `aio` (rows in line order; None: no id). None when
/// record `i` of one side pairs with record `i` of the other and no record is left out.
pub fn pair_by_id(gt: &[Option<&str>], aio: &[Option<&str>]) -> Option<IdPairs> {
    // the usual files: the same ids in the same order, sorted, so each once; no hashing (a
    // million ids take 0.3 s to hash, most of it waiting for memory)
    (gt != aio || !in_increasing_order(gt)).then(|| pair_by_hash(gt, aio))
}

/// [`pair_by_id`] for any ids: each side's first row of each id in a hash map.
fn pair_by_hash(gt: &[Option<&str>], aio: &[Option<&str>]) -> IdPairs {
    let (gt_first, gt_kept, gt_out) = first_rows(gt);
    let (aio_first, aio_kept, aio_out) = first_rows(aio);
    let mut pairs = IdPairs {
        gt: Vec::with_capacity(gt_kept.len()),
        aio: Vec::with_capacity(gt_kept.len()),
        left_out: [gt_out, aio_out],
    };
    for (id, g) in gt_kept {
        pairs.gt.push(Some(g));
        pairs.aio.push(aio_first.get(id).copied());
    }
    for (id, a) in aio_kept {
        if !gt_first.contains_key(id) {
            pairs.gt.push(None);
            pairs.aio.push(Some(a));
        }
    }
    pairs
}

/// Whether every record has an id and each id is greater than the one before (so none repeats).
fn in_increasing_order(ids: &[Option<&str>]) -> bool {
    ids.first().is_none_or(|id| id.is_some())
        && ids.windows(2).all(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => a < b,
            _ => false,
        })
}

type FirstRows<'a> = (FxHashMap<&'a str, u32>, Vec<(&'a str, u32)>, Vec<LeftOut>);

/// Each id's first row, the rows kept (first of their id) with their ids, and the rows left
/// out.
fn first_rows<'a>(ids: &[Option<&'a str>]) -> FirstRows<'a> {
    let mut first = FxHashMap::with_capacity_and_hasher(ids.len(), Default::default());
    let (mut kept, mut left_out) = (Vec::with_capacity(ids.len()), Vec::new());
    for (row, id) in (0u32..).zip(ids) {
        let Some(id) = *id else {
            left_out.push((row, None));
            continue;
        };
        match first.entry(id) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(row);
                kept.push((id, row));
            }
            std::collections::hash_map::Entry::Occupied(seen) => {
                left_out.push((row, Some(*seen.get())));
            }
        }
    }
    (first, kept, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firsts_pair_in_gt_order_then_the_aio_only() {
        let gt = [Some("b"), None, Some("a"), Some("b"), Some("c")];
        let aio = [Some("a"), Some("d"), Some("a"), None, Some("b")];
        let pairs = pair_by_id(&gt, &aio).unwrap();
        assert_eq!(pairs.gt, vec![Some(0), Some(2), Some(4), None]);
        assert_eq!(pairs.aio, vec![Some(4), Some(0), None, Some(1)]);
        assert_eq!(pairs.left_out[0], vec![(1, None), (3, Some(0))]);
        assert_eq!(pairs.left_out[1], vec![(2, Some(0)), (3, None)]);
    }

    #[test]
    fn the_same_sorted_ids_pair_row_by_row() {
        let ids = [Some("a"), Some("b"), Some("c")];
        assert_eq!(pair_by_id(&ids, &ids), None);
        let rows = vec![Some(0), Some(1), Some(2)];
        let by_hash = pair_by_hash(&ids, &ids);
        assert_eq!((by_hash.gt, by_hash.aio), (rows.clone(), rows));
        assert_eq!(by_hash.left_out, [vec![], vec![]]);
        // a repeat, a missing id, another order or other ids on the other side: hashed
        for ids in [
            [Some("a"), Some("a"), Some("c")],
            [Some("a"), None, Some("c")],
            [Some("b"), Some("a"), Some("c")],
        ] {
            assert_eq!(pair_by_id(&ids, &ids), Some(pair_by_hash(&ids, &ids)));
        }
        let other = [Some("a"), Some("b"), Some("d")];
        assert_eq!(pair_by_id(&ids, &other), Some(pair_by_hash(&ids, &other)));
        assert_eq!(pair_by_id(&[], &[]), None);
        assert!(!in_increasing_order(&[None]));
    }

    #[test]
    fn empty_sides_pair_nothing() {
        let pairs = pair_by_id(&[], &[None]).unwrap();
        assert!(pairs.gt.is_empty() && pairs.aio.is_empty());
        assert_eq!(pairs.left_out, [vec![], vec![(0, None)]]);
    }
}
