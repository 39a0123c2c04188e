//! The processes of a distribution connection: the acceptor, and per
//! connected node a writer and a reader (the protocol is in `mod.rs`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use erl_dist::handshake::{ClientSideHandshake, HandshakeStatus, ServerSideHandshake};
use erl_dist::node::{Creation, LocalNode, NodeName};
use erl_dist::DistributionFlags;
use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Ctx, Down, Envelope, Pid, Reason, Ref};
use lona_term::etf::AtomBudget;
use lona_term::{Fragment, Heap, Term};

use super::out::{self, Out};
use super::outq::Outq;
use super::pieces::{self, Assembler, Packet};
use super::reason;
use super::reply::{self, Closer, Writer};
use super::wire::{self, put, Control, Cursor, Frame, WireError, WirePid};
use super::{Dist, MAX_PACKET};

/// How long a handshake may take (Erlang's `net_setuptime`, 7 s).
const SETUP_TIME: Duration = Duration::from_secs(7);
/// A writer's batch: it writes once this much is encoded, or its
/// mailbox is empty.
const BATCH_BYTES: usize = 64 << 10;

fn local_node(d: &Dist) -> Result<LocalNode, String> {
    let name = NodeName::new(&d.alive, &d.host).map_err(|e| e.to_string())?;
    let mut n = LocalNode::new(name, Creation::new(d.creation));
    n.flags = DistributionFlags::mandatory()
        | DistributionFlags::PUBLISHED
        | DistributionFlags::SPAWN
        | DistributionFlags::DIST_MONITOR
        | DistributionFlags::DIST_MONITOR_NAME
        | DistributionFlags::FRAGMENTS;
    Ok(n)
}

/// Closes a connection's queue count when its writer ends, however it
/// ends (`Dist::forget` closes it too; twice is harmless): senders that
/// wait for it to drain are woken.
struct CloseOnDrop(Arc<Outq>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

pub(super) fn log(d: &Dist, what: std::fmt::Arguments<'_>) {
    eprintln!("=WARNING REPORT==== distribution ({}): {what}", d.name);
}

/// Spawns the process that accepts connections from other nodes.
pub(crate) fn spawn_acceptor(
    d: &Arc<Dist>,
    listener: TcpListener,
) -> Result<(), super::StartError> {
    let d2 = d.clone();
    d.handle
        .spawn(move |ctx| async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let d3 = d2.clone();
                        let _ = ctx.spawn(move |ctx| accepted(ctx, d3, stream)).await;
                    }
                    Err(e) => {
                        log(&d2, format_args!("accept: {e}"));
                        let _ = ctx
                            .timeout(Duration::from_millis(50), std::future::pending::<()>())
                            .await;
                    }
                }
            }
        })
        .map(|_| ())
        .map_err(super::StartError::Acceptor)
}

/// An incoming connection: the server half of the handshake, then this
/// process is the node's writer (or hands the connection to the writer
/// already trying to reach that node).
async fn accepted(ctx: Ctx, d: Arc<Dist>, stream: TcpStream) {
    let me = ctx.pid();
    // The queue count of the connection, if this process becomes its
    // writer.
    let q = d.new_outq();
    let _close = CloseOnDrop(q.clone());
    let local = match local_node(&d) {
        Ok(n) => n,
        Err(_) => return,
    };
    let hs = async {
        let mut hs = ServerSideHandshake::new(stream, local, &d.cookie);
        let peer = match hs.execute_recv_name().await {
            Ok(Some(n)) => n.to_string(),
            Ok(None) => {
                let _ = hs.execute_rest(HandshakeStatus::NotAllowed).await;
                return Err("a peer asked for a dynamic name (not supported)".to_string());
            }
            Err(e) => return Err(format!("handshake: {e}")),
        };
        // A peer claiming our own name is refused with `nok`, as Erlang
        // refuses it (`net_kernel` gets no connection id for its own node
        // and `dist_util` answers `nok`): accepted, it would be a
        // connection to ourselves, and `nodes` would list this node.
        if peer == d.name {
            let _ = hs.execute_rest(HandshakeStatus::Nok).await;
            return Err(format!(
                "connection attempt from a peer claiming this node's own name ({peer}) refused"
            ));
        }
        // Erlang's rule for an attempt of ours under way to the same
        // node: the greater name's attempt goes on.
        let status = {
            let mut conns = d.conns.lock().unwrap_or_else(|e| e.into_inner());
            match conns.get(&peer).cloned() {
                None => {
                    conns.insert(
                        peer.clone(),
                        super::Conn {
                            writer: me,
                            up: false,
                            q: q.clone(),
                            closer: None,
                        },
                    );
                    (HandshakeStatus::Ok, None)
                }
                Some(c) if c.up => (HandshakeStatus::Alive, None),
                Some(c) if peer.as_str() > d.name.as_str() => {
                    (HandshakeStatus::OkSimultaneous, Some(c.writer))
                }
                Some(_) => (HandshakeStatus::Nok, None),
            }
        };
        let (status, adopter) = status;
        if matches!(status, HandshakeStatus::Alive) {
            // We keep the connection we have (Erlang asks the peer; a
            // live connection answers for itself).
            let _ = hs.execute_rest(HandshakeStatus::Nok).await;
            return Err(format!("{peer} connected again while connected"));
        }
        match hs.execute_rest(status).await {
            Ok((stream, p)) => {
                let frags = p.flags.contains(DistributionFlags::FRAGMENTS);
                Ok((peer, stream, frags, adopter))
            }
            Err(e) => {
                d.forget(&peer, me);
                Err(format!("connection attempt from {peer} refused: {e}"))
            }
        }
    };
    match ctx.timeout(SETUP_TIME, hs).await {
        Err(_) => {
            // The entry this process may have made for the peer goes too.
            d.forget_writer(me);
            log(
                &d,
                format_args!("a connection attempt timed out in the handshake"),
            )
        }
        Ok(Err(e)) => log(&d, format_args!("{e}")),
        Ok(Ok((peer, stream, frags, Some(writer)))) => {
            ctx.send(writer, Out::Adopt(stream, frags)).await;
            let _ = peer;
        }
        Ok(Ok((peer, stream, frags, None))) => run(&ctx, &d, &peer, stream, frags, &q).await,
    }
}

