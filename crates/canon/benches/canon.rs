//! Benchmark of canonical bytes (filled in below).

fn main() {}
