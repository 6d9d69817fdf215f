//! The `runner` binary: parse the command line, run, map the outcome to an exit code.

#![forbid(unsafe_code)]

/// jemalloc, with transparent huge pages (`.cargo/config.toml`): the simulator's state of a
/// large network is read at random, and on 4 KB pages nearly every such read missed the TLB too.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    runner::cli::main()
}
