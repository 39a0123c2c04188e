//! The distribution's frames and control messages, read and written
//! straight from bytes (`erts/doc/guides/erl_dist_protocol.md`, "Protocol
//! between connected nodes").
//!
//! After the handshake every packet is a 4-byte big-endian length and that
//! many bytes; a length of 0 is a tick. We never offer the atom cache
//! (`DFLAG_DIST_HDR_ATOM_CACHE`), so a packet has one of two forms,
//! chosen by `DFLAG_FRAGMENTS` at the handshake for both directions:
//!
//! - **with fragments** (every OTP 22+ peer, and Lona): a distribution
//!   header `131, 68, 0` (`DIST_HEADER` with no atom cache references),
//!   then the control message, then for the message-carrying controls
//!   the message, both terms *without* a version byte. A message too large
//!   for one packet is split: the first fragment `131, 69, SequenceId:64,
//!   FragmentId:64, 0, ...` (`DIST_FRAG_HEADER`; its FragmentId is the
//!   number of fragments), the others `131, 70, SequenceId:64,
//!   FragmentId:64, ...` (`DIST_FRAG_CONT`, FragmentId counting down to
//!   1); the bytes after the headers, joined, are the control and message
//!   of a whole packet. Fragments of different sequences may interleave.
//! - **pass-through** (a peer without fragments): the byte 112, then the
//!   control message and the message, each with its own version byte 131.
//!
//! We write the first form ([`Control::write`], [`put::start`]); a writer
//! whose peer lacks fragments turns its packets into the second
//! ([`pass_through`]); [`frame`] reads both.
//!
//! Control messages are small tuples of integers, atoms, pids and
//! references; [`Cursor`] reads exactly those without building terms, so
//! routing a message costs no heap; the message itself is decoded into
//! the receiver's terms by `lona_term::etf`. [`Cursor::skip`] steps over
//! any term iteratively and checks every length against the bytes left,
//! so a peer's hostile control message is an error, never a panic or an
//! allocation.

/// The tag of a pass-through packet (a peer without `DFLAG_FRAGMENTS`).
pub const PASS_THROUGH: u8 = 112;
/// After the version byte: a whole packet's distribution header, a
/// message's first fragment, a later fragment.
pub const DIST_HEADER: u8 = 68;
pub const DIST_FRAG_HEADER: u8 = 69;
pub const DIST_FRAG_CONT: u8 = 70;
/// The header of every whole packet we write: no atom cache references.
pub const HEADER: [u8; 3] = [VERSION, DIST_HEADER, 0];
pub use lona_term::etf::VERSION;

// Control message tags (the first element of the control tuple).
pub const LINK: i64 = 1;
pub const SEND: i64 = 2;
pub const EXIT: i64 = 3;
pub const REG_SEND: i64 = 6;
pub const EXIT2: i64 = 8;
pub const MONITOR_P: i64 = 19;
pub const DEMONITOR_P: i64 = 20;
pub const MONITOR_P_EXIT: i64 = 21;
pub const SEND_SENDER: i64 = 22;
pub const SPAWN_REQUEST: i64 = 29;
pub const SPAWN_REPLY: i64 = 31;
pub const UNLINK_ID: i64 = 35;
pub const UNLINK_ID_ACK: i64 = 36;

use lona_term::etf::tag::*;

/// A malformed frame or control message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

pub(crate) type R<T> = Result<T, WireError>;

/// A pid as it is on the wire: its node's name and its three numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WirePid<'a> {
    pub node: &'a str,
    pub id: u32,
    pub serial: u32,
    pub creation: u32,
}

impl WireRef<'_> {
    /// The id of a reference this node made (named `node`, incarnation
    /// `creation`; written by [`put::reference`]), if it is one.
    pub fn ours(&self, node: &str, creation: u32) -> Option<u64> {
        (self.node == node && self.creation == creation && self.len == 3 && self.ids[2] == 0)
            .then(|| u64::from(self.ids[0]) | (u64::from(self.ids[1]) << 32))
    }
}

