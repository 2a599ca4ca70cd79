//! Documents -> the leaves, items and members tables of `jsoneval_polars/flatten.py`, row for
//! row as its reference walker (`flatten_python`) writes them.
//!
//! The string columns are built as Arrow string views (16 bytes a row: the length and either
//! the bytes, up to 12, or a prefix and a place in a data buffer), the layout Polars keeps, so
//! they reach it without a copy. Paths, attributes and keys repeat in every document: each
//! distinct long one is stored once per chunk and its view reused. Canonical texts longer than
//! 12 bytes go to a text arena.
//!
//! Documents are walked in chunks in parallel (rayon); each chunk numbers its items from 0, and
//! [`merge`] renumbers them from `item_base` in document order and re-bases the views' buffers.
//! A document the kernel cannot vouch for (see [`Fallback`]) stops the call: the caller runs the
//! Python path, which has the exact messages, for the whole batch.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::canonical::{
    canonical_float, canonical_string, container_text, float_repr, push_canonical_ascii,
    push_segment,
};
use crate::fenced;
use crate::node::{elements, is_empty, members, parse, ParseError, Tape, Token};

/// Kinds, in the order of flatten.py's kind names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

pub const KIND_NAMES: [&str; 7] = ["null", "bool", "int", "float", "string", "array", "object"];

/// Why a batch goes back to the Python path: the position of the first document concerned.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    pub position: usize,
    pub reason: ParseError,
}

/// Documents per parallel task at least: enough to amortize a chunk's own path table.
const CHUNK_DOCS: usize = 512;

/// Documents per task: one task per thread (merging chunks copies every column once, so a
/// single thread gets a single chunk and no merge).
fn chunk_docs(n: usize, threads: usize) -> usize {
    n.div_ceil(threads.max(1)).max(CHUNK_DOCS)
}

/// `work` on each chunk of `items`: on rayon's pool when `threads` > 1, else in this thread.
/// The engine calls with 1: in a process whose Polars has its own pool on the same cores, a
/// second pool's threads cost the back end more than they save here (docs/DECISIONS.md 67).
fn chunked<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(usize, usize, &[T]) -> R + Sync,
) -> Vec<R> {
    let size = chunk_docs(items.len(), threads);
    if threads <= 1 || items.len() <= size {
        return vec![work(0, size, items)];
    }
    items
        .par_chunks(size)
        .enumerate()
        .map(|(c, chunk)| work(c, size, chunk))
        .collect()
}

/// The view of `bytes` (at most 12) held in the view itself.
#[inline]
pub fn inline_view(bytes: &[u8]) -> u128 {
    debug_assert!(bytes.len() <= 12);
    // the bytes read as two overlapping words, not copied into an array and read back whole:
    // a copy of a few bytes then a 16-byte load stalls the load (no store forwarding), and a
    // leaf's short text, number or key takes this path (≈ 10% of the walk's time)
    let n = bytes.len();
    let byte = |at: usize| u128::from(bytes[at]) << (8 * at);
    let word = |at: usize| u128::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
    let text = match n {
        0 => 0,
        1..=3 => byte(0) | byte(n / 2) | byte(n - 1),
        4..=7 => word(0) | word(n - 4) << (8 * (n - 4)),
        _ => {
            let first = u64::from_le_bytes(bytes[..8].try_into().unwrap());
            u128::from(first) | word(n - 4) << (8 * (n - 4))
        }
    };
    n as u128 | text << 32
}

#[inline]
fn long_view(bytes: &[u8], buffer: u32, offset: u32) -> u128 {
    let mut raw = [0u8; 16];
    raw[..4].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
    raw[4..8].copy_from_slice(&bytes[..4]);
    raw[8..12].copy_from_slice(&buffer.to_le_bytes());
    raw[12..].copy_from_slice(&offset.to_le_bytes());
    u128::from_le_bytes(raw)
}

/// The view with its buffer index moved by `shift` (inline views have none).
#[inline]
fn rebased(view: u128, shift: u32) -> u128 {
    if shift == 0 || (view as u32) <= 12 {
        view
    } else {
        view + ((shift as u128) << 64)
    }
}

/// Data buffers of long strings, each below `segment` bytes (a view's offset is 32-bit).
#[derive(Debug, Default)]
pub struct Arena {
    pub buffers: Vec<Vec<u8>>,
    segment: usize,
}

impl Arena {
    fn new(segment: usize) -> Self {
        Arena {
            buffers: Vec::new(),
            segment,
        }
    }

    #[inline]
    fn view(&mut self, bytes: &[u8]) -> u128 {
        if bytes.len() <= 12 {
            return inline_view(bytes);
        }
        self.view_written(bytes.len(), |buffer| buffer.extend_from_slice(bytes))
    }

    /// The view of the bytes `write` appends (at most `most` of them), written in place.
    #[inline]
    fn view_written(&mut self, most: usize, write: impl FnOnce(&mut Vec<u8>)) -> u128 {
        let full = self
            .buffers
            .last()
            .is_none_or(|b| !b.is_empty() && b.len() + most > self.segment);
        if full {
            self.buffers.push(Vec::with_capacity(most.max(1 << 16)));
        }
        let index = self.buffers.len() - 1;
        let buffer = &mut self.buffers[index];
        let offset = buffer.len();
        write(buffer);
        debug_assert!(buffer.len() - offset <= most);
        if buffer.len() - offset <= 12 {
            let view = inline_view(&buffer[offset..]);
            buffer.truncate(offset);
            return view;
        }
        long_view(&buffer[offset..], index as u32, offset as u32)
    }
}

/// Row counts of [`Columns`] before a document.
#[derive(Debug, Clone, Copy)]
struct Mark {
    leaves: usize,
    items: usize,
    members: usize,
    meta: usize,
    drawn: i64,
}

