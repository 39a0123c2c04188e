//! `lona run --top FILE`: a live view of the node while the program runs,
//! as `htop` or observer's process tab: worker utilisation bars, process
//! count and memory over time, and the processes sorted by reductions,
//! memory or mailbox length, refreshed every second.
//!
//! 1. The program runs as usual (its main process on a fresh node); what
//!    it prints is kept and shown in the view's last lines, then printed
//!    in full when the view closes.
//! 2. Every second the view takes [`Handle::runtime_info`] (atomic loads)
//!    and [`Handle::snapshot`] (the process walk, which never stops the
//!    node) and draws them; [`View::draw`] is a pure function of what it
//!    was given, so a test renders a frame into a test backend.
//! 3. Keys: `q` or Esc leaves (a program still running is shut down), `r`
//!    `m` `b` `p` sort by reductions, memory, mailbox (box) or pid.

use lona_vm::NodeEnv;
use std::collections::VecDeque;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lona_runtime::{Handle, RuntimeInfo, Snapshot};
use lona_vm::introspect::{self, row_cells, SortBy, HEADERS};
use lona_vm::process::{Ending, LonaProcess};
use lona_vm::{Env, Evaluator, SharedBuf};

use crate::NodeArgs;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;

/// Points of history kept for the sparklines (one per refresh).
const HISTORY: usize = 120;
/// How often the view refreshes.
const REFRESH: Duration = Duration::from_secs(1);

/// What the view shows: the last figures and their history.
pub struct View {
    /// How the process table is ordered.
    pub sort: SortBy,
    info: Option<RuntimeInfo>,
    util: Vec<f64>,
    snapshot: Snapshot,
    processes: VecDeque<u64>,
    memory: VecDeque<u64>,
    /// The program's state line (running, or how it ended).
    pub status: String,
    /// The program's output so far.
    pub output: String,
}

impl Default for View {
    fn default() -> View {
        View {
            sort: SortBy::Reductions,
            info: None,
            util: Vec::new(),
            snapshot: Snapshot::default(),
            processes: VecDeque::new(),
            memory: VecDeque::new(),
            status: "running".into(),
            output: String::new(),
        }
    }
}

impl View {
    /// Takes new figures: `info` now, `snapshot` of the processes.
    pub fn update(&mut self, info: RuntimeInfo, snapshot: Snapshot, resident: usize) {
        self.util = match &self.info {
            Some(prev) => info.utilisation_since(prev),
            None => {
                // Since the node started.
                info.workers
                    .iter()
                    .map(|w| {
                        let t = (w.busy + w.idle).as_secs_f64();
                        if t > 0.0 {
                            w.busy.as_secs_f64() / t
                        } else {
                            0.0
                        }
                    })
                    .collect()
            }
        };
        push_bounded(&mut self.processes, info.process_count as u64);
        push_bounded(&mut self.memory, resident as u64);
        self.info = Some(info);
        self.snapshot = snapshot;
    }

    /// Reads the node behind `h` now.
    pub fn refresh(&mut self, h: &Handle) {
        let info = h.runtime_info();
        let snap = h.snapshot(Duration::from_millis(200));
        self.update(info, snap, introspect::resident_bytes());
    }

