//! `lona`: the command-line node.

mod bench;
mod program;
mod repl;

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
    /// Run a Lonala program: evaluate FILE's forms in a main process, then
    /// call its `-main` with ARGS. Exit status 0 when it ends normally, 1
    /// on an error (printed to standard error), n after `(halt n)`.
    Run {
        /// The program.
        file: std::path::PathBuf,
        /// Arguments for `-main` (strings).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
        /// Worker threads (default: available cores).
        #[arg(long)]
        workers: Option<usize>,
        /// Most processes alive at once (default: the runtime's, 2^20;
        /// Erlang's `+P`).
        #[arg(long)]
        process_limit: Option<usize>,
    },
    /// Evaluate Lonala source given on the command line and print the
    /// value of its last form.
    Eval {
        /// The source text.
        expr: String,
    },
    /// An interactive shell: each form is evaluated in a shell process.
    Repl {
        /// Worker threads (default: available cores).
        #[arg(long)]
        workers: Option<usize>,
    },
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
        Command::Run {
            file,
            args,
            workers,
            process_limit,
        } => program::run(&file, args, workers, process_limit),
        Command::Eval { expr } => program::eval(&expr),
        Command::Repl { workers } => repl::repl(workers),
        Command::Bench { workload, workers } => match bench::run(&workload, workers) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lona bench {workload}: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
