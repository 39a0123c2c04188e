//! The process functions of `lona.core` (lonala.md, "Processes"), over the
//! runtime's [`StepCx`](lona_runtime::StepCx), with Erlang's semantics and error
//! reasons. `receive` is compiled (`compiler/receive.rs`); `sleep`,
//! `alive?` and `process-info` of another process wait for an answer, so
//! they are Lonala code in `prelude.lona` over `request-alive` and
//! `request-info` here.
//!
//! | function | Erlang | errors |
//! | --- | --- | --- |
//! | `(spawn f & args)` | `spawn/1,3` | `:badarg` unless `f` is a function; `:system-limit` past the process limit |
//! | `(spawn-link f & args)`, `(spawn-monitor f & args)` | `spawn_link`, `spawn_monitor` (=> `[pid ref]`) | as `spawn` |
//! | `(spawn-opt f opts & args)` | `spawn_opt`: `:link`, `:monitor`, `:priority` (`:low`, `:normal`, `:high`, `:max`), `:min-heap-size`, `:max-heap-size` (words, heap and stack; 0: none; default the node's), `:name` (a keyword, registered before the process runs) | `:badarg` for an unknown option or priority, a max below the min; `:system-limit` for a min the node cannot back; `[:already-registered pid]` when the name is taken (no process is made) |
//! | `(yield)` | `erlang:yield/0`: ends the slice, so other runnable processes go first | |
//! | `(send dest msg)` | `!`: `dest` a pid or a registered name (keyword); returns `msg`. To another node whose connection is busy (more queued than its limit, `dist/outq.rs`) the caller waits until it drains, as on Erlang's busy distribution port (so do `exit`, `link`, `monitor` and `spawn-request*` there) | `:badarg` for a name nobody holds |
//! | `(link pid)`, `(unlink pid)` | `link/1`, `unlink/1` | `:noproc` linking to a dead process (not trapping exits) |
//! | `(monitor pid-or-name)`, `(demonitor ref [{:flush true :info true}])` | `monitor/2`, `demonitor/1,2` | |
//! | `(exit reason)`, `(exit pid reason)` | `exit/1,2` | |
//! | `(process-flag :trap-exit bool)`, `(process-flag :priority p)`, `(process-flag :max-heap-size words)` | `process_flag/2` (=> old value; a priority as a keyword; 0 for no limit) | `:badarg` for another flag or a bad value |
//! | `(register name pid)`, `(unregister name)`, `(whereis name)` | same | `:badarg`: name taken, pid already named or dead, not registered |
//! | `(processes)`, `(make-ref)`, `(node)` | same | |
//! | `(send-after ms dest msg)`, `(cancel-timer tref)` | `erlang:send_after/3`, `cancel_timer/1` (=> ms left or `false`) | |
//! | `(gc)`, `(gc :full)` | `garbage_collect/0` (at the next safepoint) | |
//! | `(alias ref)`, `(unalias ref)`, `(send-alias pid ref msg)` | `alias/0`, `unalias/1`, `Alias ! Msg` (a reply dropped once the asker gave up) | `:badarg` |
//! | `(runtime-info)` | `statistics/1`, `system_info/1`, `memory/0` in one map | |
//! | `(request-snapshot)` | the walk behind `(i)` (`i/0`), answered as a message | |

use crate::NodeEnv;
use std::sync::Arc;
use std::time::Duration;

use lona_runtime::{Dest, Pid, Priority, Ref, SpawnError, SpawnOpts, TimerRef};
use lona_term::{Fragment, Heap, HeapConfig, RawTerm, Term, View};

use super::def;
use crate::builtins::ANY;
use crate::msg::{info_term, pid_term, ref_term, term_pid, term_reason};
use crate::native::{BuiltinCx, NResult, Raise, Request};
use crate::remote::{Distribution, RemoteSendError, Watched};
use crate::var::Namespace;

/// Timer references are reference terms with this bit set (process
/// references never reach it), so the two kinds never compare equal.
const TIMER_BIT: u64 = 1 << 63;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

fn pid_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<Pid, Raise> {
    term_pid(t(cx, r)).ok_or_else(Raise::badarg)
}

fn name_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a str, Raise> {
    match t(cx, r).view() {
        View::Keyword(a) => Ok(a.name()),
        _ => Err(Raise::badarg()),
    }
}

fn ref_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<u64, Raise> {
    match t(cx, r).view() {
        View::Ref(id) => Ok(id),
        _ => Err(Raise::badarg()),
    }
}

/// `(yield)`: ends the slice; the runtime queues the process behind the
/// others that are runnable.
fn yield_(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    cx.request = Some(Request::Yield);
    Ok(Term::TRUE.raw())
}

