//! align.py's bookkeeping of one nesting depth once its items are matched: each AIO item's
//! final index (its GT partner's, else after the GT items of its list, in AIO order), every
//! item's rendered prefix and canonical id, and the depth's alignment rows.

use rustc_hash::FxHashMap;
use std::fmt::Write;

use crate::row_of::RowOf;

/// One side's items at a depth, a row each: the list instance (doc, list attribute id,
/// canonical parent item), the item's id and index in its list, and the list's path as the
/// parent's prefix and the list's own suffix.
pub struct Items<'a> {
    pub doc: &'a [i64],
    pub la: &'a [i64],
    pub pcanon: &'a [i64],
    pub item: &'a [i64],
    pub index: &'a [i64],
    pub parent_prefix: &'a [&'a str],
    pub list_suffix: &'a [&'a str],
}

impl Items<'_> {
    fn key(&self, row: usize) -> (i64, i64, i64) {
        (self.doc[row], self.la[row], self.pcanon[row])
    }

    fn list_path(&self, row: usize) -> [&str; 2] {
        [self.parent_prefix[row], self.list_suffix[row]]
    }
}

/// Strings end to end in one buffer (string i ends at `ends[i]`): one allocation for a
/// depth's tens of thousands of short paths.
#[derive(Debug, Default, PartialEq)]
pub struct Texts {
    pub buf: String,
    pub ends: Vec<usize>,
}

impl Texts {
    fn push(&mut self, parts: &[&str], index: Option<i64>) {
        for part in parts {
            self.buf.push_str(part);
        }
        if let Some(index) = index {
            let _ = write!(self.buf, "[{index}]");
        }
        self.ends.push(self.buf.len());
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.buf[a..b])
    }
}

/// Items' rendered prefixes (`list_path[final index]`) and canonical ids (the GT item's id
/// for a GT item and for an AIO item matched to it, else the AIO item's own).
#[derive(Debug, Default, PartialEq)]
pub struct Prefixes {
    pub item: Vec<i64>,
    pub prefix: Texts,
    pub canon: Vec<i64>,
}

