//! The parser entry point on arbitrary bytes: never a panic, the same outcome for the same text
//! wherever it stands in a batch, and the same verdict on validity as serde_json's own `Value`.
//! Also: every double's canonical text reads back to the same double.
#![no_main]

use jsoneval_native::canonical::float_repr;
use jsoneval_native::flatten::flatten_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let tables = flatten_json(&[Some(data), None, Some(data)], 0, false);
    let positions: Vec<usize> = tables.errors.iter().map(|e| e.0).collect();
    let valid_object = matches!(
        serde_json::from_slice::<serde_json::Value>(data),
        Ok(serde_json::Value::Object(_))
    );
    if valid_object {
        assert!(positions.is_empty(), "{:?}", tables.errors);
    } else {
        assert_eq!(positions, vec![0, 2]);
        assert_eq!(tables.leaves.num_rows(), 0);
    }
    assert_eq!(tables.leaves.num_rows() % 2, 0);
    assert_eq!(tables.next_item % 2, 0);

    if let Some(bytes) = data.get(..8) {
        let value = f64::from_le_bytes(bytes.try_into().unwrap());
        if value.is_finite() {
            assert_eq!(float_repr(value).parse::<f64>().unwrap(), value);
        }
    }
});
