//! The item matching of lists of records for the `greedy` and `index` methods (SPEC §5, the
//! reference is `jsoneval_polars/align.py`): each candidate (GT item, AIO item) pair's mean
//! match-field similarity, then the pairs taken. One list instance at a time, so memory is that
//! of the largest instance's pairs; align.py hands over only instances whose pairs it would
//! build in full anyway (index lists, and greedy lists of at most `DENSE_PAIRS` pairs).

use std::ops::Range;

use rapidfuzz::distance::levenshtein;
use rustc_hash::FxHashMap;

use crate::row_of::RowOf;

/// One match field of a list instance (align.py's `fields` rows).
#[derive(Clone, Copy, Debug)]
pub struct MatchField {
    pub field: u32,
    /// compared by Levenshtein (`compare: fuzzy`)
    pub fuzzy: bool,
    /// compared by kind (`compare: auto`): a GT string with no value key by Levenshtein
    pub auto: bool,
    /// the first characters compared, and no value keys (`prefix`)
    pub prefix: Option<usize>,
    /// the field's `field_thresholds` entry: a Levenshtein score below it counts 0
    pub threshold: Option<f64>,
}

/// A member of an item in one match field. `text` is the canonical text, present whenever
/// `is_null` is false (flatten.py's contract); `key` the value key of a date or number.
#[derive(Clone, Copy, Debug)]
pub struct Value<'a> {
    pub text: Option<&'a str>,
    pub is_null: bool,
    pub is_string: bool,
    pub key: Option<&'a str>,
}

/// The members of one side, by (item, field): rows sorted by item and field, an item's run of
/// rows found from its id ([`RowOf`]). List instances come in document order, so lookups read
/// rows near the last ones; a hash table's slots were a cache miss each (57 % of matching a
/// batch's lists).
#[derive(Default)]
pub struct Members<'a> {
    rows: Vec<(i64, u32, Value<'a>)>,
    /// the run of each item: its number among the items, by id
    run_of: RowOf,
    /// where each run starts in `rows`, and where the last one ends
    runs: Vec<usize>,
}

impl<'a> FromIterator<(i64, u32, Value<'a>)> for Members<'a> {
    /// The rows (item, field, value); of a repeated (item, field), the last.
    fn from_iter<I: IntoIterator<Item = (i64, u32, Value<'a>)>>(rows: I) -> Self {
        let mut rows: Vec<_> = rows.into_iter().collect();
        rows.reverse(); // the stable sort then puts the last given first, which dedup keeps
        rows.sort_by_key(|&(item, field, _)| (item, field));
        rows.dedup_by_key(|&mut (item, field, _)| (item, field));
        let (mut items, mut runs) = (Vec::new(), Vec::new());
        for (r, &(item, _, _)) in rows.iter().enumerate() {
            if items.last() != Some(&item) {
                items.push(item);
                runs.push(r);
            }
        }
        runs.push(rows.len());
        Members {
            rows,
            run_of: RowOf::new(&items),
            runs,
        }
    }
}

impl<'a> Members<'a> {
    fn get(&self, item: i64, field: u32) -> Option<&Value<'a>> {
        let run = self.run_of.get(item)?;
        self.rows[self.runs[run]..self.runs[run + 1]]
            .iter()
            .find(|r| r.1 == field)
            .map(|r| &r.2)
    }
}

/// One list instance: its items (rows of `Items`, in index order), its match fields (rows of
/// the field slice) and its method.
#[derive(Clone, Debug)]
pub struct Instance {
    pub by_index: bool,
    pub threshold: f64,
    pub gt: Range<usize>,
    pub aio: Range<usize>,
    pub fields: Range<usize>,
}

/// Items of one side: ids and list positions, grouped by instance.
#[derive(Default, Debug)]
pub struct Items {
    pub item: Vec<i64>,
    pub index: Vec<i64>,
}

/// A list instance's key: (document, list attribute, canonical id of the parent item).
pub type Key = (i64, i64, i64);

/// The instances to match with their items and match fields, each grouped by instance.
#[derive(Default)]
pub struct Lists {
    pub instances: Vec<Instance>,
    pub gt: Items,
    pub aio: Items,
    pub fields: Vec<MatchField>,
}

/// Rows of one side's items at one depth, in any order: (instance key, item id, list index).
#[derive(Clone, Copy)]
pub struct ItemRows<'r> {
    pub key: &'r [Key],
    pub item: &'r [i64],
    pub index: &'r [i64],
}