/// The three tables' columns; string columns as views into `paths` or `texts`.
#[derive(Debug)]
pub struct Columns {
    // leaves
    pub doc: Vec<u32>,
    pub item: Vec<i64>,
    pub suffix: Vec<u128>,
    pub attribute: Vec<u128>,
    pub key: Vec<u128>,
    pub member: Vec<u128>,
    pub member_valid: Vec<bool>,
    pub kind: Vec<u8>,
    pub text: Vec<u128>,
    pub text_valid: Vec<bool>,
    // items
    pub item_item: Vec<i64>,
    pub item_doc: Vec<u32>,
    pub item_parent: Vec<i64>,
    pub item_depth: Vec<i32>,
    pub list_attribute: Vec<u128>,
    pub list_suffix: Vec<u128>,
    pub item_index: Vec<i32>,
    // members (item members holding a non-empty object or list of records)
    pub member_item: Vec<i64>,
    pub member_key: Vec<u128>,
    pub member_kind: Vec<u8>,
    pub member_text: Vec<u128>,
    // metadata: the root members named as metadata, as Python's str() of their value (a null
    // value has no row): document, name (its index among the names), text
    pub meta_doc: Vec<u32>,
    pub meta_name: Vec<u32>,
    pub meta_text: Vec<u128>,
    /// documents the walk declined and left out, by position (lenient calls only)
    pub declined: Vec<u32>,
    /// documents read from a fenced block of the answer text (SPEC §8 `code_block`), by
    /// position; the others of a text content are the whole text (`json`)
    pub code_blocks: Vec<u32>,
    pub paths: Arena,
    pub texts: Arena,
    /// item ids drawn
    pub drawn: i64,
    paths_seen: PathTrie,
    path_views: FxHashMap<Box<[u8]>, u128>,
}

/// A path of the walk: its suffix, attribute and key, and their views (made once per chunk).
#[derive(Debug)]
struct PathNode {
    suffix: Box<str>,
    attr: Box<str>,
    key: Box<str>,
    /// the document's root: its members' segments have no leading dot
    root: bool,
    suffix_view: u128,
    attr_view: u128,
    key_view: u128,
}

/// Path nodes by (parent node, hash of the key): a member's paths cost one lookup, not three
/// strings built and hashed. Node 0 is the document root.
#[derive(Debug)]
struct PathTrie {
    nodes: Vec<PathNode>,
    children: FxHashMap<(u32, u64), u32>,
    /// `by_position[parent][i]`: the node the `i`th member of an object at `parent` had last
    /// time. Documents of one kind list their members in the same order, so this is the
    /// member's node again most times, found with one string comparison and no hashing.
    by_position: Vec<Vec<u32>>,
}

/// The key of the item root of a list's items in [`PathTrie::children`].
const ITEM_ROOT: u64 = u64::MAX;

fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key)
}

impl Columns {
    fn new(segment: usize) -> Self {
        Columns {
            doc: Vec::new(),
            item: Vec::new(),
            suffix: Vec::new(),
            attribute: Vec::new(),
            key: Vec::new(),
            member: Vec::new(),
            member_valid: Vec::new(),
            kind: Vec::new(),
            text: Vec::new(),
            text_valid: Vec::new(),
            item_item: Vec::new(),
            item_doc: Vec::new(),
            item_parent: Vec::new(),
            item_depth: Vec::new(),
            list_attribute: Vec::new(),
            list_suffix: Vec::new(),
            item_index: Vec::new(),
            member_item: Vec::new(),
            member_key: Vec::new(),
            member_kind: Vec::new(),
            member_text: Vec::new(),
            meta_doc: Vec::new(),
            meta_name: Vec::new(),
            meta_text: Vec::new(),
            declined: Vec::new(),
            code_blocks: Vec::new(),
            paths: Arena::new(segment),
            texts: Arena::new(segment),
            drawn: 0,
            paths_seen: PathTrie {
                nodes: vec![PathNode {
                    suffix: "".into(),
                    attr: "".into(),
                    key: "".into(),
                    root: true,
                    suffix_view: inline_view(b""),
                    attr_view: inline_view(b""),
                    key_view: inline_view(b""),
                }],
                children: FxHashMap::default(),
                by_position: Vec::new(),
            },
            path_views: FxHashMap::default(),
        }
    }

    /// Room for about `rows` leaves, so that the columns do not grow by copying.
    fn reserve(&mut self, rows: usize) {
        for v in [
            &mut self.suffix,
            &mut self.attribute,
            &mut self.key,
            &mut self.member,
        ] {
            v.reserve(rows);
        }
        self.text.reserve(rows);
        self.doc.reserve(rows);
        self.item.reserve(rows);
        self.member_valid.reserve(rows);
        self.kind.reserve(rows);
        self.text_valid.reserve(rows);
    }

    pub fn rows(&self) -> usize {
        self.doc.len()
    }

    /// The rows so far, to [`Columns::rollback`] to.
    fn mark(&self) -> Mark {
        Mark {
            leaves: self.doc.len(),
            items: self.item_item.len(),
            members: self.member_item.len(),
            meta: self.meta_doc.len(),
            drawn: self.drawn,
        }
    }

    /// Drops the rows of a document the walk gave up on part way (bytes it wrote to the
    /// buffers stay, unreferenced; paths it named stay named).
    fn rollback(&mut self, m: Mark) {
        for v in [
            &mut self.suffix,
            &mut self.attribute,
            &mut self.key,
            &mut self.member,
        ] {
            v.truncate(m.leaves);
        }
        self.doc.truncate(m.leaves);
        self.item.truncate(m.leaves);
        self.member_valid.truncate(m.leaves);
        self.kind.truncate(m.leaves);
        self.text.truncate(m.leaves);
        self.text_valid.truncate(m.leaves);
        self.item_item.truncate(m.items);
        self.item_doc.truncate(m.items);
        self.item_parent.truncate(m.items);
        self.item_depth.truncate(m.items);
        self.list_attribute.truncate(m.items);
        self.list_suffix.truncate(m.items);
        self.item_index.truncate(m.items);
        self.member_item.truncate(m.members);
        self.member_key.truncate(m.members);
        self.member_kind.truncate(m.members);
        self.member_text.truncate(m.members);
        self.meta_doc.truncate(m.meta);
        self.meta_name.truncate(m.meta);
        self.meta_text.truncate(m.meta);
        self.drawn = m.drawn;
    }