    /// Handles a key; returns false when the view should close.
    pub fn key(&mut self, code: KeyCode) -> bool {
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Char('r') => self.sort = SortBy::Reductions,
            KeyCode::Char('m') => self.sort = SortBy::Memory,
            KeyCode::Char('b') => self.sort = SortBy::Mailbox,
            KeyCode::Char('p') => self.sort = SortBy::Pid,
            _ => {}
        }
        true
    }

    /// Draws the whole view into `f`.
    pub fn draw(&self, f: &mut Frame<'_>) {
        let workers = self.util.len().max(1) as u16;
        let [head, bars, graphs, table, out] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(workers + 2),
            Constraint::Length(5),
            Constraint::Min(5),
            Constraint::Length(6),
        ])
        .areas(f.area());
        f.render_widget(Paragraph::new(self.headline()), head);
        self.draw_bars(f, bars);
        self.draw_graphs(f, graphs);
        self.draw_table(f, table);
        let lines: Vec<&str> = self.output.lines().collect();
        let tail = lines[lines.len().saturating_sub(4)..].join("\n");
        f.render_widget(
            Paragraph::new(tail).block(Block::default().borders(Borders::ALL).title(" output ")),
            out,
        );
    }

    fn headline(&self) -> Line<'static> {
        let Some(i) = &self.info else {
            return Line::from("lona top: waiting for the first figures");
        };
        let mem = introspect::memory_by_kind(i);
        Line::from(format!(
            "lona top | {} | up {:.0}s | processes {}/{} | runnable {} | timers {} | names {} | memory {} (binary {}, code {}) | sort: {} (r m b p, q quits)",
            self.status,
            i.uptime.as_secs_f64(),
            i.process_count,
            i.process_limit,
            i.runnable(),
            i.timers,
            i.registered,
            human(mem[0].1),
            human(mem[1].1),
            human(mem[2].1),
            match self.sort {
                SortBy::Pid => "pid",
                SortBy::Reductions => "reductions",
                SortBy::Memory => "memory",
                SortBy::Mailbox => "mailbox",
            }
        ))
    }

    fn draw_bars(&self, f: &mut Frame<'_>, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" scheduler utilisation ");
        let inner = block.inner(area);
        f.render_widget(block, area);
        let rows = Layout::vertical(vec![Constraint::Length(1); self.util.len()]).split(inner);
        let queues: Vec<usize> = self
            .info
            .as_ref()
            .map(|i| i.workers.iter().map(|w| w.run_queue).collect())
            .unwrap_or_default();
        for (k, (u, r)) in self.util.iter().zip(rows.iter()).enumerate() {
            let q = queues.get(k).copied().unwrap_or(0);
            let g = Gauge::default()
                .ratio(u.clamp(0.0, 1.0))
                .label(format!("worker {k}: {:5.1}%  queue {q}", u * 100.0));
            f.render_widget(g, *r);
        }
    }

    fn draw_graphs(&self, f: &mut Frame<'_>, area: Rect) {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(area);
        let procs: Vec<u64> = self.processes.iter().copied().collect();
        let mem: Vec<u64> = self.memory.iter().copied().collect();
        f.render_widget(
            Sparkline::default()
                .block(Block::default().borders(Borders::ALL).title(format!(
                    " processes: {} ",
                    procs.last().copied().unwrap_or(0)
                )))
                .data(&procs),
            left,
        );
        f.render_widget(
            Sparkline::default()
                .block(Block::default().borders(Borders::ALL).title(format!(
                    " memory: {} ",
                    human(mem.last().copied().unwrap_or(0) as usize)
                )))
                .data(&mem),
            right,
        );
    }

    fn draw_table(&self, f: &mut Frame<'_>, area: Rect) {
        let visible = area.height.saturating_sub(3) as usize;
        let rows: Vec<Row<'_>> = introspect::sorted(&self.snapshot, self.sort)
            .into_iter()
            .take(visible)
            .map(|e| Row::new(row_cells(e)))
            .collect();
        let widths = [
            Constraint::Length(14),
            Constraint::Length(16),
            Constraint::Min(20),
            Constraint::Length(12),
            Constraint::Length(8),
            Constraint::Length(11),
            Constraint::Length(8),
        ];
        let table = Table::new(rows, widths)
            .header(Row::new(HEADERS).style(Style::default().add_modifier(Modifier::BOLD)))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(format!(" processes ({}) ", self.snapshot.processes.len())),
            );
        f.render_widget(table, area);
    }
}

fn push_bounded(q: &mut VecDeque<u64>, v: u64) {
    if q.len() == HISTORY {
        q.pop_front();
    }
    q.push_back(v);
}

/// Bytes for people: `12.3 MB`.
fn human(b: usize) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

/// `lona run --top FILE ARGS...`: the program, with the live view on the
/// terminal. The exit status is the program's (0 if it was still running
/// when the view was closed and it then shut down cleanly).
pub fn run(file: &Path, args: Vec<String>, node: NodeArgs) -> ExitCode {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    if let Err(e) = ev.push_file(file) {
        return crate::program::finish(&env, Ok(Ending::Failed(e)));
    }
    ev.call_main_after(args);
    let rt = match node.runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lona: {e}");
            return ExitCode::from(1);
        }
    };
    node.apply(&env);
    if let Err(e) = node.distribute(&env, &rt) {
        eprintln!("lona: {e}");
        return ExitCode::from(1);
    }
    let h = rt.handle();
    if let Err(e) = h.spawn_process(LonaProcess::main(ev, env.node().ending().clone())) {
        eprintln!("lona: cannot spawn the main process: {e}");
        return ExitCode::from(1);
    }
    let shown = watch(&h, &env, &buf);
    // A program still running when the view closes is shut down; one that
    // halted leaves at once (`program::finish`), as `lona run` does.
    let ending = env.node().ending().try_get().unwrap_or(Ending::Normal);
    if !matches!(ending, Ending::Halt(_)) {
        rt.shutdown();
    }
    print_output(&env, &buf);
    if let Err(e) = shown {
        eprintln!("lona: the live view failed: {e}");
    }
    crate::program::finish(&env, Ok(ending))
}