/// Spawns the writer for `node`, which connects to it first.
pub(crate) fn spawn_connector(d: &Arc<Dist>, node: String, q: Arc<Outq>) -> Option<Pid> {
    let d2 = d.clone();
    d.handle
        .spawn(move |ctx| async move {
            let me = ctx.pid();
            let _close = CloseOnDrop(q.clone());
            match ctx.timeout(SETUP_TIME, connect(&d2, &node)).await {
                Ok(Ok((stream, frags))) => run(&ctx, &d2, &node, stream, frags, &q).await,
                // Erlang says nothing of a node it cannot reach: the
                // messages are dropped, and a monitor would say nodedown.
                Ok(Err(Some(_))) => {
                    unlink_partners(&ctx, &d2, &node).await;
                    d2.forget(&node, me)
                }
                // The peer said nok: its own attempt to reach us goes on
                // and the acceptor hands it over here.
                Ok(Err(None)) => {
                    match ctx
                        .receive_where_timeout(|o: &Out| matches!(o, Out::Adopt(..)), SETUP_TIME)
                        .await
                    {
                        Some(Out::Adopt(stream, frags)) => {
                            run(&ctx, &d2, &node, stream, frags, &q).await
                        }
                        _ => {
                            unlink_partners(&ctx, &d2, &node).await;
                            d2.forget(&node, me)
                        }
                    }
                }
                Err(_) => {
                    unlink_partners(&ctx, &d2, &node).await;
                    d2.forget(&node, me)
                }
            }
        })
        .ok()
}

/// Reaches `node` and runs the client half of the handshake: the stream,
/// and whether the peer takes fragments. `Err(None)`: the peer is
/// connecting to us at the same time and its attempt wins.
async fn connect(d: &Dist, node: &str) -> Result<(TcpStream, bool), Option<String>> {
    let (alive, host) = node
        .split_once('@')
        .ok_or(Some("no host in the name".to_string()))?;
    let ip = super::epmd::resolve(host, &d.host).map_err(|e| Some(format!("{host}: {e}")))?;
    let port = super::epmd::port_of(ip, alive)
        .await
        .map_err(|e| Some(format!("epmd on {host}: {e}")))?
        .ok_or_else(|| Some(format!("no node {alive} registered on {host}")))?;
    let stream = TcpStream::connect(std::net::SocketAddr::new(ip, port))
        .await
        .map_err(|e| Some(e.to_string()))?;
    let _ = stream.set_nodelay(true);
    let local = local_node(d).map_err(Some)?;
    let mut hs = ClientSideHandshake::new(stream, local, &d.cookie);
    let status = hs
        .execute_send_name(erl_dist::LOWEST_DISTRIBUTION_PROTOCOL_VERSION)
        .await
        .map_err(|e| Some(e.to_string()))?;
    match status {
        HandshakeStatus::Nok => return Err(None),
        HandshakeStatus::NotAllowed => return Err(Some("the peer does not allow us".into())),
        _ => {}
    }
    let (stream, peer) = hs
        .execute_rest(true)
        .await
        .map_err(|e| Some(format!("handshake: {e}")))?;
    if peer.name.to_string() != node {
        return Err(Some(format!("the peer is {}, not {node}", peer.name)));
    }
    Ok((stream, peer.flags.contains(DistributionFlags::FRAGMENTS)))
}

/// The connected writer: spawns the reader, then encodes and writes what
/// its mailbox brings until the connection ends.
async fn run(ctx: &Ctx, d: &Arc<Dist>, node: &str, stream: TcpStream, frags: bool, q: &Arc<Outq>) {
    let me = ctx.pid();
    // The reader's end comes here as a message, so the writer can tell
    // the node's watchers (`forget`) before it ends too.
    let _ = ctx.trap_exit(true).await;
    let stream = Arc::new(stream);
    let (d2, s2, n2) = (d.clone(), stream.clone(), node.to_string());
    let closer = Closer::new(stream.clone());
    let w = Writer {
        pid: me,
        q: q.clone(),
        closer: closer.clone(),
    };
    let Ok(reader_pid) = ctx
        .spawn_link(move |ctx| async move { reader(ctx, d2, n2, s2, w).await })
        .await
    else {
        d.forget(node, me);
        return;
    };
    d.mark_up(node, me, &closer);
    let mut watches = Watching {
        reader: Some(reader_pid),
        ..Watching::default()
    };
    let mut sink = Sink {
        stream: &stream,
        frags,
        scratch: Vec::new(),
        q,
    };
    let mut held = VecDeque::new();
    let end = write_loop(ctx, d, node, &mut sink, &mut watches, &mut held).await;
    // The reader's reason, or `disconnect`'s, when they ended it: the
    // socket shut down, a write that failed for it is not the reason.
    let end = closer.why().unwrap_or(end);
    // The local processes linked to the writer get `noconnection` from
    // their remote partners (`forget`), not the writer's own end.
    unlink_partners(ctx, d, node).await;
    d.forget(node, me);
    // `shutdown`: a connection's end is logged here, not crash-reported,
    // and it takes the linked reader along.
    if !matches!(end.as_str(), "closed" | "disconnected" | "stopping") {
        log(d, format_args!("connection to {node} closed: {end}"));
    }
    ctx.exit(Reason::Shutdown).await;
}

