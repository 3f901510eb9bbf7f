//! The shrinking-challenge benchmark (see docs/performance.md).

fn main() {}