/// Rows of the instances' match fields, in any order: the field, and its position in the
/// list's `match_fields` (None for the default fields, which follow in id order).
pub struct FieldRows<'r> {
    pub key: &'r [Key],
    pub slot: &'r [Option<i64>],
    pub field: &'r [MatchField],
}

/// A matched pair: GT item, AIO item, similarity.
pub type Matched = (i64, i64, f64);

/// Rounding margin of the bound that rules a pair out before its Levenshtein fields are all
/// computed (align.py's `_MARGIN`): a pair is left out only when it cannot reach the threshold.
const MARGIN: f64 = 1e-9;

/// A member of an item in one match field, prepared once per item: the text compared (prefix
/// applied) and the part Levenshtein reads (capped too), with its length in characters.
#[derive(Clone, Copy)]
struct Side<'a> {
    value: Option<&'a Value<'a>>,
    text: &'a str,
    capped: &'a str,
    n_chars: usize,
    /// one byte per character: Levenshtein may read bytes, whose count rapidfuzz gets free
    ascii: bool,
}

impl<'a> Side<'a> {
    fn new(value: Option<&'a Value<'a>>, f: &MatchField, cap: usize) -> Self {
        let value = value.filter(|v| !v.is_null);
        let text = prefix(value.and_then(|v| v.text).unwrap_or(""), f.prefix);
        let capped = prefix(text, Some(cap));
        let ascii = capped.is_ascii();
        let n_chars = if ascii {
            capped.len()
        } else {
            capped.chars().count()
        };
        Side {
            value,
            text,
            capped,
            n_chars,
            ascii,
        }
    }
}

impl Lists {
    /// The instances `keys` (method and threshold beside), their items in index order and
    /// their match fields in match_fields order, from rows that may hold other instances'
    /// too (skipped: align.py matches those).
    pub fn gather(
        keys: &[Key],
        by_index: &[bool],
        threshold: &[f64],
        gt: ItemRows,
        aio: ItemRows,
        fields: FieldRows,
    ) -> Lists {
        let position: FxHashMap<Key, usize> =
            keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let grouped_items = |rows: &ItemRows| {
            let mut by_instance: Vec<Vec<(i64, i64)>> = vec![Vec::new(); keys.len()];
            for r in 0..rows.key.len() {
                if let Some(&i) = position.get(&rows.key[r]) {
                    by_instance[i].push((rows.index[r], rows.item[r]));
                }
            }
            let mut items = Items::default();
            let mut ranges = Vec::with_capacity(keys.len());
            for mut group in by_instance {
                group.sort_unstable();
                let start = items.item.len();
                for (index, item) in group {
                    items.index.push(index);
                    items.item.push(item);
                }
                ranges.push(start..items.item.len());
            }
            (items, ranges)
        };
        let (gt, gt_ranges) = grouped_items(&gt);
        let (aio, aio_ranges) = grouped_items(&aio);
        let mut by_instance: Vec<Vec<(i64, u32, MatchField)>> = vec![Vec::new(); keys.len()];
        for r in 0..fields.key.len() {
            if let Some(&i) = position.get(&fields.key[r]) {
                let f = fields.field[r];
                by_instance[i].push((fields.slot[r].unwrap_or(i64::MAX), f.field, f));
            }
        }
        let mut match_fields = Vec::new();
        let mut instances = Vec::with_capacity(keys.len());
        for (i, mut group) in by_instance.into_iter().enumerate() {
            group.sort_unstable_by_key(|&(slot, field, _)| (slot, field));
            let start = match_fields.len();
            match_fields.extend(group.into_iter().map(|(_, _, f)| f));
            instances.push(Instance {
                by_index: by_index[i],
                threshold: threshold[i],
                gt: gt_ranges[i].clone(),
                aio: aio_ranges[i].clone(),
                fields: start..match_fields.len(),
            });
        }
        Lists {
            instances,
            gt,
            aio,
            fields: match_fields,
        }
    }