/// Unlinks the writer from the local processes linked to `node`'s, so
/// they hear of the connection's end from their partners
/// (`noconnection`, `Dist::forget`) and not from the writer's own end.
async fn unlink_partners(ctx: &Ctx, d: &Dist, node: &str) {
    for p in d.local_partners(node) {
        ctx.unlink(p).await;
    }
}

/// A monitor the peer holds on a local process.
struct Watch {
    toproc: Vec<u8>,
    watcher: Vec<u8>,
    mref: Vec<u8>,
}

/// What a writer watches on the local side: the peer's monitors of local
/// processes (by the writer's own monitor reference, made by the reader on
/// its behalf or with a spawn), and its reader. The local processes that
/// have links to the peer's are linked to the writer (a runtime link made
/// on its behalf: the local process's end reaches the writer, with its
/// reason, as an `Exit`).
#[derive(Default)]
struct Watching {
    monitors: HashMap<Ref, Watch>,
    reader: Option<Pid>,
}

/// Where a writer's bytes go: its stream, in the packet form the peer
/// took at the handshake.
struct Sink<'a> {
    stream: &'a TcpStream,
    /// The peer takes fragments (and so distribution headers); if not,
    /// packets are turned into pass-through ones in `scratch` first.
    frags: bool,
    scratch: Vec<u8>,
    /// The connection's queue count: what is written comes off it.
    q: &'a Outq,
}

impl Sink<'_> {
    /// Writes one whole packet, its spliced binaries from where they are.
    async fn write_packet(&mut self, p: &Packet) -> Result<(), String> {
        if p.splices.is_empty() {
            return self.write(&p.bytes).await;
        }
        if !self.frags {
            // A pass-through packet is made from a whole one.
            let mut b = Vec::with_capacity(p.len());
            p.append_to(&mut b);
            return self.write(&b).await;
        }
        let segments = p.segments();
        let mut slices: Vec<std::io::IoSlice<'_>> =
            segments.iter().map(|s| std::io::IoSlice::new(s)).collect();
        self.stream
            .write_all_vectored(&mut slices)
            .await
            .map_err(|e| format!("write: {e}"))
    }

    /// Writes whole packets (length prefixes included).
    async fn write(&mut self, b: &[u8]) -> Result<(), String> {
        let b = if self.frags || b.is_empty() {
            b
        } else {
            self.scratch.clear();
            wire::pass_through(b, &mut self.scratch).map_err(|e| format!("write: {e}"))?;
            &self.scratch[..]
        };
        self.stream
            .write_all(b)
            .await
            .map_err(|e| format!("write: {e}"))
    }
}

/// The next envelope: one held back while a large message went out
/// first, else the mailbox's (waiting at most `wait`).
async fn next_envelope(
    ctx: &Ctx,
    held: &mut VecDeque<Envelope>,
    wait: Duration,
) -> Option<Envelope> {
    match held.pop_front() {
        Some(e) => Some(e),
        None => ctx.receive_timeout::<Envelope>(wait).await,
    }
}

/// Writes what the mailbox brings until the connection ends: why. `held`:
/// what was taken from the mailbox and held back (behind a large message)
/// and is still to be done.
async fn write_loop(
    ctx: &Ctx,
    d: &Arc<Dist>,
    node: &str,
    sink: &mut Sink<'_>,
    watches: &mut Watching,
    held: &mut VecDeque<Envelope>,
) -> String {
    let tick_every = d.tick_time / 4;
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES);
    let mut seq = 0u64;
    let mut last_write = Instant::now();
    // Bytes of the counted packets in `buf`: they come off the queue
    // count once `buf` is written.
    let mut taken = 0usize;
    // What the envelopes of this batch counted among the peer's replies:
    // off once the batch is written (a reply) or done (work for the peer).
    let mut replies = 0usize;
    loop {
        let wait = tick_every.saturating_sub(last_write.elapsed());
        let Some(first) = next_envelope(ctx, held, wait).await else {
            // Silent for a quarter of the tick time: a tick.
            if let Err(e) = sink.write(&[0, 0, 0, 0]).await {
                return e;
            }
            last_write = Instant::now();
            continue;
        };
        let mut next = Some(first);
        let mut n = 0;
        while let Some(env) = next.take() {
            let (size, backlog) = out::counted(&env);
            replies += backlog;
            let r = match handle(ctx, d, node, env, &mut buf, watches).await {
                Err(end) => return end,
                // A large packet goes out after what was batched before
                // it, from its own buffer (no copy into the batch), in
                // fragments if the peer takes them.
                Ok(Some(Flushed::Big { packet, from })) => match sink.write(&buf).await {
                    Ok(()) if sink.frags && packet.len() > FRAGMENT + 64 => {
                        buf.clear();
                        sink.q.written(std::mem::take(&mut taken));
                        seq += 1;
                        let big = Big {
                            packet: &packet,
                            from,
                            seq,
                        };
                        write_fragmented(ctx, d, node, sink, big, &mut buf, watches, held).await
                    }
                    Ok(()) => {
                        buf.clear();
                        sink.q.written(std::mem::take(&mut taken));
                        let r = sink.write_packet(&packet).await;
                        sink.q.written(packet.len());
                        r
                    }
                    e => e,
                },
                Ok(Some(Flushed::Sync(tx))) => {
                    let r = sink.write(&buf).await;
                    buf.clear();
                    sink.q.written(std::mem::take(&mut taken));
                    let _ = tx.send(());
                    r
                }
                Ok(None) => {
                    taken += size;
                    Ok(())
                }
            };
            if let Err(e) = r {
                return e;
            }
            n += 1;
            if buf.len() >= BATCH_BYTES || n >= 512 {
                break;
            }
            next = next_envelope(ctx, held, Duration::ZERO).await;
        }
        if !buf.is_empty() {
            if let Err(e) = sink.write(&buf).await {
                return e;
            }
            buf.clear();
        }
        sink.q.written(std::mem::take(&mut taken));
        sink.q.replies_done(std::mem::take(&mut replies));
        last_write = Instant::now();
    }
}