impl<'a> WirePid<'a> {
    /// Process `(id, serial, creation)` of `node`.
    pub fn of(node: &'a str, (id, serial, creation): (u32, u32, u32)) -> WirePid<'a> {
        WirePid {
            node,
            id,
            serial,
            creation,
        }
    }
}

/// A reader of external terms, positioned in a packet.
pub struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    /// Pass-through form: each term of the packet starts with 131.
    versioned: bool,
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8]) -> Cursor<'a> {
        Cursor {
            b,
            i: 0,
            versioned: false,
        }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.b[self.i..]
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        if self.b.len() - self.i < n {
            return Err(WireError("truncated term"));
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }

    pub fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> R<u16> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }

    fn u32(&mut self) -> R<u32> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// The version byte that starts a term.
    pub fn version(&mut self) -> R<()> {
        match self.u8()? {
            VERSION => Ok(()),
            _ => Err(WireError("a term without the version byte 131")),
        }
    }

    /// A tuple's header: its arity.
    pub fn tuple(&mut self) -> R<u32> {
        match self.u8()? {
            SMALL_TUPLE_EXT => Ok(u32::from(self.u8()?)),
            LARGE_TUPLE_EXT => self.u32(),
            _ => Err(WireError("expected a tuple")),
        }
    }

    /// A small integer (what control tags and ids are).
    pub fn int(&mut self) -> R<i64> {
        match self.u8()? {
            SMALL_INTEGER_EXT => Ok(i64::from(self.u8()?)),
            INTEGER_EXT => Ok(i64::from(self.u32()? as i32)),
            _ => Err(WireError("expected an integer")),
        }
    }

    /// An atom's name (UTF-8; the old Latin-1 forms only as ASCII).
    pub fn atom(&mut self) -> R<&'a str> {
        let (n, latin1) = match self.u8()? {
            SMALL_ATOM_UTF8_EXT => (usize::from(self.u8()?), false),
            ATOM_UTF8_EXT => (usize::from(self.u16()?), false),
            SMALL_ATOM_EXT => (usize::from(self.u8()?), true),
            ATOM_EXT => (usize::from(self.u16()?), true),
            _ => return Err(WireError("expected an atom")),
        };
        let s = self.take(n)?;
        if latin1 && !s.is_ascii() {
            return Err(WireError("a Latin-1 atom that is not ASCII"));
        }
        std::str::from_utf8(s).map_err(|_| WireError("an atom that is not UTF-8"))
    }

    /// The message after a control message: one whole term (its version
    /// byte first in a pass-through packet), with nothing after it; its
    /// bytes without the version.
    pub fn message(&mut self) -> R<&'a [u8]> {
        if self.versioned {
            self.version()?;
        }
        let body = self.skip()?;
        if !self.rest().is_empty() {
            return Err(WireError("bytes after the message"));
        }
        Ok(body)
    }

    /// A pid (`NEW_PID_EXT` or the old `PID_EXT`).
    pub fn pid(&mut self) -> R<WirePid<'a>> {
        let tag = self.u8()?;
        let node = self.atom()?;
        let id = self.u32()?;
        let serial = self.u32()?;
        let creation = match tag {
            NEW_PID_EXT => self.u32()?,
            PID_EXT => u32::from(self.u8()?),
            _ => return Err(WireError("expected a pid")),
        };
        Ok(WirePid {
            node,
            id,
            serial,
            creation,
        })
    }

    /// A reference: its node, creation and id words (1 to 5).
    pub fn reference(&mut self) -> R<WireRef<'a>> {
        let tag = self.u8()?;
        if tag != NEWER_REFERENCE_EXT && tag != NEW_REFERENCE_EXT {
            return Err(WireError("expected a reference"));
        }
        let n = usize::from(self.u16()?);
        if n == 0 || n > 5 {
            return Err(WireError("a reference of 0 or more than 5 words"));
        }
        let node = self.atom()?;
        let creation = if tag == NEWER_REFERENCE_EXT {
            self.u32()?
        } else {
            u32::from(self.u8()?)
        };
        let mut ids = [0u32; 5];
        for w in ids.iter_mut().take(n) {
            *w = self.u32()?;
        }
        Ok(WireRef {
            node,
            creation,
            ids,
            len: n,
        })
    }

    /// The bytes of one reference (checked as [`Cursor::reference`]).
    pub fn reference_bytes(&mut self) -> R<&'a [u8]> {
        let start = self.i;
        self.reference()?;
        Ok(&self.b[start..self.i])
    }

    /// Steps over one term of any kind and returns its bytes. Iterative:
    /// a count of terms still to skip, each at least one byte, so the
    /// count is checked against the bytes left and nesting costs no stack.
    pub fn skip(&mut self) -> R<&'a [u8]> {
        let start = self.i;
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let tag = self.u8()?;
            let more: u64 = match tag {
                SMALL_INTEGER_EXT => self.take(1).map(|_| 0)?,
                INTEGER_EXT => self.take(4).map(|_| 0)?,
                NEW_FLOAT_EXT => self.take(8).map(|_| 0)?,
                FLOAT_EXT => self.take(31).map(|_| 0)?,
                SMALL_ATOM_UTF8_EXT | SMALL_ATOM_EXT => {
                    let n = self.u8()?;
                    self.take(usize::from(n)).map(|_| 0)?
                }
                ATOM_UTF8_EXT | ATOM_EXT => {
                    let n = self.u16()?;
                    self.take(usize::from(n)).map(|_| 0)?
                }
                SMALL_TUPLE_EXT => u64::from(self.u8()?),
                LARGE_TUPLE_EXT => u64::from(self.u32()?),
                NIL_EXT => 0,
                STRING_EXT => {
                    let n = self.u16()?;
                    self.take(usize::from(n)).map(|_| 0)?
                }
                LIST_EXT => u64::from(self.u32()?) + 1,
                MAP_EXT => 2 * u64::from(self.u32()?),
                BINARY_EXT => {
                    let n = self.u32()?;
                    self.take(n as usize).map(|_| 0)?
                }
                BIT_BINARY_EXT => {
                    let n = self.u32()?;
                    self.take(n as usize + 1).map(|_| 0)?
                }
                SMALL_BIG_EXT => {
                    let n = self.u8()?;
                    self.take(usize::from(n) + 1).map(|_| 0)?
                }
                LARGE_BIG_EXT => {
                    let n = self.u32()?;
                    self.take(n as usize + 1).map(|_| 0)?
                }
                NEW_PID_EXT => {
                    let _ = self.atom()?;
                    self.take(12).map(|_| 0)?
                }
                PID_EXT => {
                    let _ = self.atom()?;
                    self.take(9).map(|_| 0)?
                }
                NEW_PORT_EXT => {
                    let _ = self.atom()?;
                    self.take(8).map(|_| 0)?
                }
                V4_PORT_EXT => {
                    let _ = self.atom()?;
                    self.take(12).map(|_| 0)?
                }
                PORT_EXT => {
                    let _ = self.atom()?;
                    self.take(5).map(|_| 0)?
                }
                NEWER_REFERENCE_EXT | NEW_REFERENCE_EXT => {
                    let n = self.u16()?;
                    if n == 0 || n > 5 {
                        return Err(WireError("a reference of 0 or more than 5 words"));
                    }
                    let _ = self.atom()?;
                    let creation = if tag == NEWER_REFERENCE_EXT { 4 } else { 1 };
                    self.take(creation + 4 * usize::from(n)).map(|_| 0)?
                }
                EXPORT_EXT => 3,
                NEW_FUN_EXT => {
                    // Size counts itself and everything after the tag.
                    let n = self.u32()? as usize;
                    if n < 4 {
                        return Err(WireError("a fun shorter than its size field"));
                    }
                    self.take(n - 4).map(|_| 0)?
                }
                _ => return Err(WireError("an unknown or unsupported term tag")),
            };
            pending = pending.saturating_add(more);
            if pending > (self.b.len() - self.i) as u64 {
                return Err(WireError("a term declares more elements than bytes follow"));
            }
        }
        Ok(&self.b[start..self.i])
    }
}

