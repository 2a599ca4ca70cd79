//! Parse-only time per document of three JSON parsers on the same NDJSON lines, one thread,
//! beside the kernel's own parse (`flatten::parse_only`: serde_json into the kernel's tape of
//! borrowed strings): serde_json into `Value` (with `arbitrary_precision`, as the kernel builds it) and skipping
//! (`IgnoredAny`), sonic-rs into its `Value`, simd-json into its borrowed value (it parses in
//! place, so each line is copied into a reused buffer first, and the copy is timed too).
//!
//!     cargo run --release --manifest-path benchmarks/parsers/Cargo.toml -- FILE [N]
use std::time::Instant;

fn time<F: FnMut(&[u8]) -> bool>(lines: &[&[u8]], mut parse: F) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut ok = 0;
    for _ in 0..5 {
        let t = Instant::now();
        ok = lines.iter().filter(|l| parse(l)).count();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best * 1e6 / lines.len() as f64, ok)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).expect("an NDJSON file");
    let n: usize = args.get(2).map_or(20_000, |s| s.parse().unwrap());
    let lines: Vec<&[u8]> = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .take(n)
        .collect();
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    println!(
        "{} lines, {:.0} bytes each; best of 5, µs per line:",
        lines.len(),
        bytes as f64 / lines.len() as f64
    );
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap();
    let texts: Vec<Option<&[u8]>> = lines.iter().copied().map(Some).collect();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        assert_eq!(jsoneval_native::flatten::parse_only(&texts), lines.len());
        best = best.min(t.elapsed().as_secs_f64());
    }
    let us = best * 1e6 / lines.len() as f64;
    println!(
        "  {:42} {us:6.2}  ({:.0} MB/s)",
        "the kernel's parse (serde_json, its tape)",
        bytes as f64 / lines.len() as f64 / us
    );
    let mut buffer = Vec::new();
    let runs: Vec<(&str, (f64, usize))> = vec![
        (
            "serde_json Value (arbitrary_precision)",
            time(&lines, |l| {
                serde_json::from_slice::<serde_json::Value>(l).is_ok()
            }),
        ),
        (
            "serde_json IgnoredAny",
            time(&lines, |l| {
                serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
            }),
        ),
        (
            "sonic-rs Value",
            time(&lines, |l| {
                sonic_rs::from_slice::<sonic_rs::Value>(l).is_ok()
            }),
        ),
        (
            "simd-json borrowed value (copy included)",
            time(&lines, |l| {
                buffer.clear();
                buffer.extend_from_slice(l);
                simd_json::to_borrowed_value(&mut buffer).is_ok()
            }),
        ),
    ];
    for (name, (us, ok)) in runs {
        println!(
            "  {name:42} {us:6.2}  ({:.0} MB/s; {ok} parsed)",
            bytes as f64 / lines.len() as f64 / us
        );
    }
}
