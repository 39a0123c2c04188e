//! The reclaimer: a thread that frees large mailboxes, so ending a process
//! with millions of queued messages does not hold its worker while they
//! are dropped (issue 17, defect 8: 10 million messages took a worker
//! ~80 ms).
//!
//! # Protocol
//! 1. A worker ending a process (`worker::finish`) whose mailbox holds
//!    more than [`INLINE_MAX`] messages takes the whole chain out of the
//!    mailbox (O(1)) and [`Reclaimer::hand_over`]s it: one lock, one push,
//!    one wake-up. Smaller mailboxes are freed in place, as before: a
//!    hand-over would cost them more than it saves.
//! 2. The reclaimer thread ([`Reclaimer::run`]) takes every chain handed
//!    over, outside the lock, and drops each node (`envelope::drop_chain`:
//!    a message whose `Drop` panics is contained there, logged, and the
//!    rest of the chain is still freed).
//! 3. [`Reclaimer::stop`] (runtime shutdown, after every process ended)
//!    lets the thread finish what it holds and return; a chain handed over
//!    after that (a worker that was abandoned and ends a process late) is
//!    freed in place by the caller. So every chain handed over is freed
//!    exactly once, by the thread or by its giver, and nothing is left
//!    when the runtime is gone.
//!
//! The slot and its pid are reused at once; only the messages' memory
//! outlives the process, until the reclaimer gets to it. The messages of
//! a dead process are unreachable, so nobody can tell when they go,
//! except through their `Drop`, which runs on the reclaimer's thread.

use crate::base::envelope::{drop_chain, Header};
#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

/// Mailboxes of more messages than this are handed to the reclaimer; the
/// others are freed by the worker (a few microseconds at most).
pub(crate) const INLINE_MAX: usize = 4096;

/// An owned chain of nodes linked by `next`, in transit to the reclaimer.
struct Chain(*mut Header);

// SAFETY: the chain's nodes hold `Send` values (every `Envelope` does) and
// are owned by whoever holds the `Chain`.
unsafe impl Send for Chain {}

struct Queue {
    chains: Vec<Chain>,
    stopped: bool,
}

/// The hand-over point between workers and the reclaimer thread.
pub(crate) struct Reclaimer {
    queue: Mutex<Queue>,
    cv: Condvar,
}

impl Reclaimer {
    pub(crate) fn new() -> Reclaimer {
        Reclaimer {
            queue: Mutex::new(Queue {
                chains: Vec::new(),
                stopped: false,
            }),
            cv: Condvar::new(),
        }
    }

    /// Step 1: free the chain starting at `head` on the reclaimer thread
    /// (or here, if the reclaimer has stopped).
    ///
    /// # Safety
    /// The caller owns every node of the chain (null-terminated), and
    /// gives them up.
    pub(crate) unsafe fn hand_over(&self, head: *mut Header) {
        if head.is_null() {
            return;
        }
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if q.stopped {
            drop(q);
            // SAFETY: ours (contract); nobody else will free it.
            unsafe { drop_chain(head) };
            return;
        }
        q.chains.push(Chain(head));
        drop(q);
        self.cv.notify_one();
    }