fn self_(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let me = cx.rt()?.pid();
    Ok(pid_term(cx.heap, me).raw())
}

fn send(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    // A message is sent as it is, metadata and all.
    let msg = cx.term_with_meta(a[1]);
    let dest = t(cx, a[0]);
    match dest.view() {
        View::Pid(p) => {
            // One copy, proportional to the message's size.
            let frag = Fragment::new(msg);
            cx.charge(frag.words() / 64);
            cx.rt()?.send(Pid::from_bits(p.0), frag)
        }
        // A process of another node: encoded here and queued on that
        // node's connection (made now if there is none, as in Erlang).
        // A pid of an earlier incarnation of this node reaches nobody.
        View::ExtPid {
            node,
            id,
            serial,
            creation,
        } => {
            if let Some(d) = cx.env.node().dist().cloned() {
                if node != d.atom() {
                    let me = cx.rt()?.pid();
                    let r = d.send_pid(Some(me), node.name(), (id, serial, creation), msg);
                    if matches!(r, Err(RemoteSendError::Busy)) {
                        return busy(cx, "send-busy*");
                    }
                    remote_sent(cx, r)?;
                }
            }
        }
        View::Keyword(k) => {
            let frag = Fragment::new(msg);
            cx.charge(frag.words() / 64);
            if cx.rt()?.send_name(k.name(), frag).is_err() {
                return Err(Raise::badarg());
            }
        }
        // `[name node]`: a registered process on a node, ours or another.
        View::Vector(v) if v.len() == 2 => {
            let (View::Keyword(name), View::Keyword(node)) = (v[0].view(), v[1].view()) else {
                return Err(Raise::badarg());
            };
            let dist = cx.env.node().dist().cloned();
            let ours = match &dist {
                Some(d) => node == d.atom(),
                None => node.name() == "nonode@nohost",
            };
            if ours {
                // Erlang: `{Name, node()} ! M` to a name not registered
                // is dropped silently, unlike `Name ! M`.
                let frag = Fragment::new(msg);
                cx.charge(frag.words() / 64);
                let _ = cx.rt()?.send_name(name.name(), frag);
            } else if let Some(d) = dist {
                let me = cx.rt()?.pid();
                let r = d.send_reg(me, name.name(), node.name(), msg);
                if matches!(r, Err(RemoteSendError::Busy)) {
                    return busy(cx, "send-busy*");
                }
                remote_sent(cx, r)?;
            }
            // Not distributed: a message for another node goes nowhere.
        }
        _ => return Err(Raise::badarg()),
    }
    Ok(a[1])
}

/// The connection to the node a call is for is busy (more queued than
/// its limit, `dist/outq.rs`): the call continues in the prelude's `name`,
/// with the same arguments, which waits for the connection to drain
/// (`dist-wait*`) and calls the built-in again. As Erlang suspends a
/// process sending to a busy distribution port; no worker blocks.
fn busy(cx: &mut BuiltinCx<'_, '_>, name: &str) -> NResult {
    crate::builtins::redirect(cx, name)
}

/// `(dist-await* dest)`: when the connection to the node of `dest` (a
/// pid of another node, `[name node]`, or a node keyword or string) is
/// busy, arms a
/// `[:lona.dist/ready ref]` message for the caller when it has drained
/// (or ended) and returns `ref`; otherwise nil (send now).
fn dist_await(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let node = match t(cx, a[0]).view() {
        View::ExtPid { node, .. } => node.name().to_string(),
        View::Vector(v) if v.len() == 2 => match v[1].view() {
            View::Keyword(n) => n.name().to_string(),
            _ => return Err(Raise::badarg()),
        },
        _ => node_name(cx, a[0])?,
    };
    let Some(d) = cx.env.node().dist().cloned() else {
        return Ok(Term::NIL.raw());
    };
    let me = cx.rt()?.pid();
    Ok(match d.arm_ready(me, &node, true) {
        Some(r) => cx.heap.reference(r).raw(),
        None => Term::NIL.raw(),
    })
}

/// Charges for a message encoded for another node, or raises
/// `[:badarg why]` for one that cannot go.
fn remote_sent(cx: &mut BuiltinCx<'_, '_>, r: Result<usize, RemoteSendError>) -> Result<(), Raise> {
    match r {
        Ok(bytes) => {
            cx.charge(bytes / 512);
            Ok(())
        }
        Err(e) => {
            let why = cx.heap.string(&e.to_string());
            Err(Raise::error(
                cx.heap.vector(&[lona_term::kw!("badarg"), why]),
            ))
        }
    }
}

