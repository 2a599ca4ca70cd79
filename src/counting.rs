//! A batch's counts (SPEC §3, §4, §6) three ways in one pass over its fields: per (document,
//! attribute), per document and per attribute (counts.py's `aggregate`).
//!
//! The fields are taken document by document (doc_order.rs). Each document's rows are added
//! into one slot per attribute; its groups then come out in attribute order, a listed
//! attribute the document lacks as one TN cell (SPEC §6), and each group is added into its
//! document's sums and its attribute's. Counts are integers; the similarity sums are added in
//! row order, the per-document sums in attribute order.

use crate::doc_order::{document_runs, in_document_order};

/// One row per field. `bucket`, `cell` and `strategy` are the codes of schemas.py (None: the
/// column's null); `matched` is the field's match flag.
pub struct Fields<'a> {
    pub doc: &'a [u32],
    pub attr: &'a [u32],
    pub bucket: &'a [Option<u8>],
    pub cell: &'a [Option<u8>],
    pub strategy: &'a [Option<u8>],
    pub matched: &'a [Option<bool>],
    pub similarity: &'a [Option<f64>],
}

/// The codes that count: buckets and cells (schemas.BUCKETS, CELLS) and IGNORE's strategy.
#[derive(Clone, Copy)]
pub struct Codes {
    pub extra_keys: u8,
    pub gt_null_aio_has_value: u8,
    pub both_non_null: u8,
    pub aio_missing_or_null: u8,
    pub tp: u8,
    pub tn: u8,
    pub fp: u8,
    pub fn_: u8,
    pub fp_fn: u8,
    pub ignore: u8,
}

/// schemas.COUNT_COLUMNS, in order.
pub const COUNT_COLUMNS: [&str; 13] = [
    "n_total_distinct",
    "n_gt_non_null",
    "n_both_non_null",
    "n_aio_missing_or_null",
    "n_extra_keys",
    "n_gt_null_aio_has_value",
    "n_scored",
    "n_correct",
    "tp",
    "tn",
    "fp",
    "fn",
    "n_similarity",
];
const N_COUNTS: usize = COUNT_COLUMNS.len();
const TOTAL: usize = 0;
const GT_NON_NULL: usize = 1;
const BOTH_NON_NULL: usize = 2;
const AIO_MISSING_OR_NULL: usize = 3;
const EXTRA_KEYS: usize = 4;
const GT_NULL_AIO_HAS_VALUE: usize = 5;
const SCORED: usize = 6;
const CORRECT: usize = 7;
const TP: usize = 8;
const TN: usize = 9;
const FP: usize = 10;
const FN: usize = 11;
const SIMILARITY: usize = 12;
/// The counts a document's row sums (counts.DOCUMENT_COUNTS): all but n_similarity.
pub const N_DOCUMENT_COUNTS: usize = 12;

/// The counts of one (document, attribute) group, or their sum over several.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub n: [i64; N_COUNTS],
    pub sum_similarity: f64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for (a, b) in self.n.iter_mut().zip(other.n) {
            *a += b;
        }
        self.sum_similarity += other.sum_similarity;
    }

    /// F1 = 2TP / (2TP + FP + FN), None when that denominator is 0 (rates.prf).
    fn f1(&self) -> Option<f64> {
        let den = 2 * self.n[TP] + self.n[FP] + self.n[FN];
        (den > 0).then(|| (2 * self.n[TP]) as f64 / den as f64)
    }
}

/// Counts, a row each, as columns.
#[derive(Debug, Default, PartialEq)]
pub struct CountColumns {
    pub n: [Vec<i64>; N_COUNTS],
    pub sum_similarity: Vec<f64>,
}

