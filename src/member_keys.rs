//! The value keys of list items' members: what a list match field compares by besides the
//! canonical text (docs/DECISIONS.md 51, 52), in one pass over both sides' members instead of
//! `readers.value_keys`' four Polars queries, which stay the reference and the path without
//! the extension (align.py `_members`; tests/test_native_reading.py holds the two to the same
//! equalities).
//!
//! Keys are computed only where they can decide a comparison that canonical text does not: GT
//! date strings, and AIO date strings in the fields where the GT has one; AIO numeric strings
//! in the fields where the GT has numbers, and then the GT numbers (and numeric strings) in the
//! fields where the AIO has such a string. A date's key is its day, a number's its value
//! (below 2**53 in magnitude, -0 as 0); the GT's date key wins over its number key. Keys are
//! compared with each other only, so they are spelt here the cheapest way (`d:19723`, the
//! day; `n:4029000000000000`, the double's bits in hex): the reference spells them as Polars
//! writes dates and floats, and equal values make equal keys either way.

use regex::Regex;
use rustc_hash::FxHashSet;

use crate::dates::DateFormats;
use crate::number;

/// Magnitude below which a double holds every integer (`values.INT_EXACT`).
const INT_EXACT: f64 = 9_007_199_254_740_992.0;

/// One side's members, one entry per row: match field id, kind, canonical text.
pub struct MemberRows<'a> {
    pub field: &'a [u32],
    pub kind: &'a [Option<&'a str>],
    pub text: &'a [Option<&'a str>],
}

/// A member's value key: a day, or a number (never NaN, -0 as 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Key {
    Day(i32),
    Number(f64),
}

impl Key {
    /// The key as text (`d:` and the day, `n:` and the double's bits in hex), into `out`.
    pub fn write(self, out: &mut String) {
        use std::fmt::Write;
        out.clear();
        let _ = match self {
            Key::Day(day) => write!(out, "d:{day}"),
            Key::Number(value) => write!(out, "n:{:x}", value.to_bits()),
        };
    }
}

/// The key of each GT and each AIO member (None: compared by canonical text only).
pub fn keys(
    gt: &MemberRows,
    aio: &MemberRows,
    dates: &DateFormats,
    grammar: &Regex,
) -> (Vec<Option<Key>>, Vec<Option<Key>>) {
    let is_string = |rows: &MemberRows, i: usize| rows.kind[i] == Some("string");
    let day = |rows: &MemberRows, i: usize| rows.text[i].and_then(|t| dates.day(t));
    let number = |rows: &MemberRows, i: usize| {
        number::value(rows.text[i], rows.kind[i], grammar).and_then(number_key)
    };
    let fields = |rows: &MemberRows, keep: &dyn Fn(usize) -> bool| -> FxHashSet<u32> {
        (0..rows.field.len())
            .filter(|&i| keep(i))
            .map(|i| rows.field[i])
            .collect()
    };

    let g_day: Vec<Option<i32>> = (0..gt.field.len())
        .map(|i| if is_string(gt, i) { day(gt, i) } else { None })
        .collect();
    let numeric = fields(gt, &|i| matches!(gt.kind[i], Some("int" | "float")));
    let a_number: Vec<Option<Key>> = (0..aio.field.len())
        .map(|i| {
            if is_string(aio, i) && numeric.contains(&aio.field[i]) {
                number(aio, i)
            } else {
                None
            }
        })
        .collect();
    let dated = fields(gt, &|i| g_day[i].is_some());
    let aio_keys = (0..aio.field.len())
        .map(|i| {
            let a_day = if is_string(aio, i) && dated.contains(&aio.field[i]) {
                day(aio, i)
            } else {
                None
            };
            a_day.map(Key::Day).or(a_number[i])
        })
        .collect();
    let spelt = fields(aio, &|i| a_number[i].is_some());
    let gt_keys = (0..gt.field.len())
        .map(|i| {
            g_day[i].map(Key::Day).or_else(|| {
                if spelt.contains(&gt.field[i]) {
                    number(gt, i)
                } else {
                    None
                }
            })
        })
        .collect();
    (gt_keys, aio_keys)
}

/// A number's key; None beyond 2**53 in magnitude, and for NaN.
fn number_key(value: f64) -> Option<Key> {
    if value == 0.0 {
        Some(Key::Number(0.0)) // -0 is 0
    } else if value.abs() < INT_EXACT {
        Some(Key::Number(value))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAMMAR: &str = r"^(?P<open>\()?\s*(?P<pre>[+-]?[$€]?|[$€][+-])\s*(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)\s*(?P<suf>[$€])?\s*(?P<close>\))?$";
    const ISO: &str = r"^\d{4}-\d{2}-\d{2}$";
    const FORMATS: [&str; 2] = [
        r"^(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})$",
        r"^(?P<d>\d{1,2})/(?P<m>\d{1,2})/(?P<y>\d{4})$",
    ];

    fn rows<'a>(
        field: &'a [u32],
        kind: &'a [Option<&'a str>],
        text: &'a [Option<&'a str>],
    ) -> MemberRows<'a> {
        MemberRows { field, kind, text }
    }

    #[test]
    fn keys_where_they_can_decide() {
        let dates = DateFormats::new(ISO, &FORMATS.map(String::from)).expect("the formats compile");
        let grammar = Regex::new(GRAMMAR).unwrap();
        let s = Some("string");
        // GT: a date string (field 0), a number (field 1), a numeric string in a field the
        // AIO never writes as a string (field 2)
        let g_field = [0, 1, 2];
        let g_kind = [s, Some("int"), s];
        let g_text = [Some("2025-01-02"), Some("12"), Some("$5")];
        // AIO: the same day otherwise written, the number as a string, a date in a field
        // without GT dates, -0 and 12.0 in the numeric field
        let a_field = [0, 1, 2, 1, 1];
        let a_kind = [s, s, s, s, Some("float")];
        let a_text = [
            Some("02/01/2025"),
            Some("$12.00"),
            Some("2025-01-02"),
            Some("-0"),
            Some("12.0"),
        ];
        let (g, a) = keys(
            &rows(&g_field, &g_kind, &g_text),
            &rows(&a_field, &a_kind, &a_text),
            &dates,
            &grammar,
        );
        assert_eq!(g[0], a[0]);
        assert!(matches!(g[0], Some(Key::Day(_))));
        assert_eq!(g[1], Some(Key::Number(12.0)));
        assert_eq!(a[1], g[1]);
        assert_eq!(g[2], None); // no AIO numeric string in field 2
        assert_eq!(a[2], None); // no GT date in field 2
        assert_eq!(a[3], Some(Key::Number(0.0)));
        assert_eq!(a[4], None); // a number is keyed on the GT side only
        assert_eq!(number_key(-0.0), number_key(0.0));
        assert_eq!(number_key(f64::NAN), None);
        assert_eq!(number_key(1e16), None);
        let mut text = String::new();
        Key::Number(12.0).write(&mut text);
        assert_eq!(text, "n:4028000000000000");
    }
}
