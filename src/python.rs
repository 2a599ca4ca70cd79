//! The PyO3 module `jsoneval_polars._native`: the kernel's entry points and the Arrow PyCapsule
//! export of its tables (`__arrow_c_stream__`, which Polars imports without a copy).

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::StringViewBuilder;
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    RecordBatchIterator, StringViewArray, UInt32Array, UInt8Array,
};
use arrow_buffer::BooleanBufferBuilder;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::columns_in::{
    self, bools, codes, floats, has_column, ints, optional_bools, required_ints, required_strs,
    string_view_array, strs, texts, u32s, ColumnError,
};
use crate::counting::{self, CountColumns, Fields};
use crate::depth::{self, Items};
use crate::dictionary;
use crate::flatten::{self, inline_view, Columns, Fallback, Kind, KIND_NAMES};
use crate::matching::{
    configured_lists, ConfiguredList, FieldRows, ItemRows, Key, Lists, MatchField, Members, Value,
};
use crate::node::{close, ParseError, Tape, Token};
use crate::ordering::alignment_order;
use crate::pairing::{self, Side};
use crate::paths::{self, Leaves, Prefixes};
use crate::scan::{scan_lines as scan, scan_values, unreadable, without_bom, Expect, Scanned};
use rustc_hash::{FxHashMap, FxHashSet};

/// One table, handed to Python through the Arrow C stream interface.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct ArrowTable {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowTable {
    /// The Arrow PyCapsule stream protocol; the schema is fixed (a consumer casts if it asks
    /// for another one).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(vec![Ok(self.batch.clone())], self.batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }
}

/// ((leaves, items, members, metadata), next_item, "", the positions of the documents a
/// lenient call left out, those whose answer text was read from a fenced block), or (None,
/// position, reason, [], []) for the Python path.
type Output = (
    Option<(ArrowTable, ArrowTable, ArrowTable, ArrowTable)>,
    i64,
    String,
    Vec<u32>,
    Vec<u32>,
);

fn output(result: Result<Columns, Fallback>, item_base: i64, ecan: bool) -> Output {
    match result {
        Ok(mut c) => {
            let next = item_base + c.drawn;
            let declined = std::mem::take(&mut c.declined);
            let code_blocks = std::mem::take(&mut c.code_blocks);
            (
                Some(tables(c, ecan)),
                next,
                String::new(),
                declined,
                code_blocks,
            )
        }
        Err(f) => (
            None,
            f.position as i64,
            format!("{:?}", f.reason),
            Vec::new(),
            Vec::new(),
        ),
    }
}

/// Bools packed 64 at a time: arrow's `From<&[bool]>` sets them a bit and a branch each.
fn packed(bools: &[bool]) -> BooleanBuffer {
    BooleanBuffer::collect_bool(bools.len(), |i| bools[i])
}

/// A boolean column without nulls: `value` of each row of `n`, packed 64 at a time.
fn flags(n: usize, value: impl FnMut(usize) -> bool) -> ArrayRef {
    Arc::new(BooleanArray::new(
        BooleanBuffer::collect_bool(n, value),
        None,
    ))
}

fn views(values: Vec<u128>, buffers: &[Buffer], valid: Option<Vec<bool>>) -> ArrayRef {
    views_with(values, buffers, valid.map(|v| NullBuffer::new(packed(&v))))
}

/// [`views`] with the validity already packed (dropped when it has no null).
fn views_with(values: Vec<u128>, buffers: &[Buffer], nulls: Option<NullBuffer>) -> ArrayRef {
    let nulls = nulls.filter(|n| n.null_count() > 0);
    // SAFETY: every view was made by flatten.rs for bytes of valid UTF-8 (whole strings of the
    // input or of the canonical text) stored at its buffer and offset
    Arc::new(unsafe {
        StringViewArray::new_unchecked(ScalarBuffer::from(values), Arc::from(buffers), nulls)
    })
}

/// The string views of [`KIND_NAMES`] (each held in its view), by code.
fn kind_views() -> Vec<u128> {
    KIND_NAMES
        .iter()
        .map(|n| inline_view(n.as_bytes()))
        .collect()
}

fn kinds(codes: &[u8]) -> ArrayRef {
    let names = kind_views();
    views(
        codes.iter().map(|k| names[*k as usize]).collect(),
        &[],
        None,
    )
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), a.null_count() > 0))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("columns of one length")
}

fn tables(c: Columns, ecan: bool) -> (ArrowTable, ArrowTable, ArrowTable, ArrowTable) {
    let paths: Vec<Buffer> = c.paths.buffers.into_iter().map(Buffer::from_vec).collect();
    let texts: Vec<Buffer> = c.texts.buffers.into_iter().map(Buffer::from_vec).collect();
    let (empty_array, empty_object, empty) =
        (inline_view(b"[]"), inline_view(b"{}"), inline_view(b""));
    let n = c.doc.len();
    let mut is_null = Vec::with_capacity(n);
    let mut is_empty_array = Vec::with_capacity(n);
    for i in 0..n {
        let (kind, text, valid) = (c.kind[i], c.text[i], c.text_valid[i]);
        let array = kind == Kind::Array as u8 && text == empty_array;
        let object = kind == Kind::Object as u8 && text == empty_object;
        let string = kind == Kind::String as u8 && text == empty;
        is_null.push(!valid || string || (ecan && (array || object)));
        is_empty_array.push(array);
    }
    let leaves = batch(vec![
        ("doc", Arc::new(UInt32Array::from(c.doc))),
        ("item", Arc::new(Int64Array::from(c.item))),
        ("suffix", views(c.suffix, &paths, None)),
        ("attribute", views(c.attribute, &paths, None)),
        ("key", views(c.key, &paths, None)),
        ("member", views(c.member, &paths, Some(c.member_valid))),
        ("kind", kinds(&c.kind)),
        ("text", views(c.text, &texts, Some(c.text_valid))),
        ("is_null", flags(is_null.len(), |i| is_null[i])),
        (
            "empty_array",
            flags(is_empty_array.len(), |i| is_empty_array[i]),
        ),
    ]);
    let items = batch(vec![
        ("item", Arc::new(Int64Array::from(c.item_item))),
        ("doc", Arc::new(UInt32Array::from(c.item_doc))),
        ("parent", Arc::new(Int64Array::from(c.item_parent))),
        ("depth", Arc::new(Int32Array::from(c.item_depth))),
        ("list_attribute", views(c.list_attribute, &paths, None)),
        ("list_suffix", views(c.list_suffix, &paths, None)),
        ("index", Arc::new(Int32Array::from(c.item_index))),
    ]);
    let n_members = c.member_item.len();
    let members = batch(vec![
        ("item", Arc::new(Int64Array::from(c.member_item))),
        ("member", views(c.member_key, &paths, None)),
        ("kind", kinds(&c.member_kind)),
        ("text", views(c.member_text, &texts, None)),
        ("is_null", flags(n_members, |_| false)),
    ]);
    let meta = batch(vec![
        ("doc", Arc::new(UInt32Array::from(c.meta_doc))),
        ("name", Arc::new(UInt32Array::from(c.meta_name))),
        ("text", views(c.meta_text, &texts, None)),
    ]);
    (
        ArrowTable { batch: leaves },
        ArrowTable { batch: items },
        ArrowTable { batch: members },
        ArrowTable { batch: meta },
    )
}

/// Flattens JSON texts (bytes, or None for no document), leaving out the root member `skip`
/// and the root members `meta` (metadata: the fourth table, doc, name index and text); with a
/// `content` member, that member is the document (a string in it is read as JSON text when
/// `text_content`); on `threads` threads without the GIL. `lenient`: a document the walk
/// declines is left out and listed (the fourth item) rather than failing the call.
#[pyfunction]
#[pyo3(signature = (texts, skip=None, item_base=0, empty_containers_are_null=false, segment=1<<31, threads=1, meta=Vec::new(), content=None, text_content=false, lenient=false))]
#[allow(clippy::too_many_arguments)]
fn flatten_json(
    py: Python<'_>,
    texts: &Bound<'_, PyList>,
    skip: Option<&str>,
    item_base: i64,
    empty_containers_are_null: bool,
    segment: usize,
    threads: usize,
    meta: Vec<String>,
    content: Option<&str>,
    text_content: bool,
    lenient: bool,
) -> PyResult<Output> {
    let held = held::<PyBytes>(texts)?;
    let slices: Vec<Option<&[u8]>> = as_slices(&held)
        .into_iter()
        .map(|t| t.map(without_bom))
        .collect();
    let how = root(skip, &meta, content, text_content);
    Ok(py.detach(|| {
        let result = flatten_with(&slices, &how, item_base, segment, threads, lenient);
        output(result, item_base, empty_containers_are_null)
    }))
}

/// How the text bindings' records are read (their keyword arguments).
fn root<'a>(
    skip: Option<&'a str>,
    meta: &'a [String],
    content: Option<&'a str>,
    text_content: bool,
) -> flatten::Root<'a> {
    flatten::Root {
        id: skip,
        meta,
        content,
        text_content,
        keep_id: false,
    }
}