/// A reference as the wire has it: its node, creation and id words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireRef<'a> {
    pub node: &'a str,
    pub creation: u32,
    pub ids: [u32; 5],
    pub len: usize,
}

/// A packet after the handshake, read: the control message's fields
/// (terms that are only passed on stay bytes: `&[u8]` is one whole
/// encoded term) and the message, when the control carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control<'a> {
    /// `SEND` (`from` is the unused `''`) and `SEND_SENDER`.
    Send {
        sender: bool,
        from: &'a [u8],
        to: WirePid<'a>,
        msg: &'a [u8],
    },
    /// `REG_SEND`: to the process registered as `name`.
    RegSend {
        from: WirePid<'a>,
        unused: &'a [u8],
        name: &'a str,
        msg: &'a [u8],
    },
    Link {
        from: WirePid<'a>,
        to: WirePid<'a>,
    },
    /// `EXIT` (a link's: `from` ended) or `EXIT2` (`exit/2`).
    Exit {
        link: bool,
        from: WirePid<'a>,
        to: WirePid<'a>,
        reason: &'a [u8],
    },
    MonitorP {
        watcher: &'a [u8],
        target: &'a [u8],
        mref: &'a [u8],
    },
    DemonitorP {
        watcher: &'a [u8],
        target: &'a [u8],
        mref: &'a [u8],
    },
    MonitorPExit {
        target: &'a [u8],
        watcher: &'a [u8],
        mref: &'a [u8],
        reason: &'a [u8],
    },
    UnlinkId {
        id: &'a [u8],
        from: &'a [u8],
        to: &'a [u8],
    },
    UnlinkIdAck {
        id: &'a [u8],
        from: &'a [u8],
        to: &'a [u8],
    },
    /// `SPAWN_REQUEST`: spawn `module:function` with the `args` (a list,
    /// the message) for `from`.
    SpawnRequest {
        req: &'a [u8],
        from: WirePid<'a>,
        group_leader: &'a [u8],
        module: &'a str,
        function: &'a str,
        arity: i64,
        opts: &'a [u8],
        args: &'a [u8],
    },
    /// `SPAWN_REPLY`: the answer to our request `req`; `flags` 1: linked,
    /// 2: monitored; `result` the new pid or an error atom.
    SpawnReply {
        req: &'a [u8],
        to: WirePid<'a>,
        flags: i64,
        result: &'a [u8],
    },
    /// Any other control message (group leaders, aliases, ...): its tag,
    /// not acted on.
    Other(i64),
}

