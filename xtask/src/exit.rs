//! Exit codes of SPEC §8 and the one place errors are printed.

use std::process::ExitCode;

/// Success: nothing blocks.
pub const OK: u8 = 0;
/// Blocked, a property fails, or a write was refused.
pub const BLOCKED: u8 = 1;
/// Infra only: timeouts or harness errors, nothing else blocks.
pub const INFRA: u8 = 2;
/// Bad input, usage or configuration.
pub const USAGE: u8 = 3;

/// What a subcommand ended with: an exit code it chose, or an error and its code.
pub type Outcome = Result<u8, Failure>;

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// The error, printed as one sentence with its causes.
    pub error: anyhow::Error,
}

impl Failure {
    /// Bad input, usage or configuration (exit 3).
    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: USAGE,
            error: error.into(),
        }
    }
}

/// Prints an error, if any, and turns the outcome into the process exit code.
pub fn finish(outcome: Outcome) -> ExitCode {
    // A command whose runs were killed by a signal exits from the signal's thread, with
    // 128 + the signal.
    freezegate_gate::process::park_if_stopping();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(Failure { code, error }) => {
            // The causes joined with ": " into one line, as a library user prints them.
            eprintln!("error: {}", freezegate_gate::ErrorChain(&*error));
            ExitCode::from(code)
        }
    }
}

/// The bytes of FILE, or of standard input for `None` or `-`, with the name to use in
/// messages (`<stdin>` for standard input). A read error is a usage error (exit 3).
pub fn read_input(path: Option<&std::path::Path>) -> Result<(String, Vec<u8>), Failure> {
    use anyhow::Context;
    use std::io::Read;
    match path {
        Some(path) if path.as_os_str() != "-" => {
            let text = std::fs::read(path)
                .with_context(|| format!("cannot read {}", path.display()))
                .map_err(Failure::usage)?;
            Ok((path.display().to_string(), text))
        }
        _ => {
            let mut text = Vec::new();
            std::io::stdin()
                .read_to_end(&mut text)
                .context("cannot read standard input")
                .map_err(Failure::usage)?;
            Ok(("<stdin>".to_owned(), text))
        }
    }
}

/// Writes `text` to standard output and flushes it; a write that fails (a closed pipe, a full
/// disk) is an error naming standard output (exit 3), never a panic.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    use anyhow::Context;
    freezegate_gate::process::park_if_stopping();
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write standard output")
        .map_err(Failure::usage)
}