/// The kernel's text entry point; `lenient`: documents it declines are left out and listed.
fn flatten_with(
    texts: &[Option<&[u8]>],
    how: &flatten::Root,
    item_base: i64,
    segment: usize,
    threads: usize,
    lenient: bool,
) -> Result<Columns, Fallback> {
    if lenient {
        Ok(flatten::flatten_json_lenient(
            texts, how, item_base, segment, threads,
        ))
    } else {
        flatten::flatten_json(texts, how, item_base, segment, threads)
    }
}

/// [`flatten_json`] of texts that are spans of one buffer: text `i` is the `lengths[i]` bytes
/// at file offset `offsets[i]`, and the buffer holds the file from offset `base` (None for
/// both: no document). The files driver reads a batch's lines this way, with no Python object
/// per line. `keep_id`: the `skip` member's value is a metadata row named `len(meta)`
/// ([`flatten::Root::keep_id`]).
#[pyfunction]
#[pyo3(signature = (buffer, base, offsets, lengths, skip=None, item_base=0, empty_containers_are_null=false, segment=1<<31, threads=1, meta=Vec::new(), content=None, text_content=false, lenient=false, keep_id=false))]
#[allow(clippy::too_many_arguments)]
fn flatten_spans(
    py: Python<'_>,
    buffer: &[u8],
    base: u64,
    offsets: Vec<Option<u64>>,
    lengths: Vec<Option<u64>>,
    skip: Option<&str>,
    item_base: i64,
    empty_containers_are_null: bool,
    segment: usize,
    threads: usize,
    meta: Vec<String>,
    content: Option<&str>,
    text_content: bool,
    lenient: bool,
    keep_id: bool,
) -> PyResult<Output> {
    let slices = span_slices(buffer, base, &offsets, &lengths)?;
    let how = flatten::Root {
        keep_id,
        ..root(skip, &meta, content, text_content)
    };
    Ok(py.detach(|| {
        let result = flatten_with(&slices, &how, item_base, segment, threads, lenient);
        output(result, item_base, empty_containers_are_null)
    }))
}

/// The texts of [`flatten_spans`] as slices of its buffer (a BOM skipped, None kept); a span
/// outside the buffer, or an offset without a length, is a ValueError.
fn span_slices<'a>(
    buffer: &'a [u8],
    base: u64,
    offsets: &[Option<u64>],
    lengths: &[Option<u64>],
) -> PyResult<Vec<Option<&'a [u8]>>> {
    if offsets.len() != lengths.len() {
        return Err(value_error("offsets and lengths differ in length"));
    }
    offsets
        .iter()
        .zip(lengths)
        .map(|(offset, length)| match (offset, length) {
            (None, None) => Ok(None),
            (Some(o), Some(n)) => o
                .checked_sub(base)
                .and_then(|start| Some((usize::try_from(start).ok()?, usize::try_from(*n).ok()?)))
                .and_then(|(start, n)| buffer.get(start..start.checked_add(n)?))
                .map(|text| Some(without_bom(text)))
                .ok_or_else(|| {
                    value_error(format!(
                        "span at offset {o} of {n} bytes is outside the buffer read from {base}"
                    ))
                }),
            _ => Err(value_error(
                "an offset without a length, or a length without an offset",
            )),
        })
        .collect()
}

/// How many of the texts parse, in parallel: the parse-only floor of the benchmarks.
#[pyfunction]
fn parse_count(py: Python<'_>, texts: &Bound<'_, PyList>) -> PyResult<usize> {
    let held = held::<PyBytes>(texts)?;
    let slices = as_slices(&held);
    Ok(py.detach(|| flatten::parse_only(&slices)))
}

/// Positions of the rows of a frame's `text` column (a table's JSON-text cells, read from
/// Arrow in place: no Python object per cell) that are not JSON as the kernel reads it
/// ([`unreadable`]); a null cell is not among them, nor is a BOM skipped (inside a table cell
/// it is not part of JSON text); with `content`, the objects without that member too.
#[pyfunction]
#[pyo3(signature = (frame, content=None))]
fn unreadable_texts(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    content: Option<&str>,
) -> PyResult<Vec<usize>> {
    let b = record_batches(frame)?;
    py.detach(|| {
        let texts = strs(&b, "text")?;
        let slices: Vec<Option<&[u8]>> = texts.iter().map(|t| t.map(str::as_bytes)).collect();
        Ok(unreadable(&slices, content))
    })
}

/// The bytes of each held text, as the kernel's functions take them.
fn as_slices<'a>(held: &'a [Option<Bound<'_, PyBytes>>]) -> Vec<Option<&'a [u8]>> {
    held.iter()
        .map(|d| d.as_ref().map(|b| b.as_bytes()))
        .collect()
}

/// The items of a list as `T`, None kept; a TypeError for any other item.
fn held<'py, T: pyo3::type_object::PyTypeCheck>(
    items: &Bound<'py, PyList>,
) -> PyResult<Vec<Option<Bound<'py, T>>>> {
    items
        .iter()
        .map(|d| {
            if d.is_none() {
                Ok(None)
            } else {
                d.cast_into::<T>().map(Some).map_err(PyErr::from)
            }
        })
        .collect()
}

/// Nesting the object walk enters at most; deeper documents go to the Python path, whose
/// recursion limit decides.
const MAX_OBJECT_DEPTH: usize = 120;

/// Flattens Python documents (dicts, or None for no document), one at a time in this thread:
/// each is read into the kernel's tape under the GIL, strings borrowed, and walked at once; a
/// value the kernel does not take (a subclass, a set, a key that is not a str, a lone
/// surrogate, deep nesting) sends the batch to the Python path.
#[pyfunction]
#[pyo3(signature = (docs, item_base=0, empty_containers_are_null=false, segment=1<<31))]
fn flatten_objects(
    docs: &Bound<'_, PyList>,
    item_base: i64,
    empty_containers_are_null: bool,
    segment: usize,
) -> PyResult<Output> {
    let result = flatten::flatten_read(docs.len(), item_base, segment, |position, tape| {
        let doc = docs
            .get_item(position)
            .map_err(|e| ParseError::Invalid(e.to_string()))?;
        if doc.is_none() {
            return Ok(false);
        }
        doc.cast_exact::<PyDict>()
            .ok()
            .and_then(|d| dict_tokens(d, 1, tape))
            .map(|()| true)
            .ok_or_else(|| ParseError::Invalid("not taken by the kernel".into()))
    });
    Ok(output(result, item_base, empty_containers_are_null))
}

/// A str's UTF-8, borrowed for as long as the documents live.
fn borrowed<'a>(s: &Bound<'_, PyString>) -> Option<Cow<'a, str>> {
    let text = s.to_str().ok()?;
    // SAFETY: the documents list holds every object walked, and the GIL is held for the whole
    // call (no Python code runs: only exact dicts, lists and strs are read), so the UTF-8 a str
    // keeps lives until the tables are built
    Some(Cow::Borrowed(unsafe {
        std::mem::transmute::<&str, &'a str>(text)
    }))
}

/// Writes a dict's tokens to `tape`; None where the kernel cannot vouch for it.
fn dict_tokens<'a>(dict: &Bound<'_, PyDict>, depth: usize, tape: &mut Tape<'a>) -> Option<()> {
    if depth > MAX_OBJECT_DEPTH {
        return None;
    }
    let at = tape.len();
    tape.push(Token::Object { end: 0 });
    for (k, v) in dict.iter() {
        tape.push(Token::Key(borrowed(k.cast_exact::<PyString>().ok()?)?));
        value_tokens(&v, depth, tape)?;
    }
    close(tape, at);
    Some(())
}

fn sequence_tokens<'a, 'py>(
    values: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
    tape: &mut Tape<'a>,
) -> Option<()> {
    if depth > MAX_OBJECT_DEPTH {
        return None;
    }
    let at = tape.len();
    tape.push(Token::Array { end: 0 });
    for v in values {
        value_tokens(&v, depth, tape)?;
    }
    close(tape, at);
    Some(())
}

/// A value inside a container at `depth`; exact types only, as the reference walker checks
/// `type(v) is str` etc.
fn value_tokens<'a>(v: &Bound<'_, PyAny>, depth: usize, tape: &mut Tape<'a>) -> Option<()> {
    let token = if v.is_none() {
        Token::Null
    } else if let Ok(s) = v.cast_exact::<PyString>() {
        Token::Str(borrowed(s)?)
    } else if let Ok(d) = v.cast_exact::<PyDict>() {
        return dict_tokens(d, depth + 1, tape);
    } else if let Ok(l) = v.cast_exact::<PyList>() {
        return sequence_tokens(l.iter(), depth + 1, tape);
    } else if let Ok(t) = v.cast_exact::<PyTuple>() {
        return sequence_tokens(t.iter(), depth + 1, tape);
    } else if let Ok(f) = v.cast_exact::<PyFloat>() {
        Token::Float(f.value())
    } else if let Ok(b) = v.cast_exact::<PyBool>() {
        Token::Bool(b.is_true())
    } else if let Ok(i) = v.cast_exact::<PyInt>() {
        match i.extract::<i64>() {
            Ok(n) => Token::Integer(n),
            Err(_) => Token::Int(Cow::Owned(i.str().ok()?.to_string())),
        }
    } else {
        return None;
    };
    tape.push(token);
    Some(())
}