/// What a spawned process starts with: `[f & args]`, copied into a
/// fragment it attaches to its own heap; its closures are not pinned
/// (`area::spawned`).
fn start_fragment(cx: &BuiltinCx<'_, '_>, f: RawTerm, args: &[RawTerm]) -> Result<Fragment, Raise> {
    let ft = t(cx, f);
    if !matches!(ft.view(), View::Closure { .. }) {
        return Err(Raise::badarg());
    }
    let mut buf = [ft; 8];
    let mut more = Vec::new();
    let items: &[Term<'_>] = if args.len() < buf.len() {
        for (b, a) in buf[1..].iter_mut().zip(args) {
            *b = t(cx, *a);
        }
        &buf[..args.len() + 1]
    } else {
        more.reserve(args.len() + 1);
        more.push(ft);
        more.extend(args.iter().map(|a| t(cx, *a)));
        &more
    };
    Ok(Fragment::vector_unpinned(items))
}

fn do_spawn(
    cx: &mut BuiltinCx<'_, '_>,
    f: RawTerm,
    args: &[RawTerm],
    opts: SpawnOpts,
    heap: HeapConfig,
) -> Result<(Pid, Option<Ref>), Raise> {
    do_spawn_named(cx, None, f, args, opts, heap)
}

fn do_spawn_named(
    cx: &mut BuiltinCx<'_, '_>,
    name: Option<&str>,
    f: RawTerm,
    args: &[RawTerm],
    opts: SpawnOpts,
    heap: HeapConfig,
) -> Result<(Pid, Option<Ref>), Raise> {
    let start = start_fragment(cx, f, args)?;
    let codes = lona_compiler::area::Codes::of(&start);
    cx.charge(start.words() / 64);
    let env = cx.env.clone();
    // A large `:min-heap-size` is made here, fallibly: one the node cannot
    // back fails the spawn with `:system-limit`, as a full process table
    // does. The usual small heap is made inside `make`, so the closure
    // moved through the spawn stays a few words (a `Heap` moved by value
    // through three calls cost every spawn ~200 instructions of memcpy).
    let heap = if heap.min_heap_size <= SMALL_HEAP_WORDS {
        SpawnHeap::Config(heap)
    } else {
        SpawnHeap::Made(Box::new(
            Heap::try_with_config(heap).map_err(|_| Raise::system_limit())?,
        ))
    };
    let make = move |_| -> Box<dyn lona_runtime::Process> {
        let heap = match heap {
            SpawnHeap::Config(c) => Heap::with_config(c),
            SpawnHeap::Made(h) => *h,
        };
        Box::new(crate::process::LonaProcess::spawned_on(env, start, heap))
    };
    let r = match name {
        None => cx.rt()?.spawn(opts, make),
        Some(n) => cx.rt()?.spawn_named(n, opts, make),
    };
    if r.is_ok() {
        lona_compiler::area::spawned(&codes);
    }
    r.map_err(|e| match e {
        SpawnError::SystemLimit { .. } => Raise::system_limit(),
        SpawnError::ShuttingDown => Raise::error(lona_term::kw!("shutting-down")),
        SpawnError::NameTaken { holder, .. } => Raise::error(cx.heap.vector(&[
            lona_term::kw!("already-registered"),
            pid_term(cx.heap, holder),
        ])),
    })
}

/// A `:min-heap-size` up to this is made by the new process itself.
const SMALL_HEAP_WORDS: usize = 4096;

/// The heap a spawn hands to its new process.
enum SpawnHeap {
    Config(lona_term::HeapConfig),
    Made(Box<Heap>),
}

fn spawn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (pid, _) = do_spawn(
        cx,
        a[0],
        &a[1..],
        SpawnOpts::default(),
        crate::process::spawned_heap(cx.env),
    )?;
    Ok(pid_term(cx.heap, pid).raw())
}

fn spawn_link(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let opts = SpawnOpts::new().link(true);
    let (pid, _) = do_spawn(
        cx,
        a[0],
        &a[1..],
        opts,
        crate::process::spawned_heap(cx.env),
    )?;
    Ok(pid_term(cx.heap, pid).raw())
}

fn spawn_monitor(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let opts = SpawnOpts::new().monitor(true);
    let (pid, mref) = do_spawn(
        cx,
        a[0],
        &a[1..],
        opts,
        crate::process::spawned_heap(cx.env),
    )?;
    let mref = mref.ok_or_else(Raise::badarg)?;
    let v = cx
        .heap
        .vector(&[pid_term(cx.heap, pid), ref_term(cx.heap, mref)]);
    Ok(v.raw())
}