    /// The matched pairs of every instance: all i-i pairs of an index list; for a greedy list,
    /// the pairs at or above its threshold taken by similarity (then GT index, then AIO index),
    /// each item at most once.
    pub fn matched<'a>(
        &self,
        gt_members: &'a Members<'a>,
        aio_members: &'a Members<'a>,
        text_cap: usize,
    ) -> Vec<Matched> {
        let mut out = Vec::new();
        // work buffers, reused from instance to instance
        let mut candidates: Vec<(f64, i64, i64, usize, usize)> = Vec::new();
        let (mut scores, mut gs, mut aside) = (Vec::new(), Vec::new(), Vec::new());
        let (mut gt_taken, mut aio_taken) = (Vec::new(), Vec::new());
        let (gt, aio) = (&self.gt, &self.aio);
        for inst in &self.instances {
            let fields = &self.fields[inst.fields.clone()];
            sides(&mut gs, gt, inst.gt.clone(), fields, gt_members, text_cap);
            sides(
                &mut aside,
                aio,
                inst.aio.clone(),
                fields,
                aio_members,
                text_cap,
            );
            let k = fields.len();
            let mut mean = |g: usize, a: usize, reach: Option<f64>| {
                let (g0, a0) = ((g - inst.gt.start) * k, (a - inst.aio.start) * k);
                pair_mean(
                    fields,
                    &gs[g0..g0 + k],
                    &aside[a0..a0 + k],
                    reach,
                    &mut scores,
                )
            };
            if inst.by_index {
                // both sides in index order: a merge on the index; every pair is taken
                let (mut g, mut a) = (inst.gt.start, inst.aio.start);
                while g < inst.gt.end && a < inst.aio.end {
                    match gt.index[g].cmp(&aio.index[a]) {
                        std::cmp::Ordering::Less => g += 1,
                        std::cmp::Ordering::Greater => a += 1,
                        std::cmp::Ordering::Equal => {
                            let s = mean(g, a, None).unwrap_or(0.0);
                            out.push((gt.item[g], aio.item[a], s));
                            g += 1;
                            a += 1;
                        }
                    }
                }
                continue;
            }
            gt_taken.clear();
            gt_taken.resize(inst.gt.len(), false);
            aio_taken.clear();
            aio_taken.resize(inst.aio.len(), false);
            // A pair equal in every field it compares scores 1, the most any pair can, and
            // the greedy order takes those first, by GT then AIO index: they are taken here
            // with no similarity computed, and only the items left are scored. Most items of
            // an extracted list come back as written (77 % of the benchmark's).
            if inst.threshold <= 1.0 && fields.iter().all(|f| f.threshold.is_none_or(|t| t <= 1.0))
            {
                for g in inst.gt.clone() {
                    let g0 = (g - inst.gt.start) * k;
                    for a in inst.aio.clone() {
                        let ai = a - inst.aio.start;
                        if !aio_taken[ai]
                            && identical(fields, &gs[g0..g0 + k], &aside[ai * k..ai * k + k])
                        {
                            gt_taken[g - inst.gt.start] = true;
                            aio_taken[ai] = true;
                            out.push((gt.item[g], aio.item[a], 1.0));
                            break;
                        }
                    }
                }
            }
            candidates.clear();
            for g in inst.gt.clone() {
                if gt_taken[g - inst.gt.start] {
                    continue;
                }
                for a in inst.aio.clone() {
                    if aio_taken[a - inst.aio.start] {
                        continue;
                    }
                    match mean(g, a, Some(inst.threshold)) {
                        Some(s) if s >= inst.threshold => {
                            candidates.push((s, gt.index[g], aio.index[a], g, a))
                        }
                        _ => {}
                    }
                }
            }
            candidates.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
            for &(s, _, _, g, a) in &candidates {
                let (gi, ai) = (g - inst.gt.start, a - inst.aio.start);
                if !gt_taken[gi] && !aio_taken[ai] {
                    gt_taken[gi] = true;
                    aio_taken[ai] = true;
                    out.push((gt.item[g], aio.item[a], s));
                }
            }
        }
        out
    }
}

/// A list's settings when its match fields are configured: `index` or `greedy` with its
/// threshold, and its match fields with their positions in `match_fields`.
#[derive(Clone, Debug)]
pub struct ConfiguredList {
    pub by_index: bool,
    pub threshold: f64,
    pub fields: Vec<(i64, MatchField)>,
}

