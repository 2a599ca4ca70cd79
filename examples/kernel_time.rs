//! Times the text kernel on an NDJSON file: parse only, then parse + flatten, one thread.
//! `cargo run --release --example kernel_time -- FILE [N]`
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).expect("file");
    let n: usize = args.get(2).map_or(20_000, |s| s.parse().unwrap());
    let lines: Vec<Option<&[u8]>> = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .take(n)
        .map(Some)
        .collect();
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap();
    for _ in 0..3 {
        let t = Instant::now();
        let (scanned, _) = jsoneval_native::scan::scan_lines(&data, "doc_id", None);
        let scan = t.elapsed().as_secs_f64();
        println!(
            "scan: {} lines, {:.1} µs/line, {:.0} MB/s",
            scanned.line.len(),
            scan * 1e6 / scanned.line.len() as f64,
            data.len() as f64 / scan / 1e6
        );
        let t = Instant::now();
        let ok = jsoneval_native::flatten::parse_only(&lines);
        let parse = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let c = jsoneval_native::flatten::flatten_json(
            &lines,
            &jsoneval_native::flatten::Root {
                id: Some("doc_id"),
                ..Default::default()
            },
            0,
            1 << 31,
            1,
        )
        .unwrap();
        let all = t.elapsed().as_secs_f64();
        println!(
            "{ok} docs, {} rows: parse {:.1} µs/doc, parse+flatten {:.1} µs/doc",
            c.rows(),
            parse * 1e6 / ok as f64,
            all * 1e6 / ok as f64
        );
    }
}
