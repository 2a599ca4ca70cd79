//! The scan pass of the files driver (stream.py): the id of each NDJSON line, without keeping
//! the document. A line the kernel cannot vouch for (invalid text as serde_json reads it, a
//! repeated key, a non-object root, an id that is neither a string nor an integer) is listed in
//! `fallback` for the Python path, which reads it the way `ingest.iter_records` always has.
//! The table reader asks the same question of JSON-text cells ([`unreadable`]).

use std::fmt;

use rayon::prelude::*;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::node::CowStr;

pub const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The lines of one byte range, by index from 0 within it.
#[derive(Debug, Default, PartialEq)]
pub struct Scanned {
    pub line: Vec<i64>,
    pub offset: Vec<i64>,
    pub length: Vec<i64>,
    pub doc_id: Vec<Option<String>>,
    pub has_id: Vec<bool>,
    /// lines for the Python path (their index), in order
    pub fallback: Vec<i64>,
    /// the (offset, length) of each of those lines
    pub fallback_span: Vec<(i64, i64)>,
}

enum Line {
    Blank,
    Record(Option<String>, bool),
    Fallback,
}

/// A JSON text as Python's `json.loads(bytes)` reads it: a leading BOM is no part of it.
pub fn without_bom(text: &[u8]) -> &[u8] {
    text.strip_prefix(UTF8_BOM).unwrap_or(text)
}

/// Python's `bytes.strip()` whitespace.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

fn read_line(raw: &[u8], id_field: &str, content: Option<&str>) -> Line {
    if is_blank(raw) {
        return Line::Blank;
    }
    // one UTF-8 check of the line, not one per string (see node::parse)
    let Ok(text) = std::str::from_utf8(without_bom(raw)) else {
        return Line::Fallback;
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let shallow = is_shallow(text);
    let record = RecordId {
        id_field,
        content,
        shallow,
    };
    let id = match record.deserialize(&mut de) {
        Ok(id) if de.end().is_ok() => id,
        _ => return Line::Fallback,
    };
    match id {
        Id::Absent => Line::Record(None, false),
        Id::Found(text) => Line::Record(Some(text), true),
        Id::Other => Line::Fallback,
    }
}

/// Positions of the texts that are not JSON as the kernel reads it (validated within serde_json's
/// nesting limit, nothing kept), on the rayon pool; with a `content` member, also the objects
/// without one. A table reader asks before pairing: those records alone are read by the
/// Python path at once (an error row, or raw model text), so pairing sees the records it
/// always has; the others are JSON, and a batch of them goes from text to the leaves table
/// unless the walk declines one (then it is read in Python).
pub fn unreadable(texts: &[Option<&[u8]>], content: Option<&str>) -> Vec<usize> {
    texts
        .par_iter()
        .with_min_len(64)
        .enumerate()
        .filter(|(_, t)| t.is_some_and(|t| !is_json(t, content)))
        .map(|(i, _)| i)
        .collect()
}

fn is_json(text: &[u8], content: Option<&str>) -> bool {
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let read = match content {
        None => Skip.deserialize(&mut de).is_ok(),
        Some(name) => matches!(HasMember(name).deserialize(&mut de), Ok(true)),
    };
    read && de.end().is_ok()
}

/// Whether a record has the member holding its document: false only for an object without
/// it; any other root is no record of members, and the Python path reads it as it is.
struct HasMember<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for HasMember<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HasMember<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(true)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut first = true;
        let mut found = false;
        while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
            if first && key == "$serde_json::private::Number" {
                map.next_value_seed(Skip)?; // a number root (arbitrary_precision)
                return Ok(true);
            }
            first = false;
            found |= key == self.0;
            map.next_value_seed(Skip)?;
        }
        Ok(found)
    }
}

/// A value validated and dropped, within serde_json's nesting limit: a record nested past it
/// must go to the Python path, as in the text path. serde's `IgnoredAny` is skipped without
/// the limit (and twice as fast), so it skips the values of [`is_shallow`] texts only.
struct Skip;

/// serde_json reads at most 127 levels of nesting (the 128th opening bracket fails, as
/// `ignored_members_of_shallow_records` holds): a text with fewer than 128 opening brackets,
/// in strings or not, cannot reach it. `IgnoredAny` also takes a lone surrogate escape in a
/// member that [`Skip`] refuses: the scan then keeps the record, as the Python path, which
/// [`Skip`] hands it to, does (`json` reads the escape; the batch's walk declines it again).
const SHALLOW_OPENERS: usize = 128;