/// What a scan hands to Python: its records (line, offset, length, doc_id, has_id; lines from
/// 0 in the chunk) as an Arrow table, built without the GIL, and the lines left to the Python
/// path with their (offset, length): few, and Python lists.
type ScanColumns = (ArrowTable, Vec<i64>, Vec<(i64, i64)>);

fn scan_columns(s: Scanned) -> ScanColumns {
    let mut ids = StringViewBuilder::with_capacity(s.doc_id.len());
    for id in &s.doc_id {
        ids.append_option(id.as_deref());
    }
    let table = batch(vec![
        ("line", Arc::new(Int64Array::from(s.line)) as ArrayRef),
        ("offset", Arc::new(Int64Array::from(s.offset))),
        ("length", Arc::new(Int64Array::from(s.length))),
        ("doc_id", Arc::new(ids.finish())),
        ("has_id", Arc::new(BooleanArray::from(s.has_id))),
    ]);
    (ArrowTable { batch: table }, s.fallback, s.fallback_span)
}

/// The ids of the NDJSON lines in bytes `[start, stop)` of the file at `path` ([`ScanColumns`];
/// with a `content` member, a record without one is the Python path's), the number of line
/// ends in them (the files driver numbers each range's lines once those before it are counted,
/// so no pass counts them first), and the bytes themselves when the Python path reads more of
/// them: lines the scan declined, or a file's first range (its first record may be a config).
/// The range is read without the GIL into a buffer the calling thread keeps for its next
/// range: a fresh 16 MB `bytes` a range faulted its pages in every time (about 4,000 faults),
/// and the process's other threads, loading the libraries or scoring, waited on its memory map.
#[pyfunction]
#[pyo3(signature = (path, start, stop, id_field, content=None))]
fn scan_range<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    start: u64,
    stop: u64,
    id_field: &str,
    content: Option<&str>,
) -> PyResult<(ScanColumns, usize, Option<Bound<'py, PyBytes>>)> {
    use std::os::unix::fs::FileExt;
    thread_local! {
        static RANGE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let n = usize::try_from(stop.saturating_sub(start)).map_err(|e| value_error(e.to_string()))?;
    RANGE.with_borrow_mut(|buffer| {
        let scanned = py.detach(|| {
            buffer.resize(n, 0);
            let file = std::fs::File::open(&path)?;
            file.read_exact_at(buffer, start)?;
            let (scanned, line_ends) = scan(buffer, id_field, content);
            Ok::<_, std::io::Error>((scan_columns(scanned), line_ends))
        });
        let (columns, line_ends) = scanned.map_err(|e| {
            file_error(
                &path,
                "the file is shorter than when its ranges were cut",
                e,
            )
        })?;
        let kept = (!columns.1.is_empty() || start == 0).then(|| PyBytes::new(py, buffer));
        Ok((columns, line_ends, kept))
    })
}

/// The next lines of an NDJSON file from byte `start` (where a line starts), at most `count`:
/// each line's offset and length (its `\n` left out, as the scan cuts lines), and the offset
/// after the last one taken. It stops early before a blank line (the scan's to number and skip)
/// and at the file's end, where a last line without its `\n` is one. The files driver's pass
/// over sorted files cuts its batches this way (stream.py), without the GIL.
#[pyfunction]
fn next_lines(
    py: Python<'_>,
    path: std::path::PathBuf,
    start: u64,
    count: usize,
) -> PyResult<(Vec<u64>, Vec<u64>, u64)> {
    use std::os::unix::fs::FileExt;
    py.detach(|| {
        let file = std::fs::File::open(&path)?;
        let (mut offsets, mut lengths) = (Vec::with_capacity(count), Vec::with_capacity(count));
        let mut buffer = vec![0u8; 1 << 20];
        // buffer[..filled] holds the file from `at`; the next line starts at `line`
        let (mut at, mut filled, mut line, mut end_of_file) = (start, 0usize, start, false);
        while offsets.len() < count {
            let from = (line - at) as usize;
            if let Some(n) = memchr::memchr(b'\n', &buffer[from..filled]) {
                if crate::scan::is_blank(&buffer[from..from + n]) {
                    break;
                }
                offsets.push(line);
                lengths.push(n as u64);
                line += n as u64 + 1;
                continue;
            }
            if end_of_file {
                if !crate::scan::is_blank(&buffer[from..filled]) {
                    offsets.push(line);
                    lengths.push((filled - from) as u64);
                    line += (filled - from) as u64;
                }
                break;
            }
            // keep the line begun, then read on (a line longer than the buffer doubles it)
            buffer.copy_within(from..filled, 0);
            (at, filled) = (line, filled - from);
            if filled == buffer.len() {
                buffer.resize(2 * buffer.len(), 0);
            }
            let read = file.read_at(&mut buffer[filled..], at + filled as u64)?;
            end_of_file = read == 0;
            filled += read;
        }
        Ok::<_, std::io::Error>((offsets, lengths, line))
    })
    .map_err(|e| file_error(&path, "the file is shorter than before", e))
}

/// Whether two NDJSON files begin with the same ids in the same increasing order: their first
/// `bytes` (each cut at its last line end) are records with ids, as the scan reads them, and
/// the shorter side's ids are the other's first ones. `jsoneval score` then starts no early
/// scan (file_ranges.EarlyScan): the files driver's pass over sorted files will not need one.
#[pyfunction]
fn sorted_start(
    py: Python<'_>,
    gt: std::path::PathBuf,
    aio: std::path::PathBuf,
    id_field: &str,
    bytes: u64,
) -> PyResult<bool> {
    use std::io::Read;
    let head_ids = |path: &std::path::Path| -> std::io::Result<Option<Vec<String>>> {
        let mut head = Vec::new();
        std::fs::File::open(path)?
            .take(bytes)
            .read_to_end(&mut head)?;
        let Some(end) = memchr::memrchr(b'\n', &head) else {
            return Ok(None);
        };
        let (scanned, _) = scan(&head[..end], id_field, None);
        let ids: Option<Vec<String>> = scanned.doc_id.into_iter().collect();
        Ok(ids.filter(|ids| scanned.fallback.is_empty() && !ids.is_empty()))
    };
    py.detach(|| {
        let (Some(a), Some(b)) = (head_ids(&gt)?, head_ids(&aio)?) else {
            return Ok(false);
        };
        let n = a.len().min(b.len());
        Ok(a[..n] == b[..n] && a.windows(2).all(|w| w[0] < w[1]))
    })
    .map_err(|e: std::io::Error| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

/// A failed read of the file at `path` as Python's own file errors are, `OSError(errno,
/// reason, file)`; a read past its end says `short`.
fn file_error(path: &std::path::Path, short: &str, e: std::io::Error) -> PyErr {
    let reason = if e.kind() == std::io::ErrorKind::UnexpectedEof {
        short.to_string()
    } else {
        e.to_string()
    };
    let errno = e.raw_os_error().unwrap_or(5); // EIO
    pyo3::exceptions::PyOSError::new_err((errno, reason, path.display().to_string()))
}

/// The texts at (`offsets`, `lengths`) of the file at `path`, joined in order into one buffer
/// (a missing one, None, adds nothing), each read in place without the GIL: the lines of a
/// batch spread over a file (a side in another order than the other), one positioned read
/// each, where a Python loop of `os.pread` held the GIL for 9-12 ms of an 8,000-line batch.
#[pyfunction]
fn read_pieces<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    offsets: Vec<Option<u64>>,
    lengths: Vec<Option<usize>>,
) -> PyResult<Bound<'py, PyBytes>> {
    use std::os::unix::fs::FileExt;
    let os_error = |e| file_error(&path, "the file is shorter than when it was scanned", e);
    let pieces: Vec<(u64, usize)> = offsets
        .iter()
        .zip(&lengths)
        .filter_map(|(o, n)| Some(((*o)?, (*n)?)))
        .collect();
    let total = pieces.iter().map(|(_, n)| n).sum();
    let file = std::fs::File::open(&path).map_err(os_error)?;
    PyBytes::new_with(py, total, |buffer| {
        py.detach(|| {
            let mut at = 0;
            for &(offset, n) in &pieces {
                file.read_exact_at(&mut buffer[at..at + n], offset)?;
                at += n;
            }
            Ok(())
        })
        .map_err(os_error)
    })
}

/// The records of one chunk of a JSON-array file, or (`objects`) of a file of pretty-printed
/// objects, as [`scan_range`] gives those of NDJSON lines: an array's elements numbered by their
/// position in the chunk from 0, objects by the line (from 0 in the chunk) each starts on; with
/// how far the next chunk may start, what it expects (a code to hand back), and the number of
/// values found. `expect` 0 at the file's start; `last`: `data` runs to the file's end. None
/// when the file's delimiters do not make such values (an array cut short, a bracket never
/// closed).
#[pyfunction]
#[pyo3(signature = (data, expect, last, id_field, content=None, objects=false))]
fn scan_records(
    py: Python<'_>,
    data: &Bound<'_, PyBytes>,
    expect: usize,
    last: bool,
    id_field: &str,
    content: Option<&str>,
    objects: bool,
) -> PyResult<Option<(ScanColumns, usize, usize, usize)>> {
    let bytes = data.as_bytes();
    let expect = *Expect::ALL
        .get(expect)
        .ok_or_else(|| value_error(format!("no such state of a split: {expect}")))?;
    Ok(py.detach(|| {
        scan_values(bytes, expect, last, objects, id_field, content).map(
            |(s, consumed, next, n)| {
                let code = Expect::ALL.iter().position(|e| *e == next).unwrap_or(0);
                (scan_columns(s), consumed, code, n)
            },
        )
    }))
}

/// The numeric-string grammar (`values.NUMBER_TEXT`), compiled once.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct NumberReader {
    grammar: regex::Regex,
}

