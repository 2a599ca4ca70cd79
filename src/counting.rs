//! The per (document, attribute) groups of the fields table and what counts.py adds up in
//! them: rows, rows per bucket code and per cell code, flagged rows, and the similarity sum.
//!
//! The fields come in document order (the paired leaves do), so a document's groups are
//! added up in one pass over its rows, in accumulators indexed by attribute, and emitted in
//! attribute order; a group's similarities are summed in row order. Rows out of document order
//! are first put in it by a stable sort.

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

/// One document's groups while its rows are read: group g's counts at g * width + column.
struct Accumulators {
    width: usize,
    counts: Vec<i64>,
    sums: Vec<f64>,
}

const ROWS: usize = 0;
const SCORED: usize = 1;
const CORRECT: usize = 2;
const HAS_SIMILARITY: usize = 3;
const FIRST_CODE: usize = 4;

/// Err names a code out of range: (column, row).
pub fn count_groups(
    f: &Fields,
    n_buckets: usize,
    n_cells: usize,
) -> Result<Groups, (&'static str, usize)> {
    let n = f.doc.len();
    if let Some(r) = f.bucket.iter().position(|&b| b as usize >= n_buckets) {
        return Err(("bucket", r));
    }
    if let Some(r) = f.cell.iter().position(|&c| c as usize >= n_cells) {
        return Err(("cell", r));
    }
    let order: Vec<u32> = if f.doc.windows(2).all(|w| w[0] <= w[1]) {
        (0..n as u32).collect()
    } else {
        let mut rows: Vec<u32> = (0..n as u32).collect();
        rows.sort_by_key(|&r| f.doc[r as usize]);
        rows
    };
    // attribute ids are small (align.encode's) and index the accumulators; larger ones are
    // ranked first, order kept
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
    let mut slot = vec![usize::MAX; if dense { top } else { names.len() }];
    let mut touched: Vec<usize> = Vec::new();
    let mut acc = Accumulators {
        width: FIRST_CODE + n_buckets + n_cells,
        counts: Vec::new(),
        sums: Vec::new(),
    };
    // at most one group a row: reserved (address space only) so that no column is regrown
    let column = || Vec::with_capacity(n);
    let mut g = Groups {
        doc: Vec::with_capacity(n),
        attr: Vec::with_capacity(n),
        rows: column(),
        buckets: (0..n_buckets).map(|_| column()).collect(),
        cells: (0..n_cells).map(|_| column()).collect(),
        scored: column(),
        correct: column(),
        has_similarity: column(),
        sum_similarity: Vec::with_capacity(n),
    };
    let mut start = 0;
    while start < n {
        let doc = f.doc[order[start] as usize];
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&r| f.doc[r as usize] == doc)
                .count();
        for &r in &order[start..end] {
            let r = r as usize;
            let a = rank(f.attr[r]);
            if slot[a] == usize::MAX {
                slot[a] = touched.len();
                touched.push(a);
                acc.counts.resize(acc.counts.len() + acc.width, 0);
                acc.sums.push(0.0);
            }
            let at = slot[a] * acc.width;
            let counts = &mut acc.counts[at..at + acc.width];
            counts[ROWS] += 1;
            counts[SCORED] += i64::from(f.scored[r]);
            counts[CORRECT] += i64::from(f.correct[r]);
            counts[HAS_SIMILARITY] += i64::from(f.has_similarity[r]);
            counts[FIRST_CODE + f.bucket[r] as usize] += 1;
            counts[FIRST_CODE + n_buckets + f.cell[r] as usize] += 1;
            if f.scored[r] {
                acc.sums[slot[a]] += f.similarity[r].unwrap_or(0.0);
            }
        }
        touched.sort_unstable();
        for &a in &touched {
            let at = slot[a] * acc.width;
            let counts = &acc.counts[at..at + acc.width];
            g.doc.push(doc);
            g.attr.push(if dense { a as u32 } else { names[a] });
            g.rows.push(counts[ROWS]);
            g.scored.push(counts[SCORED]);
            g.correct.push(counts[CORRECT]);
            g.has_similarity.push(counts[HAS_SIMILARITY]);
            for (j, column) in g.buckets.iter_mut().enumerate() {
                column.push(counts[FIRST_CODE + j]);
            }
            for (j, column) in g.cells.iter_mut().enumerate() {
                column.push(counts[FIRST_CODE + n_buckets + j]);
            }
            g.sum_similarity.push(acc.sums[slot[a]]);
            slot[a] = usize::MAX;
        }
        touched.clear();
        acc.counts.clear();
        acc.sums.clear();
        start = end;
    }
    Ok(g)
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