    /// A path, attribute or key: long ones stored once.
    #[inline]
    fn path(&mut self, s: &str) -> u128 {
        let bytes = s.as_bytes();
        if bytes.len() <= 12 {
            return inline_view(bytes);
        }
        if let Some(view) = self.path_views.get(bytes) {
            return *view;
        }
        let view = self.paths.view(bytes);
        self.path_views.insert(bytes.into(), view);
        view
    }

    fn new_node(&mut self, suffix: String, attr: String, key: &str, root: bool) -> u32 {
        let node = PathNode {
            suffix_view: self.path(&suffix),
            attr_view: self.path(&attr),
            key_view: self.path(key),
            suffix: suffix.into(),
            attr: attr.into(),
            key: key.into(),
            root,
        };
        self.paths_seen.nodes.push(node);
        (self.paths_seen.nodes.len() - 1) as u32
    }

    /// The node of member `key` below `parent` (flatten_python's segments: no dot at the
    /// document's root, an attribute's first segment without one either).
    #[inline]
    fn child(&mut self, parent: u32, key: &str) -> u32 {
        let slot = (parent, key_hash(key));
        if let Some(&id) = self.paths_seen.children.get(&slot) {
            if &*self.paths_seen.nodes[id as usize].key == key {
                return id;
            }
        }
        let p = &self.paths_seen.nodes[parent as usize];
        let mut suffix = String::with_capacity(p.suffix.len() + key.len() + 1);
        suffix.push_str(&p.suffix);
        push_segment(&mut suffix, key, p.root);
        let mut attr = String::with_capacity(p.attr.len() + key.len() + 1);
        attr.push_str(&p.attr);
        push_segment(&mut attr, key, p.attr.is_empty());
        let id = self.new_node(suffix, attr, key, false);
        self.paths_seen.children.entry(slot).or_insert(id);
        id
    }

    /// [`Columns::child`] for the `position`th member of its object (see
    /// [`PathTrie::by_position`]).
    #[inline]
    fn child_at(&mut self, parent: u32, position: usize, key: &str) -> u32 {
        let trie = &mut self.paths_seen;
        if let Some(&id) = trie
            .by_position
            .get(parent as usize)
            .and_then(|p| p.get(position))
        {
            if trie.nodes.get(id as usize).is_some_and(|n| &*n.key == key) {
                return id;
            }
        }
        let id = self.child(parent, key);
        let trie = &mut self.paths_seen;
        if trie.by_position.len() <= parent as usize {
            trie.by_position.resize_with(parent as usize + 1, Vec::new);
        }
        let slots = &mut trie.by_position[parent as usize];
        if slots.len() <= position {
            slots.resize(position + 1, u32::MAX);
        }
        slots[position] = id;
        id
    }

    /// The node an item of the list at `list` starts from: suffix "", attribute `list[]`.
    fn item_root(&mut self, list: u32) -> u32 {
        let slot = (list, ITEM_ROOT);
        if let Some(&id) = self.paths_seen.children.get(&slot) {
            return id;
        }
        let p = &self.paths_seen.nodes[list as usize];
        let (attr, key) = (format!("{}[]", p.attr), p.key.to_string());
        let id = self.new_node(String::new(), attr, &key, false);
        self.paths_seen.children.insert(slot, id);
        id
    }

    #[inline]
    fn leaf(
        &mut self,
        doc: u32,
        item: i64,
        node: u32,
        member: bool,
        kind: Kind,
        text: Option<&str>,
    ) {
        let text = text.map(|t| self.texts.view(t.as_bytes()));
        self.leaf_view(doc, item, node, member, kind, text);
    }

    /// [`Columns::leaf`] with its text already in `texts` (its view).
    #[inline]
    fn leaf_view(
        &mut self,
        doc: u32,
        item: i64,
        node: u32,
        member: bool,
        kind: Kind,
        text: Option<u128>,
    ) {
        let n = &self.paths_seen.nodes[node as usize];
        let (suffix, attribute, key) = (n.suffix_view, n.attr_view, n.key_view);
        self.doc.push(doc);
        self.item.push(item);
        self.suffix.push(suffix);
        self.attribute.push(attribute);
        self.key.push(key);
        self.member.push(if member { key } else { 0 });
        self.member_valid.push(member);
        self.kind.push(kind as u8);
        match text {
            Some(view) => {
                self.text.push(view);
                self.text_valid.push(true);
            }
            None => {
                self.text.push(0);
                self.text_valid.push(false);
            }
        }
    }
}

/// What stops a walk: a text whose lower case is Python's to decide.
struct Undecided;

struct Walker<'c> {
    out: &'c mut Columns,
    doc: u32,
}