/// The instances of one depth when every list there has its match fields configured, built
/// from the items alone (align.py's `_match_fields` and `_instances` for that case): each
/// (document, list, parent) key with items on both sides, in the order GT first shows it, with
/// its list's settings and fields. None when a key's list is not in `lists`, or a greedy
/// instance has more than `dense_pairs` pairs (align.py then blocks its candidates instead).
pub fn configured_lists(
    gt: ItemRows,
    aio: ItemRows,
    lists: &FxHashMap<i64, ConfiguredList>,
    dense_pairs: usize,
) -> Option<Lists> {
    let mut sizes: FxHashMap<Key, (usize, usize)> = FxHashMap::default();
    let mut order = Vec::new();
    for key in gt.key {
        sizes
            .entry(*key)
            .or_insert_with(|| {
                order.push(*key);
                (0, 0)
            })
            .0 += 1;
    }
    for key in aio.key {
        if let Some(size) = sizes.get_mut(key) {
            size.1 += 1;
        }
    }
    let (mut keys, mut by_index, mut threshold) = (Vec::new(), Vec::new(), Vec::new());
    let (mut field_key, mut slot, mut field) = (Vec::new(), Vec::new(), Vec::new());
    for key in order {
        let (n_gt, n_aio) = sizes[&key];
        if n_aio == 0 {
            continue;
        }
        let list = lists.get(&key.1)?;
        if !list.by_index && n_gt * n_aio > dense_pairs {
            return None;
        }
        keys.push(key);
        by_index.push(list.by_index);
        threshold.push(list.threshold);
        for &(position, f) in &list.fields {
            field_key.push(key);
            slot.push(Some(position));
            field.push(f);
        }
    }
    let fields = FieldRows {
        key: &field_key,
        slot: &slot,
        field: &field,
    };
    Some(Lists::gather(&keys, &by_index, &threshold, gt, aio, fields))
}

/// Each item's member in each match field, item by item, into `out`.
fn sides<'a>(
    out: &mut Vec<Side<'a>>,
    items: &Items,
    rows: Range<usize>,
    fields: &[MatchField],
    members: &'a Members<'a>,
    cap: usize,
) {
    out.clear();
    for r in rows {
        let item = items.item[r];
        out.extend(
            fields
                .iter()
                .map(|f| Side::new(members.get(item, f.field), f, cap)),
        );
    }
}

/// A field's part in a pair's mean.
#[derive(Clone, Copy, PartialEq)]
enum Score {
    /// null on both sides: not in the mean
    Left,
    Known(f64),
    /// a Levenshtein comparison, computed after every other field
    Pending,
}

/// The mean of the fields' similarities that are not null on both sides (0 for none), summed
/// in the order of the match fields, as the reference (tests/reference.py) sums them. With
/// `reach`, None when the pair cannot reach it: the Levenshtein fields come last, each with
/// the lowest score that still lets the pair reach it (rapidfuzz's cutoff stops early below).
fn pair_mean(
    fields: &[MatchField],
    g: &[Side],
    a: &[Side],
    reach: Option<f64>,
    scores: &mut Vec<Score>,
) -> Option<f64> {
    scores.clear();
    let (mut known, mut count, mut pending) = (0.0f64, 0u32, 0u32);
    for (j, f) in fields.iter().enumerate() {
        let score = match (g[j].value, a[j].value) {
            (None, None) => Score::Left,
            (Some(gv), Some(av)) if !is_fuzzy(f, gv) => Score::Known(same(f, &g[j], gv, &a[j], av)),
            (Some(_), Some(_)) => Score::Pending,
            _ => Score::Known(0.0),
        };
        match score {
            Score::Left => {}
            Score::Known(s) => (known, count) = (known + s, count + 1),
            Score::Pending => (pending, count) = (pending + 1, count + 1),
        }
        scores.push(score);
    }
    for (j, f) in fields.iter().enumerate() {
        if scores[j] != Score::Pending {
            continue;
        }
        pending -= 1;
        // what this field must score if every field still pending scores 1
        let need = reach.map(|t| (t - MARGIN) * count as f64 - known - pending as f64);
        if need.is_some_and(|n| n > 1.0) {
            return None;
        }
        let s = bounded_similarity(&g[j], &a[j], need.unwrap_or(0.0))?;
        let s = match f.threshold {
            Some(t) if s < t => 0.0,
            _ => s,
        };
        known += s;
        scores[j] = Score::Known(s);
    }
    let (mut sum, mut n) = (0.0f64, 0u32);
    for score in scores.iter() {
        if let Score::Known(s) = score {
            sum += s;
            n += 1;
        }
    }
    Some(if n == 0 { 0.0 } else { sum / n as f64 })
}