/// The atoms in a spawn request's option list (`[link, monitor]`; other
/// options are passed over).
pub fn option_atoms(opts: &[u8]) -> R<Vec<&str>> {
    let mut c = Cursor::new(opts);
    let mut out = Vec::new();
    match c.u8()? {
        NIL_EXT => return Ok(out),
        LIST_EXT => {}
        _ => return Err(WireError("spawn options that are not a list")),
    }
    let n = c.u32()?;
    if n as usize > opts.len() {
        return Err(WireError("a list longer than its bytes"));
    }
    for _ in 0..n {
        let mut peek = Cursor::new(c.rest());
        match peek.atom() {
            Ok(a) => {
                out.push(a);
                c.skip()?;
            }
            Err(_) => {
                c.skip()?;
            }
        }
    }
    Ok(out)
}

/// A packet, read: a whole one, or a fragment of a large message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Whole(Control<'a>),
    /// The first fragment of message `seq`, which has `count` fragments:
    /// the start of its control and message bytes (header form).
    First {
        seq: u64,
        count: u64,
        body: &'a [u8],
    },
    /// Fragment `id` of message `seq` (`count - 1` down to 1): the next
    /// bytes.
    Next {
        seq: u64,
        id: u64,
        data: &'a [u8],
    },
}

/// Reads one packet (without its length prefix), in either form. Every
/// field is checked against the bytes there; a message must be one whole
/// term with nothing after it.
pub fn frame(p: &[u8]) -> R<Frame<'_>> {
    let mut c = Cursor::new(p);
    match c.u8()? {
        PASS_THROUGH => {
            c.versioned = true;
            c.version()?;
            return control(c).map(Frame::Whole);
        }
        VERSION => {}
        _ => return Err(WireError("neither a distribution header nor pass-through")),
    }
    let kind = c.u8()?;
    let u64_ = |c: &mut Cursor<'_>| -> R<u64> {
        let s = c.take(8)?;
        let mut w = [0; 8];
        w.copy_from_slice(s);
        Ok(u64::from_be_bytes(w))
    };
    match kind {
        DIST_HEADER | DIST_FRAG_HEADER => {
            let ids = if kind == DIST_FRAG_HEADER {
                let seq = u64_(&mut c)?;
                let count = u64_(&mut c)?;
                if count == 0 {
                    return Err(WireError("a message of 0 fragments"));
                }
                Some((seq, count))
            } else {
                None
            };
            if c.u8()? != 0 {
                return Err(WireError("atom cache references (never negotiated)"));
            }
            match ids {
                // A message of one fragment is a whole packet.
                Some((seq, count)) if count > 1 => Ok(Frame::First {
                    seq,
                    count,
                    body: c.rest(),
                }),
                _ => control(c).map(Frame::Whole),
            }
        }
        DIST_FRAG_CONT => {
            let seq = u64_(&mut c)?;
            let id = u64_(&mut c)?;
            Ok(Frame::Next {
                seq,
                id,
                data: c.rest(),
            })
        }
        _ => Err(WireError("an unknown distribution header")),
    }
}

/// Reads one whole packet (without its length prefix); a fragment is an
/// error here (the tests' and the fuzz target's).
#[cfg(any(test, feature = "fuzzing"))]
pub fn parse(p: &[u8]) -> R<Control<'_>> {
    match frame(p)? {
        Frame::Whole(c) => Ok(c),
        _ => Err(WireError("a fragment where a whole packet was expected")),
    }
}

/// Reads the joined bytes of a fragmented message (what follows the
/// headers: control and message, header form).
pub fn parse_body(body: &[u8]) -> R<Control<'_>> {
    control(Cursor::new(body))
}

