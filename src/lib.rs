//! Native core of jsoneval_polars: JSON text or Python documents in, the leaves / items /
//! members tables of `jsoneval_polars/flatten.py` out, as Arrow arrays; and the id scan of an
//! NDJSON file's lines.
//!
//! The crate compiles and tests without Python: [`node`] parses JSON text (serde_json) into a
//! tape of tokens per document, [`canonical`] writes the canonical text of SPEC §1, [`flatten`]
//! walks the tapes in parallel (rayon) into column buffers, [`scan`] reads the ids of NDJSON lines,
//! [`number`] reads numeric strings for NUMERIC, [`scoring`] detects the fields' strategies
//! and scores them ([`token_set`]: the default SEMANTIC scorer), [`member_keys`] keys list
//! members by value, [`matching`] matches the items of lists and [`depth`] renders their final indices.
//! The `python` feature adds the PyO3 module `jsoneval_polars._native` (`src/python.rs`).
//!
//! The kernel vouches only for what it handles exactly; anything else (invalid text, repeated
//! keys, a number beyond a double, a non-object root) goes back to the Python path, which
//! writes the errors and warnings SPEC §9 asks for.

pub mod allocator;
pub mod canonical;
pub mod columns_in;
pub mod counting;
pub mod dates;
pub mod depth;
pub mod dictionary;
pub mod doc_order;
pub mod fenced;
pub mod flatten;
pub mod matching;
pub mod member_keys;
pub mod node;
pub mod number;
pub mod ordering;
pub mod pairing;
pub mod paths;
#[cfg(feature = "python")]
mod python;
pub mod row_of;
pub mod scan;
pub mod scoring;
pub mod token_set;
