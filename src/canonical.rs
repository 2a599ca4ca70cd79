//! Canonical text (SPEC §1) exactly as `jsoneval_polars/values.py` and Python write it: Python's
//! float repr, `" ".join(s.split()).lower()` for strings, `json.dumps(sort_keys=True,
//! separators=(",", ":"), ensure_ascii=False).lower()` for containers, and the path segments of
//! flatten.py.

use std::fmt::Write;

use crate::node::{elements, members, Token};

const INT_EXACT: f64 = 9007199254740992.0; // 2**53

/// The shortest round-trip text of a finite double with a decimal exponent in [-4, 16), in
/// positional notation with at least one decimal ("1.0"), as Python's repr writes it.
fn positional(value: f64) -> String {
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(value);
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        let mut out = text.to_owned();
        if !out.contains('.') {
            out.push_str(".0");
        }
        return out;
    }
    // an exponent where Python writes none: Display is positional for every double
    let mut out = value.to_string();
    if !out.contains('.') {
        out.push_str(".0");
    }
    out
}

/// `repr(value)` of a Python float: the shortest text that reads back to the same double, in
/// positional notation when the decimal exponent is in [-4, 16), else `d.ddde+XX`.
pub fn float_repr(value: f64) -> String {
    // Display is the shortest round-trip text, positional: Python's repr where that is
    // positional too (decimal exponent in [-4, 16)), less the ".0" of a whole number
    let magnitude = value.abs();
    if (1e-4..1e16).contains(&magnitude) {
        return positional(value);
    }
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` is the shortest round-trip digits: "-1.2345e-7"
    let sci = format!("{value:e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let point = exp + 1; // digits[..point] . digits[point..]
    let mut out = String::with_capacity(n as usize + 8);
    out.push_str(sign);
    if (-4..16).contains(&exp) {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (point - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// values.canonical_float: None for NaN, integral values below 2**53 as integers, else repr.
pub fn canonical_float(value: f64) -> Option<String> {
    if value.is_nan() {
        None
    } else if value.is_finite() && value == value.trunc() && value.abs() < INT_EXACT {
        Some(format!("{}", value as i64))
    } else {
        Some(float_repr(value))
    }
}

/// Python's `str.isspace` for one character (what `str.split()` splits on): Unicode White_Space
/// plus the four information separators U+001C..U+001F.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `" ".join(s.split()).lower()`; None where the lower-casing is Python's to decide. The
/// flattener writes ASCII strings with [`push_canonical_ascii`] into its own buffer and asks
/// this of the others.
pub fn canonical_string(s: &str) -> Option<String> {
    if s.is_ascii() {
        let mut out = Vec::with_capacity(s.len());
        push_canonical_ascii(s.as_bytes(), &mut out);
        // ASCII in, ASCII out
        return Some(String::from_utf8(out).expect("ASCII"));
    }
    let mut joined = String::with_capacity(s.len());
    for word in s.split(is_python_space).filter(|w| !w.is_empty()) {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    lower(joined)
}

/// Appends [`canonical_string`] of ASCII text to `out`, in one pass: Python's ASCII whitespace
/// (with \x0b and \x1c..\x1f) separates words. The flattener writes string leaves straight
/// into its text buffer this way, with no string of their own in between.
pub fn push_canonical_ascii(text: &[u8], out: &mut Vec<u8>) {
    debug_assert!(text.is_ascii());
    let start = out.len();
    // one word (every byte above the space; ids, numbers, emails, dates): copied and lower-cased
    // in bulk, as the byte loop below would write it one byte at a time
    if text.iter().all(|&b| b > b' ') {
        out.extend_from_slice(text);
        out[start..].make_ascii_lowercase();
        return;
    }
    // the canonical text is never longer: one space stands for one or more whitespace bytes
    out.resize(start + text.len(), 0);
    let written = &mut out[start..];
    let (mut n, mut gap) = (0, false);
    for &b in text {
        if b <= b' ' && matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f) {
            gap = n > 0;
            continue;
        }
        if gap {
            written[n] = b' ';
            n += 1;
            gap = false;
        }
        written[n] = b.to_ascii_lowercase();
        n += 1;
    }
    out.truncate(start + n);
}

/// Characters whose lower case Python 3.11 (Unicode 14) and this Rust (a newer Unicode) may
/// disagree on: letters given a case mapping after Unicode 14. tests/test_native_kernel.py
/// compares both lower-casings over every code point, so a toolchain with newer tables fails
/// there until they are listed here.
const NEWER_CASE: &[(u32, u32)] = &[
    (0x1C89, 0x1C8A),
    (0xA7CB, 0xA7DC),
    (0x10D50, 0x10D65),
    (0x16EA0, 0x16EB8),
];

/// Python's `str.lower()`: None when the text holds a letter of [`NEWER_CASE`] (the caller hands
/// the document back to Python).
pub fn lower(mut text: String) -> Option<String> {
    if text.is_ascii() {
        text.make_ascii_lowercase();
        return Some(text);
    }
    if text.chars().any(|c| {
        let c = c as u32;
        NEWER_CASE.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c))
    }) {
        return None;
    }
    Some(text.to_lowercase())
}

/// `json.dumps(s, ensure_ascii=False)` appended to `out`.
pub fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends the path segment of an object key (flatten._segments): `key` at the start of a path,
/// `.key` after a parent, and `["key"]` (JSON-quoted) in both places for a key that is empty or
/// holds `.[]"`, whitespace or a control character.
pub fn push_segment(path: &mut String, key: &str, at_start: bool) {
    let quote = key.is_empty()
        || key.chars().any(|c| {
            matches!(c, '.' | '[' | ']' | '"' | '\u{7f}') || c < ' ' || is_python_space(c)
        });
    if quote {
        path.push('[');
        push_json_string(path, key);
        path.push(']');
    } else {
        if !at_start {
            path.push('.');
        }
        path.push_str(key);
    }
}

/// `canonical_container`: compact JSON with sorted keys, lower-cased as a whole; None where the
/// lower-casing is Python's to decide (see [`lower`]). The container's first token is at `at`.
pub fn container_text(tape: &[Token], at: usize) -> Option<String> {
    let mut out = String::new();
    write_json(tape, at, &mut out);
    lower(out)
}

fn write_json(tape: &[Token], at: usize, out: &mut String) {
    match &tape[at] {
        Token::Null => out.push_str("null"),
        Token::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Token::Integer(n) => out.push_str(itoa::Buffer::new().format(*n)),
        Token::Int(s) => out.push_str(s),
        Token::Float(f) if f.is_nan() => out.push_str("NaN"),
        Token::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        Token::Float(f) => out.push_str(&float_repr(*f)),
        Token::Decimal(s) => out.push_str(s),
        Token::Str(s) => push_json_string(out, s),
        Token::Array { .. } => {
            out.push('[');
            for (i, element) in elements(tape, at).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(tape, element, out);
            }
            out.push(']');
        }
        Token::Object { .. } => {
            let mut sorted: Vec<(&str, usize)> = members(tape, at).collect();
            // UTF-8 byte order is code point order, Python's str order
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, key);
                out.push(':');
                write_json(tape, value, out);
            }
            out.push('}');
        }
        Token::Key(_) => unreachable!("a key where a value is"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::parse;

    #[test]
    fn the_fast_positional_text_is_display_s() {
        // doubles spread over [1e-4, 1e16) by their bits, and the round numbers at its ends
        let mut seed = 11u64;
        let (lo, hi) = (1e-4f64.to_bits(), 1e16f64.to_bits());
        let mut values: Vec<f64> = (0..200_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                f64::from_bits(lo + (seed >> 11) % (hi - lo))
            })
            .collect();
        values.extend([
            1e-4,
            0.001,
            0.1,
            1.0,
            10.0,
            1e15,
            9999999999999998.0,
            123456.0,
        ]);
        for v in values {
            for v in [v, -v] {
                let mut want = v.to_string();
                if !want.contains('.') {
                    want.push_str(".0");
                }
                assert_eq!(positional(v), want, "{v:e}");
            }
        }
    }

    #[test]
    fn float_repr_follows_python() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (1e-4, "0.0001"),
            (0.00011, "0.00011"),
            (9.999999999999999e-05, "9.999999999999999e-05"),
            (1e15 + 0.5, "1000000000000000.5"),
            (9007199254740992.0, "9007199254740992.0"),
            (1e22, "1e+22"),
            (1e308, "1e+308"),
            (5e-324, "5e-324"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456789.123, "123456789.123"),
            (-1e-7, "-1e-07"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for (value, want) in cases {
            assert_eq!(float_repr(*value), *want, "{value}");
        }
    }

    #[test]
    fn canonical_floats() {
        assert_eq!(canonical_float(f64::NAN), None);
        assert_eq!(canonical_float(-0.0).unwrap(), "0");
        assert_eq!(canonical_float(4563.0).unwrap(), "4563");
        assert_eq!(canonical_float(1e15).unwrap(), "1000000000000000");
        assert_eq!(
            canonical_float(9007199254740992.0).unwrap(),
            "9007199254740992.0"
        );
        assert_eq!(canonical_float(1e20).unwrap(), "1e+20");
        assert_eq!(canonical_float(f64::NEG_INFINITY).unwrap(), "-inf");
    }

    #[test]
    fn strings() {
        assert_eq!(
            canonical_string("  Hello \t\n  World \u{1c}").unwrap(),
            "hello world"
        );
        assert_eq!(canonical_string("\u{a0}ΣΑΣ\u{3000}").unwrap(), "σας");
        assert_eq!(canonical_string("A\u{1f}B\u{b}C").unwrap(), "a b c");
        assert_eq!(canonical_string("\u{A7CB}"), None);
        assert_eq!(
            canonical_string("a\u{85}b\u{200b}c").unwrap(),
            "a b\u{200b}c"
        );
        assert_eq!(canonical_string(" \t ").unwrap(), "");
    }

    #[test]
    fn ascii_text_is_canonical_as_split_join_lower_makes_it() {
        // every text of up to 5 bytes over whitespace, control, case and word bytes, each
        // appended to a buffer that already holds text (a gap at the start is no space)
        let alphabet = b" \t\x0b\x1cx\x01A";
        let mut text = Vec::new();
        for len in 0..=5u32 {
            for mut code in 0..alphabet.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let s = std::str::from_utf8(&text).unwrap();
                let words: Vec<&str> = s.split(is_python_space).filter(|w| !w.is_empty()).collect();
                let expected = format!("held{}", words.join(" ").to_ascii_lowercase());
                let mut out = b"held".to_vec();
                push_canonical_ascii(&text, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), expected, "{s:?}");
            }
        }
    }

    #[test]
    fn segments() {
        let mut p = String::new();
        push_segment(&mut p, "a", true);
        push_segment(&mut p, "b c", false);
        push_segment(&mut p, "d", false);
        push_segment(&mut p, "", false);
        push_segment(&mut p, "q\"\x07", false);
        assert_eq!(p, r#"a["b c"].d[""]["q\"\u0007"]"#);
    }

    #[test]
    fn containers() {
        let tape =
            parse(br#"{"b": [1, 1.0, 1e16, "X\n\u001f\u007f"], "a": {"Z": null, "y": true}}"#)
                .unwrap();
        assert_eq!(
            container_text(&tape, 0).unwrap(),
            "{\"a\":{\"z\":null,\"y\":true},\"b\":[1,1.0,1e+16,\"x\\n\\u001f\u{7f}\"]}"
        );
        let tape = [
            Token::Array { end: 3 },
            Token::Float(f64::NAN),
            Token::Float(f64::NEG_INFINITY),
        ];
        assert_eq!(container_text(&tape, 0).unwrap(), "[nan,-infinity]");
    }
}