impl Walker<'_> {
    /// flatten_python's walk_dict over the members of the object whose token is `object`, at
    /// path `node`: at the document's root `skip` (the id member) is not content, nor are the
    /// `meta` members (metadata, kept apart); `item_root` for the top object of a list item (its
    /// members get the `member` column).
    #[allow(clippy::too_many_arguments)]
    fn walk_dict(
        &mut self,
        tape: &[Token],
        object: usize,
        node: u32,
        item: i64,
        depth: i32,
        skip: Option<&str>,
        meta: &[String],
        item_root: bool,
    ) -> Result<(), Undecided> {
        let doc = self.doc;
        for (position, (k, value)) in members(tape, object).enumerate() {
            if skip == Some(k) {
                continue;
            }
            if let Some(name) = meta.iter().position(|m| m == k) {
                self.metadata(name, &tape[value])?;
                continue;
            }
            let at = self.out.child_at(node, position, k);
            let out = &mut *self.out;
            match &tape[value] {
                Token::Str(s) if s.is_ascii() => {
                    let text = out
                        .texts
                        .view_written(s.len(), |buf| push_canonical_ascii(s.as_bytes(), buf));
                    out.leaf_view(doc, item, at, item_root, Kind::String, Some(text));
                }
                Token::Str(s) => {
                    let text = canonical_string(s).ok_or(Undecided)?;
                    out.leaf(doc, item, at, item_root, Kind::String, Some(&text));
                }
                Token::Object { .. } if !is_empty(tape, value) => {
                    if item_root {
                        self.member(item, k, Kind::Object, tape, value)?;
                    }
                    self.walk_dict(tape, value, at, item, depth, None, &[], false)?;
                }
                Token::Object { .. } => {
                    out.leaf(doc, item, at, item_root, Kind::Object, Some("{}"))
                }
                Token::Array { .. } => {
                    self.walk_list(tape, value, at, k, item_root, item, depth)?
                }
                Token::Null => out.leaf(doc, item, at, item_root, Kind::Null, None),
                Token::Bool(b) => {
                    let text = if *b { "true" } else { "false" };
                    out.leaf(doc, item, at, item_root, Kind::Bool, Some(text))
                }
                Token::Integer(n) => {
                    let mut digits = itoa::Buffer::new();
                    out.leaf(doc, item, at, item_root, Kind::Int, Some(digits.format(*n)))
                }
                Token::Int(s) => out.leaf(doc, item, at, item_root, Kind::Int, Some(s)),
                Token::Float(f) => {
                    let text = canonical_float(*f);
                    out.leaf(doc, item, at, item_root, Kind::Float, text.as_deref())
                }
                Token::Decimal(s) => out.leaf(doc, item, at, item_root, Kind::Float, Some(s)),
                Token::Key(_) => unreachable!("a key where a value is"),
            }
        }
        Ok(())
    }

    /// The member `key` of an item, holding the container at `value`.
    fn member(
        &mut self,
        item: i64,
        key: &str,
        kind: Kind,
        tape: &[Token],
        value: usize,
    ) -> Result<(), Undecided> {
        let text = container_text(tape, value).ok_or(Undecided)?;
        let key = self.out.path(key);
        let text = self.out.texts.view(text.as_bytes());
        self.out.member_item.push(item);
        self.out.member_key.push(key);
        self.out.member_kind.push(kind as u8);
        self.out.member_text.push(text);
        Ok(())
    }

    /// Metadata member number `name` of this document: Python's `str()` of its value (its
    /// first token), as ingest.build_pairs writes it (a null is no value). An object or a list
    /// is content, not a label: the Python path reports it.
    fn metadata(&mut self, name: usize, value: &Token) -> Result<(), Undecided> {
        let mut digits = itoa::Buffer::new();
        let text = match value {
            Token::Integer(n) => std::borrow::Cow::Borrowed(digits.format(*n)),
            Token::Null => return Ok(()),
            Token::Str(s) => std::borrow::Cow::Borrowed(&**s),
            Token::Int(digits) => std::borrow::Cow::Borrowed(&**digits),
            Token::Float(f) => std::borrow::Cow::Owned(float_repr(*f)),
            Token::Decimal(s) => std::borrow::Cow::Borrowed(&**s),
            Token::Bool(b) => std::borrow::Cow::Borrowed(if *b { "True" } else { "False" }),
            Token::Object { .. } | Token::Array { .. } => return Err(Undecided),
            Token::Key(_) => unreachable!("a key where a value is"),
        };
        let view = self.out.texts.view(text.as_bytes());
        self.out.meta_doc.push(self.doc);
        self.out.meta_name.push(name as u32);
        self.out.meta_text.push(view);
        Ok(())
    }

    /// The root member `id` as a metadata row named `name` (none when the record has no such
    /// member): a string as it is, an integer as its decimal text (`-0` is an integer 0); any
    /// other value is the scan's to report, so the document is declined.
    fn id(&mut self, tape: &[Token], id: &str, name: usize) -> Result<(), ParseError> {
        let Some((_, value)) = members(tape, 0).find(|(k, _)| *k == id) else {
            return Ok(());
        };
        match &tape[value] {
            Token::Str(_) | Token::Integer(_) | Token::Int(_) => self
                .metadata(name, &tape[value])
                .map_err(|Undecided| ParseError::Invalid("unreachable".into())),
            _ => Err(ParseError::Invalid(
                "an id neither a string nor an integer".into(),
            )),
        }
    }

    /// flatten_python's walk_list for the list whose token is `list`, at path `at`: a
    /// non-empty list of objects is a list of records (one item each); any other list is one
    /// array leaf.
    #[allow(clippy::too_many_arguments)]
    fn walk_list(
        &mut self,
        tape: &[Token],
        list: usize,
        at: u32,
        k: &str,
        item_root: bool,
        item: i64,
        depth: i32,
    ) -> Result<(), Undecided> {
        let doc = self.doc;
        if is_empty(tape, list) {
            self.out
                .leaf(doc, item, at, item_root, Kind::Array, Some("[]"));
            return Ok(());
        }
        if !elements(tape, list).all(|e| matches!(tape[e], Token::Object { .. })) {
            let text = container_text(tape, list).ok_or(Undecided)?;
            self.out
                .leaf(doc, item, at, item_root, Kind::Array, Some(&text));
            return Ok(());
        }
        if item_root {
            self.member(item, k, Kind::Array, tape, list)?;
        }
        let list_node = &self.out.paths_seen.nodes[at as usize];
        let (list_attribute, list_suffix) = (list_node.attr_view, list_node.suffix_view);
        let inner = self.out.item_root(at);
        for (index, object) in elements(tape, list).enumerate() {
            let id = self.out.drawn;
            self.out.drawn += 1;
            let out = &mut *self.out;
            out.item_item.push(id);
            out.item_doc.push(doc);
            out.item_parent.push(item);
            out.item_depth.push(depth + 1);
            out.list_attribute.push(list_attribute);
            out.list_suffix.push(list_suffix);
            out.item_index.push(index as i32);
            if is_empty(tape, object) {
                out.leaf(doc, id, inner, false, Kind::Object, Some("{}"));
            } else {
                self.walk_dict(tape, object, inner, id, depth + 1, None, &[], true)?;
            }
        }
        Ok(())
    }
}

