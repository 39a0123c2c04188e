//! Type-erased messages: one allocation per message, whatever its type.
//!
//! The runtime carries any `Send + 'static` value (`docs/design.md`,
//! "Messages of any type"). A message travels as a
//! [`Node<T>`]: a [`Header`] (the intrusive link used by the inbox and the
//! mailbox, the target's generation, and a vtable for the type) followed by
//! the value inline. `Box<dyn Any>` would cost a second allocation per
//! message; this layout costs one.

use std::any::TypeId;
use std::fmt;
use std::ptr::NonNull;

/// Per-type operations of a node, one `'static` instance per `T`.
pub(crate) struct VTable {
    /// Stored, not computed: a selective receive compares it for every
    /// message it passes over.
    type_id: TypeId,
    type_name: fn() -> &'static str,
    /// Drops the whole `Node<T>` the header belongs to.
    drop: unsafe fn(*mut Header),
}

/// The first field of every node (`repr(C)`, so a `*mut Node<T>` is a
/// `*mut Header`).
#[repr(C)]
pub(crate) struct Header {
    /// Next node in the inbox stack or the mailbox list. Written by the
    /// producer before the node is published (release CAS in `Inbox::push`),
    /// afterwards only by the owning process.
    pub(crate) next: *mut Header,
    /// Two uses, one after the other (so a node stays three words):
    ///
    /// - While the node travels (an outbox, an inbox, the timer wheel):
    ///   the generation of the process it is addressed to (a node whose
    ///   generation is not its receiver's is stale and is dropped unread)
    ///   and whether it is a runtime-internal control signal rather than a
    ///   user message. Read with [`Header::gen`] and [`Header::is_signal`].
    /// - Once its receiver has acted on those and moved it into its
    ///   mailbox: a scan hint, the address of a node a few places further
    ///   down the list ([`Header::ahead`]), or 0. Only ever prefetched,
    ///   never read through: it may name a node taken since.
    ///
    /// A node never goes back from a mailbox to an inbox (a message sent on
    /// is a new node), so the first use never sees the second's value.
    mark: Mark,
    vtable: &'static VTable,
}

/// [`Header::mark`]: one word, two uses.
#[repr(C)]
#[derive(Clone, Copy)]
union Mark {
    to: To,
    ahead: usize,
}

/// Where a node is going (see `mark`). Every bit pattern is a valid `To`
/// (no `bool`), so reading it from a word last written as `ahead` is
/// defined, if meaningless.
#[repr(C)]
#[derive(Clone, Copy)]
struct To {
    gen: u32,
    signal: u8,
}

impl Header {
    /// Generation of the process the node was addressed to (while it
    /// travels; see `mark`).
    #[inline]
    pub(crate) fn gen(&self) -> u32 {
        // SAFETY: every bit pattern is a `To` (see `To`).
        unsafe { self.mark.to.gen }
    }

    /// A runtime-internal control signal rather than a user message (while
    /// it travels; see `mark`).
    #[inline]
    pub(crate) fn is_signal(&self) -> bool {
        // SAFETY: every bit pattern is a `To` (see `To`).
        unsafe { self.mark.to.signal != 0 }
    }

    /// The mailbox's scan hint (see `mark`): an address to prefetch, or 0.
    ///
    /// # Safety
    /// The node is in a mailbox: its word was last written whole as the
    /// hint (by `Mailbox::push` or [`Header::set_ahead`]). A word last
    /// written as a `To` has three bytes of padding, which must not be
    /// read as part of a `usize`.
    #[inline]
    pub(crate) unsafe fn ahead(&self) -> usize {
        // SAFETY: the word was written as `ahead` (the caller's contract).
        unsafe { self.mark.ahead }
    }

    /// Set the scan hint of a node in the mailbox (see `mark`).
    #[inline]
    pub(crate) fn set_ahead(&mut self, to: *const Header) {
        self.mark = Mark { ahead: to.addr() };
    }
}

#[repr(C)]
struct Node<T> {
    header: Header,
    value: T,
}

