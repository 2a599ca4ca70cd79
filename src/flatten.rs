//! Documents -> the leaves, items and members tables of `jsoneval_polars/flatten.py`, row for
//! row as its reference walker (tests/flatten_reference.py) writes them.
//!
//! Each document is walked on its own (in parallel, rayon) into a [`DocOut`] whose item ids count
//! from 0; [`assemble`] then numbers items from `item_base` in document order and builds the
//! Arrow columns. A document that fails keeps the item ids it drew before the failure used, as
//! the reference does; a document refused before its walk (invalid text, too deep) draws none.

use std::sync::Arc;

use arrow_array::builder::StringViewBuilder;
use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use rayon::prelude::*;

use crate::canonical::{
    canonical_float, canonical_string, container_text, push_segment, ContainerError,
};
use crate::node::{parse, Key, Node, ParseError};
use crate::TOO_DEEP;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }
}

/// A piece of [`DocOut::text`]: start and length in bytes.
type Span = (u32, u32);

#[derive(Debug, Clone)]
struct Leaf {
    item: i64,
    suffix: Span,
    attribute: Span,
    key: Span,
    member: Option<Span>,
    kind: Kind,
    text: Option<Span>,
}

#[derive(Debug, Clone)]
struct Item {
    item: i64,
    parent: i64,
    depth: i32,
    list_attribute: Span,
    list_suffix: Span,
    index: i32,
}

#[derive(Debug, Clone)]
struct Member {
    item: i64,
    member: Span,
    kind: Kind,
    text: Span,
}

/// One document's rows; item ids local to the document (-1: no item).
#[derive(Debug, Default)]
pub struct DocOut {
    text: String,
    leaves: Vec<Leaf>,
    items: Vec<Item>,
    members: Vec<Member>,
    /// item ids drawn, also by a document that failed
    drawn: i64,
    error: Option<String>,
}

impl DocOut {
    /// Why the document was left out, if it was.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn failed(message: String) -> Self {
        DocOut {
            error: Some(message),
            ..Default::default()
        }
    }

    fn span(&mut self, s: &str) -> Span {
        let start = self.text.len() as u32;
        self.text.push_str(s);
        (start, s.len() as u32)
    }

    fn get(&self, span: Span) -> &str {
        &self.text[span.0 as usize..(span.0 + span.1) as usize]
    }
}

fn surrogate(path: &str) -> String {
    format!("string at '{path}' holds a lone surrogate and cannot be stored as UTF-8")
}

/// Canonical JSON of a container at `path`, with the reference's messages. `check`: a lone
/// surrogate fails here (an array leaf); a member container needs no check, the walk below it
/// finds the surrogate and names its own path.
fn container(node: &Node, path: &str, check: bool) -> Result<String, String> {
    match container_text(node) {
        Ok(text) => Ok(text),
        Err(ContainerError::NotSerializable(why)) => Err(format!(
            "array at '{path}' holds a value with no JSON meaning: {why}"
        )),
        Err(ContainerError::Unencodable) if check => Err(surrogate(path)),
        Err(ContainerError::Unencodable) => Ok(String::new()),
    }
}

struct Walker {
    out: DocOut,
}

impl Walker {
    #[allow(clippy::too_many_arguments)]
    fn leaf(
        &mut self,
        item: i64,
        suffix: &str,
        attr: &str,
        key: &str,
        member: bool,
        kind: Kind,
        text: Option<&str>,
    ) {
        let suffix = self.out.span(suffix);
        let attribute = self.out.span(attr);
        let key = self.out.span(key);
        let member = member.then_some(key);
        let text = text.map(|t| self.out.span(t));
        self.out.leaves.push(Leaf {
            item,
            suffix,
            attribute,
            key,
            member,
            kind,
            text,
        });
    }

    fn member(&mut self, item: i64, key: &str, kind: Kind, text: &str) {
        let member = self.out.span(key);
        let text = self.out.span(text);
        self.out.members.push(Member {
            item,
            member,
            kind,
            text,
        });
    }

