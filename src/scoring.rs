//! Field similarity and match (SPEC §4) of the fields table in one pass: what
//! `similarity.score_fields_by_expressions`, the Polars reference, computes in a dozen queries
//! (each strategy's rows selected, scored and scattered back). SEMANTIC rows are scored here
//! when their scorer is the default lexical one ([`crate::token_set`]); any other scorer is a
//! Python callable, so those rows are left null and similarity.py fills them.
//!
//! Rows outside the `both_non_null` bucket, and IGNORE rows, have neither. EXACT and DATE
//! compare canonical texts, then the same calendar day (two date strings), then, under EXACT,
//! the same value (a GT number and an AIO numeric string below 2**53). NUMERIC reads both sides'
//! numbers ([`crate::number`]) and applies the tolerances. FUZZY is 1 − Levenshtein distance /
//! the longer length, on the first `text_cap` characters of each side. Comparisons follow
//! Polars' where a NaN can reach them: `min`/`max` skip a NaN, as `min_horizontal` does.

use regex::Regex;

use crate::columns_in::Texts;
use crate::dates::DateFormats;
use crate::matching::{self, prefix};
use crate::number;
use crate::token_set;

/// Magnitude below which a double holds every integer (`values.INT_EXACT`).
const INT_EXACT: f64 = 9_007_199_254_740_992.0;
/// The smallest magnitude NUMERIC divides by (`similarity._TINY`).
const TINY: f64 = 1e-12;

/// The strategy codes (indices into `schemas.STRATEGIES`) and the `both_non_null` bucket code.
#[derive(Clone, Copy, Debug)]
pub struct Codes {
    pub exact: u8,
    pub date: u8,
    pub numeric: u8,
    pub fuzzy: u8,
    pub semantic: u8,
    pub ignore: u8,
    pub both_non_null: u8,
}

pub struct Settings {
    pub codes: Codes,
    pub abs_tol: f64,
    pub rel_tol: f64,
    pub fuzzy_threshold: f64,
    /// SEMANTIC's threshold when its scorer is the lexical token-set ratio, scored here; None
    /// leaves SEMANTIC rows to similarity.py
    pub lexical_threshold: Option<f64>,
    /// characters of each side FUZZY and the lexical SEMANTIC compare (`scorers.TEXT_CAP`)
    pub text_cap: usize,
    pub grammar: Regex,
    pub dates: DateFormats,
}

/// The columns `score` reads, one entry per row; `threshold` is the path's field_thresholds
/// entry (None: the config has none).
pub struct Rows<'a> {
    pub strategy: &'a [Option<u8>],
    pub bucket: &'a [Option<u8>],
    pub gt_text: &'a Texts<'a>,
    pub aio_text: &'a Texts<'a>,
    pub gt_kind: &'a Texts<'a>,
    pub aio_kind: &'a Texts<'a>,
    pub threshold: Option<&'a [Option<f64>]>,
}

/// (similarity, match) of every row, on the calling thread: a batch thread's rows handed to
/// the rayon pool woke its threads, which then shared the cores with the other batch thread
/// and Polars' pool, and left a core idle while the batch waited (DECISIONS 135).
pub fn score(rows: &Rows, s: &Settings) -> (Vec<Option<f64>>, Vec<Option<bool>>) {
    (0..rows.strategy.len())
        .map(|i| score_row(rows, s, i))
        .unzip()
}

fn score_row(r: &Rows, s: &Settings, i: usize) -> (Option<f64>, Option<bool>) {
    let c = &s.codes;
    let Some(strategy) = r.strategy[i] else {
        return (None, None);
    };
    if r.bucket[i] != Some(c.both_non_null) || strategy == c.ignore {
        return (None, None);
    }
    let (g, a) = (r.gt_text.get(i), r.aio_text.get(i));
    if strategy == c.exact || strategy == c.date {
        let (Some(g), Some(a)) = (g, a) else {
            return (None, None); // null == text is null in Polars, and stays null
        };
        let same = g == a || same_value(r, s, i, g, a, strategy == c.exact);
        return (Some(if same { 1.0 } else { 0.0 }), Some(same));
    }
    if strategy == c.numeric {
        let (g_kind, a_kind) = (r.gt_kind.get(i), r.aio_kind.get(i));
        // a number is a function of its text and kind: the same on both sides (nine rows in
        // ten) is read once
        let same = g == a && g_kind == a_kind;
        let g = number::value(g, g_kind, &s.grammar);
        let a = if same {
            g
        } else {
            number::value(a, a_kind, &s.grammar)
        };
        let (Some(g), Some(a)) = (g, a) else {
            return (Some(0.0), Some(false));
        };
        let gap = (g - a).abs();
        let similarity = 1.0 - 1.0f64.min(gap / g.abs().max(TINY));
        return (
            Some(similarity),
            Some(gap <= s.abs_tol.max(s.rel_tol * g.abs())),
        );
    }
    if strategy == c.fuzzy {
        // a null text is never scored (both_non_null); the reference gives it 1, as equal texts
        let similarity = match (g, a) {
            (Some(g), Some(a)) => levenshtein_similarity(g, a, s.text_cap),
            _ => 1.0,
        };
        let threshold = r.threshold.and_then(|t| t[i]).unwrap_or(s.fuzzy_threshold);
        return (Some(similarity), Some(similarity >= threshold));
    }
    if let (true, Some(default)) = (strategy == c.semantic, s.lexical_threshold) {
        let similarity = token_set::similarity(g.unwrap_or(""), a.unwrap_or(""), s.text_cap);
        let threshold = r.threshold.and_then(|t| t[i]).unwrap_or(default);
        return (Some(similarity), Some(similarity >= threshold));
    }
    (None, None) // SEMANTIC by another scorer: similarity.py asks it
}