#[pymethods]
impl NumberReader {
    #[new]
    fn new(grammar: &str) -> PyResult<Self> {
        regex::Regex::new(grammar)
            .map(|grammar| NumberReader { grammar })
            .map_err(value_error)
    }

    /// The value of each row of a frame with `text` and `kind` (one side's canonical text and
    /// kind), as similarity._number_of reads it: a Float64 column `number`.
    fn values(&self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
        let b = record_batches(frame)?;
        py.detach(|| {
            let (texts, kinds) = (strs(&b, "text")?, strs(&b, "kind")?);
            let numbers = crate::number::values(&texts, &kinds, &self.grammar);
            Ok(ArrowTable {
                batch: batch(vec![("number", Arc::new(Float64Array::from(numbers)))]),
            })
        })
    }
}

/// The date formats of one date order (`values.date_formats`), compiled once.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct DateReader {
    formats: crate::dates::DateFormats,
}

#[pymethods]
impl DateReader {
    #[new]
    fn new(iso: &str, formats: Vec<String>) -> PyResult<Self> {
        crate::dates::DateFormats::new(iso, &formats)
            .map(|formats| DateReader { formats })
            .map_err(value_error)
    }

    /// The date each row of a frame's `text` column names (`values.date_of`): a Date column
    /// `day`.
    fn days(&self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
        let b = record_batches(frame)?;
        py.detach(|| {
            let days = self.formats.days(&strs(&b, "text")?);
            Ok(ArrowTable {
                batch: batch(vec![("day", Arc::new(Date32Array::from(days)))]),
            })
        })
    }
}

/// similarity.py's field scoring settings (src/scoring.rs), compiled once per config.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct FieldScorer {
    settings: crate::scoring::Settings,
}

#[pymethods]
impl FieldScorer {
    /// `strategies` names the strategy codes (schemas.STRATEGIES), `both_non_null` is the
    /// bucket code of scored rows; `grammar` values.NUMBER_TEXT; `iso` and `formats` the date
    /// formats of the config's date order (as DateReader). `lexical_threshold`: SEMANTIC's
    /// threshold when its scorer is the default lexical one, which is then scored here too.
    #[new]
    #[pyo3(signature = (strategies, both_non_null, grammar, iso, formats, abs_tol, rel_tol,
                        fuzzy_threshold, text_cap, lexical_threshold=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        strategies: Vec<String>,
        both_non_null: u8,
        grammar: &str,
        iso: &str,
        formats: Vec<String>,
        abs_tol: f64,
        rel_tol: f64,
        fuzzy_threshold: f64,
        text_cap: usize,
        lexical_threshold: Option<f64>,
    ) -> PyResult<Self> {
        let code = |name: &str| -> PyResult<u8> {
            strategies
                .iter()
                .position(|s| s == name)
                .map(|i| i as u8)
                .ok_or_else(|| value_error(format!("no strategy {name}")))
        };
        let codes = crate::scoring::Codes {
            exact: code("EXACT")?,
            date: code("DATE")?,
            numeric: code("NUMERIC")?,
            fuzzy: code("FUZZY")?,
            semantic: code("SEMANTIC")?,
            ignore: code("IGNORE")?,
            both_non_null,
        };
        Ok(FieldScorer {
            settings: crate::scoring::Settings {
                codes,
                abs_tol,
                rel_tol,
                fuzzy_threshold,
                lexical_threshold,
                text_cap,
                grammar: regex::Regex::new(grammar).map_err(value_error)?,
                dates: crate::dates::DateFormats::new(iso, &formats).map_err(value_error)?,
            },
        })
    }

    /// `similarity` (Float64) and `match` (Boolean) of each row of a frame with strategy and
    /// bucket (UInt8 codes), gt_text, aio_text, gt_kind, aio_kind, and `threshold` (Float64)
    /// when the config has field_thresholds; SEMANTIC rows are null unless the scorer was made
    /// with a `lexical_threshold`.
    fn score(&self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
        let b = record_batches(frame)?;
        py.detach(|| {
            let (strategy, bucket) = (codes(&b, "strategy")?, codes(&b, "bucket")?);
            let (gt_text, aio_text) = (texts(&b, "gt_text")?, texts(&b, "aio_text")?);
            let (gt_kind, aio_kind) = (texts(&b, "gt_kind")?, texts(&b, "aio_kind")?);
            let threshold = if has_column(&b, "threshold") {
                Some(floats(&b, "threshold")?)
            } else {
                None
            };
            let rows = crate::scoring::Rows {
                strategy: &strategy,
                bucket: &bucket,
                gt_text: &gt_text,
                aio_text: &aio_text,
                gt_kind: &gt_kind,
                aio_kind: &aio_kind,
                threshold: threshold.as_deref(),
            };
            let (similarity, matched) = crate::scoring::score(&rows, &self.settings);
            Ok(ArrowTable {
                batch: batch(vec![
                    ("similarity", Arc::new(Float64Array::from(similarity))),
                    ("match", Arc::new(BooleanArray::from(matched))),
                ]),
            })
        })
    }
}

/// readers.member_keys' value keys of list members (src/member_keys.rs), with the date formats
/// of one date order and the number grammar compiled once.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct MemberKeys {
    dates: crate::dates::DateFormats,
    grammar: regex::Regex,
}

#[pymethods]
impl MemberKeys {
    #[new]
    fn new(iso: &str, formats: Vec<String>, grammar: &str) -> PyResult<Self> {
        Ok(MemberKeys {
            dates: crate::dates::DateFormats::new(iso, &formats).map_err(value_error)?,
            grammar: regex::Regex::new(grammar).map_err(value_error)?,
        })
    }

    /// The `key` column of each side's members (frames with field, kind and text).
    fn keys(
        &self,
        py: Python<'_>,
        gt: &Bound<'_, PyAny>,
        aio: &Bound<'_, PyAny>,
    ) -> PyResult<(ArrowTable, ArrowTable)> {
        let (g, a) = (record_batches(gt)?, record_batches(aio)?);
        py.detach(|| self.keys_of(&g, &a))
    }
}

impl MemberKeys {
    /// [`MemberKeys::keys`] of the imported tables, without the GIL.
    fn keys_of(&self, g: &[RecordBatch], a: &[RecordBatch]) -> PyResult<(ArrowTable, ArrowTable)> {
        let (g_field, a_field) = (u32s(g, "field")?, u32s(a, "field")?);
        let (g_kind, a_kind) = (strs(g, "kind")?, strs(a, "kind")?);
        let (g_text, a_text) = (strs(g, "text")?, strs(a, "text")?);
        let (gt_keys, aio_keys) = crate::member_keys::keys(
            &crate::member_keys::MemberRows {
                field: &g_field,
                kind: &g_kind,
                text: &g_text,
            },
            &crate::member_keys::MemberRows {
                field: &a_field,
                kind: &a_kind,
                text: &a_text,
            },
            &self.dates,
            &self.grammar,
        );
        let table = |keys: Vec<Option<crate::member_keys::Key>>| {
            let mut column = StringViewBuilder::with_capacity(keys.len());
            let mut text = String::new();
            for key in keys {
                match key {
                    Some(key) => {
                        key.write(&mut text);
                        column.append_value(&text);
                    }
                    None => column.append_null(),
                }
            }
            ArrowTable {
                batch: batch(vec![("key", Arc::new(column.finish()))]),
            }
        };
        Ok((table(gt_keys), table(aio_keys)))
    }
}

/// similarity.py's strategy detection (src/scoring.rs `detect`), compiled once per date order
/// and default text strategy.
#[pyclass(frozen, module = "jsoneval_polars._native")]
struct StrategyDetector {
    detector: crate::scoring::Detector,
}

