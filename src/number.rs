//! Numeric strings as NUMERIC reads them (docs/DECISIONS.md 7, 43): the value of a canonical
//! string such as `$1,200.00`, `(12.5)` or `eur 12`, or None.
//!
//! The grammar is the regex `values.NUMBER_TEXT`, handed in from Python so that it is written
//! once, and run by the `regex` crate, the engine of Polars' `str.extract_groups`; the checks
//! after the match are those of `values.parse_number`, the Polars expression that stays the
//! reference (tests compare the two over the strings of the generated invoices and random ones).
//! Polars spends about 2 µs per string building the groups as columns; here each string takes
//! one `captures` call (≈ 0.4 µs).

use regex::Regex;

/// `similarity._number_of`: the value of each (canonical text, kind) of one side: a number's
/// text read as a double (Polars' non-strict cast: None where it is no double), a string's by
/// the grammar, anything else None.
pub fn values(texts: &[Option<&str>], kinds: &[Option<&str>], grammar: &Regex) -> Vec<Option<f64>> {
    texts
        .iter()
        .zip(kinds)
        .map(|(&text, &kind)| value(text, kind, grammar))
        .collect()
}

/// One row of [`values`].
pub fn value(text: Option<&str>, kind: Option<&str>, grammar: &Regex) -> Option<f64> {
    match (text, kind) {
        (Some(t), Some("int" | "float")) => t.parse::<f64>().ok(),
        (Some(t), Some("string")) => parse_number(t, grammar),
        _ => None,
    }
}

fn parse_number(text: &str, grammar: &Regex) -> Option<f64> {
    // thousands separators go first, as in the expression
    let text: std::borrow::Cow<str> = if text.contains(',') {
        text.replace(',', "").into()
    } else {
        text.into()
    };
    let groups = grammar.captures(&text)?;
    let pre = groups.name("pre").map_or("", |m| m.as_str());
    let paren = groups.name("open").is_some();
    let balanced = paren == groups.name("close").is_some();
    // `pre` is a sign and / or one currency sign: anything but + and - is the currency
    let pre_currency = pre.chars().any(|c| c != '+' && c != '-');
    let one_sign = !(pre_currency && groups.name("suf").is_some());
    let signed = pre.contains(['+', '-']);
    if !(balanced && one_sign && !(paren && signed)) {
        return None;
    }
    let value = groups.name("num")?.as_str().parse::<f64>().ok()?;
    finite(if pre.contains('-') || paren {
        -value
    } else {
        value
    })
}

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    // values.NUMBER_TEXT with a shorter list of codes
    const GRAMMAR: &str = r"^(?P<open>\()?\s*(?:(?:usd|eur)\s*)?(?P<pre>[+-]?[$€£¥₹]?|[$€£¥₹][+-])\s*(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)\s*(?P<suf>[$€£¥₹])?\s*(?:(?:usd|eur))?\s*(?P<close>\))?$";

    #[test]
    fn the_grammar_and_its_checks() {
        let grammar = Regex::new(GRAMMAR).unwrap();
        let cases: &[(&str, Option<f64>)] = &[
            ("12", Some(12.0)),
            ("0", Some(0.0)),
            ("12.50", Some(12.5)),
            ("-1", Some(-1.0)),
            ("1.2.3", None),
            ("1,200.50", Some(1200.5)),
            ("$1,200.00", Some(1200.0)),
            ("(12.5)", Some(-12.5)),
            ("-$3", Some(-3.0)),
            ("$-3", Some(-3.0)),
            ("12 eur", Some(12.0)),
            ("usd 12", Some(12.0)),
            ("5.", Some(5.0)),
            (".5", Some(0.5)),
            ("1e3", Some(1000.0)),
            ("(-3)", None),  // a sign inside parentheses
            ("$3$", None),   // two currency signs
            ("(3", None),    // unbalanced
            ("1e999", None), // not finite
            ("12.5.6", None),
            ("abc", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_number(text, &grammar), *want, "{text:?}");
        }
        let (texts, kinds) = (
            [Some("1"), None, Some("1e3"), Some("$1"), Some("x")],
            [
                Some("string"),
                Some("string"),
                Some("float"),
                Some("bool"),
                None,
            ],
        );
        assert_eq!(
            values(&texts, &kinds, &grammar),
            vec![Some(1.0), None, Some(1000.0), None, None]
        );
    }
}
