//! The libtest command lines that `own_xtask` (a program without libtest's harness) reads as
//! libtest would: option values are not filters, `--skip` and `--exact` hold.

mod libtest_args;

use libtest_args::selects;

const NAME: &str = "own_xtask_stopped_by_sigterm_exits_143_and_leaves_no_oracle";

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn option_values_are_not_name_filters() {
    for line in [
        "",
        "--test-threads 2",
        "--test-threads=2",
        "--format pretty --color never",
        "-Z unstable-options --nocapture",
        "--logfile out.txt -q",
        "sigterm --test-threads 1",
        "--skip other",
    ] {
        assert!(selects(&args(line), NAME), "{line:?} runs the test");
    }
}

#[test]
fn filters_skips_exact_list_and_ignored_are_honoured() {
    for line in [
        "other",
        "--skip own_xtask",
        "--skip=sigterm",
        "own_xtask --exact",
        "--exact --skip own_xtask_stopped_by_sigterm_exits_143_and_leaves_no_oracle",
        "--list",
        "--ignored",
    ] {
        assert!(
            !selects(&args(line), NAME),
            "{line:?} does not run the test"
        );
    }
    assert!(selects(
        &args("own_xtask_stopped_by_sigterm_exits_143_and_leaves_no_oracle --exact"),
        NAME
    ));
    assert!(selects(&args("other own_xtask"), NAME));
}
