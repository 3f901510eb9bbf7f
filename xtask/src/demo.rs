//! `xtask demo [--keep DIR]`: the promotion path on the seed examples, narrated.

use std::path::PathBuf;

use anyhow::Context;
use freezegate_gate::demo::{Demo, usable_dir};

use crate::exit::{BLOCKED, Failure, OK, Outcome};

/// Arguments of `xtask demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Build the demo repository in DIR (absent or empty) and leave it there to explore.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

/// Runs `xtask demo`.
pub fn run(args: Args) -> Outcome {
    let exe = std::env::current_exe()
        .context("cannot find this program's own path")
        .map_err(Failure::usage)?;
    let temp;
    let _removed_on_stop;
    let dir = match &args.keep {
        Some(dir) => {
            if !usable_dir(dir) {
                return Err(Failure::usage(anyhow::anyhow!(
                    "--keep {}: the directory exists and is not empty",
                    dir.display()
                )));
            }
            std::path::absolute(dir)
                .with_context(|| format!("--keep {}", dir.display()))
                .map_err(Failure::usage)?
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("freezegate-demo-")
                .tempdir()
                .context("cannot create a temporary directory")
                .map_err(Failure::usage)?;
            // A stopping signal ends the process without dropping `temp`.
            _removed_on_stop = freezegate_gate::process::RemoveOnStop::new(temp.path());
            temp.path().to_path_buf()
        }
    };
    let mut stdout = std::io::stdout().lock();
    let mut demo = Demo::new(exe, dir, &mut stdout);
    match demo.run() {
        Ok(()) => Ok(OK),
        Err(e) => Err(Failure {
            code: BLOCKED,
            error: anyhow::Error::new(e).context("the demo did not go as planned"),
        }),
    }
}
