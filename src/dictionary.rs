//! Dictionary encoding of string columns together (align.py's `encode`): the sorted distinct
//! values and each value's id, so that id order is string order. One hash per value, where
//! Polars' unique, sort and Enum cast hashed each column twice; in a Utf8View array, one per
//! distinct view (the kernel's columns repeat a path's view on every leaf), not per row.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use rustc_hash::FxHashMap;

use crate::columns_in::ColumnError;

/// Rows of a Utf8View array after which its views are looked up only if they repeated.
const VIEW_TRIAL: usize = 1024;

/// Ids in order of first appearance, ranked into string order by [`Encoder::finish`].
#[derive(Default)]
pub struct Encoder<'a> {
    first_seen: FxHashMap<&'a str, u32>,
    values: Vec<&'a str>,
}

impl<'a> Encoder<'a> {
    pub fn id(&mut self, s: &'a str) -> u32 {
        let values = &mut self.values;
        *self.first_seen.entry(s).or_insert_with(|| {
            values.push(s);
            (values.len() - 1) as u32
        })
    }

    /// The values in order of first appearance (indexed by id).
    pub fn values(&self) -> &[&'a str] {
        &self.values
    }

    /// The ids of an array's rows (0 for a null) and whether each row is valid, appended.
    pub fn array(
        &mut self,
        a: &'a ArrayRef,
        ids: &mut Vec<u32>,
        valid: &mut Vec<bool>,
    ) -> Result<(), ColumnError> {
        let mut push = |id: Option<u32>| {
            ids.push(id.unwrap_or(0));
            valid.push(id.is_some());
        };
        match a.data_type() {
            DataType::Utf8View => {
                let a = a.as_string_view();
                // a view is a short string itself, or a place in one of this array's buffers:
                // the same view is the same string. Looked up by view while views repeat
                // (a path's view on every leaf), by string once they mostly do not (long
                // strings written one by one)
                let mut by_view: FxHashMap<u128, u32> = FxHashMap::default();
                let views = a.views();
                let mut by_string_from = views.len();
                for (i, view) in views.iter().enumerate() {
                    if i == VIEW_TRIAL && by_view.len() > VIEW_TRIAL / 2 {
                        by_string_from = i;
                        break;
                    }
                    push(
                        a.is_valid(i)
                            .then(|| *by_view.entry(*view).or_insert_with(|| self.id(a.value(i)))),
                    );
                }
                for i in by_string_from..views.len() {
                    push(a.is_valid(i).then(|| self.id(a.value(i))));
                }
            }
            DataType::Utf8 => a
                .as_string::<i32>()
                .iter()
                .for_each(|v| push(v.map(|s| self.id(s)))),
            DataType::LargeUtf8 => a
                .as_string::<i64>()
                .iter()
                .for_each(|v| push(v.map(|s| self.id(s)))),
            DataType::Null => (0..a.len()).for_each(|_| push(None)),
            other => return Err(ColumnError(format!("strings expected, not {other}"))),
        }
        Ok(())
    }

    /// The sorted distinct values, and for each first-seen id its rank among them.
    pub fn finish(self) -> (Vec<&'a str>, Vec<u32>) {
        let values = self.values;
        let mut order: Vec<u32> = (0..values.len() as u32).collect();
        order.sort_unstable_by_key(|&i| values[i as usize]);
        let mut rank = vec![0u32; values.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        (order.iter().map(|&i| values[i as usize]).collect(), rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{StringArray, StringViewArray};
    use std::sync::Arc;

    #[test]
    fn ids_follow_string_order_across_columns() {
        let columns: [ArrayRef; 2] = [
            Arc::new(StringArray::from(vec![
                Some("b"),
                Some("a"),
                None,
                Some("b"),
            ])),
            Arc::new(StringArray::from(vec![Some("é"), Some("a"), Some("B")])),
        ];
        let mut encoder = Encoder::default();
        let (mut ids, mut valid) = (Vec::new(), Vec::new());
        for c in &columns {
            encoder.array(c, &mut ids, &mut valid).unwrap();
        }
        let (values, rank) = encoder.finish();
        assert_eq!(values, vec!["B", "a", "b", "é"]);
        let ranked: Vec<Option<u32>> = (ids.iter().zip(&valid))
            .map(|(&i, &ok)| ok.then(|| rank[i as usize]))
            .collect();
        assert_eq!(
            ranked,
            [Some(2), Some(1), None, Some(2), Some(3), Some(1), Some(0)]
        );
    }

    #[test]
    fn arrays_of_views_and_of_offsets_share_one_dictionary() {
        let long = "a string longer than twelve bytes";
        let views: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some(long),
            Some("b"),
            None,
            Some(long),
        ]));
        let plain: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), Some(long)]));
        let mut encoder = Encoder::default();
        let (mut ids, mut valid) = (Vec::new(), Vec::new());
        encoder.array(&views, &mut ids, &mut valid).unwrap();
        encoder.array(&plain, &mut ids, &mut valid).unwrap();
        let (values, rank) = encoder.finish();
        assert_eq!(values, vec![long, "b"]);
        let ranked: Vec<u32> = ids.iter().map(|&i| rank[i as usize]).collect();
        assert_eq!(ranked, [0, 1, 0, 0, 1, 0]);
        assert_eq!(valid, [true, true, false, true, true, true]);
    }
}