fn spawn_opt(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let View::Map(m) = t(cx, a[1]).view() else {
        return Err(Raise::badarg());
    };
    let mut opts = SpawnOpts::default();
    let mut heap = crate::process::spawned_heap(cx.env);
    let mut name = None;
    for (k, v) in m.iter() {
        let words = || match v.as_i64() {
            Some(n) if n >= 0 => Ok(n as usize),
            _ => Err(Raise::badarg()),
        };
        match k.view() {
            View::Keyword(k) => match k.name() {
                "link" => opts = opts.link(crate::tag::truthy(v.bits())),
                "monitor" => opts = opts.monitor(crate::tag::truthy(v.bits())),
                "priority" => opts = opts.priority(priority_arg(v)?),
                "min-heap-size" => heap.min_heap_size = words()?.max(1),
                "max-heap-size" => heap.max_heap_size = words()?,
                "name" => match v.view() {
                    View::Keyword(n) => name = Some(n.name()),
                    _ => return Err(Raise::badarg()),
                },
                _ => return Err(Raise::badarg()),
            },
            _ => return Err(Raise::badarg()),
        }
    }
    // As Erlang: a limit below the minimum heap size is a bad argument.
    if heap.max_heap_size > 0 && heap.max_heap_size < heap.min_heap_size {
        return Err(Raise::badarg());
    }
    let (pid, mref) = do_spawn_named(cx, name, a[0], &a[2..], opts, heap)?;
    let p = pid_term(cx.heap, pid);
    Ok(match mref {
        Some(r) => cx.heap.vector(&[p, ref_term(cx.heap, r)]).raw(),
        None => p.raw(),
    })
}