fn is_shallow(text: &str) -> bool {
    // `[` and `{` differ in one bit (0x5B, 0x7B); counted in u8 lanes, 255 bytes at a time, so
    // the loop vectorizes (ten times faster than a filtered count)
    let openers: usize = text
        .as_bytes()
        .chunks(255)
        .map(|chunk| {
            let n = chunk
                .iter()
                .fold(0u8, |n, b| n + u8::from(b | 0x20 == b'{'));
            usize::from(n)
        })
        .sum();
    openers < SHALLOW_OPENERS
}

/// The next member's value validated and dropped: [`IgnoredAny`] in a `shallow` text
/// ([`is_shallow`]), else [`Skip`].
fn skip_value<'de, A: MapAccess<'de>>(map: &mut A, shallow: bool) -> Result<(), A::Error> {
    if shallow {
        map.next_value::<IgnoredAny>().map(drop)
    } else {
        map.next_value_seed(Skip)
    }
}

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skip)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// The id member of a record, the rest of it only validated ([`Skip`]).
enum Id {
    Absent,
    /// a string, or an integer's decimal text (`str(int)` in Python)
    Found(String),
    /// not an object, an id that is neither a string nor an integer, the id twice, or no
    /// member `content` (when the document is one)
    Other,
}

struct RecordId<'a> {
    id_field: &'a str,
    content: Option<&'a str>,
    /// the text is [`is_shallow`]
    shallow: bool,
}

impl<'de> DeserializeSeed<'de> for RecordId<'_> {
    type Value = Id;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Id, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RecordId<'_> {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    // a root that is not an object: validated, then the Python path decides
    fn visit_unit<E: de::Error>(self) -> Result<Id, E> {
        Ok(Id::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Id, E> {
        Ok(Id::Other)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Id, E> {
        Ok(Id::Other)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Id, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(Id::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Id, A::Error> {
        let mut id = Id::Absent;
        let mut first = true;
        let mut has_content = self.content.is_none();
        while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
            if first && key == "$serde_json::private::Number" {
                map.next_value_seed(Skip)?; // a number root (arbitrary_precision)
                return Ok(Id::Other);
            }
            first = false;
            has_content |= Some(&*key) == self.content;
            if key != self.id_field {
                skip_value(&mut map, self.shallow)?;
                continue;
            }
            let value = map.next_value::<serde_json::Value>()?;
            id = match (&id, value) {
                (Id::Absent, serde_json::Value::String(s)) => Id::Found(s),
                (Id::Absent, serde_json::Value::Number(n)) => {
                    let text = n.to_string();
                    if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
                        Id::Other
                    } else if text == "-0" {
                        Id::Found("0".into())
                    } else {
                        Id::Found(text)
                    }
                }
                _ => Id::Other,
            };
        }
        Ok(if has_content { id } else { Id::Other })
    }
}

/// Reads every line of `data` (split at `\n`, as `bytes.split(b"\n")` does); with a `content`
/// member, a record without one is left to the Python path (its error row). Also the number of
/// line ends in `data`: how the files driver numbers the lines of the ranges after this one.
pub fn scan_lines(data: &[u8], id_field: &str, content: Option<&str>) -> (Scanned, usize) {
    let mut starts = vec![0usize];
    // memchr: a byte-wise filter took 0.3 µs of a 1 KB line's 1.4 µs scan
    starts.extend(memchr::memchr_iter(b'\n', data).map(|i| i + 1));
    let line_ends = starts.len() - 1;
    let bounds: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let stop = starts.get(i + 1).map_or(data.len(), |n| n - 1);
            (s, stop)
        })
        .collect();
    (scan_texts(data, &bounds, id_field, content), line_ends)
}

/// What a split of a file of values expects next ([`split_values`]): the file's start (where
/// a BOM may be), an array's `[`, the first value of an array (or its `]`), a value (among
/// objects: one, or the end), what follows an array's value (`,` or `]`), or nothing but
/// blanks (after an array's `]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Start,
    Open,
    FirstValue,
    Value,
    AfterValue,
    Nothing,
}

impl Expect {
    pub const ALL: [Expect; 6] = [
        Expect::Start,
        Expect::Open,
        Expect::FirstValue,
        Expect::Value,
        Expect::AfterValue,
        Expect::Nothing,
    ];
}

