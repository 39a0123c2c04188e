//! Seeing inside a running node: the process table of `(i)` and the live
//! view, and the node's figures of `(runtime-info)`.
//!
//! Both read the runtime from outside its processes, so neither stops the
//! node: [`Handle::snapshot`] walks the processes a batch at a time, and
//! [`Handle::runtime_info`] is a handful of atomic loads. `(i)` runs the
//! walk on a thread of its own and sends the printed table back to the
//! asking process as a message, which waits for it in `receive` like for
//! any other answer (`prelude.lona`).

use std::fmt::Write as _;
use std::time::Duration;

use lona_runtime::{Handle, Pid, ProcessEntry, Ref, RuntimeInfo, Snapshot, Status};
use lona_term::{Fragment, Heap, Term};

use crate::msg::ref_term;

/// How long the walk waits for a batch of processes to answer.
pub const PATIENCE: Duration = Duration::from_millis(500);

/// Rows `(i)` prints at most; the rest is summed up in its last line.
pub const I_ROWS: usize = 1000;

/// How the rows of a process table are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    /// Table order (the order of pids), as Erlang's `i()`.
    Pid,
    /// Most reductions first.
    Reductions,
    /// Most memory first.
    Memory,
    /// Longest mailbox first.
    Mailbox,
}

/// The entries of `snap` ordered by `by` (processes that did not answer
/// last, in pid order).
pub fn sorted(snap: &Snapshot, by: SortBy) -> Vec<&ProcessEntry> {
    let mut v: Vec<&ProcessEntry> = snap.processes.iter().collect();
    let key = |e: &ProcessEntry| -> u64 {
        e.info.as_ref().map_or(0, |i| match by {
            SortBy::Pid => 0,
            SortBy::Reductions => i.reductions,
            SortBy::Memory => i.memory as u64,
            SortBy::Mailbox => i.message_queue_len as u64,
        })
    };
    if by != SortBy::Pid {
        v.sort_by(|a, b| {
            b.info
                .is_some()
                .cmp(&a.info.is_some())
                .then(key(b).cmp(&key(a)))
                .then(a.pid.cmp(&b.pid))
        });
    }
    v
}

/// The cells of one row: pid, name, current function, reductions,
/// mailbox, heap words, status (`?` where the process did not answer).
pub fn row_cells(e: &ProcessEntry) -> [String; 7] {
    match &e.info {
        Some(i) => [
            e.pid.to_string(),
            i.registered_name.clone().unwrap_or_default(),
            i.current_function.clone().unwrap_or_else(|| "-".into()),
            i.reductions.to_string(),
            i.message_queue_len.to_string(),
            i.heap_words.map_or_else(|| "-".into(), |w| w.to_string()),
            match i.status {
                Status::Running => "running".into(),
                Status::Waiting => "waiting".into(),
            },
        ],
        None => [
            e.pid.to_string(),
            String::new(),
            "?".into(),
            "?".into(),
            "?".into(),
            "?".into(),
            "busy".into(),
        ],
    }
}

/// The column titles of [`row_cells`].
pub const HEADERS: [&str; 7] = [
    "pid",
    "name",
    "current function",
    "reductions",
    "mailbox",
    "heap words",
    "status",
];

