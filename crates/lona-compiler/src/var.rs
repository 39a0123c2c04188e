//! Vars and namespaces: the global names of a node.
//!
//! A var is a named, mutable cell holding a permanent term (usually a
//! function). Code refers to vars, never to their values, so `(def f ...)`
//! or `(defn f ...)` again changes what every caller, in every process,
//! runs from its next call on: Lonala's hot code loading.
//!
//! * **Writers**: `def` ([`Var::set`]), from any process, at any time.
//! * **Readers**: every call through the var ([`Var::get`]).
//!
//! The value is one `AtomicU64` holding the term word. A store is
//! `Release` and a load `Acquire`, so a process that sees the new word also
//! sees the permanent object it points to, fully written. The word `0`
//! (a boxed pointer to address 0, never a term) means unbound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use lona_term::{Heap, RawTerm, Term};

const UNBOUND: u64 = 0;

/// A global name and its value. Aligned to a cache line of its own: it
/// is read by every call through it, from every worker, and must not
/// share a line with data that is written.
#[repr(align(64))]
pub struct Var {
    /// The namespace, `user` or `app.server`.
    pub ns: Arc<str>,
    /// The name inside it.
    pub name: Arc<str>,
    /// The qualified symbol `ns/name` (an immediate), for error values.
    pub symbol: RawTerm,
    value: AtomicU64,
    /// Set by `defmacro`: calls are expanded at compile time.
    macro_: AtomicBool,
    /// Set by `defn-`: not visible from other namespaces.
    private: AtomicBool,
}

impl Var {
    /// The value, or `None` while unbound.
    #[inline]
    pub fn get(&self) -> Option<RawTerm> {
        // Acquire: pairs with the Release store in `set`, so the permanent
        // object behind the word is visible.
        let w = self.value.load(Ordering::Acquire);
        (w != UNBOUND).then_some(crate::tag::raw(w))
    }

    /// The address of the value word, for compiled code that reads it
    /// (`jit`: an atomic load with Acquire, as [`Var::get`]).
    pub fn value_addr(&self) -> usize {
        &self.value as *const AtomicU64 as usize
    }

    /// A copy of the value, `None` while unbound. A copy, for the value
    /// may be replaced and then freed at any time (`area`); the copy pins
    /// whatever code its closures name.
    pub fn value(&self) -> Option<lona_term::Fragment> {
        self.with_term(|t| t.map(lona_term::Fragment::new))
    }

    /// Runs `f` on the value (`None` while unbound), which stays valid
    /// while `f` runs: a code collection cycle that overlaps frees nothing.
    pub fn with_term<R>(&self, f: impl FnOnce(Option<Term<'_>>) -> R) -> R {
        let _guard = crate::area::Census::unmanaged();
        // SAFETY: values are always permanent terms (see `set`), and the
        // guard keeps them from being freed until it drops.
        f(self.get().map(|r| unsafe { lona_term::permanent_term(r) }))
    }

    /// Binds the var.
    ///
    /// # Safety
    /// `value` must be an immediate or a permanent term
    /// ([`lona_term::make_permanent`]) that the caller holds.
    pub unsafe fn set(&self, value: RawTerm) {
        debug_assert!(lona_term::is_permanent(value.bits()));
        // SeqCst (a Release for `get`'s Acquire too): the store comes
        // before `on_set`'s load of the collector's cycle (`area`, "Why
        // nothing in use is freed").
        self.value.store(value.bits(), Ordering::SeqCst);
        crate::area::on_set(value.bits());
    }

    /// Binds the var to a copy of `t` in permanent memory.
    pub fn set_copy(&self, t: Term<'_>) {
        if lona_term::is_permanent(t.bits()) {
            // SAFETY: checked permanent; the caller holds it.
            unsafe { self.set(t.raw()) };
            return;
        }
        let h = Heap::with_config(lona_term::HeapConfig {
            min_heap_size: 1,
            ..Default::default()
        });
        let raw = h.copy_from(t).raw();
        crate::area::make_value(h);
        // SAFETY: `raw` lives in the heap just made freeable. A cycle that
        // lists it either finds the var bound to it (step 2) or is told by
        // `set`'s touch (`area`), so it is not freed under the var.
        unsafe { self.set(raw) };
    }

    /// Whether calls are macro expansions.
    pub fn is_macro(&self) -> bool {
        self.macro_.load(Ordering::Relaxed)
    }

    /// Marks the var as a macro.
    pub fn set_macro(&self, on: bool) {
        self.macro_.store(on, Ordering::Relaxed);
    }

    /// Whether the var is private to its namespace.
    pub fn is_private(&self) -> bool {
        self.private.load(Ordering::Relaxed)
    }

    /// Marks the var private (`defn-`).
    pub fn set_private(&self, on: bool) {
        self.private.store(on, Ordering::Relaxed);
    }

    /// `ns/name`.
    pub fn qualified(&self) -> String {
        format!("{}/{}", self.ns, self.name)
    }
}

impl std::fmt::Debug for Var {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#'{}/{}", self.ns, self.name)
    }
}

