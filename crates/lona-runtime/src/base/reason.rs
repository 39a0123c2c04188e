//! Exit reasons.
//!
//! A process ends with a [`Reason`]; its links and monitors receive it. The
//! standard reasons of Erlang are variants so they are cheap and easy to
//! match; anything else is a [`Reason::Custom`] holding any
//! `Send + Sync + Debug + 'static` value (a Lonala term, an error type, a
//! string), shared by reference count because one exit reaches many
//! processes.
//!
//! # Comparing custom reasons
//! Rust cannot ask at run time whether a type has `PartialEq`, so the
//! constructor says how a custom reason compares:
//! - [`Reason::custom`] takes a `PartialEq` value and compares by value
//!   (with values of the same type; texts, `&str` and `String`, compare by
//!   content across the two types);
//! - [`Reason::custom_any`] takes any value, such as a
//!   [`std::io::Error`] (also `Reason::from(io_error)`), and compares by
//!   identity: a reason equals its clones (every link and monitor of the
//!   process that ended sees the same one), never another reason made
//!   separately, even from an equal-looking value.
//!
//! A custom value is user code the runtime runs on its own threads (its
//! `Drop` when the last copy goes, its `Debug` in crash reports): both are
//! contained, so a value whose `Drop` or `Debug` panics cannot take a
//! worker down.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// Why a process ended (or is being asked to).
#[derive(Clone)]
pub enum Reason {
    /// Ended normally: returned from its function. Links ignore it unless
    /// they trap exits.
    Normal,
    /// `exit(pid, Kill)`: cannot be trapped; the target ends with
    /// [`Reason::Killed`].
    Kill,
    /// What the links of a killed process see.
    Killed,
    /// Asked to stop, e.g. by its supervisor or runtime shutdown.
    Shutdown,
    /// The process addressed does not exist.
    NoProc,
    /// The process panicked.
    Panic(Arc<PanicInfo>),
    /// Any other value.
    Custom(Arc<dyn CustomReason>),
}

/// A value usable as a custom exit reason (implemented by the runtime for
/// the values it wraps: see the module doc, "Comparing custom reasons").
pub trait CustomReason: Send + Sync + fmt::Debug {
    /// Upcast for downcasting (the user's value, not the wrapper).
    fn as_any(&self) -> &dyn Any;
    /// Value equality with another custom reason (false across types, and
    /// always false for a reason compared by identity).
    fn eq_dyn(&self, other: &dyn CustomReason) -> bool;
    /// Whether this reason compares by identity only
    /// ([`Reason::custom_any`]).
    fn by_identity(&self) -> bool {
        false
    }
}

/// The runtime's wrapper around a custom value: contains panics of the
/// value's `Drop` and `Debug` (module doc).
struct Contained<T>(std::mem::ManuallyDrop<T>);

impl<T> Drop for Contained<T> {
    fn drop(&mut self) {
        let inner = &mut self.0;
        // SAFETY: dropped exactly once, here; never used afterwards.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            std::mem::ManuallyDrop::drop(inner)
        }));
        if r.is_err() {
            log::error!(target: "lona::drop", "the destructor of an exit reason ({}) panicked", std::any::type_name::<T>());
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Contained<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Format into a buffer under catch_unwind, then write it.
        let v = &*self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| format!("{v:?}"))) {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "<{} whose Debug panicked>", std::any::type_name::<T>()),
        }
    }
}

impl<T: Any + Send + Sync + fmt::Debug + PartialEq> CustomReason for Contained<T> {
    fn as_any(&self) -> &dyn Any {
        &*self.0
    }
    fn eq_dyn(&self, other: &dyn CustomReason) -> bool {
        // A user `eq` that panics counts as "not equal".
        let (a, b) = (&*self.0, other.as_any().downcast_ref::<T>());
        b.is_some_and(|b| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a == b)).unwrap_or(false)
        })
    }
}

/// A custom value compared by identity ([`Reason::custom_any`]): the same
/// containment as [`Contained`], no value equality.
struct ByIdentity<T>(Contained<T>);

impl<T: fmt::Debug> fmt::Debug for ByIdentity<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<T: Any + Send + Sync + fmt::Debug> CustomReason for ByIdentity<T> {
    fn as_any(&self) -> &dyn Any {
        &*self.0 .0
    }
    fn eq_dyn(&self, _: &dyn CustomReason) -> bool {
        // Identity (`Arc::ptr_eq`) is checked by `Reason::eq` itself.
        false
    }
    fn by_identity(&self) -> bool {
        true
    }
}

/// The panic a process died of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanicInfo {
    /// The panic message (`"explicit panic"` when it carried no string).
    pub message: String,
    /// `file:line:column` where it panicked, when known.
    pub location: Option<String>,
}

impl Reason {
    /// A custom reason holding `value`, compared by value (module doc,
    /// "Comparing custom reasons"). For a value without `PartialEq`, such
    /// as a [`std::io::Error`], use [`Reason::custom_any`].
    pub fn custom<T: Any + Send + Sync + fmt::Debug + PartialEq>(value: T) -> Reason {
        Reason::Custom(Arc::new(Contained(std::mem::ManuallyDrop::new(value))))
    }

    /// A custom reason holding any `value` (no `PartialEq` needed),
    /// compared by identity: equal to its clones only (module doc). Its
    /// value is reached with [`Reason::downcast_ref`] as for
    /// [`Reason::custom`].
    pub fn custom_any<T: Any + Send + Sync + fmt::Debug>(value: T) -> Reason {
        Reason::Custom(Arc::new(ByIdentity(Contained(
            std::mem::ManuallyDrop::new(value),
        ))))
    }

    /// Whether this is [`Reason::Normal`].
    pub fn is_normal(&self) -> bool {
        matches!(self, Reason::Normal)
    }