#[pymethods]
impl StrategyDetector {
    /// `patterns`: the ISO date, the other date formats and the e-mail regexes; `exact` and
    /// `default` the codes given to a matched and an unmatched row.
    #[new]
    fn new(patterns: [String; 3], exact: u8, default: u8) -> PyResult<Self> {
        let [iso, others, email] = patterns.map(|p| regex::Regex::new(&p));
        Ok(StrategyDetector {
            detector: crate::scoring::Detector {
                exact,
                default,
                dates: [iso.map_err(value_error)?, others.map_err(value_error)?],
                email: email.map_err(value_error)?,
            },
        })
    }

    /// `strategy` (UInt8) of each row of a frame with gt_has and aio_has (Boolean: present
    /// and not null), gt_text, aio_text, gt_kind and aio_kind.
    fn detect(&self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
        let b = record_batches(frame)?;
        py.detach(|| {
            let (gt_has, aio_has) = (bools(&b, "gt_has")?, bools(&b, "aio_has")?);
            let (gt_text, aio_text) = (texts(&b, "gt_text")?, texts(&b, "aio_text")?);
            let (gt_kind, aio_kind) = (texts(&b, "gt_kind")?, texts(&b, "aio_kind")?);
            let values = crate::scoring::Values {
                gt_has: &gt_has,
                aio_has: &aio_has,
                gt_text: &gt_text,
                aio_text: &aio_text,
                gt_kind: &gt_kind,
                aio_kind: &aio_kind,
            };
            let codes = crate::scoring::detect(&values, &self.detector);
            Ok(ArrowTable {
                batch: batch(vec![("strategy", Arc::new(UInt8Array::from(codes)))]),
            })
        })
    }
}

fn value_error(e: impl ToString) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}

impl From<ColumnError> for PyErr {
    fn from(e: ColumnError) -> PyErr {
        value_error(e)
    }
}

/// The record batches of an object with the Arrow PyCapsule stream interface (a Polars
/// DataFrame), imported without a copy.
fn record_batches(table: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    let capsule = table.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let stream = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule's name says it holds an ArrowArrayStream; from_raw moves it out and
    // leaves a released one, which the capsule's destructor skips
    let reader = unsafe { RecordBatchStreamReader::from_raw(stream.as_ptr().cast()) }
        .map_err(value_error)?;
    reader.collect::<Result<Vec<_>, _>>().map_err(value_error)
}

/// Instance keys (doc, la, pcanon) of a table's rows.
fn keys(batches: &[RecordBatch]) -> PyResult<Vec<Key>> {
    let (doc, la, pcanon) = (
        required_ints(batches, "doc")?,
        required_ints(batches, "la")?,
        required_ints(batches, "pcanon")?,
    );
    Ok((0..doc.len()).map(|i| (doc[i], la[i], pcanon[i])).collect())
}

/// The members of one side in the `fields` only: (item, field, text, is_null, kind, key).
fn members<'a>(batches: &'a [RecordBatch], fields: &FxHashSet<u32>) -> PyResult<Members<'a>> {
    let item = required_ints(batches, "item")?;
    let field = required_ints(batches, "field")?;
    let text = strs(batches, "text")?;
    let is_null = bools(batches, "is_null")?;
    let kind = strs(batches, "kind")?;
    let key = strs(batches, "key")?;
    let mut rows = Vec::new();
    for i in (0..item.len()).filter(|&i| fields.contains(&(field[i] as u32))) {
        if !is_null[i] && text[i].is_none() {
            return Err(value_error("a member that is not null has no text"));
        }
        let value = Value {
            text: text[i],
            is_null: is_null[i],
            is_string: kind[i] == Some("string"),
            key: key[i],
        };
        rows.push((item[i], field[i] as u32, value));
    }
    Ok(rows.into_iter().collect())
}

/// The matched pairs (gt_item, aio_item, similarity) of greedy and index list instances
/// (src/matching.rs). Every table keys its rows by instance (doc, la, pcanon), in any order:
/// `instances` (by_index, threshold) names the instances to match; the item tables (item,
/// index) and the field table (field, fuzzy, auto, prefix, threshold, slot) may hold rows of
/// other instances, which are skipped; the member tables are align.py's (item, field, kind,
/// text, is_null, key).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn match_items(
    py: Python<'_>,
    instances: &Bound<'_, PyAny>,
    gt_items: &Bound<'_, PyAny>,
    aio_items: &Bound<'_, PyAny>,
    fields: &Bound<'_, PyAny>,
    gt_members: &Bound<'_, PyAny>,
    aio_members: &Bound<'_, PyAny>,
    text_cap: usize,
) -> PyResult<ArrowTable> {
    let inst = record_batches(instances)?;
    let (g, a) = (record_batches(gt_items)?, record_batches(aio_items)?);
    let f = record_batches(fields)?;
    let (gm_batches, am_batches) = (record_batches(gt_members)?, record_batches(aio_members)?);
    py.detach(|| {
        let tables = [&inst, &g, &a, &f, &gm_batches, &am_batches].map(Vec::as_slice);
        matched_items(tables, text_cap)
    })
}

/// [`match_items`] of the imported tables (instances, GT items, AIO items, fields, GT members,
/// AIO members), without the GIL.
fn matched_items(tables: [&[RecordBatch]; 6], text_cap: usize) -> PyResult<ArrowTable> {
    let [inst, g, a, f, gm_batches, am_batches] = tables;
    let by_index = bools(inst, "by_index")?;
    let threshold: Vec<f64> = floats(inst, "threshold")?
        .into_iter()
        .map(|t| t.unwrap_or(0.0))
        .collect();
    let (g, a) = (ItemColumns::read(g)?, ItemColumns::read(a)?);
    let slot = ints(f, "slot")?;
    let match_fields = match_field_rows(f)?;
    let lists = Lists::gather(
        &keys(inst)?,
        &by_index,
        &threshold,
        g.rows(),
        a.rows(),
        FieldRows {
            key: &keys(f)?,
            slot: &slot,
            field: &match_fields,
        },
    );
    matched_table(&lists, gm_batches, am_batches, text_cap)
}

/// One side's item rows at one depth as the matcher reads them: instance key, item, index.
struct ItemColumns {
    key: Vec<Key>,
    item: Vec<i64>,
    index: Vec<i64>,
}

impl ItemColumns {
    fn read(batches: &[RecordBatch]) -> PyResult<Self> {
        Ok(ItemColumns {
            key: keys(batches)?,
            item: required_ints(batches, "item")?,
            index: required_ints(batches, "index")?,
        })
    }

    fn rows(&self) -> ItemRows<'_> {
        ItemRows {
            key: &self.key,
            item: &self.item,
            index: &self.index,
        }
    }
}

/// The match fields of a field table's rows (field, fuzzy, auto, prefix, threshold).
fn match_field_rows(f: &[RecordBatch]) -> PyResult<Vec<MatchField>> {
    let field = required_ints(f, "field")?;
    let (fuzzy, auto, prefix) = (bools(f, "fuzzy")?, bools(f, "auto")?, ints(f, "prefix")?);
    let threshold = floats(f, "threshold")?;
    Ok((0..field.len())
        .map(|i| MatchField {
            field: field[i] as u32,
            fuzzy: fuzzy[i],
            auto: auto[i],
            prefix: prefix[i].map(|p| p.max(0) as usize),
            threshold: threshold[i],
        })
        .collect())
}

/// The matched pairs of `lists` (gt_item, aio_item, similarity), their members read from the
/// member tables.
fn matched_table(
    lists: &Lists,
    gm_batches: &[RecordBatch],
    am_batches: &[RecordBatch],
    text_cap: usize,
) -> PyResult<ArrowTable> {
    let used: FxHashSet<u32> = lists.fields.iter().map(|f| f.field).collect();
    let (gm, am) = (members(gm_batches, &used)?, members(am_batches, &used)?);
    let matched = lists.matched(&gm, &am, text_cap);
    let column = |f: fn(&(i64, i64, f64)) -> i64| matched.iter().map(f).collect::<Vec<i64>>();
    Ok(ArrowTable {
        batch: batch(vec![
            ("gt_item", Arc::new(Int64Array::from(column(|m| m.0)))),
            ("aio_item", Arc::new(Int64Array::from(column(|m| m.1)))),
            (
                "similarity",
                Arc::new(Float64Array::from_iter_values(matched.iter().map(|m| m.2))),
            ),
        ]),
    })
}

