//! Shared timing helpers for the benchmark binaries.

use std::time::Instant;

/// Per-operation time in microseconds over `runs` runs of `ops` operations: (min, median).
pub fn per_op_us(runs: usize, ops: usize, mut run: impl FnMut()) -> (f64, f64) {
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1e6 / ops as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[0], samples[samples.len() / 2])
}

/// The CPU model from /proc/cpuinfo, for the record.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The process's peak resident memory (VmHWM from /proc/self/status), e.g. "1234 MB".
pub fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or_else(|| "unknown".into(), |kb| format!("{} MB", kb / 1024))
}
