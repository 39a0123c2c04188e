//! `lona`: the command-line node.

mod bench;

/// mimalloc: fast cross-thread frees (a message is allocated by its sender
/// and freed by its receiver) and less fragmentation with millions of small
/// process bodies. Built without transparent huge pages (`no_thp`): every
/// first touch of a 2 MiB page zeroes all of it, which made spawning a
/// million processes twice as slow here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "lona", version, about = "Lona: a BEAM-grade process runtime")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a benchmark workload and print its one-line result.
    Bench {
        /// Workload name, or `all`.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(bench::NAMES.iter().copied().chain(["all"])))]
        workload: String,
        /// Worker threads (default: available cores).
        #[arg(long)]
        workers: Option<usize>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench { workload, workers } => match bench::run(&workload, workers) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lona bench {workload}: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