/// What [`split_values`] found in a chunk: the values wholly in it, how far the next chunk may
/// start, and what that chunk expects.
pub type Split = (Vec<(usize, usize)>, usize, Expect);

/// One chunk of a JSON array (or, `objects`, of pretty-printed objects) split a piece at a
/// time: the (start, stop) of each value wholly in `data`, how far the next chunk may start
/// (the start of a value cut off at the end of `data`, or its end), and what comes next.
/// `last`: `data` runs to the end of the file. Values are delimited by their brackets,
/// strings and commas alone ([`element_end`]), not read, so one that is not JSON is one
/// record's error. None when the delimiters do not make such a file: a file cut short, a
/// missing or extra comma, text after an array, a value among objects that is no object.
pub fn split_values(data: &[u8], mut expect: Expect, last: bool, objects: bool) -> Option<Split> {
    let mut values = Vec::new();
    let mut at = 0;
    if expect == Expect::Start {
        if data.starts_with(UTF8_BOM) {
            at = UTF8_BOM.len();
        } else if !last && UTF8_BOM.starts_with(data) {
            return Some((values, 0, expect)); // a BOM cut off, or nothing yet
        }
        expect = if objects { Expect::Value } else { Expect::Open };
    }
    loop {
        at = skip_blanks(data, at);
        let Some(&byte) = data.get(at) else {
            let complete = expect
                == if objects {
                    Expect::Value
                } else {
                    Expect::Nothing
                };
            return (!last || complete).then_some((values, at, expect));
        };
        match (expect, objects, byte) {
            (Expect::Open, false, b'[') => expect = Expect::FirstValue,
            (Expect::FirstValue | Expect::AfterValue, false, b']') => expect = Expect::Nothing,
            (Expect::AfterValue, false, b',') => expect = Expect::Value,
            (Expect::Value, true, b'{') | (Expect::FirstValue | Expect::Value, false, _) => {
                match element_end(data, at) {
                    Some(end) => {
                        values.push((at, end));
                        at = end;
                        expect = if objects {
                            Expect::Value
                        } else {
                            Expect::AfterValue
                        };
                        continue;
                    }
                    // an array's `,` or `]` where a value belongs is no value
                    None if last || matches!(byte, b',' | b']') => return None,
                    None => return Some((values, at, expect)), // cut off: the next chunk's
                }
            }
            _ => return None,
        }
        at += 1;
    }
}

/// The values [`split_values`] finds in `data` fed `size` more bytes at a time, each chunk
/// from where the last left off, as `ingest._scan_values` feeds it a file: the cargo tests and
/// the fuzz target hold it to the values found at once.
pub fn split_in_chunks(data: &[u8], size: usize, objects: bool) -> Option<Vec<(usize, usize)>> {
    let (mut expect, mut base, mut end, mut out) = (Expect::Start, 0, 0, Vec::new());
    loop {
        end = (end + size.max(1)).min(data.len());
        let last = end == data.len();
        let (values, consumed, next) = split_values(&data[base..end], expect, last, objects)?;
        out.extend(values.into_iter().map(|(a, b)| (a + base, b + base)));
        (base, expect) = (base + consumed, next);
        if last {
            return Some(out);
        }
    }
}

/// The records of one chunk of a JSON array (or, `objects`, of pretty-printed objects) as
/// [`scan_lines`] gives those of NDJSON lines ([`split_values`]): an array's elements
/// numbered by their position in the chunk from 0, objects by the line (from 0 in the chunk)
/// each starts on; with how far the next chunk may start, what it expects, and the number of
/// values found.
pub fn scan_values(
    data: &[u8],
    expect: Expect,
    last: bool,
    objects: bool,
    id_field: &str,
    content: Option<&str>,
) -> Option<(Scanned, usize, Expect, usize)> {
    let (bounds, consumed, next) = split_values(data, expect, last, objects)?;
    let mut scanned = scan_texts(data, &bounds, id_field, content);
    if objects {
        let lines = start_lines(data, &bounds);
        for at in scanned.line.iter_mut().chain(scanned.fallback.iter_mut()) {
            *at = lines[*at as usize];
        }
    }
    Some((scanned, consumed, next, bounds.len()))
}

/// The elements of a whole JSON array ([`split_values`]).
pub fn array_elements(data: &[u8]) -> Option<Vec<(usize, usize)>> {
    split_values(data, Expect::Start, true, false).map(|(values, _, _)| values)
}

