//! The PyO3 module `jsoneval_polars._native`: the kernel's two entry points and the Arrow
//! PyCapsule export of its tables (`__arrow_c_stream__`, which Polars imports without a copy).

use std::borrow::Cow;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::flatten::{flatten_json as flatten_texts, flatten_nodes, parse_only, Tables};
use crate::node::{Key, Node};
use crate::{MAX_DEPTH, TOO_DEEP};

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

type Output = (
    ArrowTable,
    ArrowTable,
    ArrowTable,
    Vec<(usize, String)>,
    i64,
);

fn output(tables: Tables) -> Output {
    (
        ArrowTable {
            batch: tables.leaves,
        },
        ArrowTable {
            batch: tables.items,
        },
        ArrowTable {
            batch: tables.members,
        },
        tables.errors,
        tables.next_item,
    )
}

/// Flattens JSON texts (bytes, or None for no document) in parallel, without the GIL.
/// Returns (leaves, items, members, errors, next_item).
#[pyfunction]
#[pyo3(signature = (docs, item_base=0, empty_containers_are_null=false))]
fn flatten_json(
    py: Python<'_>,
    docs: &Bound<'_, PyList>,
    item_base: i64,
    empty_containers_are_null: bool,
) -> PyResult<Output> {
    let held = held_bytes(docs)?;
    let texts = slices(&held);
    let tables = py.detach(|| flatten_texts(&texts, item_base, empty_containers_are_null));
    Ok(output(tables))
}

/// Parses JSON texts in parallel without flattening them: how many parse (a benchmark floor).
#[pyfunction]
fn parse_json(py: Python<'_>, docs: &Bound<'_, PyList>) -> PyResult<usize> {
    let held = held_bytes(docs)?;
    let texts = slices(&held);
    Ok(py.detach(|| parse_only(&texts)))
}

fn held_bytes<'py>(docs: &Bound<'py, PyList>) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
    let held = docs
        .iter()
        .map(|d| {
            if d.is_none() {
                Ok(None)
            } else {
                d.cast_into::<PyBytes>().map(Some)
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(held)
}

fn slices<'a>(held: &'a [Option<Bound<'_, PyBytes>>]) -> Vec<Option<&'a [u8]>> {
    held.iter()
        .map(|d| d.as_ref().map(|b| b.as_bytes()))
        .collect()
}

/// Flattens Python documents (dicts, or None for no document): each is read into the kernel's
/// tree under the GIL, then all are walked in parallel without it.
#[pyfunction]
#[pyo3(signature = (docs, item_base=0, empty_containers_are_null=false))]
fn flatten_objects(
    py: Python<'_>,
    docs: &Bound<'_, PyList>,
    item_base: i64,
    empty_containers_are_null: bool,
) -> PyResult<Output> {
    let mut nodes = Vec::with_capacity(docs.len());
    for (pos, doc) in docs.iter().enumerate() {
        if doc.is_none() {
            nodes.push(None);
            continue;
        }
        let Ok(dict) = doc.cast::<PyDict>() else {
            let type_name = doc.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "document at position {pos} is a {type_name}, not a dict"
            )));
        };
        nodes.push(Some(
            dict_node(dict, 1)?.ok_or_else(|| TOO_DEEP.to_string()),
        ));
    }
    let tables = py.detach(|| flatten_nodes(&nodes, item_base, empty_containers_are_null));
    Ok(output(tables))
}

/// None: nesting deeper than MAX_DEPTH (a cycle, too).
type Converted = PyResult<Option<Node<'static>>>;

fn dict_node(dict: &Bound<'_, PyDict>, depth: usize) -> Converted {
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    let mut members = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let key = match k.cast_exact::<PyString>() {
            Ok(s) => match s.to_str() {
                Ok(s) => Key::Str(Cow::Owned(s.to_owned())),
                Err(_) => Key::Unencodable,
            },
            Err(_) => Key::NotStr {
                repr: k.repr()?.to_string(),
                type_name: k.get_type().name()?.to_string(),
            },
        };
        let Some(value) = value_node(&v, depth)? else {
            return Ok(None);
        };
        members.push((key, value));
    }
    Ok(Some(Node::Object(members)))
}

fn sequence_node<'py>(values: impl Iterator<Item = Bound<'py, PyAny>>, depth: usize) -> Converted {
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    let mut out = Vec::new();
    for v in values {
        let Some(node) = value_node(&v, depth)? else {
            return Ok(None);
        };
        out.push(node);
    }
    Ok(Some(Node::Array(out)))
}

/// A value inside a container at `depth`; exact types only, as the reference walker checks
/// `type(v) is str` etc.: subclasses, sets, dates... are values with no JSON meaning.
fn value_node(v: &Bound<'_, PyAny>, depth: usize) -> Converted {
    let node = if v.is_none() {
        Node::Null
    } else if let Ok(s) = v.cast_exact::<PyString>() {
        match s.to_str() {
            Ok(s) => Node::Str(Cow::Owned(s.to_owned())),
            Err(_) => Node::Unencodable,
        }
    } else if let Ok(d) = v.cast_exact::<PyDict>() {
        return dict_node(d, depth + 1);
    } else if let Ok(l) = v.cast_exact::<PyList>() {
        return sequence_node(l.iter(), depth + 1);
    } else if let Ok(t) = v.cast_exact::<PyTuple>() {
        return sequence_node(t.iter(), depth + 1);
    } else if let Ok(f) = v.cast_exact::<PyFloat>() {
        Node::Float(f.value())
    } else if let Ok(b) = v.cast_exact::<PyBool>() {
        Node::Bool(b.is_true())
    } else if let Ok(i) = v.cast_exact::<PyInt>() {
        match i.extract::<i64>() {
            Ok(n) => Node::Int(Cow::Owned(n.to_string())),
            Err(_) => Node::Int(Cow::Owned(i.str()?.to_string())),
        }
    } else {
        Node::Bad(v.get_type().name()?.to_string())
    };
    Ok(Some(node))
}

#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(flatten_json, m)?)?;
    m.add_function(wrap_pyfunction!(flatten_objects, m)?)?;
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add("MAX_DEPTH", MAX_DEPTH)?;
    m.add("TOO_DEEP", TOO_DEEP)?;
    Ok(())
}