/// [`match_items`] for a depth whose lists all have configured match fields and are matched
/// greedily or by index: the instances are the item keys with items on both sides, and each
/// takes its list's settings (`lists`: la, by_index, threshold) and fields (`fields`: la,
/// field, fuzzy, auto, prefix, threshold, slot), so align.py builds neither its instance
/// table nor its field table. None when a greedy instance has more than `dense_pairs` pairs or
/// a key's list is not in `lists`: align.py then matches the depth its own way.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn match_configured(
    py: Python<'_>,
    gt_items: &Bound<'_, PyAny>,
    aio_items: &Bound<'_, PyAny>,
    lists: &Bound<'_, PyAny>,
    fields: &Bound<'_, PyAny>,
    gt_members: &Bound<'_, PyAny>,
    aio_members: &Bound<'_, PyAny>,
    text_cap: usize,
    dense_pairs: usize,
) -> PyResult<Option<ArrowTable>> {
    let (g, a) = (record_batches(gt_items)?, record_batches(aio_items)?);
    let (l, f) = (record_batches(lists)?, record_batches(fields)?);
    let (gm_batches, am_batches) = (record_batches(gt_members)?, record_batches(aio_members)?);
    py.detach(|| {
        let mut settings: FxHashMap<i64, ConfiguredList> = FxHashMap::default();
        let (la, by_index, threshold) = (
            required_ints(&l, "la")?,
            bools(&l, "by_index")?,
            floats(&l, "threshold")?,
        );
        for i in 0..la.len() {
            settings.insert(
                la[i],
                ConfiguredList {
                    by_index: by_index[i],
                    threshold: threshold[i].unwrap_or(0.0),
                    fields: Vec::new(),
                },
            );
        }
        let (f_la, slot) = (required_ints(&f, "la")?, required_ints(&f, "slot")?);
        for ((la, slot), field) in f_la.iter().zip(slot).zip(match_field_rows(&f)?) {
            let Some(list) = settings.get_mut(la) else {
                return Err(value_error("a match field of a list without settings"));
            };
            list.fields.push((slot, field));
        }
        let (g, a) = (ItemColumns::read(&g)?, ItemColumns::read(&a)?);
        let lists = configured_lists(g.rows(), a.rows(), &settings, dense_pairs);
        lists
            .map(|lists| matched_table(&lists, &gm_batches, &am_batches, text_cap))
            .transpose()
    })
}

/// classify.pair_leaves' full outer join of two sides' leaves (frames with UInt32 doc and pid,
/// and a Boolean `keep` where some rows take no part) on (doc, pid): doc, pid and the row of
/// each side's leaf (g, a; null where the side has none), in (doc, pid) order. With `gather`
/// (frames with kind and text as Utf8View and is_null), each side's leaf instead: its text,
/// kind, presence and null flag (true where absent), classify.pair_leaves' table; None when a
/// string column is not Utf8View.
#[pyfunction]
#[pyo3(signature = (gt, aio, gather=false))]
fn pair_leaves(
    py: Python<'_>,
    gt: &Bound<'_, PyAny>,
    aio: &Bound<'_, PyAny>,
    gather: bool,
) -> PyResult<Option<ArrowTable>> {
    let (g, a) = (record_batches(gt)?, record_batches(aio)?);
    py.detach(|| {
        // the columns to gather, known before the pairing: a string column that is not one
        // Utf8View array is left to classify.py, which pairs and gathers by itself
        let mut sides = Vec::with_capacity(2);
        if gather {
            for b in [&g, &a] {
                let text = string_view_array(b, "text")?;
                let kind = string_view_array(b, "kind")?;
                let (Some(text), Some(kind)) = (text, kind) else {
                    return Ok(None);
                };
                sides.push((text, kind, optional_bools(b, "is_null")?));
            }
        }
        let (g_doc, g_pid) = (u32s(&g, "doc")?, u32s(&g, "pid")?);
        let (a_doc, a_pid) = (u32s(&a, "doc")?, u32s(&a, "pid")?);
        let keep = |b: &[RecordBatch]| -> PyResult<Option<Vec<bool>>> {
            Ok(if has_column(b, "keep") {
                Some(bools(b, "keep")?)
            } else {
                None
            })
        };
        let (g_keep, a_keep) = (keep(&g)?, keep(&a)?);
        let gt = Side {
            doc: &g_doc,
            pid: &g_pid,
            keep: g_keep.as_deref(),
        };
        let aio = Side {
            doc: &a_doc,
            pid: &a_pid,
            keep: a_keep.as_deref(),
        };
        let paired = pairing::pair_leaves(&gt, &aio).map_err(|(doc, pid)| {
            value_error(format!(
                "document {doc} has two leaves with path id {pid} on one side"
            ))
        })?;
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            ("doc", Arc::new(UInt32Array::from(paired.doc))),
            ("pid", Arc::new(UInt32Array::from(paired.pid))),
        ];
        if !gather {
            columns.push(("g", Arc::new(UInt32Array::from(paired.gt))));
            columns.push(("a", Arc::new(UInt32Array::from(paired.aio))));
            return Ok(Some(ArrowTable {
                batch: batch(columns),
            }));
        }
        let [(g_text, g_kind, g_null), (a_text, a_kind, a_null)] = &sides[..] else {
            unreachable!()
        };
        let g = gather_side(&paired.gt, g_text, g_kind, g_null);
        let a = gather_side(&paired.aio, a_text, a_kind, a_null);
        columns.extend([
            ("gt_text", g.text),
            ("aio_text", a.text),
            ("gt_kind", g.kind),
            ("aio_kind", a.kind),
            ("gt_present", g.present),
            ("aio_present", a.present),
            ("gt_null", g.null),
            ("aio_null", a.null),
        ]);
        // the kinds as codes of KIND_NAMES too, which the files driver writes as the Parquet
        // dictionary they are, not hashing every kind string again
        if let (Some(g_codes), Some(a_codes)) = (g.codes, a.codes) {
            columns.push(("gt_kind_code", g_codes));
            columns.push(("aio_kind_code", a_codes));
        }
        Ok(Some(ArrowTable {
            batch: batch(columns),
        }))
    })
}

/// One side's columns of the paired leaves, gathered at `rows` (None: the side has no leaf
/// there) in one pass: its text and kind (views sharing the side's buffers), whether it is
/// present, whether it is null (an absent leaf is, as is one whose flag is null), and the
/// kind's code in [`KIND_NAMES`] (None for the whole side when a kind is not one of them).
struct GatheredSide {
    text: ArrayRef,
    kind: ArrayRef,
    present: ArrayRef,
    null: ArrayRef,
    codes: Option<ArrayRef>,
}

fn gather_side(
    rows: &[Option<u32>],
    text: &StringViewArray,
    kind: &StringViewArray,
    is_null: &[Option<bool>],
) -> GatheredSide {
    let names = kind_views();
    // a kind's first byte names it (a test holds them distinct), and its view says it whole
    let mut by_first_byte = [u8::MAX; 256];
    for (code, name) in names.iter().enumerate() {
        by_first_byte[first_byte(*name)] = code as u8;
    }
    let (text_views, kind_views_at) = (text.views(), kind.views());
    let n = rows.len();
    let (mut texts, mut kinds) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut codes = Vec::with_capacity(n);
    let mut text_valid = BooleanBufferBuilder::new(n);
    let mut kind_valid = BooleanBufferBuilder::new(n);
    let mut present = BooleanBufferBuilder::new(n);
    let mut null = BooleanBufferBuilder::new(n);
    let mut known = true;
    for row in rows {
        let Some(r) = row.map(|r| r as usize) else {
            texts.push(0);
            kinds.push(0);
            codes.push(None);
            text_valid.append(false);
            kind_valid.append(false);
            present.append(false);
            null.append(true);
            continue;
        };
        let view = kind_views_at[r];
        let has_kind = kind.is_valid(r);
        let code = by_first_byte[first_byte(view)];
        known &= !has_kind || names.get(code as usize) == Some(&view);
        texts.push(text_views[r]);
        kinds.push(view);
        codes.push(has_kind.then_some(code));
        text_valid.append(text.is_valid(r));
        kind_valid.append(has_kind);
        present.append(true);
        null.append(is_null[r].unwrap_or(true));
    }
    let nullable = |mut valid: BooleanBufferBuilder| Some(NullBuffer::new(valid.finish()));
    GatheredSide {
        text: views_with(texts, text.data_buffers(), nullable(text_valid)),
        kind: views_with(kinds, kind.data_buffers(), nullable(kind_valid)),
        present: Arc::new(BooleanArray::new(present.finish(), None)),
        null: Arc::new(BooleanArray::new(null.finish(), None)),
        codes: known.then(|| Arc::new(UInt8Array::from(codes)) as ArrayRef),
    }
}

/// The first byte of a short string's view (after its 4-byte length).
fn first_byte(view: u128) -> usize {
    (view >> 32) as u8 as usize
}