/// The objects of a whole file of pretty-printed objects ([`split_values`]).
pub fn object_elements(data: &[u8]) -> Option<Vec<(usize, usize)>> {
    split_values(data, Expect::Start, true, true).map(|(values, _, _)| values)
}

/// The line (from 0) each text starts on; `bounds` in order.
fn start_lines(data: &[u8], bounds: &[(usize, usize)]) -> Vec<i64> {
    let (mut line, mut from) = (0i64, 0usize);
    bounds
        .iter()
        .map(|&(start, _)| {
            line += data[from..start].iter().filter(|&&b| b == b'\n').count() as i64;
            from = start;
            line
        })
        .collect()
}

/// The record or fallback of each (start, stop) text of `data`, read in parallel.
fn scan_texts(
    data: &[u8],
    bounds: &[(usize, usize)],
    id_field: &str,
    content: Option<&str>,
) -> Scanned {
    let lines: Vec<Line> = bounds
        .par_iter()
        .with_min_len(256)
        .map(|&(s, e)| read_line(&data[s..e], id_field, content))
        .collect();
    let mut out = Scanned::default();
    for (i, (line, &(s, e))) in lines.into_iter().zip(bounds).enumerate() {
        match line {
            Line::Blank => {}
            Line::Fallback => {
                out.fallback.push(i as i64);
                out.fallback_span.push((s as i64, (e - s) as i64));
            }
            Line::Record(doc_id, has_id) => {
                out.line.push(i as i64);
                out.offset.push(s as i64);
                out.length.push((e - s) as i64);
                out.doc_id.push(doc_id);
                out.has_id.push(has_id);
            }
        }
    }
    out
}