/// What a record's root holds besides its document (ingest._split_record): the id member, the
/// metadata members, and the content member when one holds the document.
#[derive(Debug, Clone, Copy, Default)]
pub struct Root<'a> {
    /// the id member, not content
    pub id: Option<&'a str>,
    /// metadata members, not content: read into the `meta_*` columns
    pub meta: &'a [String],
    /// the member holding the document (`--gt-field`/`--aio-field`); None: the whole record
    pub content: Option<&'a str>,
    /// the id member's value is kept as a metadata row named one past `meta` (a string, or an
    /// integer's decimal text, as the scan reads ids; another value declines the document):
    /// the files driver's pass over sorted files pairs by it (stream.py)
    pub keep_id: bool,
    /// a content member holding a string is JSON text to read (the AIO's raw model text, when
    /// the whole text is a JSON object; SPEC §8's other cases are the Python path's)
    pub text_content: bool,
}

/// Walks one document (`position` in the batch) into `out`; its root must be an object.
fn walk_document(
    out: &mut Columns,
    position: usize,
    tape: &[Token],
    how: &Root,
) -> Result<(), ParseError> {
    let Some(Token::Object { .. }) = tape.first() else {
        return Err(ParseError::Invalid("the root is not an object".into()));
    };
    let mut walker = Walker {
        out,
        doc: position as u32,
    };
    let undecided = |Undecided| {
        ParseError::Invalid("left to Python: a lower case, or a container as metadata".into())
    };
    let Some(content) = how.content else {
        walker
            .walk_dict(tape, 0, 0, -1, 0, how.id, how.meta, false)
            .map_err(undecided)?;
        return match how.id.filter(|_| how.keep_id) {
            Some(id) => walker.id(tape, id, how.meta.len()),
            None => Ok(()),
        };
    };
    for (k, value) in members(tape, 0) {
        if let Some(name) = how.meta.iter().position(|m| m == k) {
            walker.metadata(name, &tape[value]).map_err(undecided)?;
        }
    }
    // the last member of that name, as Python's dict keeps (a repeated key was declined anyway)
    let document = members(tape, 0).filter(|(k, _)| *k == content).last();
    match document.map(|(_, value)| (value, &tape[value])) {
        Some((value, Token::Object { .. })) => {
            walker.walk_dict(tape, value, 0, -1, 0, None, &[], false)
        }
        Some((_, Token::Str(text))) if how.text_content => {
            let Some((inner, fenced)) = answer_object(text) else {
                return Err(ParseError::Invalid(
                    "raw model text: the Python path".into(),
                ));
            };
            walker
                .walk_dict(&inner, 0, 0, -1, 0, None, &[], false)
                .map(|()| {
                    if fenced {
                        walker.out.code_blocks.push(position as u32);
                    }
                })
        }
        _ => {
            return Err(ParseError::Invalid(
                "no content object: the Python path".into(),
            ))
        }
    }
    .map_err(undecided)
}

/// The JSON object a model's answer text holds (its tape), as SPEC §8 reads it where the
/// kernel can (extract.py has every case): the whole text (`json`), else the body of the first
/// fenced block tagged json or untagged that is an object (`code_block`: true). None for the
/// Python path: a text that may be an object Python reads and the kernel does not (NaN, a
/// BOM), a JSON value other than an object, a block the kernel is unsure of, no such block.
fn answer_object(text: &str) -> Option<(Tape<'_>, bool)> {
    let is_object = |tape: &Tape| matches!(tape.first(), Some(Token::Object { .. }));
    match parse(text.as_bytes()) {
        Ok(tape) if is_object(&tape) => return Some((tape, false)),
        Err(_) if !fenced::may_open_an_object(text) => {}
        _ => return None,
    }
    for body in fenced::json_bodies(text) {
        match parse(body.ok()?.as_bytes()) {
            Ok(tape) if is_object(&tape) => return Some((tape, true)),
            Ok(_) => continue, // JSON, not an object: Python tries the next block
            Err(_) => return None,
        }
    }
    None
}

/// Flattens documents given as JSON texts (None: no document at that position), each record's
/// root read as `how` says, on `threads` threads.
pub fn flatten_json(
    texts: &[Option<&[u8]>],
    how: &Root,
    item_base: i64,
    segment: usize,
    threads: usize,
) -> Result<Columns, Fallback> {
    flatten_texts(texts, how, item_base, segment, threads, false)
}

/// [`flatten_json`] that leaves out each document it declines, listing its position in
/// [`Columns::declined`], instead of giving up on the batch: the caller reads those documents
/// by the Python path alone.
pub fn flatten_json_lenient(
    texts: &[Option<&[u8]>],
    how: &Root,
    item_base: i64,
    segment: usize,
    threads: usize,
) -> Columns {
    flatten_texts(texts, how, item_base, segment, threads, true).expect("lenient")
}

fn flatten_texts(
    texts: &[Option<&[u8]>],
    how: &Root,
    item_base: i64,
    segment: usize,
    threads: usize,
    lenient: bool,
) -> Result<Columns, Fallback> {
    // every text present, chunk by chunk: the first one the walk fails on stops the call, or,
    // `lenient`, is left out and listed
    let chunks = chunked(texts, threads, |c, size, chunk| {
        let mut out = Columns::new(segment);
        // about one leaf per 24 bytes of invoice-like text
        out.reserve(chunk.iter().flatten().map(|t| t.len() / 24).sum());
        for (i, text) in chunk.iter().enumerate() {
            let position = c * size + i;
            let Some(text) = text else { continue };
            let before = out.mark();
            match parse(text).and_then(|tape| walk_document(&mut out, position, &tape, how)) {
                Ok(()) => {}
                Err(_) if lenient => {
                    out.rollback(before);
                    out.declined.push(position as u32);
                }
                Err(reason) => return Err(Fallback { position, reason }),
            }
        }
        Ok(out)
    });
    merge(chunks.into_iter().collect::<Result<_, _>>()?, item_base)
}

