//! Native core of jsoneval_polars: JSON documents in, the leaves / items / members tables of
//! `jsoneval_polars/flatten.py` out, as Arrow record batches.
//!
//! The crate compiles and tests without Python: [`node`] parses JSON text (serde_json) into a
//! small document tree, [`canonical`] writes the canonical text of SPEC §1, [`flatten`] walks the
//! trees in parallel (rayon) and assembles the columns. The `python` feature adds the PyO3
//! module `jsoneval_polars._native` (`src/python.rs`), which also builds the same trees from
//! Python objects, so both entry points share one walker.

pub mod canonical;
pub mod flatten;
pub mod node;
#[cfg(feature = "python")]
mod python;

/// Deepest nesting of arrays and objects a document may have, the root object counting 1: the
/// limit serde_json parses to (its recursion limit, 128, refuses the 128th level). Deeper
/// documents are reported in `errors`, whichever entry point they come through.
pub const MAX_DEPTH: usize = 127;

/// The error message of a document nested deeper than [`MAX_DEPTH`].
pub const TOO_DEEP: &str = "document is nested too deeply to score";