/// Fragments of a large message: at most this many bytes each (Erlang's
/// size).
const FRAGMENT: usize = 64 << 10;

/// Fragments written by one system call, between two looks at the
/// mailbox for other processes' messages: 256 KB.
const FRAGMENTS_AT_ONCE: usize = 4;

/// A large message on its way out in fragments.
struct Big<'a> {
    /// The whole packet, as [`wire::Control::write`] made it.
    packet: &'a Packet,
    /// Its sender, if known.
    from: Option<Pid>,
    /// Its sequence id on this connection.
    seq: u64,
}

/// Writes `big` as fragments. Between two, the small messages other
/// processes queued meanwhile go out too, so one large message does not
/// hold up everyone's traffic to the node (Erlang's reason for
/// fragments). Order is kept: a sender's messages never overtake one
/// another (the large message's sender, and any sender with a message
/// held, wait), and anything that is not a message from a known process
/// (a signal, a writer's own work) waits with everything after it, in
/// `held`, in the order it came.
#[allow(clippy::too_many_arguments)]
async fn write_fragmented(
    ctx: &Ctx,
    d: &Dist,
    node: &str,
    sink: &mut Sink<'_>,
    big: Big<'_>,
    buf: &mut Vec<u8>,
    watches: &mut Watching,
    held: &mut VecDeque<Envelope>,
) -> Result<(), String> {
    // Relaxed: a statistic.
    d.frags_out.fetch_add(1, Relaxed);
    let mut waiting: HashSet<Pid> = big.from.into_iter().collect();
    let mut all_wait = big.from.is_none();
    for e in held.iter() {
        match e.downcast_ref::<Out>() {
            Some(Out::Message { from: Some(p), .. }) => {
                waiting.insert(*p);
            }
            _ => all_wait = true,
        }
    }
    let segments = big.packet.segments();
    let mut frags = pieces::pieces(&segments, big.seq, FRAGMENT).peekable();
    // The large packet's bytes come off the queue count as its fragments
    // are written; the small packets' as the batch between is.
    let mut left = big.packet.len();
    let mut taken = 0usize;
    while frags.peek().is_some() {
        // Up to `FRAGMENTS_AT_ONCE` fragments in one system call (their
        // headers, and the message's bytes where they are: the packet's
        // and its spliced binaries', no copy).
        let group: Vec<(Vec<u8>, Vec<&[u8]>)> = frags.by_ref().take(FRAGMENTS_AT_ONCE).collect();
        let mut slices: Vec<std::io::IoSlice<'_>> = group
            .iter()
            .flat_map(|(h, parts)| {
                std::iter::once(std::io::IoSlice::new(h))
                    .chain(parts.iter().map(|p| std::io::IoSlice::new(p)))
            })
            .collect();
        sink.stream
            .write_all_vectored(&mut slices)
            .await
            .map_err(|e| format!("write: {e}"))?;
        let done: usize = group
            .iter()
            .flat_map(|(_, parts)| parts.iter().map(|p| p.len()))
            .sum();
        let done = if frags.peek().is_some() {
            done.min(left)
        } else {
            left
        };
        left -= done;
        sink.q.written(done);
        // What came meanwhile: up to one fragment's worth goes now.
        while !all_wait && buf.len() < FRAGMENT {
            let Some(env) = ctx.receive_timeout::<Envelope>(Duration::ZERO).await else {
                break;
            };
            let goes = match env.downcast_ref::<Out>() {
                Some(Out::Message {
                    from: Some(p),
                    packet,
                }) if packet.len() < BATCH_BYTES => !waiting.contains(p),
                Some(Out::Message { from: Some(p), .. }) => {
                    waiting.insert(*p);
                    false
                }
                _ => {
                    all_wait = true;
                    false
                }
            };
            if goes {
                // A small message: `handle` batches it, nothing more.
                taken += out::counted(&env).0;
                handle(ctx, d, node, env, buf, watches).await?;
            } else {
                held.push_back(env);
            }
        }
        if !buf.is_empty() {
            sink.write(buf).await?;
            buf.clear();
        }
        sink.q.written(std::mem::take(&mut taken));
    }
    sink.q.written(left);
    Ok(())
}

