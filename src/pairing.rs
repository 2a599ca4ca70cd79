//! The leaves of both sides paired on (document, path id): a full outer join by one merge.
//!
//! A side is put in (doc, pid) order by sorting each document's few leaves on their own
//! (doc_order.rs), and the two orders are merged.

use crate::doc_order::{document_runs, in_document_order};

/// Row positions of the paired leaves, in (doc, pid) order: `gt[i]` / `aio[i]` is the row of
/// that side's leaf at (doc[i], pid[i]), None where the side has no such leaf.
#[derive(Debug, Default, PartialEq)]
pub struct Paired {
    pub doc: Vec<u32>,
    pub pid: Vec<u32>,
    pub gt: Vec<Option<u32>>,
    pub aio: Vec<Option<u32>>,
}

/// One side's (doc, pid) columns, and which rows take part (all when `keep` is None).
pub struct Side<'a> {
    pub doc: &'a [u32],
    pub pid: &'a [u32],
    pub keep: Option<&'a [bool]>,
}

impl Side<'_> {
    fn key(&self, row: u32) -> u64 {
        (u64::from(self.doc[row as usize]) << 32) | u64::from(self.pid[row as usize])
    }

    /// The side's kept rows in (doc, pid) order; Err with the first repeated (doc, pid).
    fn order(&self) -> Result<Vec<u32>, (u32, u32)> {
        let mut rows = in_document_order(self.doc);
        if let Some(keep) = self.keep {
            rows.retain(|&r| keep[r as usize]);
        }
        let runs: Vec<_> = document_runs(self.doc, &rows).map(|(_, run)| run).collect();
        // each run sorted as (pid, row) packed in one u64: no lookup of the pid per comparison
        let mut keys: Vec<u64> = Vec::new();
        for run in runs {
            keys.clear();
            keys.extend(
                rows[run.clone()]
                    .iter()
                    .map(|&r| (u64::from(self.pid[r as usize]) << 32) | u64::from(r)),
            );
            keys.sort_unstable();
            for (row, key) in rows[run].iter_mut().zip(&keys) {
                *row = *key as u32;
            }
        }
        match rows.windows(2).find(|w| self.key(w[0]) == self.key(w[1])) {
            Some(w) => Err((self.doc[w[0] as usize], self.pid[w[0] as usize])),
            None => Ok(rows),
        }
    }
}

/// The full outer join of the two sides on (doc, pid), in (doc, pid) order. A (doc, pid) is
/// unique within a side (a path is unique within a document); Err names a repeated one.
pub fn pair_leaves(gt: &Side, aio: &Side) -> Result<Paired, (u32, u32)> {
    let (g, a) = (gt.order()?, aio.order()?);
    let mut out = Paired::default();
    let cap = g.len().max(a.len());
    for column in [&mut out.doc, &mut out.pid] {
        column.reserve(cap);
    }
    out.gt.reserve(cap);
    out.aio.reserve(cap);
    let (mut i, mut j) = (0, 0);
    while i < g.len() || j < a.len() {
        let gk = g.get(i).map(|&r| gt.key(r));
        let ak = a.get(j).map(|&r| aio.key(r));
        let (key, take_g, take_a) = match (gk, ak) {
            (Some(x), Some(y)) if x == y => (x, true, true),
            (Some(x), Some(y)) if x < y => (x, true, false),
            (Some(x), None) => (x, true, false),
            (_, Some(y)) => (y, false, true),
            (None, None) => unreachable!(),
        };
        out.doc.push((key >> 32) as u32);
        out.pid.push(key as u32);
        out.gt.push(take_g.then(|| g[i]));
        out.aio.push(take_a.then(|| a[j]));
        i += usize::from(take_g);
        j += usize::from(take_a);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paired(gt: (&[u32], &[u32]), aio: (&[u32], &[u32])) -> Result<Paired, (u32, u32)> {
        pair_leaves(
            &Side {
                doc: gt.0,
                pid: gt.1,
                keep: None,
            },
            &Side {
                doc: aio.0,
                pid: aio.1,
                keep: None,
            },
        )
    }

    #[test]
    fn joins_on_doc_and_pid_in_order() {
        // doc 0: pids 5, 1 on GT, 1, 7 on AIO; doc 2: GT only; doc 1: AIO only
        let out = paired((&[0, 0, 2], &[5, 1, 1]), (&[0, 0, 1], &[1, 7, 3])).unwrap();
        assert_eq!(out.doc, vec![0, 0, 0, 1, 2]);
        assert_eq!(out.pid, vec![1, 5, 7, 3, 1]);
        assert_eq!(out.gt, vec![Some(1), Some(0), None, None, Some(2)]);
        assert_eq!(out.aio, vec![Some(0), None, Some(1), Some(2), None]);
    }

    #[test]
    fn a_side_out_of_document_order_is_sorted_whole() {
        let out = paired((&[3, 1, 3], &[0, 0, 1]), (&[], &[])).unwrap();
        assert_eq!(out.doc, vec![1, 3, 3]);
        assert_eq!(out.gt, vec![Some(1), Some(0), Some(2)]);
        assert_eq!(out.aio, vec![None, None, None]);
    }

    #[test]
    fn rows_not_kept_are_not_paired() {
        // GT row 1 (doc 0, pid 1) is left out: AIO's leaf at that path pairs with nothing
        let keep = [true, false, true];
        let gt = Side {
            doc: &[0, 0, 1],
            pid: &[5, 1, 1],
            keep: Some(&keep),
        };
        let aio = Side {
            doc: &[0],
            pid: &[1],
            keep: None,
        };
        let out = pair_leaves(&gt, &aio).unwrap();
        assert_eq!(out.pid, vec![1, 5, 1]);
        assert_eq!(out.gt, vec![None, Some(0), Some(2)]);
        assert_eq!(out.aio, vec![Some(0), None, None]);
    }

    #[test]
    fn a_repeated_path_is_named() {
        assert_eq!(paired((&[0, 4, 4], &[1, 2, 2]), (&[], &[])), Err((4, 2)));
        assert_eq!(paired((&[], &[]), (&[5, 4, 5], &[2, 2, 2])), Err((5, 2)));
    }
}