    /// flatten_python's walk_dict: `root` for the document's top object, `item_root` for the
    /// top object of a list item (its members get the `member` column).
    #[allow(clippy::too_many_arguments)]
    fn walk_dict(
        &mut self,
        members: &[(Key, Node)],
        suffix: &mut String,
        attr: &mut String,
        item: i64,
        depth: i32,
        root: bool,
        item_root: bool,
    ) -> Result<(), String> {
        for (key, value) in members {
            let k: &str = match key {
                Key::Str(k) => k,
                Key::Unencodable => return Err(surrogate("an object key")),
                Key::NotStr { repr, .. } => {
                    return Err(format!("object key {repr} at '{suffix}' is not a string"))
                }
            };
            let (suffix_len, attr_len) = (suffix.len(), attr.len());
            push_segment(suffix, k, root);
            let attr_at_start = attr.is_empty();
            push_segment(attr, k, attr_at_start);
            match value {
                Node::Str(s) => {
                    let text = canonical_string(s);
                    self.leaf(item, suffix, attr, k, item_root, Kind::String, Some(&text));
                }
                Node::Object(inner) if !inner.is_empty() => {
                    if item_root {
                        let text = container(value, suffix, false)?;
                        self.member(item, k, Kind::Object, &text);
                    }
                    self.walk_dict(inner, suffix, attr, item, depth, false, false)?;
                }
                Node::Object(_) => {
                    self.leaf(item, suffix, attr, k, item_root, Kind::Object, Some("{}"))
                }
                Node::Array(values) => {
                    self.walk_list(value, values, suffix, attr, k, item_root, item, depth)?
                }
                Node::Null => self.leaf(item, suffix, attr, k, item_root, Kind::Null, None),
                Node::Bool(b) => {
                    let text = if *b { "true" } else { "false" };
                    self.leaf(item, suffix, attr, k, item_root, Kind::Bool, Some(text))
                }
                Node::Int(s) => self.leaf(item, suffix, attr, k, item_root, Kind::Int, Some(s)),
                Node::Float(f) => {
                    let text = canonical_float(*f);
                    self.leaf(
                        item,
                        suffix,
                        attr,
                        k,
                        item_root,
                        Kind::Float,
                        text.as_deref(),
                    )
                }
                Node::Unencodable => return Err(surrogate(suffix)),
                Node::Bad(type_name) => {
                    return Err(format!(
                        "value of type {type_name} at '{suffix}' has no JSON meaning"
                    ))
                }
            }
            suffix.truncate(suffix_len);
            attr.truncate(attr_len);
        }
        Ok(())
    }

    /// flatten_python's walk_list: a non-empty list of objects is a list of records (one item
    /// each); any other list is one array leaf.
    #[allow(clippy::too_many_arguments)]
    fn walk_list(
        &mut self,
        node: &Node,
        values: &[Node],
        suffix: &mut String,
        attr: &mut String,
        k: &str,
        item_root: bool,
        item: i64,
        depth: i32,
    ) -> Result<(), String> {
        if values.is_empty() {
            self.leaf(item, suffix, attr, k, item_root, Kind::Array, Some("[]"));
            return Ok(());
        }
        if !values.iter().all(|v| matches!(v, Node::Object(_))) {
            let text = container(node, suffix, true)?;
            self.leaf(item, suffix, attr, k, item_root, Kind::Array, Some(&text));
            return Ok(());
        }
        if item_root {
            let text = container(node, suffix, false)?;
            self.member(item, k, Kind::Array, &text);
        }
        let list_attribute = self.out.span(attr);
        let list_suffix = self.out.span(suffix);
        let attr_len = attr.len();
        attr.push_str("[]");
        for (index, value) in values.iter().enumerate() {
            let Node::Object(members) = value else {
                unreachable!()
            };
            let id = self.out.drawn;
            self.out.drawn += 1;
            self.out.items.push(Item {
                item: id,
                parent: item,
                depth: depth + 1,
                list_attribute,
                list_suffix,
                index: index as i32,
            });
            if members.is_empty() {
                self.leaf(id, "", attr, k, false, Kind::Object, Some("{}"));
            } else {
                self.walk_dict(
                    members,
                    &mut String::new(),
                    attr,
                    id,
                    depth + 1,
                    false,
                    true,
                )?;
            }
        }
        attr.truncate(attr_len);
        Ok(())
    }
}

/// Walks one parsed document; its root must be an object.
pub fn walk_document(root: &Node) -> DocOut {
    let Node::Object(members) = root else {
        return DocOut::failed("the document is not a JSON object".into());
    };
    let mut walker = Walker {
        out: DocOut::default(),
    };
    let result = walker.walk_dict(
        members,
        &mut String::new(),
        &mut String::new(),
        -1,
        0,
        true,
        false,
    );
    let mut out = walker.out;
    if let Err(message) = result {
        let drawn = out.drawn;
        out = DocOut::failed(message);
        out.drawn = drawn;
    }
    out
}