    /// Step 2, the reclaimer thread's body: free what is handed over until
    /// stopped, then what is left, and return.
    pub(crate) fn run(&self) {
        loop {
            let (chains, stopped) = {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                while q.chains.is_empty() && !q.stopped {
                    q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
                (std::mem::take(&mut q.chains), q.stopped)
            };
            for Chain(head) in chains {
                // SAFETY: handed over to us by `hand_over`, exactly once.
                unsafe { drop_chain(head) };
            }
            if stopped {
                // `stopped` was read with the chains under the lock: any
                // hand-over after it frees its own chain.
                return;
            }
        }
    }

    /// Step 3: the thread frees what it holds and returns.
    pub(crate) fn stop(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.stopped = true;
        drop(q);
        self.cv.notify_all();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::envelope::Envelope;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>, bool);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
            if self.1 {
                panic!("a hostile destructor");
            }
        }
    }

    /// A chain of `n` counted messages; the one at `hostile` panics when
    /// dropped.
    fn chain(n: usize, drops: &Arc<AtomicUsize>, hostile: Option<usize>) -> *mut Header {
        let mut head: *mut Header = std::ptr::null_mut();
        for i in 0..n {
            let e = Envelope::new(Counted(drops.clone(), hostile == Some(i)), 0, false);
            let p = e.into_raw();
            // SAFETY: an owned node, linked in front of our chain.
            unsafe { (*p).next = head };
            head = p;
        }
        head
    }

    /// Chains handed over are freed on the reclaimer's thread, every node
    /// exactly once, a panicking destructor among them contained; after
    /// `stop`, a hand-over frees its chain in place.
    #[test]
    fn hand_over_frees_every_node_on_the_thread() {
        let r = Arc::new(Reclaimer::new());
        let drops = Arc::new(AtomicUsize::new(0));
        let thread = {
            let r = r.clone();
            std::thread::spawn(move || r.run())
        };
        let n = if cfg!(miri) { 20 } else { 5000 };
        for k in 0..4 {
            let hostile = (k == 1).then_some(n / 2);
            // SAFETY: a fresh chain of ours.
            unsafe { r.hand_over(chain(n, &drops, hostile)) };
        }
        r.stop();
        thread
            .join()
            .expect("the reclaimer survives a panicking drop");
        assert_eq!(drops.load(SeqCst), 4 * n, "every message dropped");
        // SAFETY: as above.
        unsafe { r.hand_over(chain(3, &drops, None)) };
        assert_eq!(drops.load(SeqCst), 4 * n + 3, "freed in place once stopped");
    }

    /// The caller does not wait for the free: while the thread is held up
    /// in one message's `Drop`, hand-overs return at once.
    #[test]
    fn hand_over_does_not_wait_for_the_free() {
        let r = Arc::new(Reclaimer::new());
        let thread = {
            let r = r.clone();
            std::thread::spawn(move || r.run())
        };
        let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        struct Gate(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>);
        impl Drop for Gate {
            fn drop(&mut self) {
                let _ = self.0.send(());
                let _ = self.1.recv();
            }
        }
        let gate = Envelope::new(Gate(entered_tx, release_rx), 0, false).into_raw();
        // SAFETY: one owned node.
        unsafe { r.hand_over(gate) };
        entered.recv().expect("the reclaimer is dropping the gate");
        let drops = Arc::new(AtomicUsize::new(0));
        // SAFETY: a fresh chain of ours.
        unsafe { r.hand_over(chain(100, &drops, None)) };
        assert_eq!(drops.load(SeqCst), 0, "queued, not freed by the caller");
        release.send(()).unwrap();
        r.stop();
        thread.join().unwrap();
        assert_eq!(drops.load(SeqCst), 100);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::base::envelope::Envelope;
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use loom::sync::Arc;

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// A hand-over racing `stop`: the chain is freed exactly once, by the
    /// reclaimer thread or by its giver, and the thread returns.
    #[test]
    fn loom_hand_over_racing_stop_frees_exactly_once() {
        loom::model(|| {
            let r = Arc::new(Reclaimer::new());
            let drops = Arc::new(AtomicUsize::new(0));
            let thread = {
                let r = r.clone();
                loom::thread::spawn(move || r.run())
            };
            let giver = {
                let (r, drops) = (r.clone(), drops.clone());
                loom::thread::spawn(move || {
                    let p = Envelope::new(Counted(drops), 0, false).into_raw();
                    // SAFETY: one owned node.
                    unsafe { r.hand_over(p) };
                })
            };
            r.stop();
            giver.join().unwrap();
            thread.join().unwrap();
            assert_eq!(drops.load(SeqCst), 1);
        });
    }
}
