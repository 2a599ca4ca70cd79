//! Order metrics of matched lists (align.py's `_order_metrics`): per (document, list path),
//! of the pairs of matched pairs taken in GT order, how many keep their AIO order.

use rustc_hash::FxHashMap;

use crate::dictionary::Encoder;

/// Lists of more matched pairs than this are counted by a merge sort, as align.py counts them
/// in chunks (`ORDER_JOIN`): their GT indices are distinct, so the pairs of pairs are all
/// n(n-1)/2.
pub const ORDER_JOIN: usize = 256;

/// One list's counts: pairs of matched pairs with GT indices in order, and of those the ones
/// whose AIO indices are in order too.
#[derive(Debug, PartialEq)]
pub struct ListOrder<'a> {
    pub doc: i64,
    pub list_path: &'a str,
    pub n_pairs: u64,
    pub concordant: u64,
}

/// The matched (doc, list path, GT index, AIO index) rows, one list's rows wherever they are:
/// the lists with at least one pair of pairs, in order of first appearance.
pub fn list_orders<'a>(
    doc: &[i64],
    list_path: &[&'a str],
    gt_index: &[i64],
    aio_index: &[i64],
) -> Vec<ListOrder<'a>> {
    let mut lists: FxHashMap<(i64, &str), usize> = FxHashMap::default();
    let mut rows: Vec<Vec<(i64, i64)>> = Vec::new();
    let mut keys: Vec<(i64, &'a str)> = Vec::new();
    for r in 0..doc.len() {
        let at = *lists.entry((doc[r], list_path[r])).or_insert_with(|| {
            keys.push((doc[r], list_path[r]));
            rows.push(Vec::new());
            rows.len() - 1
        });
        rows[at].push((gt_index[r], aio_index[r]));
    }
    keys.into_iter()
        .zip(rows)
        .map(|((doc, list_path), mut pairs)| {
            pairs.sort_unstable();
            let (n_pairs, concordant) = if pairs.len() <= ORDER_JOIN {
                in_order_pairs(&pairs)
            } else {
                let n = pairs.len() as u64;
                let mut aio: Vec<i64> = pairs.iter().map(|p| p.1).collect();
                (n * (n - 1) / 2, increasing_pairs(&mut aio))
            };
            ListOrder {
                doc,
                list_path,
                n_pairs,
                concordant,
            }
        })
        .filter(|list| list.n_pairs > 0)
        .collect()
}

/// Every pair of pairs (i, j) with gt_i < gt_j, and those with aio_i < aio_j too.
fn in_order_pairs(pairs: &[(i64, i64)]) -> (u64, u64) {
    let (mut n, mut concordant) = (0, 0);
    for (i, a) in pairs.iter().enumerate() {
        for b in &pairs[i + 1..] {
            if a.0 < b.0 {
                n += 1;
                concordant += u64::from(a.1 < b.1);
            }
        }
    }
    (n, concordant)
}

/// Pairs i < j with v[i] < v[j], by a merge sort (`v` ends sorted).
fn increasing_pairs(v: &mut [i64]) -> u64 {
    if v.len() < 2 {
        return 0;
    }
    let mid = v.len() / 2;
    let mut count = increasing_pairs(&mut v[..mid]) + increasing_pairs(&mut v[mid..]);
    let (left, right) = (v[..mid].to_vec(), v[mid..].to_vec());
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        // an equal pair is not increasing: the right one goes first
        if j == right.len() || (i < left.len() && left[i] < right[j]) {
            *slot = left[i];
            i += 1;
        } else {
            *slot = right[j];
            count += i as u64; // every left value taken so far is below it
            j += 1;
        }
    }
    count
}