/// The control message at `c` and, for the controls that carry one, the
/// message after it.
fn control(mut c: Cursor<'_>) -> R<Control<'_>> {
    let arity = c.tuple()?;
    let tag = c.int()?;
    let ctl = match (tag, arity) {
        (SEND | SEND_SENDER, 3) => Control::Send {
            sender: tag == SEND_SENDER,
            from: c.skip()?,
            to: c.pid()?,
            msg: c.message()?,
        },
        (REG_SEND, 4) => Control::RegSend {
            from: c.pid()?,
            unused: c.skip()?,
            name: c.atom()?,
            msg: c.message()?,
        },
        (LINK, 3) => Control::Link {
            from: c.pid()?,
            to: c.pid()?,
        },
        (EXIT | EXIT2, 4) => Control::Exit {
            link: tag == EXIT,
            from: c.pid()?,
            to: c.pid()?,
            reason: c.skip()?,
        },
        (MONITOR_P, 4) => Control::MonitorP {
            watcher: c.skip()?,
            target: c.skip()?,
            mref: c.skip()?,
        },
        (DEMONITOR_P, 4) => Control::DemonitorP {
            watcher: c.skip()?,
            target: c.skip()?,
            mref: c.skip()?,
        },
        (MONITOR_P_EXIT, 5) => Control::MonitorPExit {
            target: c.skip()?,
            watcher: c.skip()?,
            mref: c.reference_bytes()?,
            reason: c.skip()?,
        },
        (SPAWN_REQUEST, 6) => {
            let req = c.skip()?;
            let from = c.pid()?;
            let group_leader = c.skip()?;
            if c.tuple()? != 3 {
                return Err(WireError("a spawn request's {Module, Function, Arity}"));
            }
            let module = c.atom()?;
            let function = c.atom()?;
            let arity = c.int()?;
            let opts = c.skip()?;
            Control::SpawnRequest {
                req,
                from,
                group_leader,
                module,
                function,
                arity,
                opts,
                args: c.message()?,
            }
        }
        (SPAWN_REPLY, 5) => Control::SpawnReply {
            req: c.reference_bytes()?,
            to: c.pid()?,
            flags: c.int()?,
            result: c.skip()?,
        },
        (UNLINK_ID, 4) => Control::UnlinkId {
            id: c.skip()?,
            from: c.skip()?,
            to: c.skip()?,
        },
        (UNLINK_ID_ACK, 4) => Control::UnlinkIdAck {
            id: c.skip()?,
            from: c.skip()?,
            to: c.skip()?,
        },
        _ => return Ok(Control::Other(tag)),
    };
    let carries = matches!(
        ctl,
        Control::Send { .. } | Control::RegSend { .. } | Control::SpawnRequest { .. }
    );
    if !carries && !c.rest().is_empty() {
        return Err(WireError("bytes after the control message"));
    }
    Ok(ctl)
}

impl Control<'_> {
    /// The packet (length prefix included) that [`parse`] reads back as
    /// this control message: how packets are written, and the fuzz
    /// oracle's inverse.
    pub fn write(&self, out: &mut Vec<u8>) {
        let at = self.open(out);
        match self {
            Control::Send { msg, .. } | Control::RegSend { msg, .. } => out.extend_from_slice(msg),
            Control::SpawnRequest { args, .. } => out.extend_from_slice(args),
            _ => {}
        }
        put::finish(out, at);
    }

    /// Writes the packet up to its message: the length placeholder, the
    /// header and the control message (a control's `msg`/`args` field is
    /// not written). The caller encodes the message in place, then
    /// [`put::finish`]es the packet at the position returned: a message
    /// is encoded once, straight into its packet.
    pub fn open(&self, out: &mut Vec<u8>) -> usize {
        let at = put::start(out);
        match self {
            Control::Send {
                sender, from, to, ..
            } => {
                put::tuple(out, 3);
                put::small(out, if *sender { SEND_SENDER } else { SEND } as u8);
                out.extend_from_slice(from);
                put::pid(out, *to);
            }
            Control::RegSend {
                from, unused, name, ..
            } => {
                put::tuple(out, 4);
                put::small(out, REG_SEND as u8);
                put::pid(out, *from);
                out.extend_from_slice(unused);
                put::atom_any(out, name);
            }
            Control::Link { from, to } => {
                put::tuple(out, 3);
                put::small(out, LINK as u8);
                put::pid(out, *from);
                put::pid(out, *to);
            }
            Control::Exit {
                link,
                from,
                to,
                reason,
            } => {
                put::tuple(out, 4);
                put::small(out, if *link { EXIT } else { EXIT2 } as u8);
                put::pid(out, *from);
                put::pid(out, *to);
                out.extend_from_slice(reason);
            }
            Control::MonitorP {
                watcher,
                target,
                mref,
            }
            | Control::DemonitorP {
                watcher,
                target,
                mref,
            } => {
                let tag = if matches!(self, Control::MonitorP { .. }) {
                    MONITOR_P
                } else {
                    DEMONITOR_P
                };
                put::tuple(out, 4);
                put::small(out, tag as u8);
                out.extend_from_slice(watcher);
                out.extend_from_slice(target);
                out.extend_from_slice(mref);
            }
            Control::MonitorPExit {
                target,
                watcher,
                mref,
                reason,
            } => {
                put::tuple(out, 5);
                put::small(out, MONITOR_P_EXIT as u8);
                out.extend_from_slice(target);
                out.extend_from_slice(watcher);
                out.extend_from_slice(mref);
                out.extend_from_slice(reason);
            }
            Control::UnlinkId { id, from, to } | Control::UnlinkIdAck { id, from, to } => {
                let tag = if matches!(self, Control::UnlinkId { .. }) {
                    UNLINK_ID
                } else {
                    UNLINK_ID_ACK
                };
                put::tuple(out, 4);
                put::small(out, tag as u8);
                out.extend_from_slice(id);
                out.extend_from_slice(from);
                out.extend_from_slice(to);
            }
            Control::SpawnRequest {
                req,
                from,
                group_leader,
                module,
                function,
                arity,
                opts,
                ..
            } => {
                put::tuple(out, 6);
                put::small(out, SPAWN_REQUEST as u8);
                out.extend_from_slice(req);
                put::pid(out, *from);
                out.extend_from_slice(group_leader);
                put::tuple(out, 3);
                put::atom_any(out, module);
                put::atom_any(out, function);
                put::int(out, *arity);
                out.extend_from_slice(opts);
            }
            Control::SpawnReply {
                req,
                to,
                flags,
                result,
            } => {
                put::tuple(out, 5);
                put::small(out, SPAWN_REPLY as u8);
                out.extend_from_slice(req);
                put::pid(out, *to);
                put::int(out, *flags);
                out.extend_from_slice(result);
            }
            Control::Other(tag) => {
                put::tuple(out, 1);
                out.push(INTEGER_EXT);
                out.extend_from_slice(&(*tag as i32).to_be_bytes());
            }
        }
        at
    }
}