/// Parses and walks one document's JSON text.
pub fn flatten_text(text: &[u8]) -> DocOut {
    match parse(text) {
        Ok(node) => walk_document(&node),
        Err(ParseError::TooDeep) => DocOut::failed(TOO_DEEP.into()),
        Err(ParseError::Invalid(why)) => DocOut::failed(format!("invalid JSON: {why}")),
    }
}

/// The three tables of a batch, its errors and the first unused item id.
pub struct Tables {
    pub leaves: RecordBatch,
    pub items: RecordBatch,
    pub members: RecordBatch,
    pub errors: Vec<(usize, String)>,
    pub next_item: i64,
}

/// Flattens the documents' JSON texts (None: no document at that position), in parallel.
pub fn flatten_json(
    docs: &[Option<&[u8]>],
    item_base: i64,
    empty_containers_are_null: bool,
) -> Tables {
    let outs: Vec<Option<DocOut>> = docs
        .par_iter()
        .with_min_len(16)
        .map(|doc| doc.map(flatten_text))
        .collect();
    assemble(outs, item_base, empty_containers_are_null)
}

/// Parses the texts in parallel without walking them; the number that parse. The parse-only
/// floor of benchmarks/flatten_kernels.py.
pub fn parse_only(docs: &[Option<&[u8]>]) -> usize {
    docs.par_iter()
        .with_min_len(16)
        .filter(|d| d.is_some_and(|t| parse(t).is_ok()))
        .count()
}

/// Flattens parsed documents; `Err` holds the message of one refused before its walk.
pub fn flatten_nodes(
    docs: &[Option<Result<Node, String>>],
    item_base: i64,
    empty_containers_are_null: bool,
) -> Tables {
    let outs: Vec<Option<DocOut>> = docs
        .par_iter()
        .with_min_len(16)
        .map(|doc| {
            doc.as_ref().map(|doc| match doc {
                Ok(node) => walk_document(node),
                Err(message) => DocOut::failed(message.clone()),
            })
        })
        .collect();
    assemble(outs, item_base, empty_containers_are_null)
}

fn strings<'a>(values: impl Iterator<Item = Option<&'a str>>, n: usize) -> ArrayRef {
    let mut builder = StringViewBuilder::with_capacity(n);
    for v in values {
        builder.append_option(v);
    }
    Arc::new(builder.finish())
}

fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