/// What the write loop must do now, before batching on.
enum Flushed {
    /// Write the batch, then this large packet (a message from `from`, if
    /// known) from its own buffer.
    Big { packet: Packet, from: Option<Pid> },
    /// Write the batch, then answer.
    Sync(std::sync::mpsc::Sender<()>),
}

/// Adds one mailbox message to the batch `buf` (or acts on it); a
/// packet too large for the batch comes back, to be written on its own.
async fn handle(
    ctx: &Ctx,
    d: &Dist,
    node: &str,
    env: Envelope,
    buf: &mut Vec<u8>,
    watches: &mut Watching,
) -> Result<Option<Flushed>, String> {
    let env = match env.downcast::<Out>() {
        Ok(out) => {
            match out {
                Out::Message { from, packet } if packet.len() >= BATCH_BYTES => {
                    return Ok(Some(Flushed::Big { packet, from }))
                }
                Out::Packet(packet) | Out::Reply(packet) if packet.len() >= BATCH_BYTES => {
                    return Ok(Some(Flushed::Big {
                        packet: Packet::whole(packet),
                        from: None,
                    }))
                }
                Out::Message { packet, .. } => packet.append_to(buf),
                Out::Packet(packet) | Out::Reply(packet) => buf.extend_from_slice(&packet),
                Out::Monitor {
                    r,
                    toproc,
                    watcher,
                    mref,
                } => {
                    // The reader made the monitor (after sending this):
                    // its `Down` comes after this.
                    watches.monitors.insert(
                        r,
                        Watch {
                            toproc,
                            watcher,
                            mref,
                        },
                    );
                }
                Out::Demonitor { mref } => {
                    let found = watches
                        .monitors
                        .iter()
                        .find(|(_, w)| w.mref == mref)
                        .map(|(r, _)| *r);
                    if let Some(r) = found {
                        watches.monitors.remove(&r);
                        ctx.demonitor_flush(r).await;
                    }
                }
                Out::Adopt(..) => {
                    // A second connection to a node we are connected to:
                    // dropped (closed).
                }
                Out::Spawn {
                    bytes: _,
                    req,
                    from,
                    qualified,
                    args,
                    link,
                    monitor,
                } => {
                    spawn_for_peer(
                        ctx, d, node, buf, watches, req, from, &qualified, args, link, monitor,
                    )
                    .await
                }
                Out::Disconnect => return Err("disconnected".into()),
                Out::ReaderEnd(why) => return Err(why),
                Out::Sync(tx) => return Ok(Some(Flushed::Sync(tx))),
            }
            return Ok(None);
        }
        Err(env) => env,
    };
    let env = match env.downcast::<lona_runtime::Exit>() {
        // The reader ended without its last word: the node is stopping
        // (or the reader crashed, which its crash report tells).
        Ok(e) if Some(e.from) == watches.reader => return Err("stopping".into()),
        // A local process linked to the peer's ended (or was gone when
        // the link came: `noproc`, as Erlang's): `EXIT` to each of its
        // partners there.
        Ok(e) => {
            let links = d.take_links(e.from, node);
            if !links.is_empty() {
                let reason = reason_bytes(d, &e.reason);
                for l in links {
                    Control::Exit {
                        link: true,
                        from: d.wire_pid(e.from),
                        to: WirePid::of(node, l.pid),
                        reason: &reason,
                    }
                    .write(buf);
                }
            }
            return Ok(None);
        }
        Err(env) => env,
    };
    if let Ok(down) = env.downcast::<Down>() {
        if let Some(w) = watches.monitors.remove(&down.mref) {
            Control::MonitorPExit {
                target: &w.toproc,
                watcher: &w.watcher,
                mref: &w.mref,
                reason: &reason_bytes(d, &down.reason),
            }
            .write(buf);
        }
    }
    Ok(None)
}

/// Spawns `qualified` for the peer's process `from` and writes the
/// `SPAWN_REPLY` into `buf`: flags 1 (linked: the writer is linked to the
/// child from its spawn, and the link is recorded) and 2 (monitored: the
/// writer's monitor, made with the spawn, answers for the peer), or an
/// error atom (`undef` for a function that is not defined, `badarg` for
/// arguments that are not a list, `system_limit`).
#[allow(clippy::too_many_arguments)]
async fn spawn_for_peer(
    ctx: &Ctx,
    d: &Dist,
    node: &str,
    buf: &mut Vec<u8>,
    watches: &mut Watching,
    req: Vec<u8>,
    from: (u32, u32, u32),
    qualified: &str,
    args: Option<Fragment>,
    link: bool,
    monitor: bool,
) {
    let from_pid = WirePid {
        node,
        id: from.0,
        serial: from.1,
        creation: from.2,
    };
    let result: Result<(Pid, Option<Ref>), &str> = match (d.env(), args) {
        (None, _) => Err("notsup"),
        (_, None) => Err("badarg"),
        (Some(env), Some(args)) => match crate::process::LonaProcess::call(env, qualified, &args) {
            Err(_) => Err("undef"),
            Ok(proc) => {
                let opts = lona_runtime::SpawnOpts::new().link(link).monitor(monitor);
                ctx.spawn_process_opt(opts, proc)
                    .await
                    .map_err(|_| "system_limit")
            }
        },
    };
    let (flags, result) = match result {
        Ok((child, mref)) => {
            let mut flags = 0;
            if link {
                d.add_link(
                    child,
                    super::RemoteLink {
                        node: node.to_string(),
                        pid: from,
                    },
                );
                flags |= 1;
            }
            let mut child_bytes = Vec::new();
            put::pid(&mut child_bytes, d.wire_pid(child));
            if let (true, Some(r)) = (monitor, mref) {
                let mut watcher = Vec::new();
                put::pid(&mut watcher, from_pid);
                watches.monitors.insert(
                    r,
                    Watch {
                        toproc: child_bytes.clone(),
                        watcher,
                        mref: req.clone(),
                    },
                );
                flags |= 2;
            }
            (flags, child_bytes)
        }
        Err(why) => {
            let mut atom = Vec::new();
            put::atom(&mut atom, why);
            (0, atom)
        }
    };
    Control::SpawnReply {
        req: &req,
        to: from_pid,
        flags,
        result: &result,
    }
    .write(buf);
}