/// Flattens `n` documents in this thread, each written by `read` to one reused tape just
/// before its walk (false: no document at that position). For the reader of Python documents,
/// which holds the GIL: the tape is walked while it is in cache, and a batch never holds more
/// than one.
pub fn flatten_read<'a>(
    n: usize,
    item_base: i64,
    segment: usize,
    mut read: impl FnMut(usize, &mut Tape<'a>) -> Result<bool, ParseError>,
) -> Result<Columns, Fallback> {
    let mut out = Columns::new(segment);
    out.reserve(n * ROWS_PER_DOCUMENT);
    let mut tape = Tape::new();
    for position in 0..n {
        tape.clear();
        let fallback = |reason| Fallback { position, reason };
        if read(position, &mut tape).map_err(fallback)? {
            walk_document(&mut out, position, &tape, &Root::default()).map_err(fallback)?;
        }
    }
    merge(vec![out], item_base)
}

/// Leaves a document is given room for when its size is not known beforehand (an invoice has
/// about 40): the columns grow past it by copying.
const ROWS_PER_DOCUMENT: usize = 32;

/// Parses the texts in parallel without walking them; how many parse (the parse-only floor).
pub fn parse_only(texts: &[Option<&[u8]>]) -> usize {
    texts
        .par_iter()
        .with_min_len(64)
        .filter(|t| t.is_some_and(|t| parse(t).is_ok()))
        .count()
}

/// One chunk's columns after another: item ids from `item_base` in chunk order, views moved to
/// the merged buffer lists.
fn merge(mut chunks: Vec<Columns>, item_base: i64) -> Result<Columns, Fallback> {
    if chunks.len() == 1 {
        let mut only = chunks.pop().expect("one chunk");
        renumber(&mut only, item_base);
        return Ok(only);
    }
    let segment = chunks.first().map_or(1 << 31, |c| c.paths.segment);
    let mut out = Columns::new(segment);
    let mut base = item_base;
    for mut c in chunks {
        renumber(&mut c, base);
        base += c.drawn;
        let (p, t) = (
            out.paths.buffers.len() as u32,
            out.texts.buffers.len() as u32,
        );
        out.doc.extend_from_slice(&c.doc);
        out.item.extend_from_slice(&c.item);
        out.suffix.extend(re(&c.suffix, p));
        out.attribute.extend(re(&c.attribute, p));
        out.key.extend(re(&c.key, p));
        out.member.extend(re(&c.member, p));
        out.member_valid.extend_from_slice(&c.member_valid);
        out.kind.extend_from_slice(&c.kind);
        out.text.extend(re(&c.text, t));
        out.text_valid.extend_from_slice(&c.text_valid);
        out.item_item.extend_from_slice(&c.item_item);
        out.item_doc.extend_from_slice(&c.item_doc);
        out.item_parent.extend_from_slice(&c.item_parent);
        out.item_depth.extend_from_slice(&c.item_depth);
        out.list_attribute.extend(re(&c.list_attribute, p));
        out.list_suffix.extend(re(&c.list_suffix, p));
        out.item_index.extend_from_slice(&c.item_index);
        out.member_item.extend_from_slice(&c.member_item);
        out.member_key.extend(re(&c.member_key, p));
        out.member_kind.extend_from_slice(&c.member_kind);
        out.member_text.extend(re(&c.member_text, t));
        out.meta_doc.extend_from_slice(&c.meta_doc);
        out.meta_name.extend_from_slice(&c.meta_name);
        out.meta_text.extend(re(&c.meta_text, t));
        out.declined.extend_from_slice(&c.declined);
        out.code_blocks.extend_from_slice(&c.code_blocks);
        out.paths.buffers.append(&mut c.paths.buffers);
        out.texts.buffers.append(&mut c.texts.buffers);
    }
    out.drawn = base - item_base;
    // `drawn` of the merged columns counts from item_base already: renumber no further
    Ok(out)
}

fn re(views: &[u128], shift: u32) -> impl Iterator<Item = u128> + '_ {
    views.iter().map(move |x| rebased(*x, shift))
}