/// Numbers the items from `item_base` in document order and builds the Arrow tables.
pub fn assemble(
    outs: Vec<Option<DocOut>>,
    item_base: i64,
    empty_containers_are_null: bool,
) -> Tables {
    let mut errors = Vec::new();
    let mut next = item_base;
    let mut firsts = Vec::with_capacity(outs.len()); // (position, first item id) of kept documents
    for (pos, out) in outs.iter().enumerate() {
        let Some(out) = out else { continue };
        if let Some(message) = &out.error {
            errors.push((pos, message.clone()));
        } else {
            firsts.push((pos, next));
        }
        next += out.drawn;
    }
    let kept: Vec<(usize, i64, &DocOut)> = firsts
        .iter()
        .map(|&(pos, first)| (pos, first, outs[pos].as_ref().unwrap()))
        .collect();
    let global = |first: i64, local: i64| if local < 0 { -1 } else { first + local };

    let n: usize = kept.iter().map(|(_, _, o)| o.leaves.len()).sum();
    let rows = || {
        kept.iter()
            .flat_map(|&(pos, first, o)| o.leaves.iter().map(move |l| (pos, first, o, l)))
    };
    let doc = UInt32Array::from_iter_values(rows().map(|(pos, ..)| pos as u32));
    let item = Int64Array::from_iter_values(rows().map(|(_, first, _, l)| global(first, l.item)));
    let suffix = strings(rows().map(|(_, _, o, l)| Some(o.get(l.suffix))), n);
    let attribute = strings(rows().map(|(_, _, o, l)| Some(o.get(l.attribute))), n);
    let key = strings(rows().map(|(_, _, o, l)| Some(o.get(l.key))), n);
    let member = strings(rows().map(|(_, _, o, l)| l.member.map(|s| o.get(s))), n);
    let kind = strings(rows().map(|(.., l)| Some(l.kind.as_str())), n);
    let text = strings(rows().map(|(_, _, o, l)| l.text.map(|s| o.get(s))), n);
    let is_null = BooleanArray::from_iter(rows().map(|(_, _, o, l)| {
        Some(match l.text {
            None => true,
            Some(span) => {
                let t = o.get(span);
                (l.kind == Kind::String && t.is_empty())
                    || (empty_containers_are_null
                        && matches!(l.kind, Kind::Array | Kind::Object)
                        && (t == "[]" || t == "{}"))
            }
        })
    }));
    let empty_array = BooleanArray::from_iter(rows().map(|(_, _, o, l)| {
        Some(l.kind == Kind::Array && l.text.is_some_and(|s| o.get(s) == "[]"))
    }));
    let leaves = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            field("doc", DataType::UInt32, false),
            field("item", DataType::Int64, false),
            field("suffix", DataType::Utf8View, false),
            field("attribute", DataType::Utf8View, false),
            field("key", DataType::Utf8View, false),
            field("member", DataType::Utf8View, true),
            field("kind", DataType::Utf8View, false),
            field("text", DataType::Utf8View, true),
            field("is_null", DataType::Boolean, false),
            field("empty_array", DataType::Boolean, false),
        ])),
        vec![
            Arc::new(doc),
            Arc::new(item),
            suffix,
            attribute,
            key,
            member,
            kind,
            text,
            Arc::new(is_null),
            Arc::new(empty_array),
        ],
    )
    .expect("leaves columns match their schema");

    let n: usize = kept.iter().map(|(_, _, o)| o.items.len()).sum();
    let rows = || {
        kept.iter()
            .flat_map(|&(pos, first, o)| o.items.iter().map(move |i| (pos, first, o, i)))
    };
    let items = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            field("item", DataType::Int64, false),
            field("doc", DataType::UInt32, false),
            field("parent", DataType::Int64, false),
            field("depth", DataType::Int32, false),
            field("list_attribute", DataType::Utf8View, false),
            field("list_suffix", DataType::Utf8View, false),
            field("index", DataType::Int32, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(
                rows().map(|(_, f, _, i)| global(f, i.item)),
            )),
            Arc::new(UInt32Array::from_iter_values(
                rows().map(|(pos, ..)| pos as u32),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows().map(|(_, f, _, i)| global(f, i.parent)),
            )),
            Arc::new(Int32Array::from_iter_values(rows().map(|(.., i)| i.depth))),
            strings(rows().map(|(_, _, o, i)| Some(o.get(i.list_attribute))), n),
            strings(rows().map(|(_, _, o, i)| Some(o.get(i.list_suffix))), n),
            Arc::new(Int32Array::from_iter_values(rows().map(|(.., i)| i.index))),
        ],
    )
    .expect("items columns match their schema");

    let n: usize = kept.iter().map(|(_, _, o)| o.members.len()).sum();
    let rows = || {
        kept.iter()
            .flat_map(|&(_, first, o)| o.members.iter().map(move |m| (first, o, m)))
    };
    let members = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            field("item", DataType::Int64, false),
            field("member", DataType::Utf8View, false),
            field("kind", DataType::Utf8View, false),
            field("text", DataType::Utf8View, false),
            field("is_null", DataType::Boolean, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(
                rows().map(|(f, _, m)| global(f, m.item)),
            )),
            strings(rows().map(|(_, o, m)| Some(o.get(m.member))), n),
            strings(rows().map(|(_, _, m)| Some(m.kind.as_str())), n),
            strings(rows().map(|(_, o, m)| Some(o.get(m.text))), n),
            Arc::new(BooleanArray::from(vec![false; n])),
        ],
    )
    .expect("members columns match their schema");

    Tables {
        leaves,
        items,
        members,
        errors,
        next_item: next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::Array;

    fn column(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
        let col = batch.column_by_name(name).unwrap();
        match col.data_type() {
            DataType::Utf8View => col
                .as_string_view()
                .iter()
                .map(|v| v.map(str::to_owned))
                .collect(),
            _ => {
                let formatted =
                    arrow_array::cast::as_primitive_array::<arrow_array::types::Int64Type>;
                (0..col.len())
                    .map(|i| match col.data_type() {
                        DataType::Int64 => Some(formatted(col).value(i).to_string()),
                        DataType::UInt32 => Some(
                            col.as_primitive::<arrow_array::types::UInt32Type>()
                                .value(i)
                                .to_string(),
                        ),
                        DataType::Int32 => Some(
                            col.as_primitive::<arrow_array::types::Int32Type>()
                                .value(i)
                                .to_string(),
                        ),
                        DataType::Boolean => Some(col.as_boolean().value(i).to_string()),
                        _ => unreachable!(),
                    })
                    .collect()
            }
        }
    }

    fn s(v: &[&str]) -> Vec<Option<String>> {
        v.iter()
            .map(|x| if *x == "~" { None } else { Some(x.to_string()) })
            .collect()
    }

    #[test]
    fn leaves_items_and_members() {
        let docs: Vec<Option<&[u8]>> = vec![
            Some(br#"{"Name": " Ada  LOVELACE ", "n": 1.0, "x": null, "items": [{"sku": "A", "m": {"k": 2}}, {}], "e": []}"#),
            None,
            Some(br#"{"a.b": [1, "X"], "o": {}}"#),
        ];
        let t = flatten_json(&docs, 10, true);
        let l = &t.leaves;
        assert_eq!(
            column(l, "doc"),
            s(&["0", "0", "0", "0", "0", "0", "0", "2", "2"])
        );
        assert_eq!(
            column(l, "item"),
            s(&["-1", "-1", "-1", "10", "10", "11", "-1", "-1", "-1"])
        );
        assert_eq!(
            column(l, "suffix"),
            s(&["Name", "n", "x", ".sku", ".m.k", "", "e", "[\"a.b\"]", "o"])
        );
        assert_eq!(
            column(l, "attribute"),
            s(&[
                "Name",
                "n",
                "x",
                "items[].sku",
                "items[].m.k",
                "items[]",
                "e",
                "[\"a.b\"]",
                "o"
            ])
        );
        assert_eq!(
            column(l, "key"),
            s(&["Name", "n", "x", "sku", "k", "items", "e", "a.b", "o"])
        );
        assert_eq!(
            column(l, "member"),
            s(&["~", "~", "~", "sku", "~", "~", "~", "~", "~"])
        );
        assert_eq!(
            column(l, "kind"),
            s(
                &[
                    "string", "float", "null", "string", "int", "object", "array", "array",
                    "object"
                ]
            )
        );
        assert_eq!(
            column(l, "text"),
            s(&[
                "ada lovelace",
                "1",
                "~",
                "a",
                "2",
                "{}",
                "[]",
                "[1,\"x\"]",
                "{}"
            ])
        );
        assert_eq!(
            column(l, "is_null"),
            s(&["false", "false", "true", "false", "false", "true", "true", "false", "true"])
        );
        assert_eq!(
            column(l, "empty_array"),
            s(&["false", "false", "false", "false", "false", "false", "true", "false", "false"])
        );
        assert_eq!(column(&t.items, "item"), s(&["10", "11"]));
        assert_eq!(column(&t.items, "parent"), s(&["-1", "-1"]));
        assert_eq!(column(&t.items, "depth"), s(&["1", "1"]));
        assert_eq!(column(&t.items, "list_attribute"), s(&["items", "items"]));
        assert_eq!(column(&t.items, "index"), s(&["0", "1"]));
        assert_eq!(column(&t.members, "item"), s(&["10"]));
        assert_eq!(column(&t.members, "member"), s(&["m"]));
        assert_eq!(column(&t.members, "text"), s(&["{\"k\":2}"]));
        assert_eq!(t.next_item, 12);
        assert!(t.errors.is_empty());
    }

    #[test]
    fn failed_documents_keep_their_drawn_ids() {
        let bad = Node::Object(vec![
            (
                Key::Str("l".into()),
                Node::Array(vec![Node::Object(vec![]), Node::Object(vec![])]),
            ),
            (Key::Str("v".into()), Node::Bad("set".into())),
        ]);
        let good = parse(br#"{"l": [{"a": 1}]}"#).unwrap();
        let docs = vec![
            Some(Ok(bad)),
            Some(Err(TOO_DEEP.to_string())),
            Some(Ok(good)),
        ];
        let t = flatten_nodes(&docs, 0, false);
        assert_eq!(
            t.errors,
            vec![
                (
                    0,
                    "value of type set at 'v' has no JSON meaning".to_string()
                ),
                (1, TOO_DEEP.to_string())
            ]
        );
        assert_eq!(column(&t.items, "item"), s(&["2"]));
        assert_eq!(t.next_item, 3);
    }

    #[test]
    fn bad_text_is_one_error_row() {
        let docs: Vec<Option<&[u8]>> = vec![
            Some(b"[1]"),
            Some(b"{\"a\":"),
            Some(b"{\"a\": NaN}"),
            Some(b"{}"),
        ];
        let t = flatten_json(&docs, 0, false);
        let positions: Vec<usize> = t.errors.iter().map(|e| e.0).collect();
        assert_eq!(positions, vec![0, 1, 2]);
        assert_eq!(t.errors[0].1, "the document is not a JSON object");
        assert!(
            t.errors[1].1.starts_with("invalid JSON: EOF while parsing"),
            "{}",
            t.errors[1].1
        );
        assert_eq!(t.leaves.num_rows(), 0);
    }
}