/// An exit reason in external format: the standard ones as atoms, a
/// Lonala term as itself when it can cross (under Erlang's names:
/// `reason.rs`), else `noproc`.
fn reason_bytes(d: &Dist, r: &Reason) -> Vec<u8> {
    let heap = Heap::new();
    let t = reason::to_erlang(&heap, crate::msg::reason_term(&heap, r));
    let mut out = Vec::new();
    match lona_term::etf::encode_node_into(&mut out, t, &d.etf_node()) {
        Ok(()) => out,
        Err(_) => wire::NOPROC.to_vec(),
    }
}

/// The local pid a wire pid names, if it names one of ours (this node's
/// name and this incarnation's creation).
fn our_pid(d: &Dist, p: &WirePid<'_>) -> Option<Pid> {
    (p.node == d.name && p.creation == d.creation)
        .then(|| Pid::from_bits((u64::from(p.serial) << 32) | u64::from(p.id)))
}

/// Reads packets from the peer and acts on them until the connection
/// ends; the reason is the process's exit reason (which the linked
/// writer shares).
async fn reader(ctx: Ctx, d: Arc<Dist>, node: String, stream: Arc<TcpStream>, writer: Writer) {
    let end = read_loop(&ctx, &d, &node, &stream, &writer).await;
    writer.ended(&end);
    ctx.send(writer.pid, Out::ReaderEnd(end)).await;
    ctx.exit(Reason::Shutdown).await;
}

async fn read_loop(ctx: &Ctx, d: &Dist, node: &str, stream: &TcpStream, writer: &Writer) -> String {
    let mut buf: Vec<u8> = vec![0; 64 << 10];
    let mut have = 0usize;
    let mut start = 0usize;
    let mut last_read = Instant::now();
    let mut idle_big = 0u32;
    // Fragmented messages: at most a packet's limit in all.
    let mut asm = Assembler::new(MAX_PACKET);
    loop {
        // Whole packets in the buffer.
        loop {
            let avail = &buf[start..have];
            if avail.len() < 4 {
                break;
            }
            let len = u32::from_be_bytes([avail[0], avail[1], avail[2], avail[3]]) as usize;
            if len > MAX_PACKET {
                return format!("a packet of {len} bytes (more than {MAX_PACKET})");
            }
            if avail.len() < 4 + len {
                break;
            }
            let packet = &buf[start + 4..start + 4 + len];
            start += 4 + len;
            if len == 0 {
                continue; // a tick
            }
            let r = on_packet(ctx, d, node, packet, &mut asm, writer).await;
            if let Err(e) = r {
                return format!("malformed packet: {e}");
            }
            // The peer's backlog of replies: past the limit, it does not
            // read them (`outq.rs`).
            if let Some(why) = writer.overrun() {
                return why;
            }
        }
        // Make room: move what is left to the front; grow for a packet
        // larger than the buffer only as far as its bytes have come.
        if start > 0 {
            buf.copy_within(start..have, 0);
            have -= start;
            start = 0;
        }
        if have == buf.len() {
            // Double, or straight to the packet's size when half of it
            // is already here: memory follows the bytes that came.
            let mut new = buf.len() * 2;
            if have >= 4 {
                let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize + 4;
                if len > new && have * 2 >= len {
                    new = len;
                }
            }
            buf.resize(new.min(MAX_PACKET + 4), 0);
        }
        let left = d.tick_time.saturating_sub(last_read.elapsed());
        match ctx.timeout(left, stream.read(&mut buf[have..])).await {
            Err(_) => return "no tick from the peer for the net tick time".into(),
            Ok(Ok(0)) => return "closed".into(),
            Ok(Ok(n)) => {
                have += n;
                last_read = Instant::now();
            }
            Ok(Err(e)) => return format!("read: {e}"),
        }
        // A buffer grown for large packets is given back after 256 reads
        // that did not need it.
        if buf.len() > (1 << 20) {
            if have < (1 << 18) {
                idle_big += 1;
                if idle_big >= 256 && start == 0 {
                    buf.truncate((64 << 10).max(have));
                    buf.shrink_to_fit();
                    idle_big = 0;
                }
            } else {
                idle_big = 0;
            }
        }
    }
}

