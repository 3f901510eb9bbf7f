//! `freezegate.toml` from anywhere (a patch may edit it) is read without a panic, and a
//! syntax or rule error names a place inside the text.

#![no_main]

use std::path::Path;

use freezegate_gate::config::{Config, ConfigError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    match Config::parse(text, Path::new("freezegate.toml")) {
        Err(ConfigError::Syntax { line, column, .. }) => inside(text, line, column),
        Err(ConfigError::Rule { key, at, .. }) => {
            assert!(!key.is_empty(), "a rule error names its key");
            // Every rule concerns a value the file states (a default never breaks one).
            let at = at.unwrap_or_else(|| panic!("{key}: no place"));
            inside(text, at.line, at.column);
        }
        _ => {}
    }
});

/// Line and column name a character of `text`, or the end of a line.
fn inside(text: &str, line: usize, column: usize) {
    let lines = text.split('\n').count();
    assert!((1..=lines).contains(&line), "line {line} of {lines}");
    let width = text
        .split('\n')
        .nth(line - 1)
        .map_or(0, |l| l.chars().count());
    assert!(
        (1..=width + 1).contains(&column),
        "column {column} of {width}"
    );
}
