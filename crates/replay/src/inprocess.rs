//! The in-process runner: a Rust closure over the candidate's [`Value`].

use std::fmt;
use std::time::Instant;

use freezegate_canon::Value;

use crate::Label;
use crate::oracle::{Exit, Oracle, RunContext, RunOutcome};

/// Why an in-process property did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The property is false on this input (`assert_fail`), with an optional signature.
    Assert {
        /// The failure signature (SPEC §4), if the property names one.
        signature: Option<String>,
    },
    /// The input cannot be tested (`harness_error`, like exit 125 of a command).
    CannotTest {
        /// Why.
        message: String,
    },
}

impl Failure {
    /// The property is false on this input, no signature.
    pub fn assert() -> Failure {
        Failure::Assert { signature: None }
    }

    /// The property is false on this input, with a signature.
    pub fn signature(signature: impl Into<String>) -> Failure {
        Failure::Assert {
            signature: Some(signature.into()),
        }
    }

    /// The input cannot be tested.
    pub fn cannot_test(message: impl Into<String>) -> Failure {
        Failure::CannotTest {
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Assert { signature: None } => f.write_str("the property failed"),
            Failure::Assert {
                signature: Some(sig),
            } => write!(f, "the property failed: {sig}"),
            Failure::CannotTest { message } => write!(f, "cannot test this input: {message}"),
        }
    }
}

impl std::error::Error for Failure {}

/// Runs a Rust property in this process: `Ok(())` is `assert_pass`, `Err(Failure::Assert)`
/// `assert_fail`, `Err(Failure::CannotTest)` `harness_error`, and a panic `assert_fail`
/// (the code under test crashed on this input) named by where it panicked, `panicked at
/// FILE:LINE:COL`, its message kept as the outcome's message ([`crate::panics`]: a message
/// that shows the input would stop the shrinker).
///
/// The candidate's canonical bytes are parsed into a [`Value`] for the closure; bytes that do
/// not parse are a `harness_error`.
///
/// **No deadline can be enforced:** a thread cannot be killed, so a run that loops forever
/// blocks its caller. A run that returns after its deadline is labelled `timeout`. The gate
/// therefore replays Rust properties in a child process (the current binary re-executed),
/// never in-process. A panic also goes through the process's panic hook, which by default
/// prints it on stderr; [`InProcessOracle::quiet`] keeps runs from printing theirs.
pub struct InProcessOracle<F> {
    property: F,
    quiet: bool,
}

impl<F> InProcessOracle<F>
where
    F: Fn(&Value) -> Result<(), Failure> + Send + Sync,
{
    /// A runner of `property`.
    pub fn new(property: F) -> InProcessOracle<F> {
        InProcessOracle {
            property,
            quiet: false,
        }
    }

    /// The same runner, with panics inside its runs not printed (a shrinker may provoke
    /// thousands): the panic hook that [`crate::panics::catch`] installs stays silent for a
    /// thread while it is inside a quiet run and hands every other panic to the hook that
    /// was in place before.
    pub fn quiet(mut self) -> InProcessOracle<F> {
        self.quiet = true;
        self
    }
}

impl<F> fmt::Debug for InProcessOracle<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcessOracle").finish_non_exhaustive()
    }
}

impl<F> Oracle for InProcessOracle<F>
where
    F: Fn(&Value) -> Result<(), Failure> + Send + Sync,
{
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome {
        let start = Instant::now();
        let value = match freezegate_canon::parse(candidate) {
            Ok(value) => value,
            Err(e) => {
                return RunOutcome::not_run(format!("the candidate is not JSON: {e}"));
            }
        };
        let result = crate::panics::catch(self.quiet, || (self.property)(&value));
        let duration = start.elapsed();
        if duration > ctx.timeout {
            return RunOutcome::new(Label::Timeout, duration, Exit::Returned).with_message(
                format!(
                    "returned after {} ms, past its deadline of {} ms",
                    duration.as_millis(),
                    ctx.timeout.as_millis()
                ),
            );
        }
        match result {
            Ok(Ok(())) => RunOutcome::new(Label::AssertPass, duration, Exit::Returned),
            Ok(Err(Failure::Assert { signature })) => {
                let outcome = RunOutcome::new(Label::AssertFail, duration, Exit::Returned);
                match signature {
                    Some(sig) => outcome.with_signature(sig),
                    None => outcome,
                }
            }
            Ok(Err(Failure::CannotTest { message })) => {
                RunOutcome::cannot_test(duration, Exit::Returned).with_message(message)
            }
            Err(caught) => RunOutcome::new(Label::AssertFail, duration, Exit::Panicked)
                .with_signature(caught.signature())
                .with_message(caught.describe()),
        }
    }
}
