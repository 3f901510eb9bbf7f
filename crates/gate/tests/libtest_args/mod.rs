//! Which tests a libtest command line selects, for the test programs without libtest's
//! harness (`harness = false`), so that `cargo test -- ARGS` means the same to them.

/// The options of libtest that take a value as the next argument (unless given as
/// `--option=value`).
const WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "--shuffle-seed",
    "-Z",
];

/// Whether the command line `args` (without the program name) selects the test `name`:
/// `--list` and `--ignored` select nothing to run; the words that are not options or their
/// values are filters, of which one must match (a substring of the name, or the whole name
/// with `--exact`) when any is given; and no `--skip` value may match the same way.
pub fn selects(args: &[String], name: &str) -> bool {
    let mut filters: Vec<&str> = Vec::new();
    let mut skips: Vec<&str> = Vec::new();
    let mut exact = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let arg = arg.as_str();
        if let Some(value) = arg.strip_prefix("--skip=") {
            skips.push(value);
        } else if arg == "--exact" {
            exact = true;
        } else if arg == "--list" || arg == "--ignored" {
            return false;
        } else if WITH_VALUE.contains(&arg) {
            let value = args.next().map(String::as_str);
            if arg == "--skip" {
                skips.extend(value);
            }
        } else if !arg.starts_with('-') {
            filters.push(arg);
        }
    }
    let matches = |pattern: &str| {
        if exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    (filters.is_empty() || filters.iter().any(|f| matches(f))) && !skips.iter().any(|s| matches(s))
}