fn print_output(env: &Arc<Env>, buf: &SharedBuf) {
    env.flush_out();
    print!("{}", buf.text());
    let _ = std::io::stdout().flush();
}

/// The view's loop (module doc, steps 2-3), until `q`.
fn watch(h: &Handle, env: &Arc<Env>, buf: &SharedBuf) -> std::io::Result<()> {
    let mut terminal = ratatui::try_init()?;
    let mut view = View::default();
    let mut next = Instant::now();
    let result = loop {
        if Instant::now() >= next {
            env.flush_out();
            view.output = buf.text();
            if let Some(e) = env.node().ending().try_get() {
                view.status = match e {
                    Ending::Normal => "program ended normally".into(),
                    Ending::Halt(n) => format!("program halted ({n})"),
                    Ending::Failed(_) | Ending::Killed(_) => "program failed".into(),
                };
            }
            view.refresh(h);
            if let Err(e) = terminal.draw(|f| view.draw(f)) {
                break Err(e);
            }
            next = Instant::now() + REFRESH;
        }
        match event::poll(Duration::from_millis(50)) {
            Ok(true) => match event::read() {
                Ok(Event::Key(k)) if k.kind == KeyEventKind::Press => {
                    if !view.key(k.code) {
                        break Ok(());
                    }
                    next = Instant::now();
                }
                Ok(_) => {}
                Err(e) => break Err(e),
            },
            Ok(false) => {}
            Err(e) => break Err(e),
        }
    };
    ratatui::restore();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use lona_runtime::Runtime;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(t: &Terminal<TestBackend>) -> String {
        let b = t.backend().buffer();
        let mut s = String::new();
        for y in 0..b.area.height {
            for x in 0..b.area.width {
                s.push_str(b[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    /// One frame of a real node: a ring of Lonala processes passing a
    /// token, a registered server with a backlog.
    #[test]
    fn a_frame_shows_workers_processes_and_the_busiest_first() {
        let rt = Runtime::builder().workers(2).build().unwrap();
        let h = rt.handle();
        let env = Env::new(Box::new(SharedBuf::default()));
        let mut ev = Evaluator::new(env.clone());
        ev.push_source(&lona_vm::Source::new(
            "ring.lona",
            r#"
            (defn relay [next] (receive :token (do (send next :token) (relay next))))
            (defn build [i next] (if (= i 0) next (build (dec i) (spawn relay next))))
            (defn backlog [] (receive :never :ok))
            (let [b (spawn backlog)]
              (register :backlogged b)
              (send b 1) (send b 2) (send b 3))
            (let [first (build 50 (self))]
              (send first :token)
              (relay first))
            "#,
        ))
        .unwrap();
        h.spawn_process(LonaProcess::main(ev, env.node().ending().clone()))
            .unwrap();
        // Let the token go round for a while.
        std::thread::sleep(Duration::from_millis(300));
        let mut view = View::default();
        view.refresh(&h);
        std::thread::sleep(Duration::from_millis(100));
        view.refresh(&h);
        view.output = "hello from the program\n".into();
        let mut t = Terminal::new(TestBackend::new(150, 40)).unwrap();
        t.draw(|f| view.draw(f)).unwrap();
        let s = screen(&t);
        assert!(s.contains("worker 0:") && s.contains("worker 1:"), "{s}");
        assert!(
            s.contains("processes 52/"),
            "main, 50 relays, backlog:\n{s}"
        );
        assert!(s.contains("user/relay"), "{s}");
        assert!(s.contains("hello from the program"), "{s}");
        assert!(s.contains("sort: reductions"), "{s}");
        // Busiest first: the first row under the header is the main
        // process (it built the ring, then relays too) or a relay, not the
        // idle backlog process. (The main process's function shows as `-`
        // when the snapshot finds it running on a worker: the test once
        // failed on that under a loaded CI machine.)
        let lines: Vec<&str> = s.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.contains("current function"))
            .unwrap();
        let first = lines[header + 1];
        assert!(
            first.contains("user/relay") || first.contains("<0.1.0>"),
            "{s}"
        );
        assert!(!first.contains("user/backlog"), "{s}");
        // Sorted by mailbox, the backlogged server heads the table.
        assert!(view.key(KeyCode::Char('b')));
        t.draw(|f| view.draw(f)).unwrap();
        let s = screen(&t);
        let lines: Vec<&str> = s.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.contains("current function"))
            .unwrap();
        assert!(
            lines[header + 1].contains("backlogged") && lines[header + 1].contains("user/backlog"),
            "{s}"
        );
        assert!(!view.key(KeyCode::Char('q')), "q leaves");
        rt.shutdown();
    }
}