/// This node's distribution, a node's name and a process's (id, serial,
/// creation) there.
type RemoteArg = (Arc<dyn Distribution>, &'static str, (u32, u32, u32));

/// A pid of another node (`node`, (id, serial, creation)) and this
/// node's distribution, when `r` is one and this node is distributed.
fn remote_pid(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Option<RemoteArg> {
    match t(cx, r).view() {
        View::ExtPid {
            node,
            id,
            serial,
            creation,
        } => {
            let d = cx.env.node().dist()?.clone();
            (node != d.atom()).then(|| (d, node.name(), (id, serial, creation)))
        }
        _ => None,
    }
}

fn link(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some((d, node, rpid)) = remote_pid(cx, a[0]) {
        if d.busy(node) {
            return busy(cx, "link-busy*");
        }
        let me = cx.rt()?.pid();
        if let Some(w) = d.link(me, node, rpid) {
            // The writer traps exits: this only tells it our end.
            let _ = cx.rt()?.link(w);
        }
        return Ok(Term::TRUE.raw());
    }
    let pid = pid_arg(cx, a[0])?;
    cx.rt()?
        .link(pid)
        .map_err(|_| Raise::error(lona_term::kw!("noproc")))?;
    Ok(Term::TRUE.raw())
}

fn unlink(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some((d, node, rpid)) = remote_pid(cx, a[0]) {
        let me = cx.rt()?.pid();
        d.unlink(me, node, rpid);
        return Ok(Term::TRUE.raw());
    }
    let pid = pid_arg(cx, a[0])?;
    cx.rt()?.unlink(pid);
    Ok(Term::TRUE.raw())
}

fn monitor(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let target = t(cx, a[0]);
    let pid = match target.view() {
        View::Pid(p) => Pid::from_bits(p.0),
        View::Keyword(k) => match cx.rt()?.whereis(k.name()) {
            Some(p) => p,
            None => return down_at_once(cx, target, lona_term::kw!("noproc")),
        },
        // A process of another node: the node watches it for us.
        View::ExtPid {
            node,
            id,
            serial,
            creation,
        } => {
            let me = cx.rt()?.pid();
            return match cx.env.node().dist().cloned() {
                Some(d) if node != d.atom() && d.busy(node.name()) => busy(cx, "monitor-busy*"),
                Some(d) if node != d.atom() => {
                    let what = Watched::Pid(id, serial, creation);
                    let mref = d.monitor(me, node.name(), what, target);
                    Ok(ref_term(cx.heap, mref).raw())
                }
                // An earlier incarnation of this node: long gone.
                Some(_) => down_at_once(cx, target, lona_term::kw!("noproc")),
                None => down_at_once(cx, target, lona_term::kw!("noconnection")),
            };
        }
        // `[name node]`: a registered process, here or on another node.
        View::Vector(v) if v.len() == 2 => {
            let (View::Keyword(name), View::Keyword(node)) = (v[0].view(), v[1].view()) else {
                return Err(Raise::badarg());
            };
            let me = cx.rt()?.pid();
            match cx.env.node().dist().cloned() {
                Some(d) if node != d.atom() && d.busy(node.name()) => {
                    return busy(cx, "monitor-busy*")
                }
                Some(d) if node != d.atom() => {
                    let what = Watched::Name(name.name());
                    let mref = d.monitor(me, node.name(), what, target);
                    return Ok(ref_term(cx.heap, mref).raw());
                }
                None if node.name() != "nonode@nohost" => {
                    return down_at_once(cx, target, lona_term::kw!("noconnection"))
                }
                _ => match cx.rt()?.whereis(name.name()) {
                    Some(p) => p,
                    None => return down_at_once(cx, target, lona_term::kw!("noproc")),
                },
            }
        }
        _ => return Err(Raise::badarg()),
    };
    let mref = cx.rt()?.monitor(pid);
    Ok(ref_term(cx.heap, mref).raw())
}

/// A monitor that fires at once (as Erlang's on a name nobody holds, or
/// a node that cannot be reached): its `DOWN` names `target`.
fn down_at_once(cx: &mut BuiltinCx<'_, '_>, target: Term<'_>, reason: Term<'_>) -> NResult {
    let mref = Ref::new();
    let rt = cx.rt()?;
    let me = rt.pid();
    let down = cx.heap.vector(&[
        lona_term::kw!("DOWN"),
        ref_term(cx.heap, mref),
        target,
        reason,
    ]);
    cx.rt()?.send(me, Fragment::new(down));
    Ok(ref_term(cx.heap, mref).raw())
}

fn demonitor(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let id = ref_arg(cx, a[0])?;
    let (mut flush, mut info) = (false, false);
    if let Some(o) = a.get(1) {
        let View::Map(m) = t(cx, *o).view() else {
            return Err(Raise::badarg());
        };
        for (k, v) in m.iter() {
            match k.view() {
                View::Keyword(k) if k.name() == "flush" => flush = crate::tag::truthy(v.bits()),
                View::Keyword(k) if k.name() == "info" => info = crate::tag::truthy(v.bits()),
                _ => return Err(Raise::badarg()),
            }
        }
    }
    let mut was = cx.rt()?.demonitor(Ref::from_bits(id), flush);
    if !was {
        // A monitor on another node's process, or one that fired at once:
        // its `DOWN` is an ordinary message.
        let me = cx.rt()?.pid();
        if let Some(d) = cx.env.node().dist() {
            was = d.demonitor(me, id);
        }
        if flush {
            flush_down(cx, id)?;
        }
    }
    Ok(Term::bool(was || !info).raw())
}

/// Removes the `[:DOWN ref ...]` message of monitor `id` from the
/// mailbox, if one is there.
fn flush_down(cx: &mut BuiltinCx<'_, '_>, id: u64) -> Result<(), Raise> {
    let rt = cx.rt()?;
    rt.drain();
    let rid = rt.new_receive();
    loop {
        let scan = rt.take_message(rid, |e| {
            let Some(f) = e.downcast_ref::<Fragment>() else {
                return false;
            };
            match f.root().view() {
                View::Vector(v) if v.len() == 4 => {
                    matches!(v[0].view(), View::Keyword(k) if k.name() == "DOWN")
                        && matches!(v[1].view(), View::Ref(r) if r == id)
                }
                _ => false,
            }
        });
        match scan {
            lona_runtime::Scan::OutOfBudget => continue,
            _ => return Ok(()),
        }
    }
}

fn exit(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let [reason] = a {
        return Err(Raise {
            class: crate::native::Class::Exit,
            reason: *reason,
        });
    }
    if let Some((d, node, rpid)) = remote_pid(cx, a[0]) {
        let me = cx.rt()?.pid();
        let r = d.exit(me, node, rpid, t(cx, a[1])).map(|()| 0);
        if matches!(r, Err(RemoteSendError::Busy)) {
            return busy(cx, "exit-busy*");
        }
        remote_sent(cx, r)?;
        return Ok(Term::TRUE.raw());
    }
    let pid = pid_arg(cx, a[0])?;
    let reason = term_reason(t(cx, a[1]), None);
    let rt = cx.rt()?;
    rt.send_exit(pid, reason);
    if rt.exiting() {
        // It ended this process: stop at the next safepoint.
        *cx.reds = 0;
    }
    Ok(Term::TRUE.raw())
}

/// `:low`, `:normal`, `:high` or `:max`.
fn priority_arg(v: Term<'_>) -> Result<Priority, Raise> {
    match v.view() {
        View::Keyword(k) => Priority::from_name(k.name()).ok_or_else(Raise::badarg),
        _ => Err(Raise::badarg()),
    }
}

fn process_flag(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    match name_arg(cx, a[0])? {
        "trap-exit" => {}
        "max-heap-size" => {
            // Words, 0 for none; the VM sets it when the call returns (the
            // built-in only sees its heap shared). Checked from the next
            // growth or collection on.
            let words = match t(cx, a[1]).as_i64() {
                Some(n) if n >= 0 => n as usize,
                _ => return Err(Raise::badarg()),
            };
            let old = cx.heap.config().max_heap_size;
            cx.request = Some(Request::MaxHeapSize { words });
            return Ok(Term::small_int(old as i64).unwrap_or(Term::NIL).raw());
        }
        "priority" => {
            let prio = priority_arg(t(cx, a[1]))?;
            let old = cx.rt()?.set_priority(prio);
            return Ok(Term::keyword(old.as_str()).raw());
        }
        _ => return Err(Raise::badarg()),
    }
    let on = match t(cx, a[1]).view() {
        View::Bool(b) => b,
        _ => return Err(Raise::badarg()),
    };
    let old = cx.rt()?.set_trap_exit(on);
    Ok(Term::bool(old).raw())
}

fn register(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = name_arg(cx, a[0])?;
    let pid = pid_arg(cx, a[1])?;
    cx.rt()?.register(name, pid).map_err(|_| Raise::badarg())?;
    Ok(Term::TRUE.raw())
}

fn unregister(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = name_arg(cx, a[0])?;
    if !cx.rt()?.unregister(name) {
        return Err(Raise::badarg());
    }
    Ok(Term::TRUE.raw())
}

fn whereis(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = name_arg(cx, a[0])?;
    Ok(match cx.rt()?.whereis(name) {
        Some(p) => pid_term(cx.heap, p).raw(),
        None => Term::NIL.raw(),
    })
}

fn processes(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let all = cx.rt()?.handle().processes();
    cx.charge(all.len() / 8);
    let items: Vec<Term<'_>> = all.iter().map(|p| pid_term(cx.heap, *p)).collect();
    Ok(cx.heap.list(&items).raw())
}

/// `(alias ref)`: makes `ref` (e.g. a monitor's) an active alias of this
/// process and returns it: a message sent to it with `send-alias` arrives
/// only while it is active (Erlang's `alias/0`, used for replies that
/// must not arrive after a timeout).
fn alias(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let id = ref_arg(cx, a[0])?;
    if id & TIMER_BIT != 0 {
        return Err(Raise::badarg());
    }
    cx.rt()?.alias(Ref::from_bits(id));
    Ok(a[0])
}

/// `(unalias ref)`: deactivates the alias; `true` if it was active. A
/// message sent to it afterwards is dropped, even one already on its way.
fn unalias(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let id = ref_arg(cx, a[0])?;
    Ok(Term::bool(cx.rt()?.unalias(Ref::from_bits(id))).raw())
}

/// `(send-alias pid ref msg)`: sends `msg` to `pid` through its alias
/// `ref`; dropped on arrival unless the alias is active. Returns `msg`.
fn send_alias(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let View::ExtPid { .. } = t(cx, a[0]).view() {
        // Another node's process: the message goes to the pid (as
        // Erlang's `gen:reply` does for a tag that is not an alias).
        return send(cx, &[a[0], a[2]]);
    }
    let pid = pid_arg(cx, a[0])?;
    let id = ref_arg(cx, a[1])?;
    let frag = Fragment::new(t(cx, a[2]));
    cx.charge(frag.words() / 64);
    cx.rt()?.send_alias(pid, Ref::from_bits(id), frag);
    Ok(a[2])
}

/// `(request-snapshot)`: starts the walk of `(i)` (see `introspect`); the
/// table comes as `[:snapshot-reply tag text]` with the returned tag.
fn request_snapshot(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let rt = cx.rt()?;
    let tag = Ref::new();
    crate::introspect::start_table(rt.handle(), rt.pid(), tag)
        .map_err(|_| Raise::system_limit())?;
    Ok(ref_term(cx.heap, tag).raw())
}

/// `(runtime-info)`: the node's figures (see `introspect`).
fn runtime_info(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let info = cx.rt()?.handle().runtime_info();
    Ok(crate::introspect::runtime_info_term(cx.heap, &info).raw())
}

/// `(request-alive pid)`: `true`/`false` when known at once, else the tag
/// of the question; the answer comes as `[:alive-reply tag bool]`.
fn request_alive(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let pid = pid_arg(cx, a[0])?;
    Ok(match cx.rt()?.request_alive(pid) {
        Ok(b) => Term::bool(b).raw(),
        Err(tag) => ref_term(cx.heap, tag).raw(),
    })
}

/// `(request-info pid)`: this process's info map (or `nil`) when known at
/// once, else the tag of the question; the answer comes as
/// `[:info-reply tag info-or-nil]`.
fn request_info(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let pid = pid_arg(cx, a[0])?;
    let rt = cx.rt()?;
    if pid == rt.pid() {
        let mut info = rt.info();
        // Attached messages included, as for other processes.
        let words = cx.heap.heap_words() + cx.heap.fragment_words();
        info.heap_words = Some(words);
        info.memory += words * 8;
        return Ok(info_term(cx.heap, &info).raw());
    }
    if !rt.is_alive_now(pid) {
        return Ok(Term::NIL.raw());
    }
    let tag = rt.request_info(pid);
    Ok(ref_term(cx.heap, tag).raw())
}

fn make_ref(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    Ok(ref_term(cx.heap, Ref::new()).raw())
}

fn node(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    // `(node x)`: the node of a pid or reference.
    if let Some(x) = a.first() {
        match t(cx, *x).view() {
            View::ExtPid { node, .. } | View::ExtRef { node, .. } => {
                return Ok(Term::keyword_atom(node).raw())
            }
            View::Pid(_) | View::Ref(_) => {}
            _ => return Err(Raise::badarg()),
        }
    }
    Ok(match cx.env.node().dist() {
        Some(d) => Term::keyword_atom(d.atom()).raw(),
        None => lona_term::kw!("nonode@nohost").raw(),
    })
}

/// `(spawn-request* node 'ns/f args link? monitor?)`: asks `node` to
/// spawn `ns/f` with `args` (a vector) for this process; the reference of
/// the request, answered by a `[:spawn-reply ref pid-or-[:error why]]`
/// message (`spawn-on` and friends wait for it).
fn spawn_request(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let node = node_name(cx, a[0])?;
    let (module, function) = match t(cx, a[1]).view() {
        View::Symbol(s) => match s.name().rsplit_once('/') {
            Some((m, f)) if !m.is_empty() && !f.is_empty() => (m, f),
            _ => return Err(Raise::badarg()),
        },
        _ => return Err(Raise::badarg()),
    };
    let args = match t(cx, a[2]).view() {
        View::Vector(v) => cx.heap.list(v),
        View::EmptyList | View::Nil => Term::EMPTY_LIST,
        View::Cons(..) => t(cx, a[2]),
        _ => return Err(Raise::badarg()),
    };
    let link = crate::tag::truthy(a[3].bits());
    let monitor = crate::tag::truthy(a[4].bits());
    let me = cx.rt()?.pid();
    let Some(d) = cx.env.node().dist().cloned() else {
        return Err(Raise::error(lona_term::kw!("not-distributed")));
    };
    if node == d.name() {
        return Err(Raise::badarg());
    }
    match d.spawn_request(me, &node, module, function, args, link, monitor) {
        Ok(r) => Ok(ref_term(cx.heap, r).raw()),
        Err(RemoteSendError::Busy) => busy(cx, "spawn-request-busy*"),
        Err(e) => {
            let why = cx.heap.string(&e.to_string());
            Err(Raise::error(
                cx.heap.vector(&[lona_term::kw!("badarg"), why]),
            ))
        }
    }
}

/// `(monitor-node node flag)`: with true, `[:nodedown node]` comes when
/// the connection to `node` goes (at once if it cannot be made); with
/// false, one such request less. `true`.
fn monitor_node(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = node_name(cx, a[0])?;
    let on = crate::tag::truthy(a[1].bits());
    let me = cx.rt()?.pid();
    match cx.env.node().dist().cloned() {
        Some(d) if on => d.monitor_node(me, &name),
        Some(d) => d.demonitor_node(me, &name),
        None if on => {
            let msg = cx.heap.vector(&[lona_term::kw!("nodedown"), t(cx, a[0])]);
            cx.rt()?.send(me, Fragment::new(msg));
        }
        None => {}
    }
    Ok(Term::TRUE.raw())
}

/// `(nodes)`: the nodes this one is connected to, as keywords.
fn nodes(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let names = cx.env.node().dist().map(|d| d.nodes()).unwrap_or_default();
    let items: Vec<Term<'_>> = names
        .iter()
        .filter_map(|n| lona_term::Atom::existing(n).map(Term::keyword_atom))
        .collect();
    Ok(cx.heap.vector(&items).raw())
}

/// A node name argument: a keyword or a string.
fn node_name(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<String, Raise> {
    match t(cx, r).view() {
        View::Keyword(k) => Ok(k.name().to_string()),
        View::Str(s) => Ok(s.to_string()),
        _ => Err(Raise::badarg()),
    }
}

/// `(connect-node n)`: connects to node `n` and waits for the
/// handshake: true once connected, false when it cannot be reached (or
/// this node is not distributed); true for this node itself.
fn connect_node(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = node_name(cx, a[0])?;
    let Some(d) = cx.env.node().dist().cloned() else {
        return Ok(Term::FALSE.raw());
    };
    if name == d.name() {
        return Ok(Term::TRUE.raw());
    }
    Ok(Term::bool(d.connect(&name)).raw())
}

/// `(node-state* n)`: `:up` when a connection to `n` is up, `:pending`
/// while one is being made, `nil` when there is none.
fn node_state(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = node_name(cx, a[0])?;
    Ok(match cx.env.node().dist().and_then(|d| d.state(&name)) {
        Some(true) => lona_term::kw!("up").raw(),
        Some(false) => lona_term::kw!("pending").raw(),
        None => Term::NIL.raw(),
    })
}

/// `(disconnect-node n)`: closes the connection to `n`: true if there
/// was one.
fn disconnect_node(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let name = node_name(cx, a[0])?;
    let was = cx.env.node().dist().is_some_and(|d| d.disconnect(&name));
    Ok(Term::bool(was).raw())
}

fn millis(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<Duration, Raise> {
    match t(cx, r).view() {
        View::Int(n) if n >= 0 => Ok(Duration::from_millis(n as u64)),
        View::BigInt(b) if b.sign() != num_bigint::Sign::Minus => Ok(Duration::MAX),
        _ => Err(Raise::badarg()),
    }
}

fn send_after(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let after = millis(cx, a[0])?;
    let dest = match t(cx, a[1]).view() {
        View::Pid(p) => Dest::Pid(Pid::from_bits(p.0)),
        View::Keyword(k) => Dest::Name(k.name().to_string()),
        _ => return Err(Raise::badarg()),
    };
    let frag = Fragment::new(cx.term_with_meta(a[2]));
    let tref = cx.rt()?.send_after(after, dest, frag);
    Ok(cx.heap.reference(tref.to_bits() | TIMER_BIT).raw())
}

fn cancel_timer(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let id = ref_arg(cx, a[0])?;
    if id & TIMER_BIT == 0 {
        return Err(Raise::badarg());
    }
    let left = cx.rt()?.cancel_timer(TimerRef::from_bits(id & !TIMER_BIT));
    Ok(match left {
        Some(d) if d == Duration::MAX => lona_term::kw!("infinity").raw(),
        Some(d) => cx
            .heap
            .int(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .raw(),
        None => Term::bool(false).raw(),
    })
}

fn gc(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let full = match a.first() {
        None => false,
        Some(k) if name_arg(cx, *k)? == "full" => true,
        Some(_) => return Err(Raise::badarg()),
    };
    cx.request = Some(Request::Gc { full });
    Ok(Term::TRUE.raw())
}

pub(crate) fn install(ns: &'static Namespace) {
    def(ns, "self", 0, 0, self_);
    def(ns, "yield", 0, 0, yield_);
    def(ns, "send", 2, 2, send);
    def(ns, "spawn", 1, ANY, spawn);
    def(ns, "spawn-link", 1, ANY, spawn_link);
    def(ns, "spawn-monitor", 1, ANY, spawn_monitor);
    def(ns, "spawn-opt", 2, ANY, spawn_opt);
    def(ns, "link", 1, 1, link);
    def(ns, "unlink", 1, 1, unlink);
    def(ns, "monitor", 1, 1, monitor);
    def(ns, "demonitor", 1, 2, demonitor);
    def(ns, "exit", 1, 2, exit);
    def(ns, "process-flag", 2, 2, process_flag);
    def(ns, "register", 2, 2, register);
    def(ns, "unregister", 1, 1, unregister);
    def(ns, "whereis", 1, 1, whereis);
    def(ns, "processes", 0, 0, processes);
    def(ns, "request-alive", 1, 1, request_alive);
    def(ns, "request-info", 1, 1, request_info);
    def(ns, "request-snapshot", 0, 0, request_snapshot);
    def(ns, "alias", 1, 1, alias);
    def(ns, "unalias", 1, 1, unalias);
    def(ns, "send-alias", 3, 3, send_alias);
    def(ns, "runtime-info", 0, 0, runtime_info);
    def(ns, "make-ref", 0, 0, make_ref);
    def(ns, "node", 0, 1, node);
    def(ns, "monitor-node", 2, 2, monitor_node);
    def(ns, "spawn-request*", 5, 5, spawn_request);
    def(ns, "dist-await*", 1, 1, dist_await);
    def(ns, "nodes", 0, 0, nodes);
    def(ns, "connect-node*", 1, 1, connect_node);
    def(ns, "node-state*", 1, 1, node_state);
    def(ns, "disconnect-node", 1, 1, disconnect_node);
    def(ns, "send-after", 3, 3, send_after);
    def(ns, "cancel-timer", 1, 1, cancel_timer);
    def(ns, "gc", 0, 1, gc);
}