/// The table `(i)` prints: up to `max_rows` processes in pid order, then a
/// line with the totals.
pub fn process_table(snap: &Snapshot, max_rows: usize) -> String {
    let rows: Vec<[String; 7]> = snap
        .processes
        .iter()
        .take(max_rows)
        .map(row_cells)
        .collect();
    let mut width = HEADERS.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count()).min(48);
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        for (k, (c, w)) in cells.iter().zip(width).enumerate() {
            let c: String = c.chars().take(w).collect();
            // Numbers right-aligned, text left-aligned.
            if (3..=5).contains(&k) {
                let _ = write!(out, "{c:>w$}  ");
            } else {
                let _ = write!(out, "{c:<w$}  ");
            }
        }
        let end = out.trim_end_matches(' ').len();
        out.truncate(end);
        out.push('\n');
    };
    line(&mut out, &HEADERS);
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&mut out, &cells);
    }
    let total = snap.processes.len();
    let reds: u64 = snap
        .processes
        .iter()
        .filter_map(|e| e.info.as_ref())
        .map(|i| i.reductions)
        .sum();
    let queued: usize = snap
        .processes
        .iter()
        .filter_map(|e| e.info.as_ref())
        .map(|i| i.message_queue_len)
        .sum();
    let silent = snap.processes.iter().filter(|e| e.info.is_none()).count();
    let _ = write!(
        out,
        "{total} processes, {reds} reductions, {queued} messages queued"
    );
    if silent > 0 {
        let _ = write!(out, ", {silent} busy (did not answer)");
    }
    if total > rows.len() {
        let _ = write!(out, "; first {} shown", rows.len());
    }
    out.push('\n');
    out
}

/// Starts `(i)`'s walk on a thread of its own; the table arrives at `to`
/// as the message `[:snapshot-reply tag text]`.
pub fn start_table(handle: Handle, to: Pid, tag: Ref) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("lona-snapshot".into())
        .spawn(move || {
            let text = process_table(&handle.snapshot(PATIENCE), I_ROWS);
            let heap = Heap::new();
            let msg = heap.vector(&[
                lona_term::kw!("snapshot-reply"),
                ref_term(&heap, tag),
                heap.string(&text),
            ]);
            handle.send(to, Fragment::new(msg));
        })
        .map(drop)
}

/// Bytes of memory by kind: `(total, binary, code, table)`; total is the
/// resident set (Linux; 0 elsewhere).
pub fn memory_by_kind(info: &RuntimeInfo) -> [(&'static str, usize); 4] {
    [
        ("total", resident_bytes()),
        ("binary", lona_term::shared_binary_bytes()),
        ("code", lona_term::permanent_bytes()),
        ("process-table", info.table_bytes),
    ]
}

/// The node's resident memory in bytes (Linux: `/proc/self/statm`; 0
/// where unknown).
pub fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages.saturating_mul(4096)
}

/// `(runtime-info)`'s map.
pub fn runtime_info_term<'h>(heap: &'h Heap, info: &RuntimeInfo) -> Term<'h> {
    let int = |n: u128| heap.int(i64::try_from(n).unwrap_or(i64::MAX));
    let workers: Vec<Term<'h>> = info
        .workers
        .iter()
        .map(|w| {
            let total = (w.busy + w.idle).as_secs_f64();
            let util = if total > 0.0 {
                w.busy.as_secs_f64() / total
            } else {
                0.0
            };
            heap.map(&[
                (lona_term::kw!("busy-ms"), int(w.busy.as_millis())),
                (lona_term::kw!("idle-ms"), int(w.idle.as_millis())),
                (lona_term::kw!("utilisation"), heap.float(util)),
                (lona_term::kw!("run-queue"), int(w.run_queue as u128)),
            ])
        })
        .collect();
    let memory: Vec<(Term<'h>, Term<'h>)> = memory_by_kind(info)
        .iter()
        .map(|(k, v)| (Term::keyword(k), int(*v as u128)))
        .collect();
    heap.map(&[
        (lona_term::kw!("uptime-ms"), int(info.uptime.as_millis())),
        (lona_term::kw!("workers"), heap.vector(&workers)),
        (
            lona_term::kw!("injector-queue"),
            int(info.injector_queue as u128),
        ),
        (lona_term::kw!("run-queue"), int(info.runnable() as u128)),
        (
            lona_term::kw!("process-count"),
            int(info.process_count as u128),
        ),
        (
            lona_term::kw!("process-limit"),
            int(info.process_limit as u128),
        ),
        (lona_term::kw!("registered"), int(info.registered as u128)),
        (lona_term::kw!("timers"), int(info.timers as u128)),
        (lona_term::kw!("memory"), heap.map(&memory)),
    ])
}

