//! `runner __external-guard <runner pid> -- <program> <args>...` (hidden, Linux): the guard
//! `runner` starts in place of each external program (`exec::guard`), so that nothing the
//! program starts outlives its task or `runner`.

use std::ffi::OsString;

/// Arguments of the guard.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pid of the `runner` that started the guard (it runs nothing for another parent).
    parent: u32,
    /// The program and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

/// Guards the program until it ends, then ends as it did; never returns.
pub fn run(args: Args) -> ! {
    crate::exec::guard::run(args.parent, &args.command)
}