impl CountColumns {
    fn with_capacity(n: usize) -> Self {
        CountColumns {
            n: std::array::from_fn(|_| Vec::with_capacity(n)),
            sum_similarity: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, c: &Counts) {
        for (column, v) in self.n.iter_mut().zip(c.n) {
            column.push(v);
        }
        self.sum_similarity.push(c.sum_similarity);
    }

    /// Row `i`.
    #[cfg(test)]
    pub fn row(&self, i: usize) -> Counts {
        Counts {
            n: std::array::from_fn(|j| self.n[j][i]),
            sum_similarity: self.sum_similarity[i],
        }
    }
}

/// The sums of each document's groups (counts.document_sums), a row a document.
#[derive(Debug, Default, PartialEq)]
pub struct DocumentSums {
    pub doc: Vec<u32>,
    pub counts: CountColumns,
    /// the mean of the groups' F1 where defined
    pub macro_f1: Vec<Option<f64>>,
    /// n_correct and n_scored, each group's weighted by its attribute's weight
    pub w_correct: Vec<f64>,
    pub w_scored: Vec<f64>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Aggregate {
    /// the groups in (doc, attr) order
    pub doc: Vec<u32>,
    pub attr: Vec<u32>,
    pub groups: CountColumns,
    /// a row a document with groups, in document order
    pub documents: DocumentSums,
    /// a row an attribute with groups, in attribute order
    pub attributes: Vec<u32>,
    pub per_attribute: CountColumns,
}

/// What a batch adds beside its fields: `docs`, its scored documents, in order; `listed`, the
/// attributes each of them has a group of (a TN cell where it has no field of one);
/// `weights`, each attribute's field weight (None: 1 each); `n_attributes` bounds the ids.
pub struct Batch<'a> {
    pub docs: &'a [u32],
    pub listed: &'a [u32],
    pub weights: Option<&'a [f64]>,
    pub n_attributes: usize,
}

/// Err: (column, row) of an attribute id or a listed one out of range, or ("weights", their
/// number) when there are fewer weights than attributes.
pub fn aggregate(f: &Fields, c: Codes, b: &Batch) -> Result<Aggregate, (&'static str, usize)> {
    if let Some(r) = f.attr.iter().position(|&a| a as usize >= b.n_attributes) {
        return Err(("attr", r));
    }
    if let Some(r) = b.listed.iter().position(|&a| a as usize >= b.n_attributes) {
        return Err(("listed", r));
    }
    if let Some(w) = b.weights.filter(|w| w.len() < b.n_attributes) {
        return Err(("weights", w.len()));
    }
    let order = in_document_order(f.doc);
    let mut slots = vec![Counts::default(); b.n_attributes];
    let mut seen = vec![false; b.n_attributes];
    let mut touched: Vec<u32> = Vec::new();
    let mut per_attribute = vec![Counts::default(); b.n_attributes];
    let mut has_groups = vec![false; b.n_attributes];
    // at most a group a row, a TN cell for each listed attribute of each document
    let groups = f.doc.len() + b.docs.len() * b.listed.len();
    let mut out = Aggregate {
        doc: Vec::with_capacity(groups),
        attr: Vec::with_capacity(groups),
        groups: CountColumns::with_capacity(groups),
        ..Aggregate::default()
    };
    let mut runs = document_runs(f.doc, &order).peekable();
    let mut docs = b.docs.iter().copied().peekable();
    loop {
        // the next document with fields or scored, in order (`docs` sorted and distinct)
        let (doc, rows, scored_doc) = match (runs.peek(), docs.peek()) {
            (None, None) => break,
            (Some(&(d, _)), Some(&scored)) if scored < d => (docs.next().unwrap(), None, true),
            (Some(&(d, _)), next) => {
                let scored_doc = next == Some(&d);
                if scored_doc {
                    docs.next();
                }
                (d, runs.next().map(|(_, run)| run), scored_doc)
            }
            (None, Some(_)) => (docs.next().unwrap(), None, true),
        };
        for &r in rows.map_or(&[][..], |run| &order[run]) {
            let r = r as usize;
            let a = f.attr[r];
            if !seen[a as usize] {
                seen[a as usize] = true;
                touched.push(a);
            }
            add_row(&mut slots[a as usize], f, r, c);
        }
        if scored_doc {
            for &a in b.listed {
                if !seen[a as usize] {
                    seen[a as usize] = true;
                    touched.push(a);
                    slots[a as usize].n[TN] = 1;
                }
            }
        }
        if touched.is_empty() {
            continue;
        }
        touched.sort_unstable();
        // the document's groups into the columns a column at a time, its sums beside them
        out.doc.extend(std::iter::repeat_n(doc, touched.len()));
        out.attr.extend_from_slice(&touched);
        let mut sums = Counts::default();
        for (j, column) in out.groups.n.iter_mut().enumerate() {
            let before = column.len();
            column.extend(touched.iter().map(|&a| slots[a as usize].n[j]));
            sums.n[j] = column[before..].iter().sum();
        }
        let similarities = touched.iter().map(|&a| slots[a as usize].sum_similarity);
        out.groups.sum_similarity.extend(similarities);
        let (mut w_correct, mut w_scored) = (0.0, 0.0);
        let (mut n_f1, mut sum_f1) = (0i64, 0.0f64);
        for &a in &touched {
            let g = &mut slots[a as usize];
            let w = b.weights.map_or(1.0, |w| w[a as usize]);
            w_correct += w * g.n[CORRECT] as f64;
            w_scored += w * g.n[SCORED] as f64;
            if let Some(f1) = g.f1() {
                n_f1 += 1;
                sum_f1 += f1;
            }
            per_attribute[a as usize].add(g);
            has_groups[a as usize] = true;
            seen[a as usize] = false;
            *g = Counts::default();
        }
        let d = &mut out.documents;
        d.doc.push(doc);
        d.counts.push(&sums);
        d.macro_f1.push((n_f1 > 0).then(|| sum_f1 / n_f1 as f64));
        d.w_correct.push(w_correct);
        d.w_scored.push(w_scored);
        touched.clear();
    }
    for (a, counts) in per_attribute.iter().enumerate() {
        if has_groups[a] {
            out.attributes.push(a as u32);
            out.per_attribute.push(counts);
        }
    }
    Ok(out)
}

/// Add field row `r` into its group (counts.py's doc_attribute_counts, row by row). Without
/// a branch: the codes of real fields follow no pattern a branch predictor learns.
#[inline]
fn add_row(g: &mut Counts, f: &Fields, r: usize, c: Codes) {
    let is = |code: Option<u8>, value: u8| i64::from(code == Some(value));
    let (bucket, cell) = (f.bucket[r], f.cell[r]);
    let both = is(bucket, c.both_non_null);
    let aio_missing = is(bucket, c.aio_missing_or_null);
    // scored: both non-null, a strategy and not IGNORE (a null strategy is not scored)
    let scored = both & i64::from(f.strategy[r].is_some_and(|s| s != c.ignore));
    let similarity = f.similarity[r];
    let has_similarity = scored & i64::from(similarity.is_some());
    let fp_fn = is(cell, c.fp_fn);
    let n = &mut g.n;
    n[TOTAL] += 1;
    n[GT_NON_NULL] += both + aio_missing;
    n[BOTH_NON_NULL] += both;
    n[AIO_MISSING_OR_NULL] += aio_missing;
    n[EXTRA_KEYS] += is(bucket, c.extra_keys);
    n[GT_NULL_AIO_HAS_VALUE] += is(bucket, c.gt_null_aio_has_value);
    n[SCORED] += scored;
    n[CORRECT] += scored & i64::from(f.matched[r] == Some(true));
    n[TP] += is(cell, c.tp);
    n[TN] += is(cell, c.tn);
    n[FP] += is(cell, c.fp) + fp_fn;
    n[FN] += is(cell, c.fn_) + fp_fn;
    n[SIMILARITY] += has_similarity;
    if has_similarity == 1 {
        g.sum_similarity += similarity.unwrap_or(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODES: Codes = Codes {
        extra_keys: 0,
        gt_null_aio_has_value: 1,
        both_non_null: 2,
        aio_missing_or_null: 3,
        tp: 0,
        tn: 1,
        fp: 2,
        fn_: 3,
        fp_fn: 4,
        ignore: 4,
    };

    fn counts(pairs: &[(usize, i64)], sum_similarity: f64) -> Counts {
        let mut c = Counts {
            sum_similarity,
            ..Counts::default()
        };
        for &(i, v) in pairs {
            c.n[i] = v;
        }
        c
    }

    #[test]
    fn groups_documents_and_attributes_in_order() {
        // doc 0: attr 2 both non-null, matched (TP, 0.5); attr 1 AIO missing (FN);
        // attr 2 again, both non-null under IGNORE (no cell, not scored)
        // doc 1: attr 1 both non-null, not matched (FP+FN, 0.25)
        let f = Fields {
            doc: &[0, 0, 1, 0],
            attr: &[2, 1, 1, 2],
            bucket: &[Some(2), Some(3), Some(2), Some(2)],
            cell: &[Some(0), Some(3), Some(4), None],
            strategy: &[Some(0), Some(0), Some(1), Some(4)],
            matched: &[Some(true), None, Some(false), Some(true)],
            similarity: &[Some(0.5), None, Some(0.25), Some(1.0)],
        };
        let batch = Batch {
            docs: &[0, 1],
            listed: &[],
            weights: Some(&[1.0, 3.0, 0.5]),
            n_attributes: 3,
        };
        let a = aggregate(&f, CODES, &batch).unwrap();
        let fn_1 = counts(
            &[
                (TOTAL, 1),
                (GT_NON_NULL, 1),
                (AIO_MISSING_OR_NULL, 1),
                (FN, 1),
            ],
            0.0,
        );
        let tp_2 = counts(
            &[
                (TOTAL, 2),
                (GT_NON_NULL, 2),
                (BOTH_NON_NULL, 2),
                (SCORED, 1),
                (CORRECT, 1),
            ]
            .into_iter()
            .chain([(TP, 1), (SIMILARITY, 1)])
            .collect::<Vec<_>>(),
            0.5,
        );
        let fpfn_1 = counts(
            &[
                (TOTAL, 1),
                (GT_NON_NULL, 1),
                (BOTH_NON_NULL, 1),
                (SCORED, 1),
                (SIMILARITY, 1),
            ]
            .into_iter()
            .chain([(FP, 1), (FN, 1)])
            .collect::<Vec<_>>(),
            0.25,
        );
        assert_eq!((a.doc, a.attr), (vec![0, 0, 1], vec![1, 2, 1]));
        assert_eq!([0, 1, 2].map(|i| a.groups.row(i)), [fn_1, tp_2, fpfn_1]);
        let d = &a.documents;
        assert_eq!(d.doc, vec![0, 1]);
        assert_eq!((d.counts.n[TOTAL][0], d.counts.n[TP][0]), (3, 1));
        // attr 2's weight in doc 0, attr 1's in doc 1
        assert_eq!(
            (&d.w_correct, &d.w_scored),
            (&vec![0.5, 0.0], &vec![0.5, 3.0])
        );
        // F1 0 (attr 1) and 1 (attr 2) in doc 0, 0 in doc 1
        assert_eq!(d.macro_f1, vec![Some(0.5), Some(0.0)]);
        let mut both_1 = fn_1;
        both_1.add(&fpfn_1);
        assert_eq!(a.attributes, vec![1, 2]);
        assert_eq!([0, 1].map(|i| a.per_attribute.row(i)), [both_1, tp_2]);
    }

    #[test]
    fn listed_attributes_a_document_lacks_are_one_tn_cell() {
        // doc 2 has no field at all; doc 5 has fields but is not scored (no TN cells)
        let f = Fields {
            doc: &[5, 0],
            attr: &[1, 1],
            bucket: &[None, None],
            cell: &[None, Some(1)],
            strategy: &[None, Some(0)],
            matched: &[None, None],
            similarity: &[None, None],
        };
        let batch = Batch {
            docs: &[0, 2],
            listed: &[3, 1],
            weights: None,
            n_attributes: 4,
        };
        let a = aggregate(&f, CODES, &batch).unwrap();
        let tn = counts(&[(TN, 1)], 0.0);
        let row = counts(&[(TOTAL, 1), (TN, 1)], 0.0);
        assert_eq!(
            (&a.doc, &a.attr),
            (&vec![0, 0, 2, 2, 5], &vec![1, 3, 1, 3, 1])
        );
        assert_eq!(
            [0, 1, 4].map(|i| a.groups.row(i)),
            [row, tn, counts(&[(TOTAL, 1)], 0.0)]
        );
        assert_eq!(a.documents.doc, vec![0, 2, 5]);
        assert_eq!(a.documents.macro_f1, vec![None; 3]);
        assert_eq!(a.attributes, vec![1, 3]);
        assert_eq!(a.per_attribute.row(1), counts(&[(TN, 2)], 0.0));
    }

    #[test]
    fn rows_out_of_document_order_and_ids_out_of_range() {
        let f = Fields {
            doc: &[3, 1, 3],
            attr: &[0, 0, 1],
            bucket: &[Some(2); 3],
            cell: &[Some(0); 3],
            strategy: &[Some(0); 3],
            matched: &[Some(true); 3],
            similarity: &[Some(0.5), Some(0.25), Some(2.0)],
        };
        let mut batch = Batch {
            docs: &[1, 3],
            listed: &[],
            weights: None,
            n_attributes: 2,
        };
        let a = aggregate(&f, CODES, &batch).unwrap();
        assert_eq!((a.doc, a.attr), (vec![1, 3, 3], vec![0, 0, 1]));
        assert_eq!(a.groups.sum_similarity, vec![0.25, 0.5, 2.0]);
        batch.n_attributes = 1;
        assert_eq!(aggregate(&f, CODES, &batch), Err(("attr", 2)));
        batch.n_attributes = 2;
        batch.listed = &[0, 2];
        assert_eq!(aggregate(&f, CODES, &batch), Err(("listed", 1)));
    }
}