/// The strategy detection of SPEC §4 for rows no `field_strategies` entry configures
/// (`similarity.strategy_expr`, the Polars reference): the kind of the GT value, else of the
/// AIO value, decides; a bool, number, array or object is EXACT, a string written as a date or
/// an e-mail address (stripped of white space) is EXACT, anything else the default text
/// strategy.
pub struct Detector {
    pub exact: u8,
    pub default: u8,
    /// `values._ISO_DATE` and the other date formats as one alternation: each needs a year of
    /// four ASCII digits, so a text without four in a row is tested against neither
    pub dates: [Regex; 2],
    /// `values._EMAIL`, which needs an `@`
    pub email: Regex,
}

/// The columns detection reads, one entry per row.
pub struct Values<'a> {
    pub gt_has: &'a [bool],
    pub aio_has: &'a [bool],
    pub gt_text: &'a Texts<'a>,
    pub aio_text: &'a Texts<'a>,
    pub gt_kind: &'a Texts<'a>,
    pub aio_kind: &'a Texts<'a>,
}

/// The detected strategy code of every row, on the calling thread (as [`score`]).
pub fn detect(v: &Values, d: &Detector) -> Vec<u8> {
    (0..v.gt_has.len())
        .map(|i| {
            let (kind, text) = if v.gt_has[i] {
                (v.gt_kind.get(i), v.gt_text.get(i))
            } else if v.aio_has[i] {
                (v.aio_kind.get(i), v.aio_text.get(i))
            } else {
                (None, None)
            };
            match (kind, text) {
                (Some("bool" | "int" | "float" | "array" | "object"), _) => d.exact,
                (Some("string"), Some(text)) => {
                    let text = text.trim(); // Polars' strip_chars: Unicode White_Space
                    let date =
                        crate::dates::has_year(text) && d.dates.iter().any(|p| p.is_match(text));
                    if date || (text.contains('@') && d.email.is_match(text)) {
                        d.exact
                    } else {
                        d.default
                    }
                }
                _ => d.default,
            }
        })
        .collect()
}

/// `similarity.same_value` of one row whose texts differ: two strings naming the same day, or
/// under EXACT a GT number and an AIO numeric string of the same value.
fn same_value(r: &Rows, s: &Settings, i: usize, g: &str, a: &str, exact: bool) -> bool {
    match (r.gt_kind.get(i), r.aio_kind.get(i)) {
        (Some("string"), Some("string")) => s
            .dates
            .day(g)
            .is_some_and(|day| s.dates.day(a) == Some(day)),
        (Some("int" | "float"), Some("string")) if exact => {
            let Ok(number) = g.parse::<f64>() else {
                return false;
            };
            number.abs() < INT_EXACT
                && number::value(Some(a), Some("string"), &s.grammar) == Some(number)
        }
        _ => false,
    }
}