/// JSON's four blank characters (RFC 8259), from `at`.
fn skip_blanks(data: &[u8], mut at: usize) -> usize {
    while matches!(data.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the element starting at `at` ends: past the bracket closing its object or array, past
/// the quote closing its string, or (a number, a literal, or text that is no JSON) before the
/// next comma, closing bracket or blank. None at the end of `data`, or for an empty element.
fn element_end(data: &[u8], at: usize) -> Option<usize> {
    match data.get(at)? {
        b'{' | b'[' => {
            let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
            for (i, &b) in data.iter().enumerate().skip(at) {
                if in_string {
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        b'"' => {
            let mut escaped = false;
            for (i, &b) in data.iter().enumerate().skip(at + 1) {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => return Some(i + 1),
                    _ => {}
                }
            }
            None
        }
        _ => {
            let len = data[at..]
                .iter()
                .position(|b| matches!(b, b',' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            (len > 0).then_some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_offsets_and_fallbacks() {
        let data = b"{\"id\": \"a\", \"x\": 1}\n\n  \r\n{\"id\": 12}\r\n{\"x\": 2}\n{\"id\": 1.5}\n[1]\n{bad\n\xef\xbb\xbf{\"id\": -0}";
        let (s, line_ends) = scan_lines(data, "id", None);
        assert_eq!(line_ends, 8); // the last line has none
        assert_eq!(s.line, [0, 3, 4, 8]);
        assert_eq!(
            s.doc_id,
            [Some("a".into()), Some("12".into()), None, Some("0".into())]
        );
        assert_eq!(s.has_id, [true, true, false, true]);
        assert_eq!(s.offset[1], 25);
        assert_eq!(s.length[1], 11); // the \r stays part of the line, as in Python
        assert_eq!(s.fallback, [5, 6, 7]);
        // nested past serde_json's limit (128): the Python path decides
        let deep = format!(
            "{{\"id\": 1, \"v\": {}{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(scan_lines(deep.as_bytes(), "id", None).0.fallback, [0]);
        let ok = format!(
            "{{\"id\": 1, \"v\": {}{}}}",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(scan_lines(ok.as_bytes(), "id", None).0.line, [0]);
    }

    #[test]
    fn a_record_without_its_content_member_is_the_python_paths() {
        let data = b"{\"id\": 1, \"out\": {\"a\": 1}}\n{\"id\": 2}\n{\"out\": \"text\", \"id\": 3}";
        let (s, line_ends) = scan_lines(data, "id", Some("out"));
        assert_eq!(line_ends, 2);
        assert_eq!(s.line, [0, 2]);
        assert_eq!(s.doc_id, [Some("1".into()), Some("3".into())]);
        assert_eq!(s.fallback, [1]);
        assert_eq!(scan_lines(data, "id", None).0.fallback, Vec::<i64>::new());
    }

    #[test]
    fn ignored_members_of_shallow_records() {
        let nested = |n: usize| format!("{{\"id\": 1, \"v\": {}{}}}", "[".repeat(n), "]".repeat(n));
        // the record's own bracket and 126 more: the limit's last level, read either way
        for (n, shallow, record) in [(126, true, true), (127, false, false), (200, false, false)] {
            let text = nested(n);
            assert_eq!(is_shallow(&text), shallow);
            let read = matches!(read_line(text.as_bytes(), "id", None), Line::Record(..));
            assert_eq!(read, record, "{n} levels");
            let mut de = serde_json::Deserializer::from_str(&text);
            assert_eq!(Skip.deserialize(&mut de).is_ok(), record);
        }
        // what IgnoredAny and Skip both refuse in a member's value
        for bad in [
            r#"{"id": 1, "v": NaN}"#,
            r#"{"id": 1, "v": 01}"#,
            r#"{"id": 1, "v": 1.}"#,
            r#"{"id": 1, "v": -}"#,
            r#"{"id": 1, "v": "\x"}"#,
            "{\"id\": 1, \"v\": \"a\tb\"}",
            r#"{"id": 1, "v": [1,]}"#,
            r#"{"id": 1, "v": {"a" 1}}"#,
            r#"{"id": 1, "v": tru}"#,
        ] {
            assert!(
                matches!(read_line(bad.as_bytes(), "id", None), Line::Fallback),
                "{bad}"
            );
        }
        // a lone surrogate in a member: a record (the Python path reads it too)
        let lone = br#"{"id": "a", "v": "\ud800", "w": [1e999, 123456789012345678901234567890]}"#;
        assert!(matches!(read_line(lone, "id", None), Line::Record(Some(id), true) if id == "a"));
        // ... but not in the id, which is read, not skipped
        let in_id = br#"{"id": "\ud800", "v": 1}"#;
        assert!(matches!(read_line(in_id, "id", None), Line::Fallback));
    }

    #[test]
    fn unreadable_texts_are_those_serde_json_refuses() {
        let deep = format!("[{}]", "[".repeat(200) + &"]".repeat(200));
        let texts: Vec<Option<&[u8]>> = vec![
            Some(br#"{"a": [1, {"b": null}], "a": 2}"#),
            None,
            Some(b"[1, 2]"),
            Some(br#"{"a": 1e999}"#),
            Some(b"{\"a\": NaN}"),
            Some(b"\xef\xbb\xbf{}"),
            Some(br#"{"big": 123456789012345678901234567890}"#),
            Some(b"not json"),
            Some(b"{} {}"),
            Some(deep.as_bytes()),
            Some(br#""\ud800""#),
        ];
        assert_eq!(unreadable(&texts, None), vec![4, 5, 7, 8, 9, 10]);
    }

    #[test]
    fn with_a_content_member_objects_without_it_are_unreadable() {
        let texts: Vec<Option<&[u8]>> = vec![
            Some(br#"{"doc": {"a": 1}, "model": "m"}"#),
            Some(br#"{"model": "m", "doc": "text"}"#),
            Some(br#"{"model": "m"}"#),
            Some(br#"{"nested": {"doc": 1}}"#),
            Some(b"[1, 2]"),
            Some(b"12"),
            Some(b"not json"),
            None,
        ];
        assert_eq!(unreadable(&texts, Some("doc")), vec![2, 3, 6]);
        assert_eq!(unreadable(&texts, None), vec![6]);
    }

    #[test]
    fn array_elements_are_delimited_not_read() {
        let data = "\u{feff} [ {\"id\": \"a\", \"s\": \"]}\\\"[\"},\n  [1, [2]] ,\"x,]\", 12.5e3,tru , {\"id\": 2} ]\n";
        let bytes = data.as_bytes();
        let spans = array_elements(bytes).unwrap();
        let texts: Vec<&str> = spans.iter().map(|&(s, e)| &data[s..e]).collect();
        assert_eq!(
            texts,
            [
                "{\"id\": \"a\", \"s\": \"]}\\\"[\"}",
                "[1, [2]]",
                "\"x,]\"",
                "12.5e3",
                "tru",
                "{\"id\": 2}"
            ]
        );
        assert_eq!(array_elements(b"[]"), Some(vec![]));
        assert_eq!(array_elements(b" [ ] \r\n"), Some(vec![]));
        for broken in [
            &b"[{\"a\": 1}"[..],        // cut short
            b"[{\"a\": 1} {\"b\": 2}]", // a missing comma
            b"[{\"a\": 1},]",           // an extra comma
            b"[1,,2]",
            b"[1] x",      // text after the array
            b"[\"open]",   // a string never closed
            b"{\"a\": 1}", // not an array
            b"",
        ] {
            assert_eq!(
                array_elements(broken),
                None,
                "{:?}",
                String::from_utf8_lossy(broken)
            );
        }
    }

    #[test]
    fn an_array_is_scanned_as_lines_are() {
        let data = br#"[{"id": "a", "x": 1}, {"x": 2}, [1], {"id": 1.5}, {"id": 7, "a": 1, "a": 2}, {"id": "b"}]"#;
        let s = whole(data, false).unwrap();
        assert_eq!(s.line, [0, 1, 4, 5]); // a repeated key is the flattening's to report
        assert_eq!(
            s.doc_id,
            [Some("a".into()), None, Some("7".into()), Some("b".into())]
        );
        assert_eq!(s.has_id, [true, false, true, true]);
        assert_eq!(s.fallback, [2, 3]);
        let (o, n) = s.fallback_span[0];
        assert_eq!(&data[o as usize..(o + n) as usize], b"[1]");
        let (o, n) = (s.offset[3] as usize, s.length[3] as usize);
        assert_eq!(&data[o..o + n], br#"{"id": "b"}"#);
        assert!(whole(b"[{\"id\": 1}", false).is_none());
    }

    #[test]
    fn objects_are_numbered_by_the_line_they_start_on() {
        let data = b"\xef\xbb\xbf{\n  \"id\": \"a\",\n  \"s\": \"}{\"\n}\n{\"id\": 2, \"x\": [1,\n 2]}{\"id\": 3}\n\n{\n\"id\": [1]\n}\n";
        let s = whole(data, true).unwrap();
        assert_eq!(s.line, [0, 4, 5]);
        assert_eq!(
            s.doc_id,
            [Some("a".into()), Some("2".into()), Some("3".into())]
        );
        assert_eq!(s.fallback, [7]); // an id that is an array: the Python path's
        let (o, n) = (s.offset[0] as usize, s.length[0] as usize);
        assert_eq!(&data[o..o + n], b"{\n  \"id\": \"a\",\n  \"s\": \"}{\"\n}");
        for broken in [
            &b"{\"a\": 1}\n{\"b\": 2"[..], // never closed
            b"{\"a\": 1}\n]",              // a value that is no object
            b"{\"a\": \"1}\n",             // a string never closed
        ] {
            assert!(whole(broken, true).is_none());
        }
        assert_eq!(object_elements(b" \n"), Some(vec![]));
    }

    fn whole(data: &[u8], objects: bool) -> Option<Scanned> {
        scan_values(data, Expect::Start, true, objects, "id", None).map(|(s, ..)| s)
    }

    #[test]
    fn a_file_split_a_piece_at_a_time_is_split_as_a_whole() {
        let cases: [(&[u8], bool); 10] = [
            (b"\xef\xbb\xbf [ {\"id\": \"a]\\\"\", \"v\": [1, {\"w\": \"}\"}]},\n 12.5e3 ,\"x,]\",tru, [] ]\n", false),
            (b"[]", false),
            (b"[1, 2", false),
            (b"[1,]", false),
            (b"[1] x", false),
            (b"\xef\xbb\xbf{\n \"id\": 1,\n \"s\": \"}{\"\n}\n{\"id\": 2}{\"id\": [3]}\n", true),
            (b"{\"a\": 1}\n{\"b\": ", true),
            (b"{\"a\": 1}\n]", true),
            (b"", true),
            (b"    \xef\xbb\xbf     ", true), // a BOM after blanks is no BOM
        ];
        for (data, objects) in cases {
            let expected = split_values(data, Expect::Start, true, objects).map(|(v, ..)| v);
            for size in 1..=data.len().max(1) {
                assert_eq!(
                    split_in_chunks(data, size, objects),
                    expected,
                    "{size} {data:?}"
                );
            }
        }
        assert_eq!(array_elements(b"[1, 2]").map(|v| v.len()), Some(2));
        assert_eq!(object_elements(b"").map(|v| v.len()), Some(0));
    }
}
