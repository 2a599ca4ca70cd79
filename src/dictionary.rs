//! Dictionary encoding of string columns together (align.py's `encode`): the sorted distinct
//! values and each value's id, so that id order is string order. One hash per value, where
//! Polars' unique, sort and Enum cast hashed each column twice.

use rustc_hash::FxHashMap;

/// The sorted distinct non-null values of `columns` and, per column, each value's id in
/// them (None for a null).
pub fn encode<'a>(columns: &[Vec<Option<&'a str>>]) -> (Vec<&'a str>, Vec<Vec<Option<u32>>>) {
    let mut first_seen: FxHashMap<&str, u32> = FxHashMap::default();
    let mut values: Vec<&str> = Vec::new();
    let seen: Vec<Vec<Option<u32>>> = columns
        .iter()
        .map(|column| {
            column
                .iter()
                .map(|v| {
                    v.map(|s| {
                        *first_seen.entry(s).or_insert_with(|| {
                            values.push(s);
                            (values.len() - 1) as u32
                        })
                    })
                })
                .collect()
        })
        .collect();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_unstable_by_key(|&i| values[i as usize]);
    let mut rank = vec![0u32; values.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    let ids = seen
        .into_iter()
        .map(|column| {
            column
                .into_iter()
                .map(|id| id.map(|i| rank[i as usize]))
                .collect()
        })
        .collect();
    (order.iter().map(|&i| values[i as usize]).collect(), ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_string_order_across_columns() {
        let (values, ids) = encode(&[
            vec![Some("b"), Some("a"), None, Some("b")],
            vec![Some("é"), Some("a"), Some("B")],
        ]);
        assert_eq!(values, vec!["B", "a", "b", "é"]);
        assert_eq!(ids[0], vec![Some(2), Some(1), None, Some(2)]);
        assert_eq!(ids[1], vec![Some(3), Some(1), Some(0)]);
    }
}
