//! The per (document, attribute) groups of the fields table and what counts.py adds up in
//! them: rows, rows per bucket code and per cell code, flagged rows, and the similarity sum.
//!
//! The fields are taken document by document (doc_order.rs). A first pass numbers each
//! document's groups in attribute order and gives every row its group; then each count is one
//! pass over the rows into a column of exactly one entry a group, so a group's similarities
//! are summed in row order.

use crate::doc_order::{document_runs, in_document_order};

/// One row per field: its group key and what is counted of it. `bucket` and `cell` are codes
/// below `n_buckets` / `n_cells` (a null already given a code of its own by the caller).
pub struct Fields<'a> {
    pub doc: &'a [u32],
    pub attr: &'a [u32],
    pub bucket: &'a [u32],
    pub cell: &'a [u32],
    pub scored: &'a [bool],
    pub correct: &'a [bool],
    pub has_similarity: &'a [bool],
    pub similarity: &'a [Option<f64>],
}

/// The groups in (doc, attr) order; `buckets[j]` / `cells[j]` count the group's rows of code j.
#[derive(Debug, Default, PartialEq)]
pub struct Groups {
    pub doc: Vec<u32>,
    pub attr: Vec<u32>,
    pub rows: Vec<i64>,
    pub buckets: Vec<Vec<i64>>,
    pub cells: Vec<Vec<i64>>,
    pub scored: Vec<i64>,
    pub correct: Vec<i64>,
    pub has_similarity: Vec<i64>,
    /// the similarities of the scored rows (nulls left out), summed in row order
    pub sum_similarity: Vec<f64>,
}

/// Err names a code out of range: (column, row).
pub fn count_groups(
    f: &Fields,
    n_buckets: usize,
    n_cells: usize,
) -> Result<Groups, (&'static str, usize)> {
    if let Some(r) = f.bucket.iter().position(|&b| b as usize >= n_buckets) {
        return Err(("bucket", r));
    }
    if let Some(r) = f.cell.iter().position(|&c| c as usize >= n_cells) {
        return Err(("cell", r));
    }
    let order = in_document_order(f.doc);
    let (mut g, group) = number_groups(f, &order);
    let m = g.doc.len();
    let count = |flag: &dyn Fn(usize) -> bool| -> Vec<i64> {
        let mut out = vec![0i64; m];
        for &r in &order {
            let r = r as usize;
            out[group[r] as usize] += i64::from(flag(r));
        }
        out
    };
    let by_code = |codes: &[u32], n_codes: usize| -> Vec<Vec<i64>> {
        let mut out = vec![vec![0i64; m]; n_codes];
        for &r in &order {
            let r = r as usize;
            out[codes[r] as usize][group[r] as usize] += 1;
        }
        out
    };
    g.rows = count(&|_| true);
    g.buckets = by_code(f.bucket, n_buckets);
    g.cells = by_code(f.cell, n_cells);
    g.scored = count(&|r| f.scored[r]);
    g.correct = count(&|r| f.correct[r]);
    g.has_similarity = count(&|r| f.has_similarity[r]);
    g.sum_similarity = vec![0.0; m];
    for &r in &order {
        let r = r as usize;
        if f.scored[r] {
            g.sum_similarity[group[r] as usize] += f.similarity[r].unwrap_or(0.0);
        }
    }
    Ok(g)
}

/// The groups' (doc, attr), numbered in that order, and each row's group.
fn number_groups(f: &Fields, order: &[u32]) -> (Groups, Vec<u32>) {
    // attribute ids are small (align.encode's) and index a table; larger ones are ranked
    // first, order kept
    let n = f.doc.len();
    let top = f.attr.iter().max().map_or(0, |&m| m as usize + 1);
    let dense = top <= n + 1024;
    let names: Vec<u32> = if dense {
        Vec::new()
    } else {
        let mut names = f.attr.to_vec();
        names.sort_unstable();
        names.dedup();
        names
    };
    let rank = |a: u32| -> usize {
        if dense {
            a as usize
        } else {
            names.binary_search(&a).expect("a listed attribute")
        }
    };
    let mut slot = vec![u32::MAX; if dense { top } else { names.len() }];
    let mut touched: Vec<usize> = Vec::new();
    let mut g = Groups::default();
    let mut group = vec![0u32; n];
    for (doc, run) in document_runs(f.doc, order) {
        let rows = &order[run];
        for &r in rows {
            let a = rank(f.attr[r as usize]);
            if slot[a] == u32::MAX {
                slot[a] = 0;
                touched.push(a);
            }
        }
        touched.sort_unstable();
        for &a in &touched {
            slot[a] = g.doc.len() as u32;
            g.doc.push(doc);
            g.attr.push(if dense { a as u32 } else { names[a] });
        }
        for &r in rows {
            group[r as usize] = slot[rank(f.attr[r as usize])];
        }
        for &a in &touched {
            slot[a] = u32::MAX;
        }
        touched.clear();
    }
    (g, group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_doc_and_attribute_in_order() {
        let similarity = [Some(0.5), None, Some(0.25), Some(1.0), Some(0.125)];
        let f = Fields {
            doc: &[0, 0, 0, 1, 1],
            attr: &[7, 2, 7, 2, 2],
            bucket: &[0, 1, 0, 0, 2],
            cell: &[1, 0, 1, 1, 0],
            scored: &[true, false, true, true, false],
            correct: &[true, false, false, true, false],
            has_similarity: &[true, false, true, true, false],
            similarity: &similarity,
        };
        let g = count_groups(&f, 3, 2).unwrap();
        assert_eq!(
            (g.doc, g.attr, g.rows),
            (vec![0, 0, 1], vec![2, 7, 2], vec![1, 2, 2])
        );
        assert_eq!(g.buckets, vec![vec![0, 2, 1], vec![1, 0, 0], vec![0, 0, 1]]);
        assert_eq!(g.cells, vec![vec![1, 0, 1], vec![0, 2, 1]]);
        assert_eq!(g.scored, vec![0, 2, 1]);
        assert_eq!(g.correct, vec![0, 1, 1]);
        assert_eq!(g.sum_similarity, vec![0.0, 0.75, 1.0]);
    }

    #[test]
    fn sparse_attribute_ids_and_rows_out_of_document_order() {
        let similarity = [Some(0.5), Some(0.25), Some(2.0)];
        let f = Fields {
            doc: &[3, 1, 3],
            attr: &[4_000_000_000, 9, 9],
            bucket: &[0, 0, 0],
            cell: &[0, 0, 0],
            scored: &[true; 3],
            correct: &[true; 3],
            has_similarity: &[true; 3],
            similarity: &similarity,
        };
        let g = count_groups(&f, 1, 1).unwrap();
        assert_eq!((g.doc, g.attr), (vec![1, 3, 3], vec![9, 9, 4_000_000_000]));
        assert_eq!(g.sum_similarity, vec![0.25, 2.0, 0.5]);
    }

    #[test]
    fn a_code_out_of_range_is_named() {
        let f = Fields {
            doc: &[0, 0],
            attr: &[0, 1],
            bucket: &[0, 3],
            cell: &[0, 0],
            scored: &[false; 2],
            correct: &[false; 2],
            has_similarity: &[false; 2],
            similarity: &[None, None],
        };
        assert_eq!(count_groups(&f, 3, 1), Err(("bucket", 1)));
    }
}