/// The bytecode of the function `ns/name` as text (the `disasm` example),
/// or why there is none.
pub fn disassemble(env: &crate::Env, ns: &str, name: &str) -> Result<String, crate::LookupError> {
    with_proto(env, ns, name, |p| p.disassemble())
}

/// The arities of the function `ns/name` that have machine code (each is
/// compiled on its own: the one that made the function hot, then each
/// other at its first call after that), in increasing order.
pub fn compiled_arities(
    env: &crate::Env,
    ns: &str,
    name: &str,
) -> Result<Vec<usize>, crate::LookupError> {
    with_proto(env, ns, name, |p| p.ext.jit.compiled_arities())
}

/// Which tier runs the function `ns/name` (the state is the function's;
/// its arities are compiled one by one, [`compiled_arities`]):
/// `"cold"` (interpreted, not hot yet), `"compiled"`, `"leaf"` (compiled,
/// called only by compiled code), `"resting"` (compiled code given up for
/// now: the interpreter runs it until it is tried again) or `"never"`
/// (interpreted for good).
pub fn tier_state(
    env: &crate::Env,
    ns: &str,
    name: &str,
) -> Result<&'static str, crate::LookupError> {
    with_proto(env, ns, name, |p| p.ext.jit.state_name())
}

/// `f` of the prototype of the function var `ns/name` holds, or why
/// there is none.
fn with_proto<T>(
    env: &crate::Env,
    ns: &str,
    name: &str,
    f: impl FnOnce(&crate::bytecode::Proto) -> T,
) -> Result<T, crate::LookupError> {
    let v = env
        .namespaces
        .get(ns)
        .and_then(|n| n.lookup(name))
        .ok_or_else(|| crate::LookupError::NoVar(ns.into(), name.into()))?;
    v.with_term(|t| match t.map(|t| t.view()) {
        Some(lona_term::View::Closure { code, .. }) => {
            // SAFETY: closures carry the code id the VM gave them, the
            // address of a Proto, kept alive by `with_term` (making one
            // with another code word takes `unsafe`, `Heap::closure`).
            Ok(f(unsafe { crate::bytecode::Proto::from_code(code) }))
        }
        None => Err(crate::LookupError::Unbound(ns.into(), name.into())),
        _ => Err(crate::LookupError::NotAFunction(ns.into(), name.into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lona_runtime::ProcessInfo;

    fn info(reductions: u64, name: Option<&str>) -> ProcessInfo {
        ProcessInfo {
            status: Status::Waiting,
            message_queue_len: 2,
            reductions,
            memory: 100,
            links: vec![],
            monitors: vec![],
            monitored_by: vec![],
            registered_name: name.map(str::to_string),
            trap_exit: false,
            current_function: Some("app/loop".into()),
            heap_words: Some(34),
            priority: lona_runtime::Priority::Normal,
            parent: None,
        }
    }

    #[test]
    fn the_table_lists_rows_and_totals() {
        let snap = Snapshot {
            processes: vec![
                ProcessEntry {
                    pid: Pid::from_bits(1),
                    info: Some(info(10, Some("srv"))),
                },
                ProcessEntry {
                    pid: Pid::from_bits(2),
                    info: None,
                },
                ProcessEntry {
                    pid: Pid::from_bits(3),
                    info: Some(info(500, None)),
                },
            ],
        };
        let t = process_table(&snap, 2);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("pid") && lines[0].contains("current function"));
        assert!(
            lines[1].contains("srv") && lines[1].contains("app/loop") && lines[1].contains("34")
        );
        assert!(lines[2].contains("busy"));
        assert_eq!(
            lines[3],
            "3 processes, 510 reductions, 4 messages queued, 1 busy (did not answer); first 2 shown"
        );
        let by_reds = sorted(&snap, SortBy::Reductions);
        assert_eq!(
            by_reds.iter().map(|e| e.pid.index()).collect::<Vec<_>>(),
            vec![3, 1, 2],
            "heaviest first, silent last"
        );
    }
}