/// Turns `batch`, length-prefixed packets in the form we write (ticks
/// among them), into pass-through packets appended to `out`: for a peer
/// that did not take `DFLAG_FRAGMENTS` at the handshake.
pub fn pass_through(batch: &[u8], out: &mut Vec<u8>) -> R<()> {
    let mut rest = batch;
    while !rest.is_empty() {
        let mut c = Cursor::new(rest);
        let len = c.u32()? as usize;
        let packet = c.take(len)?;
        rest = c.rest();
        if len == 0 {
            out.extend_from_slice(&[0; 4]);
            continue;
        }
        let body = packet
            .strip_prefix(&HEADER[..])
            .ok_or(WireError("not a whole packet in our form"))?;
        let mut c = Cursor::new(body);
        let ctl = c.skip()?;
        let msg = c.rest();
        // 112, 131 and the control; 131 and the message if there is one.
        let n = 2 + ctl.len() + if msg.is_empty() { 0 } else { 1 + msg.len() };
        out.extend_from_slice(&(n as u32).to_be_bytes());
        out.extend_from_slice(&[PASS_THROUGH, VERSION]);
        out.extend_from_slice(ctl);
        if !msg.is_empty() {
            out.push(VERSION);
            out.extend_from_slice(msg);
        }
    }
    Ok(())
}

/// The atom `''`: the unused field of `SEND` and `REG_SEND`.
pub const UNUSED: &[u8] = &[SMALL_ATOM_UTF8_EXT, 0];

/// The atom `noproc`, as the reason of a monitor or link to a process
/// that is gone.
pub const NOPROC: &[u8] = &[SMALL_ATOM_UTF8_EXT, 6, b'n', b'o', b'p', b'r', b'o', b'c'];

/// Writers of the control messages we send, each into `out` (which
/// already holds the packet's length placeholder and header).
pub mod put {
    use super::*;

    pub fn tuple(out: &mut Vec<u8>, arity: u8) {
        out.push(SMALL_TUPLE_EXT);
        out.push(arity);
    }

    pub fn small(out: &mut Vec<u8>, n: u8) {
        out.push(SMALL_INTEGER_EXT);
        out.push(n);
    }

    /// An integer of 32 bits at most (as [`Cursor::int`] reads them).
    pub fn int(out: &mut Vec<u8>, n: i64) {
        match u8::try_from(n) {
            Ok(b) => small(out, b),
            Err(_) => {
                out.push(INTEGER_EXT);
                out.extend_from_slice(&(n as i32).to_be_bytes());
            }
        }
    }

    /// An atom of at most 255 bytes (node and registered names are).
    pub fn atom(out: &mut Vec<u8>, name: &str) {
        debug_assert!(name.len() <= 255);
        out.push(SMALL_ATOM_UTF8_EXT);
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
    }

    /// An atom of any length up to Erlang's limit (`ATOM_UTF8_EXT` past
    /// 255 bytes).
    pub fn atom_any(out: &mut Vec<u8>, name: &str) {
        if name.len() <= 255 {
            atom(out, name);
        } else {
            out.push(ATOM_UTF8_EXT);
            out.extend_from_slice(&(name.len() as u16).to_be_bytes());
            out.extend_from_slice(name.as_bytes());
        }
    }

    /// A proper list of atoms.
    pub fn atom_list(out: &mut Vec<u8>, atoms: &[&str]) {
        if !atoms.is_empty() {
            out.push(LIST_EXT);
            out.extend_from_slice(&(atoms.len() as u32).to_be_bytes());
            for a in atoms {
                atom_any(out, a);
            }
        }
        out.push(NIL_EXT);
    }

    pub fn pid(out: &mut Vec<u8>, p: WirePid<'_>) {
        out.push(NEW_PID_EXT);
        atom_any(out, p.node);
        out.extend_from_slice(&p.id.to_be_bytes());
        out.extend_from_slice(&p.serial.to_be_bytes());
        out.extend_from_slice(&p.creation.to_be_bytes());
    }

