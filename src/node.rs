//! A parsed JSON document as the flattener needs it: a tape of tokens in document order (a
//! container's token holds the index past its contents), integers exact (64-bit ones as
//! numbers, larger ones as their decimal text), strings borrowed from the input where they hold
//! no escapes.
//!
//! One vector per document rather than a tree: a tree cost a vector per object and per list,
//! grown, then freed member by member (3.0 µs an invoice line against 2.2 for the tape;
//! benchmarks/RESULTS.md). JSON text is parsed by serde_json (`arbitrary_precision`: numbers
//! beyond 64 bits arrive as their text). The Python entry point (`python.rs`) writes the same
//! tape from Python objects.
//!
//! The kernel handles the common case exactly and hands everything else back to the Python
//! path, which has the exact messages and warnings (SPEC §9): a text with a repeated key (a
//! warning row), a number that overflows a double (a warning row), or one serde_json refuses
//! (NaN, lone surrogates, invalid UTF-8, nesting beyond its limit) is [`ParseError`].

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// One token of a document's tape.
#[derive(Debug, Clone, PartialEq)]
pub enum Token<'a> {
    Null,
    Bool(bool),
    /// an integer that fits 64 bits (most do: no text is kept for it)
    Integer(i64),
    /// canonical decimal text of a larger integer
    Int(Cow<'a, str>),
    Float(f64),
    /// a double whose literal is already its canonical text ([`canonical_literal`]): kept as
    /// written, neither parsed nor formatted again (Python's repr of it is the same text)
    Decimal(Cow<'a, str>),
    Str(Cow<'a, str>),
    /// a list: its elements' tokens follow, up to the token at `end`
    Array {
        end: u32,
    },
    /// an object: its members follow as a [`Token::Key`] and the value's tokens each, in
    /// document order, up to the token at `end`
    Object {
        end: u32,
    },
    Key(Cow<'a, str>),
}

/// A document: its root value's tokens, from index 0.
pub type Tape<'a> = Vec<Token<'a>>;

/// The index just past the value whose first token is at `at`.
#[inline]
pub fn after(tape: &[Token], at: usize) -> usize {
    match tape[at] {
        Token::Array { end } | Token::Object { end } => end as usize,
        _ => at + 1,
    }
}

/// Whether the container at `at` holds nothing (`[]`, `{}`).
#[inline]
pub fn is_empty(tape: &[Token], at: usize) -> bool {
    after(tape, at) == at + 1
}

/// The members of the object at `at`: each key, and the index of its value.
#[inline]
pub fn members<'t, 'a>(tape: &'t [Token<'a>], at: usize) -> Members<'t, 'a> {
    Members {
        tape,
        at: at + 1,
        end: after(tape, at),
    }
}

/// The indices of the elements of the list at `at`.
#[inline]
pub fn elements<'t, 'a>(tape: &'t [Token<'a>], at: usize) -> Elements<'t, 'a> {
    Elements {
        tape,
        at: at + 1,
        end: after(tape, at),
    }
}

pub struct Members<'t, 'a> {
    tape: &'t [Token<'a>],
    at: usize,
    end: usize,
}

impl<'t> Iterator for Members<'t, '_> {
    type Item = (&'t str, usize);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let Token::Key(key) = &self.tape[self.at] else {
            unreachable!("an object's member starts with its key")
        };
        let value = self.at + 1;
        self.at = after(self.tape, value);
        Some((key, value))
    }
}

pub struct Elements<'t, 'a> {
    tape: &'t [Token<'a>],
    at: usize,
    end: usize,
}

impl Iterator for Elements<'_, '_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.at >= self.end {
            return None;
        }
        let element = self.at;
        self.at = after(self.tape, element);
        Some(element)
    }
}

/// Writes the end of the container whose token is at `at`, once its contents are the last
/// tokens on the tape.
#[inline]
pub fn close(tape: &mut [Token], at: usize) {
    let end = tape.len() as u32;
    match &mut tape[at] {
        Token::Array { end: e } | Token::Object { end: e } => *e = end,
        _ => unreachable!("close a container"),
    }
}

/// Why a text is handed back to the Python path.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// not JSON as serde_json reads it (or nested deeper than its limit)
    Invalid(String),
    /// an object names a key twice: the Python path warns and keeps the last value
    RepeatedKey,
    /// a number beyond a double's range or precision: the Python path warns
    Inexact,
}

