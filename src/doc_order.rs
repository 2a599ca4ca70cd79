//! Rows taken document by document: the leaves and the fields come in document order (the
//! flatten emits documents one after another), so per-document work walks runs of rows, and
//! rows out of that order are first put in it.

use std::ops::Range;

/// The rows in document order: `0..n` when `doc` already is, else stably sorted by document.
pub fn in_document_order(doc: &[u32]) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..doc.len() as u32).collect();
    if !doc.windows(2).all(|w| w[0] <= w[1]) {
        rows.sort_by_key(|&r| doc[r as usize]);
    }
    rows
}

/// Each document of `order` (rows in document order) and the range of its rows there.
pub fn document_runs<'a>(
    doc: &'a [u32],
    order: &'a [u32],
) -> impl Iterator<Item = (u32, Range<usize>)> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = *order.get(start)?;
        let d = doc[first as usize];
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&r| doc[r as usize] == d)
                .count();
        let run = start..end;
        start = end;
        Some((d, run))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_documents_in_order() {
        let doc = [2, 0, 2, 1, 0];
        let order = in_document_order(&doc);
        assert_eq!(order, vec![1, 4, 3, 0, 2]); // stable within a document
        let runs: Vec<_> = document_runs(&doc, &order).collect();
        assert_eq!(runs, vec![(0, 0..2), (1, 2..3), (2, 3..5)]);
        assert_eq!(in_document_order(&[0, 0, 3]), vec![0, 1, 2]);
        assert_eq!(document_runs(&[], &[]).count(), 0);
    }
}