/// Acts on one packet: a whole one, or the last fragment of a message.
async fn on_packet(
    ctx: &Ctx,
    d: &Dist,
    node: &str,
    p: &[u8],
    asm: &mut Assembler,
    writer: &Writer,
) -> Result<(), WireError> {
    let joined: Arc<Vec<u8>>;
    let ctl = match wire::frame(p)? {
        Frame::Whole(c) => return on_control(ctx, d, node, c, None, writer).await,
        Frame::First { seq, count, body } => {
            // Relaxed: a statistic.
            d.frags_in.fetch_add(1, Relaxed);
            return asm.first(seq, count, body);
        }
        Frame::Next { seq, id, data } => match asm.next(seq, id, data)? {
            None => return Ok(()),
            Some(body) => {
                joined = Arc::new(body);
                wire::parse_body(&joined)?
            }
        },
    };
    on_control(ctx, d, node, ctl, Some(&joined), writer).await
}

/// Acts on one control message (and the message it carries). `joined`:
/// the buffer a fragmented message was joined into, which its large
/// binary may keep instead of a copy. Every signal of the peer to a local
/// process is sent from here, the reader, as the packets come: links and
/// monitors too, made on the writer's behalf (`reply.rs`), so they keep
/// the peer's order.
async fn on_control(
    ctx: &Ctx,
    d: &Dist,
    node: &str,
    ctl: Control<'_>,
    joined: Option<&Arc<Vec<u8>>>,
    writer: &Writer,
) -> Result<(), WireError> {
    match ctl {
        Control::Send { to, msg, .. } => {
            if let Some(pid) = our_pid(d, &to) {
                if let Some(m) = message(d, node, msg, joined) {
                    d.handle.send(pid, m);
                }
            }
        }
        Control::RegSend { name, msg, .. } => {
            if let Some(pid) = ctx.handle().whereis(name) {
                if let Some(m) = message(d, node, msg, joined) {
                    d.handle.send(pid, m);
                }
            } else if name == "net_kernel" {
                reply::net_kernel(ctx, msg, writer).await?;
            }
        }
        Control::MonitorP {
            watcher,
            target: toproc,
            mref,
        } => {
            let mut t = Cursor::new(toproc);
            let target = match toproc.first() {
                Some(&b) if b == 88 || b == 103 => our_pid(d, &t.pid()?),
                _ => {
                    let name = t.atom()?;
                    match ctx.handle().whereis(name) {
                        // The net kernel this connection answers for
                        // never ends while the connection lives.
                        None if name == "net_kernel" => return Ok(()),
                        p => p,
                    }
                }
            };
            match target {
                // The writer learns of the monitor first, then the reader
                // makes it on the writer's behalf, before anything the
                // peer sends next (`reply.rs`). A process already gone
                // gives the writer a `DOWN` `noproc`.
                Some(target) => {
                    let r = Ref::new();
                    let out = Out::Monitor {
                        r,
                        toproc: toproc.to_vec(),
                        watcher: watcher.to_vec(),
                        mref: mref.to_vec(),
                    };
                    writer.hand(ctx, out).await;
                    d.handle.monitor_for(writer.pid, target, r);
                }
                None => {
                    let mut out = Vec::new();
                    Control::MonitorPExit {
                        target: toproc,
                        watcher,
                        mref,
                        reason: wire::NOPROC,
                    }
                    .write(&mut out);
                    writer.reply(ctx, out).await;
                }
            }
        }
        Control::DemonitorP { mref, .. } => {
            let mref = mref.to_vec();
            writer.hand(ctx, Out::Demonitor { mref }).await;
        }
        Control::MonitorPExit { mref, reason, .. } => {
            let ours = Cursor::new(mref).reference()?.ours(&d.name, d.creation);
            // To the watcher, unless the monitor was taken back.
            if let Some(r) = ours {
                let heap = Heap::new();
                let t = decode(d, &heap, reason).unwrap_or(lona_term::kw!("noproc"));
                d.fire_down(r, reason::from_erlang(&heap, t));
            }
        }
        Control::UnlinkId { id, from, to } => {
            // The link goes at once on our side; acknowledged.
            if let (Ok(f), Ok(t)) = (Cursor::new(from).pid(), Cursor::new(to).pid()) {
                if let Some(pid) = our_pid(d, &t) {
                    d.remove_link(pid, &remote_link(node, &f));
                }
            }
            let mut out = Vec::new();
            Control::UnlinkIdAck {
                id,
                from: to,
                to: from,
            }
            .write(&mut out);
            writer.reply(ctx, out).await;
        }
        Control::Link { from, to } => {
            if let Some(pid) = our_pid(d, &to) {
                // Recorded now, and made at once on the writer's behalf
                // (`reply.rs`).
                if d.add_link(pid, remote_link(node, &from)) {
                    d.handle.link_for(writer.pid, pid);
                }
            } else {
                // A pid of an earlier incarnation: gone.
                let mut out = Vec::new();
                Control::Exit {
                    link: true,
                    from: to,
                    to: from,
                    reason: wire::NOPROC,
                }
                .write(&mut out);
                writer.reply(ctx, out).await;
            }
        }
        Control::Exit {
            link,
            from,
            to,
            reason,
        } => {
            if let Some(pid) = our_pid(d, &to) {
                let l = remote_link(node, &from);
                // A link's exit counts only while the link is in force.
                if !link || d.remove_link(pid, &l) {
                    let r = decode_reason(d, reason);
                    let origin = d.origin(&l);
                    d.handle.send_foreign_exit(pid, origin, r, link);
                }
            }
        }
        Control::SpawnRequest {
            req,
            from,
            module,
            function,
            opts,
            args,
            ..
        } => {
            let names = wire::option_atoms(opts)?;
            let heap = Heap::new();
            let wire_args = args.len();
            let args = decode(d, &heap, args).ok().map(Fragment::new);
            // What it holds: its bytes, or its arguments' as decoded when
            // they take more.
            let decoded = args.as_ref().map_or(0, |a| a.words() * 8);
            let bytes = req.len() + module.len() + function.len() + wire_args.max(decoded);
            let out = Out::Spawn {
                bytes,
                req: req.to_vec(),
                from: (from.id, from.serial, from.creation),
                qualified: format!("{module}/{function}"),
                args,
                link: names.contains(&"link"),
                monitor: names.contains(&"monitor"),
            };
            writer.hand(ctx, out).await;
        }
        Control::SpawnReply {
            req,
            to,
            flags,
            result,
        } => {
            let ours = Cursor::new(req).reference()?.ours(&d.name, d.creation);
            if let (Some(r), Some(me)) = (ours, our_pid(d, &to)) {
                if d.take_spawn(r).is_some() {
                    spawn_replied(d, node, me, r, flags, result, writer)?;
                }
            }
        }
        // Our unlinks do not wait for their acknowledgement; group
        // leaders, aliases and the rest are not acted on (D22).
        Control::UnlinkIdAck { .. } | Control::Other(_) => {}
    }
    Ok(())
}