/// A namespace: its vars and the aliases its code uses.
pub struct Namespace {
    /// `app.server`
    pub name: Arc<str>,
    vars: RwLock<HashMap<Arc<str>, &'static Var>>,
    aliases: RwLock<HashMap<Arc<str>, Arc<str>>>,
    /// `(:require [a.b :refer [x]])`: `x` names `a.b/x` (name → namespace).
    refers: RwLock<HashMap<Arc<str>, Arc<str>>>,
    /// `(:require [a.b :refer :all])`: every public var of these.
    refer_all: RwLock<Vec<Arc<str>>>,
}

impl Namespace {
    /// The var `name`, created unbound if it does not exist.
    pub fn intern(&self, name: &str) -> &'static Var {
        if let Some(v) = self.lookup(name) {
            return v;
        }
        let mut vars = self.vars.write().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = vars.get(name) {
            return v;
        }
        let name: Arc<str> = name.into();
        let v: &'static Var = Box::leak(Box::new(Var {
            ns: self.name.clone(),
            // `ns/name`; should the atom table be full (or the name too
            // long), the plain name the compiler interned, else nil.
            symbol: Term::try_symbol(&format!("{}/{}", self.name, name))
                .or_else(|_| Term::try_symbol(&name))
                .unwrap_or(Term::NIL)
                .raw(),
            name: name.clone(),
            value: AtomicU64::new(UNBOUND),
            macro_: AtomicBool::new(false),
            private: AtomicBool::new(false),
        }));
        vars.insert(name, v);
        crate::area::new_var(&v.value);
        v
    }

    /// The var `name`, if it exists.
    pub fn lookup(&self, name: &str) -> Option<&'static Var> {
        self.vars
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }

    /// Every var, sorted by name.
    pub fn vars(&self) -> Vec<&'static Var> {
        let mut v: Vec<&'static Var> = self
            .vars
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .copied()
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Makes `alias/x` name `target/x` in this namespace's code.
    pub fn add_alias(&self, alias: &str, target: &str) {
        self.aliases
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(alias.into(), target.into());
    }

    /// Makes `name` in this namespace's code name `target/name` (`:refer`).
    pub fn add_refer(&self, name: &str, target: &str) {
        self.refers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.into(), target.into());
    }

    /// Makes every public var of `target` visible unqualified (`:refer :all`).
    pub fn add_refer_all(&self, target: &str) {
        let mut all = self.refer_all.write().unwrap_or_else(|e| e.into_inner());
        if !all.iter().any(|t| &**t == target) {
            all.push(target.into());
        }
    }

    /// The namespace `name` is referred from, if it is: an explicit
    /// `:refer` first, then the `:refer :all` namespaces (in order) that
    /// have a public var of that name.
    pub fn referred(&self, name: &str, namespaces: &Namespaces) -> Option<Arc<str>> {
        if let Some(t) = self
            .refers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Some(t.clone());
        }
        self.refer_all
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|t| {
                namespaces
                    .get(t)
                    .and_then(|ns| ns.lookup(name))
                    .is_some_and(|v| !v.is_private())
            })
            .cloned()
    }

    /// The namespace an alias stands for.
    pub fn alias(&self, alias: &str) -> Option<Arc<str>> {
        self.aliases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(alias)
            .cloned()
    }
}

/// Every namespace of a node. Namespaces are never removed.
#[derive(Default)]
pub struct Namespaces {
    all: RwLock<HashMap<Arc<str>, &'static Namespace>>,
}

impl Namespaces {
    /// The namespace `name`, created empty if it does not exist.
    pub fn get_or_create(&self, name: &str) -> &'static Namespace {
        if let Some(ns) = self.get(name) {
            return ns;
        }
        let mut all = self.all.write().unwrap_or_else(|e| e.into_inner());
        if let Some(ns) = all.get(name) {
            return ns;
        }
        let name: Arc<str> = name.into();
        let ns: &'static Namespace = Box::leak(Box::new(Namespace {
            name: name.clone(),
            vars: RwLock::new(HashMap::new()),
            aliases: RwLock::new(HashMap::new()),
            refers: RwLock::new(HashMap::new()),
            refer_all: RwLock::new(Vec::new()),
        }));
        all.insert(name, ns);
        ns
    }

    /// The namespace `name`, if it exists.
    pub fn get(&self, name: &str) -> Option<&'static Namespace> {
        self.all
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }

    /// Every namespace name, sorted.
    pub fn names(&self) -> Vec<Arc<str>> {
        let mut v: Vec<Arc<str>> = self
            .all
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        v.sort();
        v
    }
}