    /// The custom value, if this is a custom reason holding a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        match self {
            Reason::Custom(v) => (**v).as_any().downcast_ref::<T>(),
            _ => None,
        }
    }
}

impl From<&str> for Reason {
    /// A custom reason holding the text as a `String`.
    fn from(s: &str) -> Reason {
        Reason::custom(s.to_string())
    }
}
impl From<String> for Reason {
    fn from(s: String) -> Reason {
        Reason::custom(s)
    }
}
impl From<std::io::Error> for Reason {
    /// A custom reason holding the error, compared by identity
    /// ([`Reason::custom_any`]; `io::Error` has no `PartialEq`).
    fn from(e: std::io::Error) -> Reason {
        Reason::custom_any(e)
    }
}

impl PartialEq for Reason {
    /// Standard reasons compare by kind, panics by message and location,
    /// custom reasons as the module doc says: by value (`&str` and
    /// `String` texts alike), or by identity for [`Reason::custom_any`].
    fn eq(&self, other: &Reason) -> bool {
        use Reason::*;
        match (self, other) {
            (Normal, Normal) | (Kill, Kill) | (Killed, Killed) | (Shutdown, Shutdown) => true,
            (NoProc, NoProc) => true,
            (Panic(a), Panic(b)) => a == b,
            (Custom(a), Custom(b)) => {
                if Arc::ptr_eq(a, b) {
                    return true;
                }
                if a.by_identity() || b.by_identity() {
                    return false;
                }
                if a.eq_dyn(&**b) {
                    return true;
                }
                let text = |r: &Reason| {
                    r.downcast_ref::<&'static str>()
                        .map(|s| s.to_string())
                        .or_else(|| r.downcast_ref::<String>().cloned())
                };
                matches!((text(self), text(other)), (Some(x), Some(y)) if x == y)
            }
            _ => false,
        }
    }
}

impl fmt::Debug for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Normal => f.write_str("normal"),
            Reason::Kill => f.write_str("kill"),
            Reason::Killed => f.write_str("killed"),
            Reason::Shutdown => f.write_str("shutdown"),
            Reason::NoProc => f.write_str("noproc"),
            Reason::Panic(p) => match &p.location {
                Some(l) => write!(f, "panic {:?} at {l}", p.message),
                None => write!(f, "panic {:?}", p.message),
            },
            Reason::Custom(v) => write!(f, "{v:?}"),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for Reason {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_reasons_are_distinguishable() {
        let all = [
            Reason::Normal,
            Reason::Kill,
            Reason::Killed,
            Reason::Shutdown,
            Reason::NoProc,
        ];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a == b, i == j, "{a:?} vs {b:?}");
            }
        }
        assert_eq!(Reason::from("boom"), Reason::custom(String::from("boom")));
        assert_ne!(Reason::from("boom"), Reason::from("bang"));
    }

    #[test]
    fn custom_reason_carries_any_value() {
        #[derive(Debug, PartialEq)]
        struct MyErr {
            code: u32,
        }
        let r = Reason::custom(MyErr { code: 7 });
        assert_eq!(r.downcast_ref::<MyErr>(), Some(&MyErr { code: 7 }));
        assert_eq!(r.downcast_ref::<String>(), None);
        assert_eq!(format!("{r:?}"), "MyErr { code: 7 }");
        assert!(r == r.clone(), "clones share the value");
        assert_eq!(r, Reason::custom(MyErr { code: 7 }), "compared by value");
        assert_ne!(r, Reason::custom(MyErr { code: 8 }));
        assert_ne!(r, Reason::custom(7u32));
    }

    #[derive(PartialEq)]
    struct Hostile;
    impl fmt::Debug for Hostile {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            panic!("debug panics")
        }
    }
    impl Drop for Hostile {
        fn drop(&mut self) {
            panic!("drop panics")
        }
    }

    /// A custom reason whose `Debug` and `Drop` panic: formatting and
    /// dropping it return normally, by value or by identity.
    #[test]
    fn hostile_custom_reason_is_contained() {
        let r = Reason::custom(Hostile);
        let text = format!("{r:?}");
        assert!(text.contains("Debug panicked"), "{text}");
        drop(r);
        let r = Reason::custom_any(Hostile);
        let text = format!("{r:?}");
        assert!(text.contains("Debug panicked"), "{text}");
        drop(r);
    }

    /// An `io::Error` (no `PartialEq`) is an exit reason without a wrapper:
    /// it prints as itself, downcasts back, and compares by identity.
    #[test]
    fn io_error_is_a_reason_compared_by_identity() {
        use std::io::{Error, ErrorKind};
        let r = Reason::custom_any(Error::new(ErrorKind::NotFound, "gone"));
        assert_eq!(
            r.downcast_ref::<Error>().map(|e| e.kind()),
            Some(ErrorKind::NotFound)
        );
        assert!(format!("{r:?}").contains("gone"), "{r:?}");
        assert_eq!(r, r.clone(), "a reason equals its clones");
        let twin = Reason::from(Error::new(ErrorKind::NotFound, "gone"));
        assert_ne!(r, twin, "a separately made one is another reason");
        assert_ne!(r, Reason::Normal);
        assert_ne!(r, Reason::from("gone"));
        // Values with `PartialEq` made by identity compare by identity too.
        assert_ne!(Reason::custom_any(7u32), Reason::custom_any(7u32));
        assert_ne!(Reason::custom_any(7u32), Reason::custom(7u32));
        assert_ne!(Reason::custom(7u32), Reason::custom_any(7u32));
        assert_ne!(Reason::custom_any(String::from("x")), Reason::from("x"));
        assert_eq!(Reason::custom(7u32), Reason::custom(7u32));
    }
}