unsafe fn drop_node<T>(h: *mut Header) {
    // SAFETY: `h` was produced by `Envelope::new::<T>` (the vtable is only
    // ever paired with `Node<T>`), and the caller owns it exclusively.
    let node = unsafe { Box::from_raw(h.cast::<Node<T>>()) };
    // A user value whose `Drop` panics must not unwind into the runtime:
    // messages are dropped by workers, the timer thread and shutdown, none
    // of which may die for it. The node's memory is freed either way (the
    // box is deallocated while unwinding out of the value's drop).
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(node))).is_err() {
        log::error!(target: "lona::drop", "the destructor of a {} panicked", std::any::type_name::<T>());
    }
}

trait HasVTable {
    const VTABLE: VTable;
}
impl<T: 'static> HasVTable for T {
    const VTABLE: VTable = VTable {
        type_id: TypeId::of::<T>(),
        type_name: std::any::type_name::<T>,
        drop: drop_node::<T>,
    };
}

/// An owned message of any `Send + 'static` type, as a process receives it
/// from [`receive_any`](crate::Ctx::receive_any). Dropping it frees it; a
/// panic in the value's `Drop` is caught and logged (target `lona::drop`),
/// never propagated.
pub struct Envelope(NonNull<Header>);

// SAFETY: a node is only created from `T: Send`, and an `Envelope` owns it
// exclusively.
unsafe impl Send for Envelope {}

impl Envelope {
    pub(crate) fn new<T: Send + 'static>(value: T, gen: u32, signal: bool) -> Envelope {
        let node = Box::new(Node {
            header: Header {
                next: std::ptr::null_mut(),
                mark: Mark {
                    to: To {
                        gen,
                        signal: signal as u8,
                    },
                },
                vtable: &<T as HasVTable>::VTABLE,
            },
            value,
        });
        // SAFETY: Box::into_raw is never null.
        Envelope(unsafe { NonNull::new_unchecked(Box::into_raw(node).cast::<Header>()) })
    }

    /// Hand the node over as a raw pointer (into an inbox or mailbox).
    pub(crate) fn into_raw(self) -> *mut Header {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }

    /// # Safety
    /// `p` must come from [`Envelope::into_raw`] and be owned by the caller.
    pub(crate) unsafe fn from_raw(p: *mut Header) -> Envelope {
        // SAFETY: per the contract, p is a live node, hence non-null.
        Envelope(unsafe { NonNull::new_unchecked(p) })
    }

    /// Readdress the node to generation `gen` (a timer aimed at a name,
    /// resolved when it fires).
    pub(crate) fn set_gen(&mut self, gen: u32) {
        // SAFETY: we own a live node exclusively.
        unsafe {
            let h = &mut *self.0.as_ptr();
            h.mark.to.gen = gen;
        }
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: we own a live node.
        unsafe { self.0.as_ref() }
    }

    /// Whether the message is a `T`.
    #[inline]
    pub fn is<T: 'static>(&self) -> bool {
        header_is::<T>(self.header())
    }

    /// The type name of the message, for diagnostics.
    pub fn type_name(&self) -> &'static str {
        (self.header().vtable.type_name)()
    }

    /// A reference to the message if it is a `T`.
    #[inline]
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        if self.is::<T>() {
            // SAFETY: the type check passed, so this is a `Node<T>`.
            Some(unsafe { &(*self.0.as_ptr().cast::<Node<T>>()).value })
        } else {
            None
        }
    }

    /// The message itself if it is a `T`, else the envelope back.
    pub fn downcast<T: 'static>(self) -> Result<T, Envelope> {
        if self.is::<T>() {
            let p = self.into_raw().cast::<Node<T>>();
            // SAFETY: the type check passed and we own the node.
            Ok(unsafe { Box::from_raw(p) }.value)
        } else {
            Err(self)
        }
    }
}