/// Item ids (local, from 0) -> from `base`.
fn renumber(c: &mut Columns, base: i64) {
    if base == 0 {
        return;
    }
    for id in c
        .item
        .iter_mut()
        .chain(c.item_parent.iter_mut())
        .filter(|id| **id >= 0)
    {
        *id += base;
    }
    for id in c.item_item.iter_mut().chain(c.member_item.iter_mut()) {
        *id += base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_view_is_the_length_then_the_bytes_zero_padded() {
        // Arrow's layout of a view of at most 12 bytes, for every length
        let bytes: Vec<u8> = (1..=12).map(|b| b * 17).collect();
        for n in 0..=12 {
            let mut raw = [0u8; 16];
            raw[..4].copy_from_slice(&(n as u32).to_le_bytes());
            raw[4..4 + n].copy_from_slice(&bytes[..n]);
            assert_eq!(
                inline_view(&bytes[..n]),
                u128::from_le_bytes(raw),
                "{n} bytes"
            );
        }
    }

    #[test]
    fn kind_names_differ_in_their_first_byte() {
        // python.rs' kind_codes looks a kind up by its first byte
        let firsts: std::collections::HashSet<u8> =
            KIND_NAMES.iter().map(|n| n.as_bytes()[0]).collect();
        assert_eq!(firsts.len(), KIND_NAMES.len());
        assert!(KIND_NAMES.iter().all(|n| n.len() <= 12)); // held in their views
    }

    const ID: Root = Root {
        id: Some("id"),
        meta: &[],
        content: None,
        text_content: false,
        keep_id: false,
    };

    #[test]
    fn a_kept_id_is_a_metadata_row_as_the_scan_reads_ids() {
        let docs: [&[u8]; 6] = [
            br#"{"id": "a\u00e9", "x": 1}"#,
            br#"{"x": 2, "id": -0}"#,
            br#"{"id": 123456789012345678901234567890}"#,
            br#"{"x": 3}"#,
            br#"{"id": 1.5}"#,
            br#"{"id": null}"#,
        ];
        let texts: Vec<Option<&[u8]>> = docs.iter().map(|d| Some(*d)).collect();
        let how = Root {
            keep_id: true,
            ..ID
        };
        let c = flatten_json_lenient(&texts, &how, 0, 1 << 31, 1);
        let rows = meta_rows(&c);
        let want = [
            (0, 0, "a\u{e9}".to_string()),
            (1, 0, "0".to_string()),
            (2, 0, "123456789012345678901234567890".to_string()),
        ];
        assert_eq!(rows, want);
        assert_eq!(c.declined, [4, 5]); // a number with a fraction, a null: the scan's
        let suffixes: Vec<String> = c.suffix.iter().map(|v| text_of(&c, *v, false)).collect();
        assert_eq!(suffixes, ["x", "x", "x"]); // the id is still no content
    }

    /// The metadata rows: (doc, name, text).
    fn meta_rows(c: &Columns) -> Vec<(u32, u32, String)> {
        (0..c.meta_doc.len())
            .map(|i| {
                (
                    c.meta_doc[i],
                    c.meta_name[i],
                    text_of(c, c.meta_text[i], true),
                )
            })
            .collect()
    }

    fn text_of(c: &Columns, view: u128, texts: bool) -> String {
        let len = view as u32 as usize;
        let raw = view.to_le_bytes();
        if len <= 12 {
            return String::from_utf8(raw[4..4 + len].to_vec()).unwrap();
        }
        let buffer = u32::from_le_bytes(raw[8..12].try_into().unwrap()) as usize;
        let offset = u32::from_le_bytes(raw[12..16].try_into().unwrap()) as usize;
        let arena = if texts { &c.texts } else { &c.paths };
        String::from_utf8(arena.buffers[buffer][offset..offset + len].to_vec()).unwrap()
    }

    #[test]
    fn leaves_items_and_members() {
        let doc = br#"{"id": 7, "Name": "  Big   ACME ", "lines": [{"description": "A long description", "tags": {"x": 1}}, {}], "n": null, "xs": [1, "B"], "empty": []}"#;
        let c = flatten_json(&[None, Some(&doc[..])], &ID, 10, 1 << 31, 1).unwrap();
        let suffixes: Vec<String> = c.suffix.iter().map(|v| text_of(&c, *v, false)).collect();
        assert_eq!(
            suffixes,
            ["Name", ".description", ".tags.x", "", "n", "xs", "empty"]
        );
        let texts: Vec<Option<String>> = c
            .text
            .iter()
            .zip(&c.text_valid)
            .map(|(v, ok)| ok.then(|| text_of(&c, *v, true)))
            .collect();
        assert_eq!(
            texts,
            [
                Some("big acme".into()),
                Some("a long description".into()),
                Some("1".into()),
                Some("{}".into()),
                None,
                Some("[1,\"b\"]".into()),
                Some("[]".into()),
            ]
        );
        assert_eq!(c.item, [-1, 10, 10, 11, -1, -1, -1]);
        assert_eq!(c.doc, [1; 7]);
        assert_eq!(c.item_item, [10, 11]);
        assert_eq!(c.item_index, [0, 1]);
        assert_eq!(
            c.member_valid,
            [false, true, false, false, false, false, false]
        );
        let attrs: Vec<String> = c.attribute.iter().map(|v| text_of(&c, *v, false)).collect();
        assert_eq!(attrs[2], "lines[].tags.x");
        assert_eq!(c.member_item, [10]);
        assert_eq!(text_of(&c, c.member_text[0], true), "{\"x\":1}");
        assert_eq!(c.drawn, 2);
    }

    #[test]
    fn members_in_any_order_get_their_own_paths() {
        // the position cache (PathTrie::by_position) holds the last document's member at each
        // position: a member moved, added, or the same key under another parent is looked up
        let docs: [&[u8]; 4] = [
            br#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3, "b": 4}]}"#,
            br#"{"b": {"b": 5, "a": 6}, "a": 7, "c": [{"b": 8}, {"x": 9, "a": 10}]}"#,
            br#"{"z": 11, "a": 12}"#,
            br#"{"a": 13, "b": {"a": 14}, "c": [{"a": 15, "b": 16}]}"#,
        ];
        let texts: Vec<Option<&[u8]>> = docs.iter().map(|d| Some(*d)).collect();
        let c = flatten_json(&texts, &ID, 0, 1 << 31, 1).unwrap();
        let attrs: Vec<String> = c.attribute.iter().map(|v| text_of(&c, *v, false)).collect();
        let texts: Vec<String> = c.text.iter().map(|v| text_of(&c, *v, true)).collect();
        let got: Vec<(String, String)> = attrs.into_iter().zip(texts).collect();
        let want = [
            ("a", "1"),
            ("b.a", "2"),
            ("c[].a", "3"),
            ("c[].b", "4"),
            ("b.b", "5"),
            ("b.a", "6"),
            ("a", "7"),
            ("c[].b", "8"),
            ("c[].x", "9"),
            ("c[].a", "10"),
            ("z", "11"),
            ("a", "12"),
            ("a", "13"),
            ("b.a", "14"),
            ("c[].a", "15"),
            ("c[].b", "16"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, t)| (a.to_string(), t.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn metadata_is_kept_apart_as_python_str() {
        let docs: [&[u8]; 3] = [
            br#"{"id": 1, "model": "GPT-4o  Mini", "t": 0.7, "n": 12345678901234567890123, "ok": true, "a": 1}"#,
            br#"{"model": null, "t": 1e16, "ok": false, "n": -0}"#,
            br#"{"model": "a \"quoted\" long name here", "t": 2.0}"#,
        ];
        let texts: Vec<Option<&[u8]>> = docs.iter().map(|d| Some(*d)).collect();
        let meta: Vec<String> = ["model", "t", "n", "ok"].map(String::from).to_vec();
        let c = flatten_json(
            &texts,
            &Root {
                id: Some("id"),
                meta: &meta,
                ..Root::default()
            },
            0,
            1 << 31,
            2,
        )
        .unwrap();
        let suffixes: Vec<String> = c.suffix.iter().map(|v| text_of(&c, *v, false)).collect();
        assert_eq!(suffixes, ["a"]); // metadata is not content
        let rows = meta_rows(&c);
        let want = [
            (0, 0, "GPT-4o  Mini"),
            (0, 1, "0.7"),
            (0, 2, "12345678901234567890123"),
            (0, 3, "True"),
            (1, 1, "1e+16"),
            (1, 3, "False"),
            (1, 2, "0"),
            (2, 0, "a \"quoted\" long name here"),
            (2, 1, "2.0"),
        ];
        let want: Vec<(u32, u32, String)> = want
            .iter()
            .map(|(d, n, t)| (*d, *n, t.to_string()))
            .collect();
        assert_eq!(rows, want);
        // a container is content, not a label: the Python path reports it
        let listed: [Option<&[u8]>; 1] = [Some(br#"{"model": ["a"]}"#)];
        assert!(flatten_json(
            &listed,
            &Root {
                meta: &meta,
                ..Root::default()
            },
            0,
            1 << 31,
            1
        )
        .is_err());
    }

    #[test]
    fn a_content_member_is_the_document() {
        let meta = vec!["model".to_string()];
        let how = Root {
            id: Some("id"),
            meta: &meta,
            content: Some("out"),
            text_content: true,
            keep_id: false,
        };
        let docs: [&[u8]; 4] = [
            br#"{"id": 1, "model": "m", "x": 9, "out": {"a": 1, "model": "kept"}}"#,
            br#"{"out": "  {\"a\": 2}\n", "id": 2}"#,
            br#"{"id": 3, "out": {}}"#,
            br#"{"out": {"id": "content"}}"#,
        ];
        let texts: Vec<Option<&[u8]>> = docs.iter().map(|d| Some(*d)).collect();
        let c = flatten_json(&texts, &how, 0, 1 << 31, 2).unwrap();
        let suffixes: Vec<String> = c.suffix.iter().map(|v| text_of(&c, *v, false)).collect();
        assert_eq!(suffixes, ["a", "model", "a", "id"]); // members outside the content: not
        assert_eq!(c.doc, [0, 0, 1, 3]);
        assert_eq!(
            (c.meta_doc.as_slice(), c.meta_name.as_slice()),
            (&[0][..], &[0][..])
        );
        // the Python path's: no such member, text that is no JSON object, other kinds; the GT's
        // text (not read as JSON text)
        for declined in [
            &br#"{"id": 1}"#[..],
            br#"{"out": "Sure: {"a": 1}"}"#,
            br#"{"out": "[1]"}"#,
            br#"{"out": [{"a": 1}]}"#,
            br#"{"out": null}"#,
        ] {
            assert!(flatten_json(&[Some(declined)], &how, 0, 1 << 31, 1).is_err());
        }
        let gt = Root {
            text_content: false,
            ..how
        };
        assert!(flatten_json(&[Some(docs[1])], &gt, 0, 1 << 31, 1).is_err());
        assert!(flatten_json(&[Some(docs[0])], &gt, 0, 1 << 31, 1).is_ok());
    }

    #[test]
    fn lenient_calls_leave_out_the_declined_documents_whole() {
        // a document given up on part way (a repeated key is found by the parse; a lower case
        // Python decides, by the walk after rows were written) leaves no row behind
        let newer = "{\"a\": 1, \"xs\": [{\"b\": 2}], \"z\": \"\u{A7CB}\"}".to_string();
        let docs: Vec<&[u8]> = vec![
            br#"{"a": 1, "xs": [{"b": 1}]}"#,
            newer.as_bytes(),
            br#"{"a": 1, "a": 2}"#,
            br#"{"a": 2, "xs": [{"b": 3}, {"b": 4}]}"#,
        ];
        let texts: Vec<Option<&[u8]>> = docs.iter().map(|d| Some(*d)).collect();
        for threads in [1, 2] {
            let c = flatten_json_lenient(&texts, &Root::default(), 5, 1 << 31, threads);
            assert_eq!(c.declined, [1, 2]);
            assert_eq!(c.doc, [0, 0, 3, 3, 3]);
            assert_eq!(c.item_item, [5, 6, 7]);
            assert_eq!(c.item_doc, [0, 3, 3]);
            assert_eq!(c.drawn, 3);
            let strict = flatten_json(&texts, &Root::default(), 5, 1 << 31, threads);
            assert_eq!(strict.unwrap_err().position, 1);
        }
    }

    #[test]
    fn chunks_renumber_items_and_rebase_buffers() {
        let doc = br#"{"a_long_list_name": [{"a_long_member_name": "a long text value here"}]}"#;
        let texts: Vec<Option<&[u8]>> = (0..CHUNK_DOCS * 3 + 5).map(|_| Some(&doc[..])).collect();
        let c = flatten_json(&texts, &Root::default(), 0, 64, 3).unwrap();
        let serial = flatten_json(&texts, &Root::default(), 0, 64, 1).unwrap();
        assert_eq!((serial.rows(), serial.drawn), (c.rows(), c.drawn));
        assert_eq!(c.rows(), texts.len());
        assert_eq!(c.drawn, texts.len() as i64);
        assert!(c.item.iter().enumerate().all(|(i, id)| *id == i as i64));
        assert!(c.paths.buffers.len() > 3 && c.texts.buffers.len() > 3);
        for (i, v) in c.text.iter().enumerate() {
            assert_eq!(text_of(&c, *v, true), "a long text value here", "row {i}");
            assert_eq!(text_of(&c, c.suffix[i], false), ".a_long_member_name");
        }
    }

    #[test]
    fn undecided_documents_go_back() {
        let texts: Vec<Option<&[u8]>> = vec![Some(b"{}"), Some(b"[1]"), Some(br#"{"a":1,"a":2}"#)];
        let err = flatten_json(&texts, &Root::default(), 0, 1 << 31, 1).unwrap_err();
        assert_eq!(err.position, 1);
        let err = flatten_json(&texts[2..], &Root::default(), 0, 1 << 31, 2).unwrap_err();
        assert_eq!(err.reason, ParseError::RepeatedKey);
        let newer = "{\"a\": \"\u{A7CB}\"}";
        assert!(flatten_json(&[Some(newer.as_bytes())], &Root::default(), 0, 1 << 31, 1).is_err());
    }
}
