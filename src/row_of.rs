//! The row of each item id in a column of ids. A batch draws its item ids consecutively, so
//! the ids' span is small and an array over it finds a row with one read, where a hash map's
//! lookups were a cache miss each (depth.rs, matching.rs' members, paths.rs' prefixes).

use rustc_hash::FxHashMap;

/// The row of each id of a column (the last row of a repeated one): an array over the ids'
/// span when it is small, else a hash map.
#[derive(Debug)]
pub enum RowOf {
    Dense { min: i64, rows: Vec<u32> },
    Hashed(FxHashMap<i64, usize>),
}

impl RowOf {
    pub fn new(items: &[i64]) -> RowOf {
        let (min, max) = (items.iter().min(), items.iter().max());
        let (Some(&min), Some(&max)) = (min, max) else {
            return RowOf::Dense {
                min: 0,
                rows: Vec::new(),
            };
        };
        let span = (max as i128 - min as i128 + 1) as u128;
        if span > 4 * items.len() as u128 + 1024 || items.len() >= u32::MAX as usize {
            return RowOf::Hashed(items.iter().enumerate().map(|(r, &i)| (i, r)).collect());
        }
        let mut rows = vec![u32::MAX; span as usize];
        for (r, &i) in items.iter().enumerate() {
            rows[(i - min) as usize] = r as u32;
        }
        RowOf::Dense { min, rows }
    }

    pub fn get(&self, item: i64) -> Option<usize> {
        match self {
            RowOf::Dense { min, rows } => {
                let at = usize::try_from(item.checked_sub(*min)?).ok()?;
                rows.get(at)
                    .filter(|&&r| r != u32::MAX)
                    .map(|&r| r as usize)
            }
            RowOf::Hashed(map) => map.get(&item).copied(),
        }
    }
}

impl Default for RowOf {
    fn default() -> Self {
        RowOf::new(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_id_dense_or_hashed_the_last_of_a_repeated_id() {
        for step in [1, 1 << 40] {
            let ids: Vec<i64> = [5, 3, 9, 3].iter().map(|i| i * step).collect();
            let rows = RowOf::new(&ids);
            assert_eq!(matches!(rows, RowOf::Hashed(_)), step > 1);
            let got: Vec<Option<usize>> = [3, 5, 9, 4, 0, 10]
                .iter()
                .map(|i| rows.get(i * step))
                .collect();
            assert_eq!(got, vec![Some(3), Some(0), Some(2), None, None, None]);
            assert_eq!(rows.get(i64::MIN), None);
        }
        assert_eq!(RowOf::default().get(0), None);
    }
}
