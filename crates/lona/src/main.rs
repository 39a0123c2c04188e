//! `lona`: the command-line node.

// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

mod bench;
mod program;
mod repl;
mod test;
mod top;

/// mimalloc: fast cross-thread frees (a message is allocated by its sender
/// and freed by its receiver) and less fragmentation with millions of small
/// process bodies. Built without transparent huge pages (`no_thp`): every
/// first touch of a 2 MiB page zeroes all of it, which made spawning a
/// million processes twice as slow here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;

/// How the node is built (`lona run`, `lona eval`, `lona repl`).
#[derive(Args, Clone, Debug, Default)]
pub struct NodeArgs {
    /// Worker threads (default: available cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// The process limit (default 1,048,576; Erlang's `+P`). Spawning past
    /// it fails with `:system-limit`.
    #[arg(long)]
    pub process_limit: Option<usize>,
    /// Pin worker thread i to core i mod cores (`Builder::pin_workers`);
    /// where the system refuses, the workers run unpinned.
    #[arg(long)]
    pub pin: bool,
    /// The default `:max-heap-size` of every process, the main process
    /// included, in words (8 bytes each; Erlang's `+hmax`): heap, stack
    /// and call frames together. A process that outgrows it is killed
    /// (reason `:killed`); `spawn-opt` and `process-flag` set it per
    /// process. Default: no limit (a process the machine's memory cannot
    /// back still ends alone, with `[:system-limit :out-of-memory]`).
    #[arg(long, value_name = "WORDS")]
    pub max_heap: Option<usize>,
    /// Make this a distributed node with a short name, `NAME` or
    /// `NAME@HOST` (Erlang's `-sname`): it registers with `epmd` (started
    /// when none runs) and talks Erlang's distribution protocol.
    #[arg(long, value_name = "NAME", conflicts_with = "name")]
    pub sname: Option<String>,
    /// Make this a distributed node with a long name, `NAME@HOST`
    /// (Erlang's `-name`).
    #[arg(long, value_name = "NAME@HOST")]
    pub name: Option<String>,
    /// The distribution cookie (default: `~/.erlang.cookie`, created as
    /// Erlang creates it).
    #[arg(long)]
    pub cookie: Option<String>,
    /// The address the distribution listens on (default 127.0.0.1: only
    /// nodes on this host can connect; 0.0.0.0 for every interface).
    #[arg(long, value_name = "IP")]
    pub dist_ip: Option<std::net::IpAddr>,
    /// Erlang's `net_ticktime`, in seconds (default 60): a connection
    /// silent this long is declared down; ticks go every quarter of it.
    #[arg(long, value_name = "SECS")]
    pub net_ticktime: Option<u64>,
    /// Erlang's `dist_buf_busy_limit` (`erl +zdbbl KB`), in kilobytes
    /// (default 1024): once this much is queued for a connection to
    /// another node and not yet written, processes sending there wait
    /// until less than half of it is.
    #[arg(long, value_name = "KB")]
    pub dist_buf_busy_limit: Option<usize>,
    /// The most a connected node may leave unread of the replies to its
    /// own requests (`link`, `monitor`, `spawn` and the rest), in
    /// kilobytes (default 16 times the busy limit, at least 16384; at
    /// least 64): past it the connection is closed, as one to a node that
    /// does not respond. What this node's processes send never counts.
    #[arg(long, value_name = "KB")]
    pub dist_reply_limit: Option<usize>,
    /// Which tier runs Lonala code: `jit` (the default: hot functions are
    /// compiled to machine code), `interp` (the interpreter only), or
    /// `jit-eager` (every function that can be compiled is, at its first
    /// call). `LONA_TIER` sets the same.
    #[arg(long, value_name = "TIER", value_parser = lona_vm::jit::Tier::parse)]
    pub tier: Option<lona_vm::jit::Tier>,
    /// Print each function as it is compiled: its bytecode, its Cranelift
    /// IR and its machine code (to standard error; `LONA_JIT_DUMP=1`).
    #[arg(long)]
    pub jit_dump: bool,
    /// Name compiled functions for `perf`: append `START SIZE
    /// lona:ns/name` to `/tmp/perf-PID.map` as each is compiled (as
    /// BEAM's `+JPperf map`; `LONA_PERF_MAP=1`).
    #[arg(long)]
    pub perf_map: bool,
    /// When the program ends, print what the compiling tier did:
    /// functions compiled and not, time spent compiling, the longest time
    /// from a function found hot to its code installed, and the share of
    /// the program's reductions run in compiled code (standard error).
    #[arg(long)]
    pub jit_stats: bool,
}