    /// A reference of ours: `NEWER_REFERENCE_EXT` with the id's two
    /// halves and a zero (what `lona_term::etf` writes for a local one).
    pub fn reference(out: &mut Vec<u8>, node: &str, creation: u32, id: u64) {
        out.push(NEWER_REFERENCE_EXT);
        out.extend_from_slice(&3u16.to_be_bytes());
        atom(out, node);
        out.extend_from_slice(&creation.to_be_bytes());
        out.extend_from_slice(&(id as u32).to_be_bytes());
        out.extend_from_slice(&((id >> 32) as u32).to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
    }

    /// Starts a packet: a length placeholder and the distribution
    /// header; [`finish`] writes the length.
    pub fn start(out: &mut Vec<u8>) -> usize {
        let at = out.len();
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&HEADER);
        at
    }

    /// Writes the length of the packet started at `at`.
    pub fn finish(out: &mut [u8], at: usize) {
        finish_spliced(out, at, 0);
    }

    /// Writes the length of the packet started at `at` that has `extra`
    /// bytes spliced in besides `out`'s ([`crate::dist::pieces::Packet`]).
    pub fn finish_spliced(out: &mut [u8], at: usize, extra: usize) {
        let len = (out.len() - at - 4 + extra) as u32;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid_bytes(node: &str) -> Vec<u8> {
        let mut v = Vec::new();
        put::pid(
            &mut v,
            WirePid {
                node,
                id: 7,
                serial: 3,
                creation: 99,
            },
        );
        v
    }

    #[test]
    fn a_pid_reads_back_as_written() {
        let v = pid_bytes("a@b");
        let mut c = Cursor::new(&v);
        let p = c.pid().unwrap();
        assert_eq!((p.node, p.id, p.serial, p.creation), ("a@b", 7, 3, 99));
        assert!(c.rest().is_empty());
        let mut c = Cursor::new(&v);
        assert_eq!(c.skip().unwrap(), &v[..]);
    }

    #[test]
    fn skip_steps_over_nested_terms_and_stops_at_their_end() {
        // {1, [a, <<"xy">>], #{k => 2.0}} then a trailing byte.
        let mut v = vec![SMALL_TUPLE_EXT, 3, SMALL_INTEGER_EXT, 1];
        v.extend([LIST_EXT, 0, 0, 0, 2]);
        put::atom(&mut v, "a");
        v.extend([BINARY_EXT, 0, 0, 0, 2, b'x', b'y', NIL_EXT]);
        v.extend([MAP_EXT, 0, 0, 0, 1]);
        put::atom(&mut v, "k");
        v.push(NEW_FLOAT_EXT);
        v.extend(2.0f64.to_be_bytes());
        let n = v.len();
        v.push(0xff);
        let mut c = Cursor::new(&v);
        assert_eq!(c.skip().unwrap().len(), n);
        assert_eq!(c.rest(), &[0xff]);
    }

    #[test]
    fn hostile_lengths_are_errors() {
        // A tuple of 4 billion elements in 5 bytes.
        assert!(Cursor::new(&[LARGE_TUPLE_EXT, 0xff, 0xff, 0xff, 0xff])
            .skip()
            .is_err());
        // A list claiming 2^32-1 elements.
        assert!(Cursor::new(&[LIST_EXT, 0xff, 0xff, 0xff, 0xff, NIL_EXT])
            .skip()
            .is_err());
        // A binary longer than the packet.
        assert!(Cursor::new(&[BINARY_EXT, 0, 0, 1, 0, 1, 2]).skip().is_err());
        // A reference of 9 words.
        assert!(Cursor::new(&[NEWER_REFERENCE_EXT, 0, 9]).skip().is_err());
        // A truncated pid.
        let v = pid_bytes("n@h");
        for cut in 0..v.len() {
            assert!(Cursor::new(&v[..cut]).pid().is_err());
            assert!(Cursor::new(&v[..cut]).skip().is_err());
        }
        // Deep nesting does not recurse.
        let mut deep = vec![];
        for _ in 0..100_000 {
            deep.extend([SMALL_TUPLE_EXT, 1]);
        }
        deep.push(NIL_EXT);
        assert_eq!(Cursor::new(&deep).skip().unwrap().len(), deep.len());
    }

    /// A control message of every kind, as our peers send them.
    fn samples() -> Vec<Vec<u8>> {
        let p = |node| WirePid {
            node,
            id: 5,
            serial: 1,
            creation: 77,
        };
        let mut atom_ok = Vec::new();
        put::atom(&mut atom_ok, "ok");
        let mut empty = Vec::new();
        put::atom(&mut empty, "");
        let mut pid_bytes = Vec::new();
        put::pid(&mut pid_bytes, p("a@h"));
        let mut r = Vec::new();
        put::reference(&mut r, "a@h", 77, 0x1234_5678_9abc);
        let controls = vec![
            Control::Send {
                sender: false,
                from: &empty,
                to: p("b@h"),
                msg: &atom_ok,
            },
            Control::Send {
                sender: true,
                from: &pid_bytes,
                to: p("b@h"),
                msg: &atom_ok,
            },
            Control::RegSend {
                from: p("a@h"),
                unused: &empty,
                name: "counter",
                msg: &atom_ok,
            },
            Control::Link {
                from: p("a@h"),
                to: p("b@h"),
            },
            Control::Exit {
                link: true,
                from: p("a@h"),
                to: p("b@h"),
                reason: &atom_ok,
            },
            Control::Exit {
                link: false,
                from: p("a@h"),
                to: p("b@h"),
                reason: &atom_ok,
            },
            Control::MonitorP {
                watcher: &pid_bytes,
                target: &atom_ok,
                mref: &r,
            },
            Control::DemonitorP {
                watcher: &pid_bytes,
                target: &pid_bytes,
                mref: &r,
            },
            Control::MonitorPExit {
                target: &pid_bytes,
                watcher: &pid_bytes,
                mref: &r,
                reason: &atom_ok,
            },
            Control::UnlinkId {
                id: &atom_ok,
                from: &pid_bytes,
                to: &pid_bytes,
            },
            Control::UnlinkIdAck {
                id: &atom_ok,
                from: &pid_bytes,
                to: &pid_bytes,
            },
            Control::SpawnRequest {
                req: &r,
                from: p("a@h"),
                group_leader: &pid_bytes,
                module: "user",
                function: "worker",
                arity: 2,
                opts: &[NIL_EXT],
                args: &[NIL_EXT],
            },
            Control::SpawnReply {
                req: &r,
                to: p("b@h"),
                flags: 3,
                result: &pid_bytes,
            },
            Control::Other(70000),
        ];
        controls
            .iter()
            .map(|c| {
                let mut v = Vec::new();
                c.write(&mut v);
                v
            })
            .collect()
    }

    /// The oracle: what `parse` read, written again, reads back the same.
    fn round_trips(packet: &[u8]) {
        if let Ok(c) = parse(packet) {
            let mut again = Vec::new();
            c.write(&mut again);
            assert_eq!(parse(&again[4..]).as_ref(), Ok(&c), "{packet:?}");
        }
    }

    #[test]
    fn every_control_message_reads_back_as_written() {
        for s in samples() {
            let c = parse(&s[4..]).unwrap_or_else(|e| panic!("{e}: {s:?}"));
            let mut again = Vec::new();
            c.write(&mut again);
            assert_eq!(again, s);
        }
    }

    #[test]
    fn mutated_control_messages_are_errors_or_read_back_the_same() {
        // Every single-byte change, truncation and insertion of each
        // sample: parse never panics, and what it reads round-trips.
        for s in samples() {
            let body = &s[4..];
            for i in 0..body.len() {
                for b in [0u8, 1, 0x7f, 0x80, 0xff, 88, 104, 131] {
                    let mut m = body.to_vec();
                    m[i] = b;
                    round_trips(&m);
                    let mut ins = body.to_vec();
                    ins.insert(i, b);
                    round_trips(&ins);
                }
                round_trips(&body[..i]);
            }
        }
    }

    #[test]
    fn every_prefix_of_random_bytes_is_an_answer_not_a_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut v = Vec::new();
            for _ in 0..(x % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v.push(x as u8);
            }
            x = x.wrapping_add(1);
            let mut c = Cursor::new(&v);
            if let Ok(s) = c.skip() {
                assert!(s.len() <= v.len());
            }
            let _ = Cursor::new(&v).pid();
            let _ = Cursor::new(&v).atom();
            let _ = Cursor::new(&v).tuple();
            for prefix in [&[PASS_THROUGH, VERSION][..], &HEADER[..]] {
                let mut p = prefix.to_vec();
                p.extend_from_slice(&v);
                round_trips(&p);
            }
            let mut p = vec![VERSION, DIST_FRAG_HEADER];
            p.extend_from_slice(&v);
            let _ = frame(&p);
            p[1] = DIST_FRAG_CONT;
            let _ = frame(&p);
        }
    }

    #[test]
    fn a_pass_through_packet_reads_as_the_one_we_wrote() {
        let all: Vec<u8> = samples().concat();
        let mut batch = all.clone();
        batch.extend_from_slice(&[0, 0, 0, 0]); // a tick goes through
        let mut old = Vec::new();
        pass_through(&batch, &mut old).unwrap();
        let mut a = &all[..];
        let mut b = &old[..];
        while !a.is_empty() {
            let (la, lb) = (
                u32::from_be_bytes(a[..4].try_into().unwrap()) as usize,
                u32::from_be_bytes(b[..4].try_into().unwrap()) as usize,
            );
            assert_eq!(b[4], PASS_THROUGH);
            assert_eq!(parse(&a[4..4 + la]), parse(&b[4..4 + lb]));
            a = &a[4 + la..];
            b = &b[4 + lb..];
        }
        assert_eq!(b, &[0, 0, 0, 0]);
        // Not ours: an error, not a panic.
        assert!(pass_through(&[0, 0, 0, 2, 1, 2], &mut Vec::new()).is_err());
        assert!(pass_through(&[0, 0, 9], &mut Vec::new()).is_err());
    }
}