/// Our spawn request `r` of `me` was answered: the link and monitor it
/// made are recorded, and `me` gets `[:spawn-reply ref pid]` (or
/// `[:spawn-reply ref [:error reason]]`).
fn spawn_replied(
    d: &Dist,
    node: &str,
    me: Pid,
    r: u64,
    flags: i64,
    result: &[u8],
    writer: &Writer,
) -> Result<(), WireError> {
    let heap = Heap::new();
    let answer = match result.first() {
        Some(&b) if b == 88 || b == 103 => {
            let child = Cursor::new(result).pid()?;
            let node_atom = lona_term::Atom::try_new(node).map_err(|_| WireError("a node name"))?;
            let child_term = heap.ext_pid(node_atom, child.id, child.serial, child.creation);
            if flags & 1 != 0 && d.add_link(me, remote_link(node, &child)) {
                // Made at once on the writer's behalf (`reply.rs`).
                d.handle.link_for(writer.pid, me);
            }
            if flags & 2 != 0 {
                d.add_remote_monitor(me, node, r, child_term, result.to_vec());
            }
            child_term
        }
        _ => {
            let why = Cursor::new(result).atom().unwrap_or("badarg");
            let why = lona_term::Atom::existing(why)
                .map(|a| reason::from_erlang(&heap, Term::keyword_atom(a)))
                .unwrap_or(lona_term::kw!("badarg"));
            heap.vector(&[lona_term::kw!("error"), why])
        }
    };
    let msg =
        Fragment::new(heap.vector(&[lona_term::kw!("spawn-reply"), heap.reference(r), answer]));
    d.handle.send(me, msg);
    Ok(())
}

/// The link end a wire pid of the peer `node` names.
fn remote_link(node: &str, p: &WirePid<'_>) -> super::RemoteLink {
    super::RemoteLink {
        node: node.to_string(),
        pid: (p.id, p.serial, p.creation),
    }
}

/// An exit reason from the wire, as the runtime's reason (under
/// Lonala's names: `reason.rs`).
fn decode_reason(d: &Dist, bytes: &[u8]) -> Reason {
    let heap = Heap::new();
    let t = decode(d, &heap, bytes).unwrap_or(lona_term::kw!("noproc"));
    crate::msg::term_reason(reason::from_erlang(&heap, t), None)
}

/// One term a peer sent (no version byte), onto `heap`: our pids and
/// references become local ones, new atoms within [`atom_budget`].
fn decode<'h>(
    d: &Dist,
    heap: &'h Heap,
    bytes: &[u8],
) -> Result<Term<'h>, lona_term::etf::DecodeError> {
    let mut budget = atom_budget();
    lona_term::etf::decode_node_body_prefix(heap, bytes, &mut budget, &d.etf_node()).map(|(t, _)| t)
}

/// New atoms a peer may add: while the table is less than half full.
fn atom_budget() -> AtomBudget {
    let used = lona_term::Atom::count();
    AtomBudget::new((lona_term::MAX_ATOMS / 2).saturating_sub(used))
}

/// Decodes a message; a message that cannot be a Lonala term is dropped
/// and logged (`None`: the connection goes on). `body` lies in `joined`
/// when the message came in fragments.
fn message(d: &Dist, node: &str, body: &[u8], joined: Option<&Arc<Vec<u8>>>) -> Option<Fragment> {
    let heap = Heap::new();
    let decoded = match joined {
        Some(buf) if buf.as_ptr_range().contains(&body.as_ptr()) => {
            let start = body.as_ptr() as usize - buf.as_ptr() as usize;
            let mut budget = atom_budget();
            lona_term::etf::decode_node_body_in(&heap, buf, start, &mut budget, &d.etf_node())
                .map(|(t, _)| t)
        }
        _ => decode(d, &heap, body),
    };
    match decoded {
        Ok(t) => Some(Fragment::new(t)),
        Err(e) => {
            log(d, format_args!("a message from {node} dropped: {e}"));
            None
        }
    }
}
