//! Typed columns of Arrow record batches handed in from Python (a Polars DataFrame's
//! `__arrow_c_stream__`): each column read whole across the batches, strings borrowed from the
//! Arrow buffers.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt32Type, UInt8Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;

/// A column missing or of another type than its reader expects.
#[derive(Debug)]
pub struct ColumnError(pub String);

impl std::fmt::Display for ColumnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Column<T> = Result<Vec<T>, ColumnError>;

pub fn arrays<'a>(batches: &'a [RecordBatch], name: &str) -> Column<&'a ArrayRef> {
    batches
        .iter()
        .map(|b| {
            b.column_by_name(name)
                .ok_or_else(|| ColumnError(format!("no column {name:?}")))
        })
        .collect()
}

/// Whether the batches have this column (an optional one: a frame with no batch has none).
pub fn has_column(batches: &[RecordBatch], name: &str) -> bool {
    batches
        .first()
        .is_some_and(|b| b.column_by_name(name).is_some())
}

/// An integer column (Int64, Int32 or UInt32), null as None.
pub fn ints(batches: &[RecordBatch], name: &str) -> Column<Option<i64>> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::Int64 => out.extend(a.as_primitive::<Int64Type>().iter()),
            DataType::Int32 => out.extend(
                a.as_primitive::<Int32Type>()
                    .iter()
                    .map(|v| v.map(i64::from)),
            ),
            DataType::UInt32 => out.extend(
                a.as_primitive::<UInt32Type>()
                    .iter()
                    .map(|v| v.map(i64::from)),
            ),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: integers expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// A UInt32 column without nulls.
pub fn u32s(batches: &[RecordBatch], name: &str) -> Column<u32> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::UInt32 if a.null_count() == 0 => {
                out.extend_from_slice(a.as_primitive::<UInt32Type>().values())
            }
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: UInt32 without nulls expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// A UInt8 column of codes (schemas.CODE), null as None.
pub fn codes(batches: &[RecordBatch], name: &str) -> Column<Option<u8>> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::UInt8 => out.extend(a.as_primitive::<UInt8Type>().iter()),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: UInt8 expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// An integer column without nulls.
pub fn required_ints(batches: &[RecordBatch], name: &str) -> Column<i64> {
    let columns = arrays(batches, name)?;
    if columns
        .iter()
        .all(|a| a.data_type() == &DataType::Int64 && a.null_count() == 0)
    {
        // the common case (Polars' Int64 ids) copied whole, not value by value
        let mut out = Vec::with_capacity(columns.iter().map(|a| a.len()).sum());
        for a in columns {
            out.extend_from_slice(a.as_primitive::<Int64Type>().values());
        }
        return Ok(out);
    }
    ints(batches, name)?
        .into_iter()
        .map(|v| v.ok_or_else(|| ColumnError(format!("column {name:?}: a null"))))
        .collect()
}

/// A string column without nulls.
pub fn required_strs<'a>(batches: &'a [RecordBatch], name: &str) -> Column<&'a str> {
    strs(batches, name)?
        .into_iter()
        .map(|v| v.ok_or_else(|| ColumnError(format!("column {name:?}: a null"))))
        .collect()
}

/// A Float64 column, null as None.
pub fn floats(batches: &[RecordBatch], name: &str) -> Column<Option<f64>> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::Float64 => out.extend(a.as_primitive::<Float64Type>().iter()),
            // an all-null column of a frame built from nothing (Polars' Null type)
            DataType::Null => out.extend(std::iter::repeat_n(None, a.len())),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: Float64 expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// A Boolean column, null as false.
pub fn bools(batches: &[RecordBatch], name: &str) -> Column<bool> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::Boolean => out.extend(a.as_boolean().iter().map(|b| b.unwrap_or(false))),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: Boolean expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// A string column (Utf8View, Utf8 or LargeUtf8), null as None.
pub fn strs<'a>(batches: &'a [RecordBatch], name: &str) -> Column<Option<&'a str>> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::Utf8View => out.extend(a.as_string_view().iter()),
            DataType::Utf8 => out.extend(a.as_string::<i32>().iter()),
            DataType::LargeUtf8 => out.extend(a.as_string::<i64>().iter()),
            DataType::Null => out.extend(std::iter::repeat_n(None, a.len())),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: strings expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// A column that is one Utf8View array, as that array; None when it has another type or
/// several arrays.
pub fn string_view_array<'a>(
    batches: &'a [RecordBatch],
    name: &str,
) -> Result<Option<&'a arrow_array::StringViewArray>, ColumnError> {
    Ok(match arrays(batches, name)?[..] {
        [a] if a.data_type() == &DataType::Utf8View => Some(a.as_string_view()),
        _ => None,
    })
}

/// A string column read row by row where it is one Utf8View array (as Polars hands its strings
/// over), else copied out whole: a pass that needs few of its rows reads only those.
pub enum Texts<'a> {
    View(&'a arrow_array::StringViewArray),
    Rows(Vec<Option<&'a str>>),
}

impl<'a> Texts<'a> {
    /// The text of row `i`, None for a null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Texts::View(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::Rows(rows) => rows[i],
        }
    }
}

/// A string column as [`Texts`].
pub fn texts<'a>(batches: &'a [RecordBatch], name: &str) -> Result<Texts<'a>, ColumnError> {
    Ok(match string_view_array(batches, name)? {
        Some(a) => Texts::View(a),
        None => Texts::Rows(strs(batches, name)?),
    })
}

/// A Boolean column, null as None.
pub fn optional_bools(batches: &[RecordBatch], name: &str) -> Column<Option<bool>> {
    let mut out = Vec::new();
    for a in arrays(batches, name)? {
        match a.data_type() {
            DataType::Boolean => out.extend(a.as_boolean().iter()),
            other => {
                return Err(ColumnError(format!(
                    "column {name:?}: Boolean expected, not {other}"
                )))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{LargeStringArray, StringViewArray};
    use std::sync::Arc;

    fn one_column(a: ArrayRef) -> RecordBatch {
        RecordBatch::try_from_iter([("t", a)]).unwrap()
    }

    #[test]
    fn texts_read_a_view_array_in_place_and_other_columns_copied() {
        let values = [Some("a"), None, Some("a string longer than twelve bytes")];
        let views = [one_column(Arc::new(StringViewArray::from(values.to_vec())))];
        let large = [one_column(Arc::new(LargeStringArray::from(
            values.to_vec(),
        )))];
        let two = [views[0].clone(), views[0].clone()];
        assert!(matches!(texts(&views, "t").unwrap(), Texts::View(_)));
        assert!(matches!(texts(&large, "t").unwrap(), Texts::Rows(_)));
        assert!(matches!(texts(&two, "t").unwrap(), Texts::Rows(_)));
        for batches in [&views[..], &large[..]] {
            let column = texts(batches, "t").unwrap();
            assert_eq!((0..3).map(|i| column.get(i)).collect::<Vec<_>>(), values);
        }
        assert!(texts(&views, "u").is_err());
    }
}
