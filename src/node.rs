//! A parsed JSON document as the flattener needs it: object members in document order (a
//! repeated key keeps its first position and its last value, as a Python dict does), integers as
//! their exact decimal text, strings borrowed from the input where they hold no escapes.
//!
//! JSON text is parsed by serde_json (`arbitrary_precision`: numbers arrive as their text); the
//! Python entry point builds the same tree from Python objects, and may also produce the
//! variants that JSON text cannot (a lone surrogate, a value with no JSON meaning, NaN).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// canonical decimal text of an integer of any size (`-0` is written `0`)
    Int(Cow<'a, str>),
    Float(f64),
    Str(Cow<'a, str>),
    /// a string that cannot be stored as UTF-8 (a Python str holding a lone surrogate)
    Unencodable,
    /// a Python value with no JSON meaning: the name of its type
    Bad(String),
    Array(Vec<Node<'a>>),
    Object(Vec<(Key<'a>, Node<'a>)>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Key<'a> {
    Str(Cow<'a, str>),
    Unencodable,
    /// a Python key that is not a str: its repr and its type name
    NotStr {
        repr: String,
        type_name: String,
    },
}

impl<'a> Key<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Key::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a document's text could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    TooDeep,
    Invalid(String),
}

/// Parses one JSON document (any root value).
pub fn parse(text: &[u8]) -> Result<Node<'_>, ParseError> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let node = NodeSeed.deserialize(&mut de).map_err(classify)?;
    de.end().map_err(classify)?;
    Ok(node)
}

fn classify(err: serde_json::Error) -> ParseError {
    let text = err.to_string();
    if text.starts_with("recursion limit exceeded") {
        ParseError::TooDeep
    } else {
        ParseError::Invalid(text)
    }
}

// serde_json with `arbitrary_precision` hands a number to a visitor as a one-member map under
// this key (serde_json's own `Value` reads it the same way)
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The node for a number token's text: an integer unless it has a fraction or an exponent
/// (the grammar Python's json and orjson apply).
pub fn number(text: Cow<'_, str>) -> Result<Node<'_>, String> {
    if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        text.parse::<f64>()
            .map(Node::Float)
            .map_err(|_| format!("invalid number {text}"))
    } else if text == "-0" {
        Ok(Node::Int(Cow::Borrowed("0")))
    } else {
        Ok(Node::Int(text))
    }
}

struct NodeSeed;

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

/// A key or string: borrowed from the input when it holds no escape.
struct CowStr<'de>(Cow<'de, str>);

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

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    // without arbitrary_precision numbers would come here; kept for completeness
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Int(Cow::Owned(v.to_string())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Int(Cow::Owned(v.to_string())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node<'de>, E> {
        Ok(Node::Float(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(NodeSeed)? {
            out.push(v);
        }
        Ok(Node::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let Some(CowStr(first)) = map.next_key::<CowStr<'de>>()? else {
            return Ok(Node::Object(Vec::new()));
        };
        if first == NUMBER_TOKEN {
            let CowStr(text) = map.next_value::<CowStr<'de>>()?;
            return number(text).map_err(de::Error::custom);
        }
        let mut members = Members::default();
        members.insert(first, map.next_value_seed(NodeSeed)?);
        while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
            let value = map.next_value_seed(NodeSeed)?;
            members.insert(key, value);
        }
        Ok(Node::Object(members.list))
    }
}

/// Object members with Python dict semantics for a repeated key: first position, last value.
/// Small objects are searched linearly; past [`INDEX_FROM`] members an index is kept.
#[derive(Default)]
struct Members<'de> {
    list: Vec<(Key<'de>, Node<'de>)>,
    index: Option<HashMap<String, usize>>,
}

const INDEX_FROM: usize = 16;

impl<'de> Members<'de> {
    fn insert(&mut self, key: Cow<'de, str>, value: Node<'de>) {
        let found = match &self.index {
            Some(index) => index.get(key.as_ref()).copied(),
            None => self
                .list
                .iter()
                .position(|(k, _)| k.as_str() == Some(key.as_ref())),
        };
        if let Some(i) = found {
            self.list[i].1 = value;
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key.to_string(), self.list.len());
        }
        self.list.push((Key::Str(key), value));
        if self.index.is_none() && self.list.len() > INDEX_FROM {
            let index = self
                .list
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.as_str().unwrap_or_default().to_owned(), i))
                .collect();
            self.index = Some(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj<'a>(members: Vec<(&'a str, Node<'a>)>) -> Node<'a> {
        Node::Object(
            members
                .into_iter()
                .map(|(k, v)| (Key::Str(Cow::Borrowed(k)), v))
                .collect(),
        )
    }

    fn int(s: &str) -> Node<'_> {
        Node::Int(Cow::Borrowed(s))
    }

    #[test]
    fn numbers_keep_their_kind_and_exact_integers() {
        let big = "123456789012345678901234567890";
        let text =
            format!(r#"{{"a": {big}, "b": -0, "c": 1.50, "d": 1E2, "e": -0.0, "f": 1e400}}"#);
        let node = parse(text.as_bytes()).unwrap();
        assert_eq!(
            node,
            obj(vec![
                ("a", int(big)),
                ("b", int("0")),
                ("c", Node::Float(1.5)),
                ("d", Node::Float(100.0)),
                ("e", Node::Float(-0.0)),
                ("f", Node::Float(f64::INFINITY)),
            ])
        );
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        let node = parse(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(node, obj(vec![("a", int("3")), ("b", int("2"))]));
        // past the linear-search size too
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{}\": {i},", i % 25));
        }
        text.push_str("\"k0\": -1}");
        let Node::Object(members) = parse(text.as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(members.len(), 25);
        assert_eq!(members[0].1, int("-1"));
        assert_eq!(members[3].1, int("28"));
    }

    #[test]
    fn strings_are_borrowed_without_escapes() {
        let node = parse(br#"["plain", "esc\n"]"#).unwrap();
        let Node::Array(v) = node else { panic!() };
        assert!(matches!(&v[0], Node::Str(Cow::Borrowed("plain"))));
        assert!(matches!(&v[1], Node::Str(Cow::Owned(s)) if s == "esc\n"));
    }

    #[test]
    fn depth_limit() {
        let ok = "[".repeat(crate::MAX_DEPTH) + &"]".repeat(crate::MAX_DEPTH);
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = "[".repeat(crate::MAX_DEPTH + 1) + &"]".repeat(crate::MAX_DEPTH + 1);
        assert_eq!(parse(deep.as_bytes()), Err(ParseError::TooDeep));
    }

    #[test]
    fn invalid_text() {
        for bad in [
            &b"{"[..],
            b"NaN",
            b"[1,]",
            b"{\"a\" 1}",
            b"\"\\ud800\"",
            b"\xff",
            b"{} x",
        ] {
            assert!(matches!(parse(bad), Err(ParseError::Invalid(_))), "{bad:?}");
        }
    }
}