/// Parses one JSON document (any root value).
pub fn parse(text: &[u8]) -> Result<Tape<'_>, ParseError> {
    let flags = Flags::default();
    // validated once here, so that serde_json's str reader skips validating each string
    // (from_slice spends ~9 % of the walk in per-string from_utf8 calls)
    let text = std::str::from_utf8(text).map_err(|e| ParseError::Invalid(e.to_string()))?;
    // about a token per 10 bytes of invoice-like text
    let mut tape = Vec::with_capacity(text.len() / 8 + 4);
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = TapeSeed {
        tape: &mut tape,
        flags: &flags,
    };
    seed.deserialize(&mut de)
        .map_err(|e| ParseError::Invalid(e.to_string()))?;
    de.end().map_err(|e| ParseError::Invalid(e.to_string()))?;
    if flags.repeated.get() {
        Err(ParseError::RepeatedKey)
    } else if flags.inexact.get() {
        Err(ParseError::Inexact)
    } else {
        Ok(tape)
    }
}

#[derive(Default)]
struct Flags {
    repeated: Cell<bool>,
    inexact: Cell<bool>,
}

// serde_json with `arbitrary_precision` hands a number that is not a 64-bit integer to a
// visitor as a one-member map under this key (serde_json's own `Value` reads it the same way)
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The token for a number's text: an integer unless it has a fraction or an exponent (the
/// grammar Python's json and orjson apply); None for a double out of range, or one that does
/// not show the literal's value (more digits than a double keeps): the Python path warns.
pub fn number(text: Cow<'_, str>) -> Option<Token<'_>> {
    if canonical_literal(text.as_bytes()) {
        return Some(Token::Decimal(text));
    }
    if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        let value: f64 = text.parse().ok()?;
        (value.is_finite() && kept_exactly(&text, value)).then_some(Token::Float(value))
    } else if text == "-0" {
        Some(Token::Int(Cow::Borrowed("0")))
    } else {
        Some(Token::Int(text))
    }
}

/// Whether a JSON number literal is its double's canonical text (`canonical::canonical_float`,
/// Python's repr) as written: positional, with a fraction that ends in a non-zero digit (so the
/// value is not whole), at most 15 significant digits and a magnitude in [1e-4, 1e16). Two
/// decimals of at most 15 significant digits never read as the same double (`f64::DIGITS`),
/// so no shorter text reads as this literal's double: its shortest round-trip digits are the
/// literal's own. Most amounts and prices are written this way (`6620.04`).
pub fn canonical_literal(text: &[u8]) -> bool {
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    let Some(point) = unsigned.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (whole, fraction) = (&unsigned[..point], &unsigned[point + 1..]);
    if whole.is_empty()
        || fraction.is_empty()
        || !whole.iter().chain(fraction).all(u8::is_ascii_digit)
        || fraction.last() == Some(&b'0')
        || (whole.len() > 1 && whole[0] == b'0')
    {
        return false; // an exponent, trailing zeros, or not JSON's grammar
    }
    let significant = if whole == b"0" {
        let zeros = fraction.iter().take_while(|&&b| b == b'0').count();
        if zeros > 3 {
            return false; // below 1e-4: Python writes it with an exponent
        }
        fraction.len() - zeros
    } else {
        whole.len() + fraction.len()
    };
    significant <= f64::DIGITS as usize
}

/// Whether a double's shortest round-trip digits (its canonical text's) are the value of the
/// decimal literal it was read from. A literal of at most 15 significant digits always is
/// (`f64::DIGITS`), so only longer ones are formatted and compared: `0.30000000000000004`
/// is, `0.30000000000000001` (read as 0.3) is not.
fn kept_exactly(literal: &str, value: f64) -> bool {
    let mantissa = literal.split(['e', 'E']).next().unwrap_or(literal);
    if mantissa.bytes().filter(u8::is_ascii_digit).count() <= f64::DIGITS as usize {
        return true; // the common case, without an allocation
    }
    let digits = decimal(literal);
    digits.0.len() <= f64::DIGITS as usize || digits == decimal(&format!("{value:e}"))
}

/// A decimal literal (sign, digits, optional fraction and exponent) as its significant digits
/// and the power of ten of the last one: `120.50e1` -> ("1205", 0).
fn decimal(text: &str) -> (Vec<u8>, i64) {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let mantissa = mantissa.trim_start_matches(['-', '+']);
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    let first = all.iter().position(|&d| d != b'0').unwrap_or(all.len());
    let last = all
        .iter()
        .rposition(|&d| d != b'0')
        .map_or(first, |i| i + 1);
    let trailing = (all.len() - last) as i64;
    let exponent = exponent
        .saturating_sub(fraction.len() as i64)
        .saturating_add(trailing);
    (all[first..last].to_vec(), exponent)
}