/// The alignment rows of a batch (doc, list path, GT index, AIO index; an index is None on
/// the side an item is unmatched on) in the order of the `alignments` table: by document,
/// list path, GT index and AIO index, nulls last; with each row's list order (correct, score):
/// its list's counts, and (true, 1) for a list without a pair of matched pairs.
pub fn alignment_order(
    doc: &[i64],
    list_path: &[&str],
    gt_index: &[Option<i64>],
    aio_index: &[Option<i64>],
) -> (Vec<u32>, Vec<(bool, f64)>) {
    let matched: Vec<usize> = (0..doc.len())
        .filter(|&r| gt_index[r].is_some() && aio_index[r].is_some())
        .collect();
    let pick = |column: &[Option<i64>]| -> Vec<i64> {
        matched.iter().map(|&r| column[r].unwrap_or(0)).collect()
    };
    let m_doc: Vec<i64> = matched.iter().map(|&r| doc[r]).collect();
    let m_path: Vec<&str> = matched.iter().map(|&r| list_path[r]).collect();
    let orders: FxHashMap<(i64, &str), (bool, f64)> =
        list_orders(&m_doc, &m_path, &pick(gt_index), &pick(aio_index))
            .into_iter()
            .map(|l| {
                let score = l.concordant as f64 / l.n_pairs as f64;
                ((l.doc, l.list_path), (l.concordant == l.n_pairs, score))
            })
            .collect();
    // each row's sort key packed in a u128: doc, the list path's rank among the batch's few
    // paths, then the GT and AIO indices (a None after every index: nulls last); documents and
    // indices are non-negative 32-bit numbers (UInt32 and Int32 columns)
    let mut names = Encoder::default();
    let path_id: Vec<u32> = list_path.iter().map(|&path| names.id(path)).collect();
    let (_, rank) = names.finish();
    let last = |i: Option<i64>| {
        i.map_or(u32::MAX as u128, |i| {
            i.clamp(0, i64::from(u32::MAX - 1)) as u128
        })
    };
    let mut keyed: Vec<(u128, u32)> = (0..doc.len())
        .map(|r| {
            let key = (doc[r].clamp(0, i64::from(u32::MAX)) as u128) << 96
                | u128::from(rank[path_id[r] as usize]) << 64
                | last(gt_index[r]) << 32
                | last(aio_index[r]);
            (key, r as u32)
        })
        .collect();
    keyed.sort_unstable();
    let order: Vec<u32> = keyed.into_iter().map(|(_, r)| r).collect();
    let metrics = order
        .iter()
        .map(|&r| {
            let r = r as usize;
            *orders.get(&(doc[r], list_path[r])).unwrap_or(&(true, 1.0))
        })
        .collect();
    (order, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(v: &[i64]) -> u64 {
        let mut n = 0;
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                n += u64::from(v[i] < v[j]);
            }
        }
        n
    }

    #[test]
    fn the_merge_count_equals_counting_every_pair() {
        let mut seed = 7u64;
        for len in [0, 1, 2, 3, 10, 257, 600] {
            let v: Vec<i64> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) as i64 % 20 // ties on purpose
                })
                .collect();
            assert_eq!(increasing_pairs(&mut v.clone()), brute(&v), "{v:?}");
        }
    }

    #[test]
    fn lists_are_counted_apart() {
        let got = list_orders(
            &[0, 0, 1, 0, 0],
            &["a", "a", "a", "a", "b"],
            &[0, 2, 0, 1, 0],
            &[1, 0, 5, 2, 3],
        );
        // doc 0 "a": GT order 0, 1, 2 -> AIO 1, 2, 0: of 3 pairs, (0,1) keeps its order; the
        // lists of one pair have no pair of pairs
        assert_eq!(
            got,
            vec![ListOrder {
                doc: 0,
                list_path: "a",
                n_pairs: 3,
                concordant: 1
            },]
        );
    }

    #[test]
    fn alignment_rows_in_table_order_with_their_lists_order() {
        // doc 1 "b": pairs (0,1), (1,0) -> one pair of pairs, discordant; an unmatched GT 2
        // doc 1 "a": an unmatched AIO item and one pair (no pair of pairs: in order)
        // doc 0 "b": pairs (0,0), (1,1) in order
        let doc = [1, 1, 1, 1, 1, 0, 0, 1];
        let path = ["b", "b", "b", "a", "a", "b", "b", "b"];
        let gt = [
            Some(1),
            Some(0),
            Some(2),
            None,
            Some(0),
            Some(1),
            Some(0),
            None,
        ];
        let aio = [
            Some(0),
            Some(1),
            None,
            Some(3),
            Some(2),
            Some(1),
            Some(0),
            Some(5),
        ];
        let (order, metrics) = alignment_order(&doc, &path, &gt, &aio);
        assert_eq!(order, vec![6, 5, 4, 3, 1, 0, 2, 7]);
        let b1 = (false, 0.0);
        assert_eq!(
            metrics,
            vec![
                (true, 1.0),
                (true, 1.0),
                (true, 1.0),
                (true, 1.0),
                b1,
                b1,
                b1,
                b1
            ]
        );
    }
}
