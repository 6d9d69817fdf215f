//! The `runner` binary: parse the command line, run, map the outcome to an exit code.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    runner::cli::main()
}