impl NodeArgs {
    /// A runtime built as asked.
    pub fn runtime(&self) -> Result<lona_runtime::Runtime, String> {
        let mut b = lona_runtime::Runtime::builder();
        if let Some(w) = self.workers {
            b = b.workers(w);
        }
        if let Some(n) = self.process_limit {
            b = b.process_limit(n);
        }
        b = b.pin_workers(self.pin);
        b = b.on_idle(IDLE_GIVE_BACK, give_back_memory);
        b.build().map_err(|e| format!("cannot start the node: {e}"))
    }

    /// Applies the node settings that belong to Lonala (`--max-heap`,
    /// `--tier`, `--jit-dump`, `--perf-map`, `--jit-stats`).
    pub fn apply(&self, env: &lona_vm::Env) {
        if let Some(words) = self.max_heap {
            env.set_max_heap_size(words);
        }
        if let Some(t) = self.tier {
            lona_vm::jit::set_tier(t);
        }
        if self.jit_dump {
            lona_vm::jit::set_dump(true);
        }
        if self.perf_map {
            lona_vm::jit::set_perf_map(true);
        }
        if self.jit_stats {
            lona_vm::jit::count_reductions(true);
        }
    }

    /// Makes the node distributed when `--sname` or `--name` asks.
    pub fn distribute(
        &self,
        env: &std::sync::Arc<lona_vm::Env>,
        rt: &lona_runtime::Runtime,
    ) -> Result<(), String> {
        let (name, long) = match (&self.sname, &self.name) {
            (Some(n), _) => (n, false),
            (None, Some(n)) => (n, true),
            (None, None) => return Ok(()),
        };
        let mut cfg = lona_vm::dist::Config::short(name);
        cfg.long_names = long;
        cfg.cookie = self.cookie.clone();
        if let Some(ip) = self.dist_ip {
            cfg.ip = ip;
        }
        if let Some(t) = self.net_ticktime {
            cfg.tick_time = std::time::Duration::from_secs(t.max(1));
        }
        if let Some(kb) = self.dist_buf_busy_limit {
            cfg.busy_limit = kb.saturating_mul(1024);
        }
        if let Some(kb) = self.dist_reply_limit {
            cfg.reply_limit = Some(kb.saturating_mul(1024));
        }
        lona_vm::dist::start(env, &rt.handle(), cfg)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

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
        #[command(flatten)]
        node: NodeArgs,
        /// Show a live view of the node while the program runs (worker
        /// utilisation, processes by reductions, memory or mailbox); `q`
        /// leaves it. The program's output is printed when it closes.
        #[arg(long)]
        top: bool,
    },
    /// Evaluate Lonala source given on the command line and print the
    /// value of its last form (on a node built as `lona run`'s).
    Eval {
        /// The source text.
        expr: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Run the tests of `*_test.lona` files (lona.test): each file on a
    /// fresh node, each test in a process of its own. PATHS are files or
    /// directories searched recursively (default: `test/` if it exists,
    /// else the current directory). Prints each failure and `N passed, M
    /// failed`; exit status 1 if anything failed or a file did not load.
    Test {
        /// Test files or directories.
        paths: Vec<std::path::PathBuf>,
        /// Milliseconds a test may run before it is killed and failed.
        #[arg(long, default_value_t = lona_vm::test_runner::DEFAULT_TIMEOUT_MS)]
        timeout: u64,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// An interactive shell: each form is evaluated in a shell process.
    Repl {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Run a benchmark workload and print its one-line result.
    Bench {
        /// Workload name, or `all`; `xcore` measures the host (a cache
        /// line's round trip between CPUs 0 and 1), not Lona.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(bench::NAMES.iter().chain(bench::SERVERS).copied().chain(["all", "xcore"])))]
        workload: String,
        /// For a server (`echo-server`, `http-server`): the port to listen on
        /// (0: any).
        port: Option<u16>,
        /// Worker threads (default: available cores).
        #[arg(long)]
        workers: Option<usize>,
        /// Pin worker thread i to core i mod cores.
        #[arg(long)]
        pin: bool,
    },
}

/// How long a worker stays without work before it gives memory back
/// ([`give_back_memory`]).
pub const IDLE_GIVE_BACK: std::time::Duration = std::time::Duration::from_secs(1);

/// Gives the system back what an idle node holds and does not use, on a
/// worker that found no work for [`IDLE_GIVE_BACK`] (the runtime's idle
/// hook; a busy node never pays for it):
/// - the heap blocks the node keeps for reuse (up to 384 MB of freed heaps
///   of 1 MiB and more, `lona_term::trim_block_cache`), unmapped;
/// - the pages mimalloc holds for this thread: freed memory waits in its
///   thread's heap and arenas until the thread calls into the allocator
///   again (after a 10-100 ms delay it purges with `MADV_DONTNEED`), which
///   an idle worker never does; `mi_collect` purges it now.
///
/// What stays: the memory of live processes, mimalloc's own metadata and
/// the small pages each thread keeps warm, and the code and atom tables.
pub fn give_back_memory() {
    lona_term::trim_block_cache();
    // SAFETY: mi_collect takes no pointers; it only walks and purges the
    // calling thread's own heap (and the shared arenas, under their locks).
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Huge pages for large heap blocks only. `no_thp` has mimalloc turn
/// transparent huge pages off for the whole process
/// (`PR_SET_THP_DISABLE`), which also refuses them to the heap blocks of
/// 2 MiB and more that `lona_term` asks for with `MADV_HUGEPAGE`: a large
/// collection's to-space then takes 512 page faults per 2 MiB. Linux 6.18
/// can keep them off except where advised (`PR_THP_DISABLE_EXCEPT_ADVISED`);
/// mimalloc advises none of its own memory with THP off, so its small
/// pages stay small. On an older kernel the call fails and nothing changes.
fn huge_pages_where_advised() {
    #[cfg(target_os = "linux")]
    {
        const PR_THP_DISABLE_EXCEPT_ADVISED: libc::c_ulong = 1 << 1;
        // Allocate first: mimalloc's initialisation (which turns THP off)
        // has then run and will not undo this.
        drop(std::hint::black_box(Box::new(0u64)));
        // SAFETY: prctl with these arguments only changes this process's
        // THP policy; it reads no memory.
        unsafe {
            libc::prctl(
                libc::PR_SET_THP_DISABLE,
                1 as libc::c_ulong,
                PR_THP_DISABLE_EXCEPT_ADVISED,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
    }
}

fn main() -> ExitCode {
    huge_pages_where_advised();
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            file,
            args,
            node,
            top: true,
        } => top::run(&file, args, node),
        Command::Run {
            file,
            args,
            node,
            top: false,
        } => program::run(&file, args, node),
        Command::Eval { expr, node } => program::eval(&expr, node),
        Command::Repl { node } => repl::repl(node),
        Command::Test {
            paths,
            timeout,
            node,
        } => test::run(paths, timeout, node),
        Command::Bench {
            workload,
            port,
            workers,
            pin,
        } => match if bench::SERVERS.contains(&workload.as_str()) {
            bench::serve(&workload, port.unwrap_or(0), workers, pin)
        } else {
            bench::run(&workload, workers, pin)
        } {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lona bench {workload}: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