/// Whether the node behind `h` holds a `T`.
#[inline]
pub(crate) fn header_is<T: 'static>(h: &Header) -> bool {
    // The same vtable is the same type (one pointer compare, the common
    // case); a `T`'s vtable may also exist at several addresses (one per
    // codegen unit), so a different address compares the type ids.
    std::ptr::eq(h.vtable, &<T as HasVTable>::VTABLE) || h.vtable.type_id == TypeId::of::<T>()
}

/// Borrow the value of a node known to hold a `T`.
///
/// Takes the node pointer, not a `&Header`: a reference to the header only
/// covers the header's bytes, and reading the value through it would be
/// undefined behaviour (Miri's Stacked Borrows catches exactly that).
///
/// # Safety
/// `h` must point to a live node for `'a`, and `header_is::<T>` must hold.
pub(crate) unsafe fn value_ref<'a, T: 'static>(h: *const Header) -> &'a T {
    // SAFETY: per the contract the node is a live `Node<T>`.
    unsafe { &(*h.cast::<Node<T>>()).value }
}

impl Drop for Envelope {
    fn drop(&mut self) {
        let p = self.0.as_ptr();
        // SAFETY: we own the node; its vtable matches its type.
        unsafe { ((*p).vtable.drop)(p) }
    }
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Envelope<{}>", self.type_name())
    }
}

/// Drop a chain of nodes linked by `next`.
///
/// # Safety
/// The caller owns every node of the chain.
pub(crate) unsafe fn drop_chain(mut p: *mut Header) {
    while !p.is_null() {
        // SAFETY: owned, live node; read `next` before freeing it.
        let next = unsafe { (*p).next };
        // SAFETY: owned and live (`next` read above): freed once, here.
        drop(unsafe { Envelope::from_raw(p) });
        p = next;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Generation and signal flag share one word: each reads back as
    /// written at the extremes, and readdressing keeps the flag.
    #[test]
    fn generation_and_signal_share_a_word() {
        for gen in [0, 1, 0x8000_0000, u32::MAX] {
            for signal in [false, true] {
                let mut e = Envelope::new(7u8, gen, signal);
                assert_eq!((e.header().gen(), e.header().is_signal()), (gen, signal));
                e.set_gen(gen ^ u32::MAX);
                assert_eq!(
                    (e.header().gen(), e.header().is_signal()),
                    (gen ^ u32::MAX, signal)
                );
            }
        }
    }

    #[test]
    fn downcast_and_drop() {
        let e = Envelope::new(42u64, 0, false);
        assert!(e.is::<u64>());
        assert!(!e.is::<u32>());
        assert_eq!(e.downcast_ref::<u64>(), Some(&42));
        let e = e.downcast::<String>().unwrap_err();
        assert_eq!(e.downcast::<u64>().unwrap(), 42);

        let drops = Arc::new(AtomicUsize::new(0));
        drop(Envelope::new(Counted(drops.clone()), 0, false));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        let e = Envelope::new(Counted(drops.clone()), 0, false);
        let c = e.downcast::<Counted>().ok().unwrap();
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "downcast moves, does not drop"
        );
        drop(c);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    struct PanicsOnDrop(Arc<AtomicUsize>);
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            panic!("drop panics");
        }
    }

    /// A chain with a panicking value in the middle: the panic stays inside
    /// the node's drop and every later node is still freed.
    #[test]
    fn destructors_that_panic_are_contained() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut chain: *mut Header = std::ptr::null_mut();
        for i in 0..5 {
            let e = if i == 2 {
                Envelope::new(PanicsOnDrop(drops.clone()), 0, false)
            } else {
                Envelope::new(Counted(drops.clone()), 0, false)
            };
            let n = e.into_raw();
            unsafe { (*n).next = chain };
            chain = n;
        }
        unsafe { drop_chain(chain) };
        assert_eq!(drops.load(Ordering::SeqCst), 5, "every node dropped");
    }

    #[test]
    fn one_allocation_layout() {
        assert_eq!(std::mem::size_of::<Header>(), 24);
        assert_eq!(std::mem::size_of::<Envelope>(), 8);
    }
}