/// Alignment rows: every AIO item (with its GT partner's index and the pair's similarity,
/// or none), then every GT item left unmatched.
#[derive(Debug, Default, PartialEq)]
pub struct Rows {
    pub doc: Vec<i64>,
    pub list_path: Texts,
    pub gt_index: Vec<Option<i64>>,
    pub aio_index: Vec<Option<i64>>,
    pub similarity: Vec<Option<f64>>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Depth {
    pub gt: Prefixes,
    pub aio: Prefixes,
    pub rows: Rows,
}

/// The depth's prefixes and rows from its items and matched pairs (gt_item, aio_item,
/// similarity; both items of this depth). An unmatched AIO item's final index is the number
/// of GT items of its list plus its rank among the list's unmatched AIO items by AIO index
/// (ties by row order).
pub fn finish(gt: &Items, aio: &Items, matched: (&[i64], &[i64], &[Option<f64>])) -> Depth {
    let (m_gt, m_aio, m_sim) = matched;
    let mut n_gt: FxHashMap<(i64, i64, i64), i64> = FxHashMap::default();
    n_gt.reserve(gt.item.len());
    for row in 0..gt.item.len() {
        *n_gt.entry(gt.key(row)).or_default() += 1;
    }
    // each AIO row's partner (GT row, similarity), and which GT rows have one
    let (gt_row, aio_row) = (RowOf::new(gt.item), RowOf::new(aio.item));
    let mut partner: Vec<Option<(usize, Option<f64>)>> = vec![None; aio.item.len()];
    let mut gt_matched = vec![false; gt.item.len()];
    for i in 0..m_aio.len() {
        let (g, a) = (gt_row.get(m_gt[i]), aio_row.get(m_aio[i]));
        let (Some(g), Some(a)) = (g, a) else {
            panic!("align: a matched pair of items not at this depth")
        };
        partner[a] = Some((g, m_sim[i]));
        gt_matched[g] = true;
    }

    // unmatched AIO items in (list, AIO index, row) order: their ranks within each list
    let mut unmatched: Vec<((i64, i64, i64), i64, usize)> = (0..aio.item.len())
        .filter(|&row| partner[row].is_none())
        .map(|row| (aio.key(row), aio.index[row], row))
        .collect();
    unmatched.sort_unstable();
    let mut after_gt = vec![0i64; aio.item.len()];
    let mut rank = 0;
    for (i, &(key, _, row)) in unmatched.iter().enumerate() {
        rank = if i > 0 && unmatched[i - 1].0 == key {
            rank + 1
        } else {
            0
        };
        after_gt[row] = n_gt.get(&key).copied().unwrap_or(0) + rank;
    }

    let mut out = Depth::default();
    for (row, &unmatched_at) in after_gt.iter().enumerate() {
        let list_path = aio.list_path(row);
        let item = aio.item[row];
        let (canon, gt_at, similarity) = match partner[row] {
            Some((g, sim)) => (gt.item[g], Some(gt.index[g]), sim),
            None => (item, None, None),
        };
        push_prefix(
            &mut out.aio,
            item,
            &list_path,
            gt_at.unwrap_or(unmatched_at),
            canon,
        );
        push_row(
            &mut out.rows,
            aio.doc[row],
            &list_path,
            gt_at,
            Some(aio.index[row]),
            similarity,
        );
    }
    for (row, &matched) in gt_matched.iter().enumerate() {
        let list_path = gt.list_path(row);
        let item = gt.item[row];
        push_prefix(&mut out.gt, item, &list_path, gt.index[row], item);
        if !matched {
            push_row(
                &mut out.rows,
                gt.doc[row],
                &list_path,
                Some(gt.index[row]),
                None,
                None,
            );
        }
    }
    out
}

fn push_prefix(p: &mut Prefixes, item: i64, list_path: &[&str; 2], index: i64, canon: i64) {
    p.item.push(item);
    p.prefix.push(list_path, Some(index));
    p.canon.push(canon);
}

fn push_row(
    r: &mut Rows,
    doc: i64,
    list_path: &[&str; 2],
    gt_index: Option<i64>,
    aio_index: Option<i64>,
    similarity: Option<f64>,
) {
    r.doc.push(doc);
    r.list_path.push(list_path, None);
    r.gt_index.push(gt_index);
    r.aio_index.push(aio_index);
    r.similarity.push(similarity);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmatched_aio_items_follow_the_gt_items_in_aio_order() {
        // one list: GT items 1, 2 (indices 0, 1); AIO items 10, 11, 12 (indices 0, 1, 2);
        // AIO 11 matched GT 2; AIO 12 and 10 unmatched: final indices 2 + 0 and 2 + 1
        let (doc, la, pcanon) = ([0, 0], [3, 3], [-1, -1]);
        let gt = Items {
            doc: &doc,
            la: &la,
            pcanon: &pcanon,
            item: &[1, 2],
            index: &[0, 1],
            parent_prefix: &["", ""],
            list_suffix: &["items", "items"],
        };
        let (doc, la, pcanon) = ([0, 0, 0], [3, 3, 3], [-1, -1, -1]);
        let aio = Items {
            doc: &doc,
            la: &la,
            pcanon: &pcanon,
            item: &[12, 11, 10],
            index: &[2, 1, 0],
            parent_prefix: &["", "", ""],
            list_suffix: &["items", "items", "items"],
        };
        let d = finish(&gt, &aio, (&[2], &[11], &[Some(0.9)]));
        assert_eq!(
            d.aio.prefix.iter().collect::<Vec<_>>(),
            ["items[3]", "items[1]", "items[2]"]
        );
        assert_eq!(d.aio.canon, [12, 2, 10]);
        assert_eq!(
            d.gt.prefix.iter().collect::<Vec<_>>(),
            ["items[0]", "items[1]"]
        );
        assert_eq!(d.rows.gt_index, [None, Some(1), None, Some(0)]);
        assert_eq!(d.rows.aio_index, [Some(2), Some(1), Some(0), None]);
        assert_eq!(d.rows.similarity, [None, Some(0.9), None, None]);
    }

    #[test]
    fn an_aio_list_without_gt_items_keeps_its_order() {
        let one = [0];
        let gt = Items {
            doc: &[],
            la: &[],
            pcanon: &[],
            item: &[],
            index: &[],
            parent_prefix: &[],
            list_suffix: &[],
        };
        let aio = Items {
            doc: &one,
            la: &one,
            pcanon: &one,
            item: &[7],
            index: &[0],
            parent_prefix: &["a[0]"],
            list_suffix: &[".b"],
        };
        let d = finish(&gt, &aio, (&[], &[], &[]));
        assert_eq!(d.aio.prefix.iter().collect::<Vec<_>>(), ["a[0].b[0]"]);
        assert_eq!(d.rows.list_path.iter().collect::<Vec<_>>(), ["a[0].b"]);
    }
}