/// 1 − distance / longer length in characters of the first `cap` characters of each text (1
/// when they are equal, both empty included): the distance and the prefix of list matching.
pub fn levenshtein_similarity(g: &str, a: &str, cap: usize) -> f64 {
    let (g, a) = (prefix(g, Some(cap)), prefix(a, Some(cap)));
    if g == a {
        return 1.0;
    }
    let ascii = g.is_ascii() && a.is_ascii();
    let longest = if ascii {
        g.len().max(a.len())
    } else {
        g.chars().count().max(a.chars().count())
    };
    // the distance is at most the longer length, so this cutoff never cuts
    let distance = matching::distance(g, a, ascii, longest).unwrap_or(longest);
    1.0 - distance as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAMMAR: &str = r"^(?P<open>\()?\s*(?P<pre>[+-]?[$€]?|[$€][+-])\s*(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)\s*(?P<suf>[$€])?\s*(?P<close>\))?$";
    const ISO: &str = r"^\d{4}-\d{2}-\d{2}$";
    const FORMAT: &str = r"^(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})$";

    fn settings() -> Settings {
        Settings {
            codes: Codes {
                exact: 0,
                fuzzy: 1,
                semantic: 2,
                numeric: 3,
                ignore: 4,
                date: 5,
                both_non_null: 2,
            },
            abs_tol: 0.01,
            rel_tol: 0.0,
            fuzzy_threshold: 0.8,
            lexical_threshold: None,
            text_cap: 5,
            grammar: Regex::new(GRAMMAR).unwrap(),
            dates: DateFormats::new(ISO, &[FORMAT.to_string()]).unwrap(),
        }
    }

    type Row = (u8, &'static str, &'static str, &'static str, &'static str);

    /// (strategy, gt text, gt kind, aio text, aio kind) rows, all in `both_non_null`.
    fn scored(rows: &[Row]) -> Vec<(Option<f64>, Option<bool>)> {
        let strategy: Vec<_> = rows.iter().map(|r| Some(r.0)).collect();
        let bucket = vec![Some(2); rows.len()];
        let col =
            |f: fn(&Row) -> &'static str| Texts::Rows(rows.iter().map(|r| Some(f(r))).collect());
        let (gt_text, gt_kind, aio_text, aio_kind) =
            (col(|r| r.1), col(|r| r.2), col(|r| r.3), col(|r| r.4));
        let rows = Rows {
            strategy: &strategy,
            bucket: &bucket,
            gt_text: &gt_text,
            aio_text: &aio_text,
            gt_kind: &gt_kind,
            aio_kind: &aio_kind,
            threshold: None,
        };
        let (sim, matched) = score(&rows, &settings());
        sim.into_iter().zip(matched).collect()
    }

    #[test]
    fn each_strategy() {
        let got = scored(&[
            (0, "a", "string", "a", "string"),
            (0, "2025-01-02", "string", " 2025-01-02", "string"), // the same day
            (0, "2025-01-02", "string", "2025-01-03", "string"),
            (0, "12", "int", "$12", "string"),
            (5, "12", "int", "$12", "string"), // the number rule is EXACT's only
            (3, "100", "int", "99.995", "float"),
            (3, "100", "int", "x", "string"),
            (1, "kitten", "string", "sitting", "string"), // capped: kitte / sitti, 2 edits
            (1, "abcdefgh", "string", "abcdeXYZ", "string"),
            (4, "a", "string", "b", "string"),
            (2, "a", "string", "b", "string"), // SEMANTIC by another scorer: left to Python
        ]);
        assert_eq!(got[0], (Some(1.0), Some(true)));
        assert_eq!(got[1], (Some(1.0), Some(true)));
        assert_eq!(got[2], (Some(0.0), Some(false)));
        assert_eq!(got[3], (Some(1.0), Some(true)));
        assert_eq!(got[4], (Some(0.0), Some(false)));
        assert_eq!(got[5].1, Some(true));
        assert!((got[5].0.unwrap() - (1.0 - 0.005 / 100.0)).abs() < 1e-15);
        assert_eq!(got[6], (Some(0.0), Some(false)));
        assert_eq!(got[7], (Some(1.0 - 2.0 / 5.0), Some(false)));
        assert_eq!(got[8], (Some(1.0), Some(true)));
        assert_eq!(got[9], (None, None));
        assert_eq!(got[10], (None, None));
    }

    #[test]
    fn semantic_by_the_lexical_scorer() {
        let strategy = [Some(2u8); 3];
        let bucket = [Some(2u8); 3];
        let gt_text = Texts::Rows(vec![Some("steel bolts m8"), Some("abc"), Some("")]);
        let aio_text = Texts::Rows(vec![Some("m8 steel bolts"), Some("abd"), Some("")]);
        let kind = Texts::Rows(vec![Some("string"); 3]);
        let rows = Rows {
            strategy: &strategy,
            bucket: &bucket,
            gt_text: &gt_text,
            aio_text: &aio_text,
            gt_kind: &kind,
            aio_kind: &kind,
            threshold: None,
        };
        let s = Settings {
            lexical_threshold: Some(0.6),
            text_cap: 100,
            ..settings()
        };
        let (sim, matched) = score(&rows, &s);
        assert_eq!(sim, [Some(1.0), Some(0.6666666666666665), Some(1.0)]);
        assert_eq!(matched, [Some(true); 3]);
    }

    #[test]
    fn infinities_and_nan_as_polars_compares_them() {
        let got = scored(&[
            (3, "inf", "float", "inf", "float"),
            (3, "NaN", "float", "1", "int"),
            (3, "inf", "float", "5", "int"),
        ]);
        assert_eq!(got[0], (Some(0.0), Some(false))); // inf - inf is NaN: no match
        assert_eq!(got[1], (Some(0.0), Some(false)));
        // rel_tol * inf is NaN, which the bound skips: inf <= abs_tol
        assert_eq!(got[2], (Some(0.0), Some(false)));
    }

    #[test]
    fn levenshtein_counts_characters() {
        assert_eq!(levenshtein_similarity("", "", 10), 1.0);
        assert_eq!(levenshtein_similarity("é", "e", 10), 0.0);
        assert_eq!(levenshtein_similarity("ééé", "éé", 10), 1.0 - 1.0 / 3.0);
        assert_eq!(levenshtein_similarity("ééééX", "ééééY", 4), 1.0);
    }
}