/// Writes one value's tokens to the tape.
struct TapeSeed<'t, 'de> {
    tape: &'t mut Tape<'de>,
    flags: &'t Flags,
}

impl<'de> DeserializeSeed<'de> for TapeSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A key or string: borrowed from the input when it holds no escape.
pub(crate) struct CowStr<'de>(pub(crate) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl<'de> Visitor<'de> for TapeSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.tape.push(Token::Null);
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.tape.push(Token::Bool(v));
        Ok(())
    }
    // arbitrary_precision still hands most integers that fit 64 bits over as one
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.tape.push(Token::Integer(v));
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.tape.push(match i64::try_from(v) {
            Ok(v) => Token::Integer(v),
            Err(_) => Token::Int(Cow::Owned(v.to_string())),
        });
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.tape.push(Token::Float(v));
        Ok(())
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<(), E> {
        self.tape.push(Token::Str(Cow::Borrowed(v)));
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.tape.push(Token::Str(Cow::Owned(v.to_owned())));
        Ok(())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.tape.push(Token::Str(Cow::Owned(v)));
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let TapeSeed { tape, flags } = self;
        let at = tape.len();
        tape.push(Token::Array { end: 0 });
        while let Some(()) = seq.next_element_seed(TapeSeed {
            tape: &mut *tape,
            flags,
        })? {}
        close(tape, at);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let TapeSeed { tape, flags } = self;
        let at = tape.len();
        let Some(CowStr(first)) = map.next_key::<CowStr<'de>>()? else {
            tape.push(Token::Object { end: at as u32 + 1 });
            return Ok(());
        };
        if first == NUMBER_TOKEN {
            let CowStr(text) = map.next_value::<CowStr<'de>>()?;
            tape.push(number(text).unwrap_or_else(|| {
                flags.inexact.set(true);
                Token::Null
            }));
            return Ok(());
        }
        tape.push(Token::Object { end: 0 });
        tape.push(Token::Key(first));
        map.next_value_seed(TapeSeed {
            tape: &mut *tape,
            flags,
        })?;
        let mut n = 1;
        while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
            tape.push(Token::Key(key));
            map.next_value_seed(TapeSeed {
                tape: &mut *tape,
                flags,
            })?;
            n += 1;
        }
        close(tape, at);
        if n > 1 && has_repeat(tape, at, n) {
            flags.repeated.set(true);
        }
        Ok(())
    }
}

/// Whether two of the `n` members of the object at `at` share a key: pairwise for small
/// objects, an open-addressing table on the stack for middling ones (an invoice's root has
/// about 20 members: a hash set allocated for each was 8 % of the parse's instructions), a
/// hash set beyond (sorting the keys of a 20-member invoice root cost 4 %).
fn has_repeat(tape: &[Token], at: usize, n: usize) -> bool {
    let mut keys = members(tape, at).map(|(key, _)| key);
    const SMALL: usize = 16;
    if n <= SMALL {
        let mut seen = [""; SMALL];
        for (i, key) in keys.enumerate() {
            if seen[..i].contains(&key) {
                return true;
            }
            seen[i] = key;
        }
        return false;
    }
    const MIDDLING: usize = 64;
    if n <= MIDDLING {
        // slot -> 1 + the key's position in `seen` (0: empty); at most half the slots are used
        const SLOTS: usize = 1 << SLOT_BITS;
        let mut slots = [0u8; SLOTS];
        let mut seen = [""; MIDDLING];
        for (i, key) in keys.enumerate() {
            let mut slot = key_slot(key);
            while slots[slot] != 0 {
                if seen[slots[slot] as usize - 1] == key {
                    return true;
                }
                slot = (slot + 1) & (SLOTS - 1);
            }
            slots[slot] = i as u8 + 1;
            seen[i] = key;
        }
        return false;
    }
    let mut seen = FxHashSet::with_capacity_and_hasher(n, Default::default());
    !keys.all(|key| seen.insert(key))
}

/// [`has_repeat`]'s table has 2^7 slots: twice its 64 keys.
const SLOT_BITS: u32 = 7;