/// Whether a pair scores 1 in every match field it compares, and compares one: its mean is
/// then 1. No other pair's is: a field scores 0 or 1, or a Levenshtein score of at most
/// 1 - 1/length (lengths up to the text cap), so a mean of fewer than 2^30 fields stays below 1.
fn identical(fields: &[MatchField], g: &[Side], a: &[Side]) -> bool {
    let mut compared = false;
    for (j, f) in fields.iter().enumerate() {
        match (g[j].value, a[j].value) {
            (None, None) => continue,
            (Some(gv), Some(av)) => {
                let one = if is_fuzzy(f, gv) {
                    g[j].capped == a[j].capped
                } else {
                    same(f, &g[j], gv, &a[j], av) == 1.0
                };
                if !one {
                    return false;
                }
            }
            _ => return false,
        }
        compared = true;
    }
    compared
}

fn is_fuzzy(f: &MatchField, g: &Value) -> bool {
    f.fuzzy || (f.auto && g.is_string && g.key.is_none())
}

/// Equal compared texts, or equal value keys (dates, numbers) when no prefix is set.
fn same(f: &MatchField, g: &Side, gv: &Value, a: &Side, av: &Value) -> f64 {
    let same_key = f.prefix.is_none() && matches!((gv.key, av.key), (Some(x), Some(y)) if x == y);
    if g.text == a.text || same_key {
        1.0
    } else {
        0.0
    }
}

/// :func:`levenshtein_similarity` of two prepared sides, None when it is below `need` (the
/// distance is then cut off at the largest that could still reach it).
fn bounded_similarity(g: &Side, a: &Side, need: f64) -> Option<f64> {
    if g.capped == a.capped {
        return Some(1.0);
    }
    let longest = g.n_chars.max(a.n_chars);
    // s = 1 - d / longest >= need  <=>  d <= (1 - need) * longest; rounded up, to be safe
    let most = if need <= 0.0 {
        longest
    } else {
        ((1.0 - need) * longest as f64).ceil() as usize
    };
    if g.n_chars.abs_diff(a.n_chars) > most {
        return None; // the distance is at least the difference in length
    }
    let distance = distance(g.capped, a.capped, g.ascii && a.ascii, most)?;
    let s = 1.0 - distance as f64 / longest as f64;
    (need <= 0.0 || s >= need).then_some(s)
}

/// The Levenshtein distance of two texts in characters, None when it is above `most`. Texts
/// that are both ASCII are compared as bytes, which rapidfuzz counts for free.
pub(crate) fn distance(g: &str, a: &str, both_ascii: bool, most: usize) -> Option<usize> {
    let args = levenshtein::Args::default().score_cutoff(most);
    if both_ascii {
        levenshtein::distance_with_args(g.bytes(), a.bytes(), &args)
    } else {
        levenshtein::distance_with_args(g.chars(), a.chars(), &args)
    }
}

