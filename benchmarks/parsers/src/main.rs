//! Single-threaded parse of the first N lines of an NDJSON file by each candidate, median of 5
//! runs, in microseconds per document: serde_json into the kernel's tree (what the kernel runs),
//! serde_json into its own `Value`, sonic-rs into its `Value`, and the kernel's whole
//! per-document work (parse + flatten) for scale.

use std::time::Instant;

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    runs[runs.len() / 2]
}

fn time(lines: &[&[u8]], f: &dyn Fn(&[u8]) -> bool) -> (f64, f64, f64) {
    let mut runs = Vec::new();
    for _ in 0..6 {
        let start = Instant::now();
        let ok = lines.iter().filter(|l| f(l)).count();
        assert_eq!(ok, lines.len(), "every line parses");
        runs.push(start.elapsed().as_secs_f64() / lines.len() as f64 * 1e6);
    }
    runs.remove(0); // warm-up
    let (lo, hi) = (
        runs.iter().cloned().fold(f64::MAX, f64::min),
        runs.iter().cloned().fold(0.0, f64::max),
    );
    (median(runs), lo, hi)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: parser-floor FILE.ndjson [N]");
    let n: usize = args.get(2).map_or(20_000, |s| s.parse().unwrap());
    let data = std::fs::read(path).unwrap();
    let lines: Vec<&[u8]> = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .take(n)
        .collect();
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    println!(
        "{} documents, {:.2} KB each, one thread; us/doc median of 5 (range)",
        lines.len(),
        bytes as f64 / lines.len() as f64 / 1e3
    );
    let candidates: Vec<(&str, Box<dyn Fn(&[u8]) -> bool>)> = vec![
        (
            "serde_json -> kernel tree",
            Box::new(|l| jsoneval_native::node::parse(l).is_ok()),
        ),
        (
            "serde_json -> serde_json::Value",
            Box::new(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok()),
        ),
        (
            "sonic-rs -> sonic_rs::Value",
            Box::new(|l| sonic_rs::from_slice::<sonic_rs::Value>(l).is_ok()),
        ),
        (
            "kernel parse + flatten",
            Box::new(|l| jsoneval_native::flatten::flatten_text(l).error_message().is_none()),
        ),
    ];
    for (name, f) in &candidates {
        let (med, lo, hi) = time(&lines, f.as_ref());
        println!(
            "{name:>32}: {med:6.2} us/doc  {:7.0} MB/s  ({lo:.2}-{hi:.2})",
            bytes as f64 / lines.len() as f64 / med
        );
    }
}