/// A key's first slot in [`has_repeat`]'s table: the top bits of its hash, the best mixed.
fn key_slot(key: &str) -> usize {
    use std::hash::BuildHasher;
    (rustc_hash::FxBuildHasher.hash_one(key) >> (u64::BITS - SLOT_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tape of an object of scalar members.
    fn obj<'a>(members: Vec<(&'a str, Token<'a>)>) -> Tape<'a> {
        let mut tape = vec![Token::Object {
            end: 1 + 2 * members.len() as u32,
        }];
        for (k, v) in members {
            tape.push(Token::Key(Cow::Borrowed(k)));
            tape.push(v);
        }
        tape
    }

    fn int(s: &str) -> Token<'_> {
        Token::Int(Cow::Borrowed(s))
    }

    #[test]
    fn a_container_holds_the_index_past_its_contents() {
        let text = br#"{"a": [1, {"b": null}, []], "c": {}, "d": "x"}"#;
        let tape = parse(text).unwrap();
        let key = |k: &'static str| Token::Key(Cow::Borrowed(k));
        assert_eq!(
            tape,
            vec![
                Token::Object { end: 12 },
                key("a"),
                Token::Array { end: 8 },
                Token::Integer(1),
                Token::Object { end: 7 },
                key("b"),
                Token::Null,
                Token::Array { end: 8 },
                key("c"),
                Token::Object { end: 10 },
                key("d"),
                Token::Str(Cow::Borrowed("x")),
            ]
        );
        assert_eq!(
            members(&tape, 0).collect::<Vec<_>>(),
            [("a", 2), ("c", 9), ("d", 11)]
        );
        assert_eq!(elements(&tape, 2).collect::<Vec<_>>(), [3, 4, 7]);
        assert_eq!(members(&tape, 4).collect::<Vec<_>>(), [("b", 6)]);
        assert!(is_empty(&tape, 7) && is_empty(&tape, 9) && !is_empty(&tape, 4));
        assert_eq!(parse(b"[]").unwrap(), [Token::Array { end: 1 }]);
        assert_eq!(parse(b" {} ").unwrap(), [Token::Object { end: 1 }]);
        assert_eq!(parse(b"7").unwrap(), [Token::Integer(7)]);
        // 64-bit integers as numbers, larger ones as their text
        let ends = br#"[-9223372036854775808, 9223372036854775807, 9223372036854775808]"#;
        assert_eq!(
            parse(ends).unwrap()[1..],
            [
                Token::Integer(i64::MIN),
                Token::Integer(i64::MAX),
                int("9223372036854775808")
            ]
        );
    }

    #[test]
    fn numbers_keep_their_kind_and_exact_integers() {
        let big = "123456789012345678901234567890";
        let text = format!(r#"{{"a": {big}, "b": -0, "c": 1.50, "d": 1E2, "e": -0.0}}"#);
        let node = parse(text.as_bytes()).unwrap();
        assert_eq!(
            node,
            obj(vec![
                ("a", int(big)),
                ("b", int("0")),
                ("c", Token::Float(1.5)),
                ("d", Token::Float(100.0)),
                ("e", Token::Float(-0.0)),
            ])
        );
    }

    #[test]
    fn literals_a_double_does_not_show_go_back_to_python() {
        for text in [
            "0.30000000000000001",
            "1.00000000000000000001",
            "-1234567890.1234567891",
            "12345678901234567890.0",
            "9007199254740993.0",
            "3.141592653589793238e0",
        ] {
            let doc = format!(r#"{{"f": {text}}}"#);
            assert_eq!(parse(doc.as_bytes()), Err(ParseError::Inexact), "{text}");
        }
        // shortest round-trip digits, however many, or written longer with zeros: kept
        for (text, value) in [
            ("0.30000000000000004", 0.30000000000000004),
            ("1.5000000000000000000", 1.5),
            ("123456789012345.6", 123456789012345.6),
            ("1e-320", 1e-320),
            ("2.2250738585072014e-308", 2.2250738585072014e-308),
            ("0.000000000000000000000001", 1e-24),
            ("-0.0", -0.0),
        ] {
            let doc = format!(r#"{{"f": {text}}}"#);
            assert_eq!(
                parse(doc.as_bytes()),
                Ok(obj(vec![("f", Token::Float(value))])),
                "{text}"
            );
        }
        assert_eq!(decimal("120.50e1"), (b"1205".to_vec(), 0));
        assert_eq!(decimal("-0.00"), (Vec::new(), -2));
        // exponents at the ends of i64 saturate rather than overflow (the fuzz target's build
        // checks overflow)
        let tiny = format!(r#"{{"f": 1.2345678901234567e{}}}"#, i64::MIN);
        assert_eq!(parse(tiny.as_bytes()), Err(ParseError::Inexact));
    }

    #[test]
    fn a_canonical_literal_is_the_text_its_double_is_written_as() {
        use crate::canonical::canonical_float;
        for text in [
            "6620.04",
            "-0.5",
            "0.0001",
            "0.1",
            "99999999999999.9",
            "1.00000000000001",
        ] {
            assert!(canonical_literal(text.as_bytes()), "{text}");
        }
        // trailing zeros, a whole value, an exponent, below 1e-4, 16 digits, not JSON
        for text in [
            "1.50",
            "4563.0",
            "1e2",
            "1.5e3",
            "0.00009",
            "0.1234567890123456",
            "1234567890123.456",
            "12",
            ".5",
            "5.",
            "01.5",
            "-",
            "1.-5",
            "0.0",
        ] {
            assert!(!canonical_literal(text.as_bytes()), "{text}");
        }
        // every literal it accepts reads as the double whose canonical text it is: digits of
        // every length, the point at every place, leading zeros after "0." (an LCG, seeded)
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut accepted = 0;
        for _ in 0..200_000 {
            let digits: String = (0..1 + next(17))
                .map(|_| (b'0' + next(10) as u8) as char)
                .collect();
            let point = 1 + next(digits.len() as u64) as usize;
            let (whole, fraction) = digits.split_at(point.min(digits.len()));
            let whole = whole.trim_start_matches('0');
            let whole = if whole.is_empty() { "0" } else { whole };
            let sign = if next(2) == 0 { "-" } else { "" };
            let text = format!("{sign}{whole}.{fraction}");
            if canonical_literal(text.as_bytes()) {
                accepted += 1;
                let value: f64 = text.parse().unwrap();
                let expected = canonical_float(value).unwrap();
                assert_eq!(text, expected);
                assert_eq!(
                    number(Cow::Borrowed(&text)),
                    Some(Token::Decimal(Cow::Borrowed(&text)))
                );
            }
        }
        assert!(accepted > 50_000, "{accepted}");
    }

    #[test]
    fn overflowing_numbers_and_repeated_keys_go_back_to_python() {
        assert_eq!(parse(br#"{"f": 1e400}"#), Err(ParseError::Inexact));
        assert_eq!(parse(br#"{"f": [-1e309]}"#), Err(ParseError::Inexact));
        assert_eq!(
            parse(br#"{"a": 1, "b": 2, "a": 3}"#),
            Err(ParseError::RepeatedKey)
        );
        assert_eq!(
            parse(br#"{"x": {"a": 1, "a": 1}}"#),
            Err(ParseError::RepeatedKey)
        );
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\": {i},"));
        }
        assert!(parse(format!("{text}\"k39\": 0}}").as_bytes()).is_err());
        assert!(parse(format!("{text}\"k40\": 0}}").as_bytes()).is_ok());
    }

    #[test]
    fn a_repeated_key_is_found_in_objects_of_every_size() {
        // pairwise up to 16 members, the table on the stack up to 64, a hash set beyond; the
        // empty key and keys alike but for one byte included
        for n in [2, 16, 17, 20, 63, 64, 65, 200] {
            let keys: Vec<String> = (0..n)
                .map(|i| match i {
                    0 => String::new(),
                    _ => format!("key_{i:03}"),
                })
                .collect();
            let object = |keys: &[String]| {
                let members: Vec<String> = keys.iter().map(|k| format!("\"{k}\": 0")).collect();
                format!("{{{}}}", members.join(", "))
            };
            assert!(parse(object(&keys).as_bytes()).is_ok(), "{n} distinct keys");
            for (from, to) in [(0, n - 1), (1, n - 1), (n - 2, n - 1), (0, 1)] {
                if from == to {
                    continue;
                }
                let mut repeated = keys.clone();
                repeated[to] = repeated[from].clone();
                assert_eq!(
                    parse(object(&repeated).as_bytes()),
                    Err(ParseError::RepeatedKey),
                    "{n} keys, key {from} again at {to}"
                );
            }
        }
    }

    #[test]
    fn strings_are_borrowed_without_escapes() {
        let tape = parse(br#"["plain", "esc\n"]"#).unwrap();
        assert!(matches!(&tape[1], Token::Str(Cow::Borrowed("plain"))));
        assert!(matches!(&tape[2], Token::Str(Cow::Owned(s)) if s == "esc\n"));
    }

    #[test]
    fn invalid_text() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        for bad in [
            &b"{"[..],
            b"NaN",
            b"[1,]",
            b"{\"a\" 1}",
            b"\"\\ud800\"",
            b"\xff",
            b"{} x",
            b"\"a\tb\"",
            deep.as_bytes(),
        ] {
            assert!(matches!(parse(bad), Err(ParseError::Invalid(_))), "{bad:?}");
        }
    }
}