/// The first `n` characters (all of them for none).
pub(crate) fn prefix(text: &str, n: Option<usize>) -> &str {
    // a text of at most n bytes has at most n characters
    match n
        .filter(|&n| text.len() > n)
        .and_then(|n| text.char_indices().nth(n))
    {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value<'_> {
        Value {
            text: Some(s),
            is_null: false,
            is_string: true,
            key: None,
        }
    }

    fn field(fuzzy: bool) -> MatchField {
        MatchField {
            field: 0,
            fuzzy,
            auto: false,
            prefix: None,
            threshold: None,
        }
    }

    /// One field of one pair, through pair_mean (None: null on both sides).
    fn score(
        f: MatchField,
        g: Option<&Value>,
        a: Option<&Value>,
        reach: Option<f64>,
    ) -> Option<f64> {
        let (g, a) = ([Side::new(g, &f, 100)], [Side::new(a, &f, 100)]);
        let mut scores = Vec::new();
        let mean = pair_mean(&[f], &g, &a, reach, &mut scores);
        mean.map(|m| {
            if scores[0] == Score::Left {
                f64::NAN
            } else {
                m
            }
        })
    }

    #[test]
    fn levenshtein_is_the_normalized_similarity() {
        let lev = |a, b| score(field(true), Some(&text(a)), Some(&text(b)), None).unwrap();
        assert_eq!(lev("kitten", "sitting"), 1.0 - 3.0 / 7.0);
        assert_eq!(lev("ab", "ab"), 1.0);
        assert_eq!(lev("a", "bc"), 0.0);
        assert_eq!(lev("héllo", "hello"), 0.8); // characters, not bytes
        let f = field(true);
        let capped = |t| Side::new(Some(t), &f, 3);
        let (g, a) = (text("abcX"), text("abcY"));
        assert_eq!(bounded_similarity(&capped(&g), &capped(&a), 0.0), Some(1.0));
    }

    #[test]
    fn a_cutoff_only_rules_out_what_cannot_reach_it() {
        let f = field(true);
        let (g, a) = (text("kitten"), text("sitting"));
        let (g, a) = (Side::new(Some(&g), &f, 100), Side::new(Some(&a), &f, 100));
        let exact = 1.0 - 3.0 / 7.0;
        assert_eq!(bounded_similarity(&g, &a, exact), Some(exact));
        assert_eq!(bounded_similarity(&g, &a, exact + 1e-12), None);
        assert_eq!(
            score(
                field(true),
                Some(&text("kitten")),
                Some(&text("sitting")),
                Some(0.6)
            ),
            None
        );
    }

    #[test]
    fn field_rules() {
        let null = Value {
            text: None,
            is_null: true,
            is_string: false,
            key: None,
        };
        assert!(score(field(true), None, Some(&null), None)
            .unwrap()
            .is_nan());
        assert_eq!(score(field(true), Some(&text("a")), None, None), Some(0.0));
        assert_eq!(
            score(field(false), Some(&text("ab")), Some(&text("ac")), None),
            Some(0.0)
        );
        assert_eq!(
            score(field(true), Some(&text("ab")), Some(&text("ac")), None),
            Some(0.5)
        );
        let strict = MatchField {
            threshold: Some(0.6),
            ..field(true)
        };
        assert_eq!(
            score(strict, Some(&text("ab")), Some(&text("ac")), None),
            Some(0.0)
        );
        let dated = |t, k| Value {
            text: Some(t),
            is_null: false,
            is_string: true,
            key: Some(k),
        };
        let auto = MatchField {
            auto: true,
            ..field(false)
        };
        let (g, a) = (dated("2024-01-02", "d1"), dated("02/01/2024", "d1"));
        assert_eq!(score(auto, Some(&g), Some(&a), None), Some(1.0));
        let prefixed = MatchField {
            prefix: Some(3),
            ..auto
        };
        assert_eq!(score(prefixed, Some(&g), Some(&a), None), Some(0.0));
        let prefixed = MatchField {
            prefix: Some(3),
            ..field(false)
        };
        assert_eq!(
            score(prefixed, Some(&text("abcdef")), Some(&text("abcxyz")), None),
            Some(1.0)
        );
    }

    #[test]
    fn members_are_found_by_item_and_field_dense_or_sparse() {
        for step in [1, 1 << 40] {
            let rows = [
                (3, 1, "c"),
                (1, 0, "a"),
                (3, 0, "b"),
                (1, 0, "a2"),
                (7, 2, "d"),
            ];
            let members: Members = rows
                .iter()
                .map(|&(item, field, t)| (item * step, field, text(t)))
                .collect();
            assert_eq!(matches!(members.run_of, RowOf::Hashed(_)), step > 1);
            let got = |item: i64, field| members.get(item * step, field).and_then(|v| v.text);
            // of a repeated (item, field), the last given
            assert_eq!(got(1, 0), Some("a2"));
            assert_eq!(
                (got(3, 0), got(3, 1), got(7, 2)),
                (Some("b"), Some("c"), Some("d"))
            );
            assert_eq!(
                (got(1, 1), got(2, 0), got(7, 0), got(8, 2)),
                (None, None, None, None)
            );
            assert_eq!(members.get(-5, 0).map(|v| v.text), None);
        }
        assert!(Members::default().get(0, 0).is_none());
    }

    #[test]
    fn greedy_takes_the_best_pairs_first() {
        let gm: Members = [(0, "apple"), (1, "apply")]
            .into_iter()
            .map(|(item, t)| (item, 0, text(t)))
            .collect();
        let am: Members = [(10, "apply"), (11, "apple"), (12, "zzzzz")]
            .into_iter()
            .map(|(item, t)| (item, 0, text(t)))
            .collect();
        let inst = Instance {
            by_index: false,
            threshold: 0.5,
            gt: 0..2,
            aio: 0..3,
            fields: 0..1,
        };
        let mut lists = Lists {
            instances: vec![inst.clone()],
            gt: Items {
                item: vec![0, 1],
                index: vec![0, 1],
            },
            aio: Items {
                item: vec![10, 11, 12],
                index: vec![0, 1, 2],
            },
            fields: vec![field(true)],
        };
        let mut got = lists.matched(&gm, &am, 100);
        got.sort_by_key(|m| m.0);
        assert_eq!(got, vec![(0, 11, 1.0), (1, 10, 1.0)]);
        lists.instances = vec![Instance {
            by_index: true,
            ..inst
        }];
        let got = lists.matched(&gm, &am, 100);
        assert_eq!(got, vec![(0, 10, 0.8), (1, 11, 0.8)]);
    }

    /// The greedy pairs of one instance from every pair's mean, sorted: the order `matched`
    /// keeps without computing the pairs it takes as equal or leaves out.
    fn greedy_by_every_pair(lists: &Lists, gm: &Members, am: &Members) -> Vec<Matched> {
        let inst = &lists.instances[0];
        let fields = &lists.fields[inst.fields.clone()];
        let (mut gs, mut aside, mut scores) = (Vec::new(), Vec::new(), Vec::new());
        sides(&mut gs, &lists.gt, inst.gt.clone(), fields, gm, 100);
        sides(&mut aside, &lists.aio, inst.aio.clone(), fields, am, 100);
        let k = fields.len();
        let mut candidates = Vec::new();
        for g in 0..inst.gt.len() {
            for a in 0..inst.aio.len() {
                let s = pair_mean(
                    fields,
                    &gs[g * k..g * k + k],
                    &aside[a * k..a * k + k],
                    None,
                    &mut scores,
                )
                .unwrap();
                if s >= inst.threshold {
                    candidates.push((s, g, a));
                }
            }
        }
        candidates.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        let (mut gt_taken, mut aio_taken) =
            (vec![false; inst.gt.len()], vec![false; inst.aio.len()]);
        let mut out = Vec::new();
        for (s, g, a) in candidates {
            if !gt_taken[g] && !aio_taken[a] {
                (gt_taken[g], aio_taken[a]) = (true, true);
                out.push((lists.gt.item[g], lists.aio.item[a], s));
            }
        }
        out
    }

    #[test]
    fn equal_pairs_taken_first_give_the_greedy_pairs_of_every_pair() {
        // random instances over few words, so that equal items, near ones, nulls and
        // repeats all occur; two fields, fuzzy and exact, with and without a field threshold
        let words = ["bolt", "bolts", "nut", "cable usb", "cable", "", "bolt x"];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let null = Value {
            text: None,
            is_null: true,
            is_string: false,
            key: None,
        };
        let mut taken_as_equal = 0;
        for round in 0..3000 {
            let (n_gt, n_aio) = (next(6) as usize, next(6) as usize);
            let (mut gt_rows, mut aio_rows) = (Vec::new(), Vec::new());
            for (rows, n, base) in [(&mut gt_rows, n_gt, 0), (&mut aio_rows, n_aio, 100)] {
                for i in 0..n as i64 {
                    for f in 0..2u32 {
                        match next(9) {
                            0 => {}
                            1 => rows.push((base + i, f, null)),
                            w => rows.push((base + i, f, text(words[(w as usize) % words.len()]))),
                        }
                    }
                }
            }
            // given in any order
            gt_rows.reverse();
            let (gm, am): (Members, Members) = (
                gt_rows.into_iter().collect(),
                aio_rows.into_iter().collect(),
            );
            let fields = [
                MatchField {
                    threshold: if round % 3 == 0 { Some(0.7) } else { None },
                    ..field(true)
                },
                MatchField {
                    field: 1,
                    ..field(false)
                },
            ];
            let k = if round % 2 == 0 { 1 } else { 2 };
            let lists = Lists {
                instances: vec![Instance {
                    by_index: false,
                    threshold: [0.0, 0.5, 0.8, 1.0][round % 4],
                    gt: 0..n_gt,
                    aio: 0..n_aio,
                    fields: 0..k,
                }],
                gt: Items {
                    item: (0..n_gt as i64).collect(),
                    index: (0..n_gt as i64).collect(),
                },
                aio: Items {
                    item: (100..100 + n_aio as i64).collect(),
                    index: (0..n_aio as i64).collect(),
                },
                fields: fields[..k].to_vec(),
            };
            let got = lists.matched(&gm, &am, 100);
            assert_eq!(got, greedy_by_every_pair(&lists, &gm, &am), "round {round}");
            taken_as_equal += got.iter().filter(|m| m.2 == 1.0).count();
        }
        assert!(taken_as_equal > 500, "{taken_as_equal}");
    }

    #[test]
    fn gather_groups_rows_by_instance_and_orders_them() {
        let (k1, k2, other) = ((0, 1, -1), (0, 1, 7), (3, 3, -1));
        let f = |id| MatchField {
            field: id,
            ..field(true)
        };
        let lists = Lists::gather(
            &[k1, k2],
            &[false, true],
            &[0.5, 0.0],
            ItemRows {
                key: &[k2, k1, other, k1],
                item: &[20, 11, 99, 10],
                index: &[0, 1, 0, 0],
            },
            ItemRows {
                key: &[k1],
                item: &[30],
                index: &[0],
            },
            FieldRows {
                key: &[k1, k1, other, k1, k2],
                slot: &[Some(1), Some(0), Some(0), None, None],
                field: &[f(5), f(6), f(7), f(1), f(2)],
            },
        );
        assert_eq!(lists.gt.item, vec![10, 11, 20]);
        assert_eq!(lists.aio.item, vec![30]);
        let fields: Vec<u32> = lists.fields.iter().map(|f| f.field).collect();
        assert_eq!(fields, vec![6, 5, 1, 2]); // slots first, then the default fields
        let i = &lists.instances;
        assert_eq!(
            (i[0].gt.clone(), i[0].aio.clone(), i[0].fields.clone()),
            (0..2, 0..1, 0..3)
        );
        assert_eq!(
            (i[1].gt.clone(), i[1].aio.clone(), i[1].fields.clone()),
            (2..3, 1..1, 3..4)
        );
        assert!(i[1].by_index && !i[0].by_index);
    }

    #[test]
    fn configured_lists_are_the_keys_with_items_on_both_sides() {
        let f = |id| MatchField {
            field: id,
            ..field(true)
        };
        // list 1 greedy on fields 6 then 5; list 2 by index on field 9
        let lists: FxHashMap<i64, ConfiguredList> = [
            (
                1,
                ConfiguredList {
                    by_index: false,
                    threshold: 0.5,
                    fields: vec![(0, f(6)), (1, f(5))],
                },
            ),
            (
                2,
                ConfiguredList {
                    by_index: true,
                    threshold: 0.0,
                    fields: vec![(0, f(9))],
                },
            ),
        ]
        .into_iter()
        .collect();
        let (k1, k2, gt_only) = ((0, 1, -1), (4, 2, 3), (5, 1, -1));
        let gt = ItemRows {
            key: &[k2, k1, gt_only, k1],
            item: &[20, 11, 99, 10],
            index: &[0, 1, 0, 0],
        };
        let aio = ItemRows {
            key: &[k1, k2, (6, 1, -1)],
            item: &[30, 40, 50],
            index: &[0, 0, 0],
        };
        let got = configured_lists(gt, aio, &lists, 4).expect("dense");
        let i = &got.instances;
        assert_eq!(i.len(), 2); // gt_only and the AIO-only key have no instance
        assert!(i[0].by_index && !i[1].by_index); // in the order GT shows the keys
        assert_eq!(got.gt.item, vec![20, 10, 11]);
        assert_eq!(got.aio.item, vec![40, 30]);
        let fields: Vec<u32> = got.fields.iter().map(|f| f.field).collect();
        assert_eq!(fields, vec![9, 6, 5]);
        assert_eq!((i[1].threshold, i[1].fields.clone()), (0.5, 1..3));
        // a greedy instance beyond the dense pairs, or a list without settings: not here
        let gt = ItemRows {
            key: &[k1, k1, k1],
            item: &[1, 2, 3],
            index: &[0, 1, 2],
        };
        let aio = ItemRows {
            key: &[k1, k1],
            item: &[4, 5],
            index: &[0, 1],
        };
        assert!(configured_lists(gt, aio, &lists, 5).is_none());
        let unknown = ItemRows {
            key: &[(0, 8, -1)],
            item: &[1],
            index: &[0],
        };
        assert!(configured_lists(unknown, unknown, &lists, 5).is_none());
    }
}