/// counts.py's `aggregate` of a batch's fields (doc, attr: UInt32; bucket, cell, strategy:
/// UInt8 codes; match; similarity): its counts per (doc, attr) group, per document and per
/// attribute (counting.rs). `buckets` and `cells` name the codes (schemas.BUCKETS, CELLS),
/// `ignore` is IGNORE's; `docs`, the scored documents, get a TN cell for each `listed`
/// attribute they have no field of; `weights` (one an attribute id, below `n_attributes`)
/// weigh each group's n_correct and n_scored in its document's w_correct and w_scored.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn aggregate(
    py: Python<'_>,
    fields: &Bound<'_, PyAny>,
    buckets: Vec<String>,
    cells: Vec<String>,
    ignore: u8,
    mut docs: Vec<u32>,
    listed: Vec<u32>,
    weights: Option<Vec<f64>>,
    n_attributes: usize,
) -> PyResult<(ArrowTable, ArrowTable, ArrowTable)> {
    let code = |names: &[String], name: &str| -> PyResult<u8> {
        names
            .iter()
            .position(|s| s == name)
            .map(|i| i as u8)
            .ok_or_else(|| value_error(format!("no code {name}")))
    };
    let counted = counting::Codes {
        extra_keys: code(&buckets, "extra_keys")?,
        gt_null_aio_has_value: code(&buckets, "gt_null_aio_has_value")?,
        both_non_null: code(&buckets, "both_non_null")?,
        aio_missing_or_null: code(&buckets, "aio_missing_or_null")?,
        tp: code(&cells, "TP")?,
        tn: code(&cells, "TN")?,
        fp: code(&cells, "FP")?,
        fn_: code(&cells, "FN")?,
        fp_fn: code(&cells, "FP+FN")?,
        ignore,
    };
    let b = record_batches(fields)?;
    py.detach(|| {
        let (doc, attr) = (u32s(&b, "doc")?, u32s(&b, "attr")?);
        let (bucket, cell) = (codes(&b, "bucket")?, codes(&b, "cell")?);
        let strategy = codes(&b, "strategy")?;
        let matched = optional_bools(&b, "match")?;
        let similarity = floats(&b, "similarity")?;
        let f = Fields {
            doc: &doc,
            attr: &attr,
            bucket: &bucket,
            cell: &cell,
            strategy: &strategy,
            matched: &matched,
            similarity: &similarity,
        };
        docs.sort_unstable();
        docs.dedup();
        let batch_of = counting::Batch {
            docs: &docs,
            listed: &listed,
            weights: weights.as_deref(),
            n_attributes,
        };
        let a = counting::aggregate(&f, counted, &batch_of)
            .map_err(|(column, row)| value_error(format!("{column} {row}: out of range")))?;
        let columns_of = |c: CountColumns, n: usize| -> Vec<(&'static str, ArrayRef)> {
            let sums: ArrayRef = Arc::new(Float64Array::from(c.sum_similarity));
            let mut columns: Vec<(&'static str, ArrayRef)> = counting::COUNT_COLUMNS
                .into_iter()
                .zip(c.n)
                .take(n)
                .map(|(name, v)| (name, Arc::new(Int64Array::from(v)) as ArrayRef))
                .collect();
            if n == counting::COUNT_COLUMNS.len() {
                columns.push(("sum_similarity", sums));
            }
            columns
        };
        let u32s_of = |v: Vec<u32>| -> ArrayRef { Arc::new(UInt32Array::from(v)) };
        let floats_of = |v: Vec<f64>| -> ArrayRef { Arc::new(Float64Array::from(v)) };
        let all = counting::COUNT_COLUMNS.len();
        let mut counts = vec![("doc", u32s_of(a.doc)), ("attr", u32s_of(a.attr))];
        counts.extend(columns_of(a.groups, all));
        let d = a.documents;
        let mut documents = vec![
            ("doc", u32s_of(d.doc)),
            (
                "macro_f1",
                Arc::new(Float64Array::from(d.macro_f1)) as ArrayRef,
            ),
        ];
        documents.extend(columns_of(d.counts, counting::N_DOCUMENT_COUNTS));
        documents.extend([
            ("w_correct", floats_of(d.w_correct)),
            ("w_scored", floats_of(d.w_scored)),
        ]);
        let mut attributes = vec![("attr", u32s_of(a.attributes))];
        attributes.extend(columns_of(a.per_attribute, all));
        Ok((
            ArrowTable {
                batch: batch(counts),
            },
            ArrowTable {
                batch: batch(documents),
            },
            ArrowTable {
                batch: batch(attributes),
            },
        ))
    })
}

/// align.py's alignments table of a batch from its depths' rows (doc, list_path, gt_index,
/// aio_index, similarity): sorted by doc, list_path, gt_index and aio_index (nulls last), with
/// each list's order metrics (`order_correct`, `order_score`; ordering.rs).
#[pyfunction]
fn alignments(py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
    let b = record_batches(rows)?;
    py.detach(|| {
        let doc = required_ints(&b, "doc")?;
        let paths = required_strs(&b, "list_path")?;
        let (gt, aio) = (ints(&b, "gt_index")?, ints(&b, "aio_index")?);
        let similarity = floats(&b, "similarity")?;
        let (order, metrics) = alignment_order(&doc, &paths, &gt, &aio);
        let at = |r: &u32| *r as usize;
        let index = |column: &[Option<i64>]| -> PyResult<ArrayRef> {
            let values = order
                .iter()
                .map(|r| column[at(r)].map(i32::try_from).transpose())
                .collect::<Result<Vec<_>, _>>()
                .map_err(value_error)?;
            Ok(Arc::new(Int32Array::from(values)))
        };
        let docs = order
            .iter()
            .map(|r| u32::try_from(doc[at(r)]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(value_error)?;
        Ok(ArrowTable {
            batch: batch(vec![
                ("doc", Arc::new(UInt32Array::from(docs))),
                (
                    "list_path",
                    Arc::new(StringViewArray::from_iter_values(
                        order.iter().map(|r| paths[at(r)]),
                    )),
                ),
                ("gt_index", index(&gt)?),
                ("aio_index", index(&aio)?),
                (
                    "similarity",
                    Arc::new(Float64Array::from_iter(
                        order.iter().map(|r| similarity[at(r)]),
                    )),
                ),
                ("order_correct", flags(metrics.len(), |i| metrics[i].0)),
                (
                    "order_score",
                    Arc::new(Float64Array::from_iter_values(metrics.iter().map(|m| m.1))),
                ),
            ]),
        })
    })
}

/// align.py's finish of one depth once its items are matched (src/depth.rs): the GT and AIO
/// items' prefixes (item, prefix, canon) and the depth's alignment rows (doc, list_path,
/// gt_index, aio_index, similarity). Item tables: doc, la, pcanon, item, index,
/// parent_prefix, list_suffix; `matched`: gt_item, aio_item, similarity.
#[pyfunction]
fn finish_depth(
    py: Python<'_>,
    gt_items: &Bound<'_, PyAny>,
    aio_items: &Bound<'_, PyAny>,
    matched: &Bound<'_, PyAny>,
) -> PyResult<(ArrowTable, ArrowTable, ArrowTable)> {
    let (g, a, m) = (
        record_batches(gt_items)?,
        record_batches(aio_items)?,
        record_batches(matched)?,
    );
    py.detach(|| {
        let int_columns = |b: &[RecordBatch]| -> PyResult<[Vec<i64>; 5]> {
            Ok([
                required_ints(b, "doc")?,
                required_ints(b, "la")?,
                required_ints(b, "pcanon")?,
                required_ints(b, "item")?,
                required_ints(b, "index")?,
            ])
        };
        let [g_doc, g_la, g_pcanon, g_item, g_index] = int_columns(&g)?;
        let [a_doc, a_la, a_pcanon, a_item, a_index] = int_columns(&a)?;
        let (g_parent, g_suffix) = (
            required_strs(&g, "parent_prefix")?,
            required_strs(&g, "list_suffix")?,
        );
        let (a_parent, a_suffix) = (
            required_strs(&a, "parent_prefix")?,
            required_strs(&a, "list_suffix")?,
        );
        let side = |doc, la, pcanon, item, index, parent_prefix, list_suffix| Items {
            doc,
            la,
            pcanon,
            item,
            index,
            parent_prefix,
            list_suffix,
        };
        let d = depth::finish(
            &side(
                &g_doc, &g_la, &g_pcanon, &g_item, &g_index, &g_parent, &g_suffix,
            ),
            &side(
                &a_doc, &a_la, &a_pcanon, &a_item, &a_index, &a_parent, &a_suffix,
            ),
            (
                &required_ints(&m, "gt_item")?,
                &required_ints(&m, "aio_item")?,
                &floats(&m, "similarity")?,
            ),
        );
        let prefixes = |p: depth::Prefixes| ArrowTable {
            batch: batch(vec![
                ("item", Arc::new(Int64Array::from(p.item))),
                (
                    "prefix",
                    Arc::new(StringViewArray::from_iter_values(p.prefix.iter())),
                ),
                ("canon", Arc::new(Int64Array::from(p.canon))),
            ]),
        };
        let index = |v: Vec<Option<i64>>| -> ArrayRef {
            Arc::new(Int32Array::from_iter(
                v.into_iter().map(|i| i.map(|i| i as i32)),
            ))
        };
        let r = d.rows;
        let rows = ArrowTable {
            batch: batch(vec![
                (
                    "doc",
                    Arc::new(UInt32Array::from_iter_values(
                        r.doc.iter().map(|&d| d as u32),
                    )),
                ),
                (
                    "list_path",
                    Arc::new(StringViewArray::from_iter_values(r.list_path.iter())),
                ),
                ("gt_index", index(r.gt_index)),
                ("aio_index", index(r.aio_index)),
                ("similarity", Arc::new(Float64Array::from(r.similarity))),
            ]),
        };
        Ok((prefixes(d.gt), prefixes(d.aio), rows))
    })
}

/// align._leaf_paths: each leaf's path id and the table of paths. Per side, the leaves
/// (item, suffix, doc, empty_array), its items' rendered prefixes (item, prefix) and the lists
/// the other side has (doc, list_path). Returns the paths in string order with the side and
/// row of the first leaf of each (`path`, `side`, `row`), and per side each leaf's `pid`,
/// with `keep` when an empty array faces a list of records (paths.rs' `kept`).
#[pyfunction]
fn leaf_paths(
    py: Python<'_>,
    leaves: [Bound<'_, PyAny>; 2],
    prefixes: [Bound<'_, PyAny>; 2],
    other_lists: [Bound<'_, PyAny>; 2],
) -> PyResult<(ArrowTable, ArrowTable, ArrowTable)> {
    let leaves = [record_batches(&leaves[0])?, record_batches(&leaves[1])?];
    let prefixes = [record_batches(&prefixes[0])?, record_batches(&prefixes[1])?];
    let other_lists = [
        record_batches(&other_lists[0])?,
        record_batches(&other_lists[1])?,
    ];
    py.detach(|| {
        // ids by string, shared by both sides (in each dictionary's first-seen order)
        let (mut prefix_names, mut suffix_names) = Default::default();
        let prefix_ids = [
            string_ids(&mut prefix_names, &prefixes[0], "prefix")?,
            string_ids(&mut prefix_names, &prefixes[1], "prefix")?,
        ];
        let suffix_ids = [
            string_ids(&mut suffix_names, &leaves[0], "suffix")?,
            string_ids(&mut suffix_names, &leaves[1], "suffix")?,
        ];
        let items = [
            required_ints(&leaves[0], "item")?,
            required_ints(&leaves[1], "item")?,
        ];
        let prefix_items = [
            required_ints(&prefixes[0], "item")?,
            required_ints(&prefixes[1], "item")?,
        ];
        let side = |s: usize| Leaves {
            item: &items[s],
            suffix: &suffix_ids[s],
        };
        let prefixed = |s: usize| Prefixes {
            item: &prefix_items[s],
            prefix: &prefix_ids[s],
        };
        let paths::LeafPaths {
            paths: path_texts,
            first,
            pid,
        } = paths::leaf_paths(
            [&side(0), &side(1)],
            [&prefixed(0), &prefixed(1)],
            prefix_names.values(),
            suffix_names.values(),
        );
        let mut per_side = Vec::with_capacity(2);
        for (s, pid) in pid.into_iter().enumerate() {
            let empty = bools(&leaves[s], "empty_array")?;
            let mut keep = None;
            if empty.contains(&true) {
                let docs = u32s(&leaves[s], "doc")?;
                // only the lists of documents with an empty array are looked up (few of them)
                let with_empty: FxHashSet<u32> = (docs.iter().zip(&empty))
                    .filter_map(|(&d, &e)| e.then_some(d))
                    .collect();
                let list_docs = u32s(&other_lists[s], "doc")?;
                let list_paths = required_strs(&other_lists[s], "list_path")?;
                let lists: FxHashSet<(u32, &str)> = (list_docs.into_iter().zip(list_paths))
                    .filter(|(d, _)| with_empty.contains(d))
                    .collect();
                let kept = paths::kept(&pid, &empty, &docs, &path_texts, &lists);
                keep = kept
                    .contains(&false)
                    .then(|| flags(kept.len(), |i| kept[i]));
            }
            let pid: ArrayRef = Arc::new(UInt32Array::from(pid));
            let columns = std::iter::once(("pid", pid))
                .chain(keep.map(|k| ("keep", k)))
                .collect();
            per_side.push(ArrowTable {
                batch: batch(columns),
            });
        }
        let (sides, rows): (Vec<u32>, Vec<u32>) =
            first.iter().map(|&(s, r)| (u32::from(s), r)).unzip();
        let aio = per_side.pop().expect("two sides");
        let gt = per_side.pop().expect("two sides");
        Ok((
            ArrowTable {
                batch: batch(vec![
                    (
                        "path",
                        Arc::new(StringViewArray::from_iter_values(&path_texts)),
                    ),
                    ("side", Arc::new(UInt32Array::from(sides))),
                    ("row", Arc::new(UInt32Array::from(rows))),
                ]),
            },
            gt,
            aio,
        ))
    })
}

/// The ids `encoder` gives a string column without nulls.
fn string_ids<'a>(
    encoder: &mut dictionary::Encoder<'a>,
    batches: &'a [RecordBatch],
    column: &str,
) -> PyResult<Vec<u32>> {
    let (mut ids, mut valid) = (Vec::new(), Vec::new());
    for a in columns_in::arrays(batches, column)? {
        encoder
            .array(a, &mut ids, &mut valid)
            .map_err(|e| value_error(format!("column {column:?}: {e}")))?;
    }
    match valid.contains(&false) {
        true => Err(value_error(format!("column {column:?}: a null"))),
        false => Ok(ids),
    }
}

/// align.encode of string columns (frames with one column, `v`): the sorted distinct values
/// (a table with `value`) and per column each value's UInt32 id (tables with `id`).
#[pyfunction]
fn encode(
    py: Python<'_>,
    columns: Vec<Bound<'_, PyAny>>,
) -> PyResult<(ArrowTable, Vec<ArrowTable>)> {
    let batches = columns
        .iter()
        .map(record_batches)
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        let mut encoder = dictionary::Encoder::default();
        let mut seen = Vec::with_capacity(batches.len());
        for b in &batches {
            let (mut ids, mut valid) = (Vec::new(), Vec::new());
            for a in columns_in::arrays(b, "v")? {
                encoder
                    .array(a, &mut ids, &mut valid)
                    .map_err(|e| value_error(format!("column \"v\": {e}")))?;
            }
            seen.push((ids, valid));
        }
        let (values, rank) = encoder.finish();
        let values: ArrayRef = Arc::new(StringViewArray::from_iter_values(values));
        let ids = seen
            .into_iter()
            .map(|(ids, valid)| {
                let ranked: Vec<u32> = (ids.iter().zip(&valid))
                    .map(|(&id, &ok)| if ok { rank[id as usize] } else { 0 })
                    .collect();
                let nulls = valid
                    .contains(&false)
                    .then(|| NullBuffer::new(packed(&valid)));
                ArrowTable {
                    batch: batch(vec![(
                        "id",
                        Arc::new(UInt32Array::new(ranked.into(), nulls)),
                    )]),
                }
            })
            .collect();
        Ok((
            ArrowTable {
                batch: batch(vec![("value", values)]),
            },
            ids,
        ))
    })
}

/// `" ".join(s.split()).lower()` as the kernel writes it; None where it leaves the case to
/// Python (tests compare it with Python over every code point).
#[pyfunction]
fn canonical_string(s: &str) -> Option<String> {
    crate::canonical::canonical_string(s)
}

/// Set how long the pages the kernel frees wait before they go back to the system
/// (milliseconds; -1: kept for its next batch); the setting before. A batch run keeps them
/// while it lasts and puts the setting back after (batch_threads.py).
#[pyfunction]
fn purge_delay(ms: i64) -> i64 {
    crate::allocator::set_purge_delay(ms)
}

/// Hand the pages the kernel has freed back to the system now.
#[pyfunction]
fn release_freed_pages() {
    crate::allocator::release_freed_pages()
}

#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowTable>()?;
    m.add_class::<NumberReader>()?;
    m.add_class::<DateReader>()?;
    m.add_class::<FieldScorer>()?;
    m.add_class::<StrategyDetector>()?;
    m.add_class::<MemberKeys>()?;
    m.add("KIND_NAMES", KIND_NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(flatten_json, m)?)?;
    m.add_function(wrap_pyfunction!(flatten_spans, m)?)?;
    m.add_function(wrap_pyfunction!(flatten_objects, m)?)?;
    m.add_function(wrap_pyfunction!(parse_count, m)?)?;
    m.add_function(wrap_pyfunction!(unreadable_texts, m)?)?;
    m.add_function(wrap_pyfunction!(scan_range, m)?)?;
    m.add_function(wrap_pyfunction!(read_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(scan_records, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_string, m)?)?;
    m.add_function(wrap_pyfunction!(match_items, m)?)?;
    m.add_function(wrap_pyfunction!(match_configured, m)?)?;
    m.add_function(wrap_pyfunction!(pair_leaves, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(alignments, m)?)?;
    m.add_function(wrap_pyfunction!(finish_depth, m)?)?;
    m.add_function(wrap_pyfunction!(leaf_paths, m)?)?;
    m.add_function(wrap_pyfunction!(purge_delay, m)?)?;
    m.add_function(wrap_pyfunction!(next_lines, m)?)?;
    m.add_function(wrap_pyfunction!(sorted_start, m)?)?;
    m.add_function(wrap_pyfunction!(release_freed_pages, m)?)?;
    let _ = DataType::Utf8View; // the string columns' type
    Ok(())
}
