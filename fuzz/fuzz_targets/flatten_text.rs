//! The parser entry points on arbitrary bytes: never a panic; a text the kernel takes is an
//! object serde_json's own `Value` reads, and it gives the same rows (its metadata too)
//! wherever it stands in a batch; a text it declines is reported at its own position (or,
//! lenient, left out with no row behind); the document read from a member (or from JSON text
//! in it) is taken or declined. Also: the id scan of the same bytes as an NDJSON range
//! accounts for every line; read as a JSON array or as pretty-printed objects, the values found
//! are in order, inside the bytes, there whenever serde_json reads an array or an object, and
//! the same when the bytes come a few at a time; and every double's canonical text reads back
//! to the same double.
#![no_main]

use jsoneval_native::canonical::float_repr;
use jsoneval_native::flatten::{flatten_json, flatten_json_lenient, Root};
use jsoneval_native::scan::{array_elements, object_elements, scan_lines, split_in_chunks};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let meta = ["m".to_string()];
    let how = Root {
        id: Some("id"),
        meta: &meta,
        ..Root::default()
    };
    match flatten_json(&[Some(data), None, Some(data)], &how, 0, 1 << 31, 2) {
        Ok(c) => {
            assert!(matches!(
                serde_json::from_slice::<serde_json::Value>(data),
                Ok(serde_json::Value::Object(_))
            ));
            assert_eq!(c.rows() % 2, 0);
            assert_eq!(c.drawn % 2, 0);
            assert!(c.meta_doc.len() == 0 || c.meta_doc == [0, 2]);
        }
        Err(f) => assert_eq!(f.position, 0),
    }
    // a lenient call leaves out what the strict one declines, and takes the rest the same way
    let lenient = flatten_json_lenient(&[Some(data), None, Some(data)], &how, 0, 1 << 31, 2);
    match lenient.declined.as_slice() {
        [] => assert!(lenient.rows() % 2 == 0),
        [0, 2] => assert_eq!((lenient.rows(), lenient.drawn), (0, 0)),
        other => panic!("declined {other:?}"),
    }
    // the document in a member, maybe as JSON text inside a string: taken or declined, no panic
    let inner = Root {
        id: Some("id"),
        content: Some("c"),
        text_content: true,
        ..Root::default()
    };
    if let Ok(c) = flatten_json(&[Some(data)], &inner, 0, 1 << 31, 1) {
        assert!(c.doc.iter().all(|d| *d == 0));
    }

    let (scanned, line_ends) = scan_lines(data, "id", None);
    let lines = data.split(|b| *b == b'\n').count();
    assert_eq!(line_ends + 1, lines);
    assert!(scanned.line.len() + scanned.fallback.len() <= lines);

    let elements = array_elements(data);
    if let Ok(serde_json::Value::Array(values)) = serde_json::from_slice(data) {
        assert_eq!(elements.as_ref().map(Vec::len), Some(values.len()));
    }
    let objects = object_elements(data);
    if let Ok(serde_json::Value::Object(_)) = serde_json::from_slice(data) {
        assert_eq!(objects.as_ref().map(Vec::len), Some(1));
    }
    for (found, objects) in [(elements, false), (objects, true)] {
        let mut end = 0;
        for &(start, stop) in found.as_deref().unwrap_or_default() {
            assert!(end <= start && start < stop && stop <= data.len());
            end = stop;
        }
        assert_eq!(split_in_chunks(data, 1 + data.len() % 13, objects), found);
    }

    if let Some(bytes) = data.get(..8) {
        let value = f64::from_le_bytes(bytes.try_into().unwrap());
        if value.is_finite() {
            assert_eq!(float_repr(value).parse::<f64>().unwrap(), value);
        }
    }
});
