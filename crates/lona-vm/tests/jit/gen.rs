//! Random well-typed Lonala programs, as source text: top-level functions
//! calling each other (in tail position and not, mutual recursion through
//! vars on a depth that falls by one a call, structural recursion on lists
//! and vectors), closures (capturing, in registers, passed to `map`,
//! `filter`, `reduce` and to functions that call them, named ones calling
//! themselves), built-ins as values and in tail position, built-ins that
//! ask the VM for something (`yield`, `gc`, a lazy sequence's elements
//! from the prelude), list and vector patterns, cons cells, arithmetic and
//! comparisons at the edges of the small integers, deep recursion, and
//! errors raised (`:badarith`, `:badarg`, `error`, a wrong arity, not a
//! function) and caught, in `try` forms with and without `finally`. Each
//! program prints its results through `show`, a function that is always
//! compiled; what else compiles is up to the compiler.
//!
//! A program is made from a tape of random words (proptest shrinks the
//! tape): each choice takes the next word, 0 once the tape is used up,
//! and the word 0 always picks the simplest option, so a shorter tape of
//! smaller words is a smaller program.

use std::fmt::Write;

/// Integers at and around the edges where small integers overflow
/// into big ones.
const EDGES: [&str; 5] = [
    "1152921504606846975",  // 2^60 - 1: the largest small integer
    "-1152921504606846976", // -2^60: the smallest
    "1152921504606846976",  // 2^60: a big one
    "576460752303423488",
    "-576460752303423489",
];

/// The most elements a list or vector of a program has (about): a
/// closure passed to `map` is called at most this often per call.
const FAN: u64 = 10;

/// The most calls of the program's number functions one run should
/// make (about): the depth of the top-level calls is chosen to fit.
const CALLS: f64 = 1500.0;

/// Compound expressions in a number function (fewer in others).
const FUEL: u32 = 10;

/// The functions a program defines besides its number functions,
/// by what they take and give.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Helper {
    /// `[x]` to a boolean: a built-in predicate in tail position.
    Pred,
    /// `[x]` to a number.
    Int1,
    /// `[x y]` to a number (a reducer too).
    Int2,
    /// `[h]`: `(h k)`, a tail call through a register (of the
    /// function's own arity: the compiled code checks for itself).
    Apply1,
    /// `[h x]`: `(h x)`, a tail call through a register.
    Apply2,
    /// `[h x]`: a call through a register, not in tail position.
    ApplyIn,
    /// `[xs]` to a number: a tail call of `reduce` or `count`.
    Fold,
    /// `[xs]` to a list: a tail call of `map` or `filter` with a
    /// built-in.
    Seq,
}

/// A number function `fK [n a b ... xs?]`: its number parameters
/// after the depth `n`, and whether it takes a list last.
#[derive(Clone, Copy, Debug)]
struct Num {
    ints: usize,
    list: bool,
}

/// What an expression may name.
#[derive(Clone, Default)]
struct Scope {
    ints: Vec<String>,
    lists: Vec<String>,
    vecs: Vec<String>,
    /// Closures from numbers to numbers in registers.
    fns: Vec<String>,
    /// The depth argument of calls of number functions, where they
    /// may be called (one less than the caller's).
    depth: Option<String>,
    /// The rest of the list a list function may recurse on.
    list_rec: Option<String>,
    /// The rest of the vector a vector function may recurse on.
    vec_rec: Option<String>,
    /// Inside a `try`'s body: raising is likelier.
    in_try: bool,
    /// In a branch of an `if`: raising is allowed (so that most
    /// calls return).
    in_branch: bool,
}

/// The maker of one program: its tape, the functions it defines, and
/// what the definition being made may do.
pub struct Gen {
    tape: Vec<u32>,
    at: usize,
    fresh: u32,
    helpers: Vec<Helper>,
    nums: Vec<Num>,
    lists: usize,
    vecs: usize,
    /// Calls of number functions one call of the function being made
    /// may make: call sites, times `FAN` inside closures and loops
    /// (`mult`: how often the expression being made may run a call).
    weight: u64,
    mult: u64,
    /// Calls of list or vector functions on their rest still allowed
    /// in the function being made (one, outside closures: recursion
    /// stays linear).
    rec_calls: u32,
    /// What the definition being made may call: list functions on any
    /// list, vector functions on any vector, helpers (so that every
    /// cycle of calls goes through a number function's depth or a
    /// list's or vector's rest).
    call_lists: bool,
    call_vecs: bool,
    call_helpers: bool,
    /// Compound expressions the definition being made may still have
    /// (compiling in a debug build takes time by the size).
    fuel: u32,
    /// Whether the definition being made may call `gc` (not a number
    /// function: called too often).
    requests: bool,
}

impl Gen {
    pub fn new(tape: Vec<u32>) -> Gen {
        Gen {
            tape,
            at: 0,
            fresh: 0,
            helpers: Vec::new(),
            nums: Vec::new(),
            lists: 0,
            vecs: 0,
            weight: 0,
            mult: 1,
            rec_calls: 0,
            call_lists: true,
            call_vecs: true,
            call_helpers: true,
            fuel: 0,
            requests: true,
        }
    }

    fn word(&mut self) -> u32 {
        let w = self.tape.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        w
    }

    fn below(&mut self, n: usize) -> usize {
        self.word() as usize % n
    }

    /// An index into `weights`, by weight (the first of non-zero
    /// weight for the word 0).
    fn choose(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut w = self.word() % total;
        for (i, &k) in weights.iter().enumerate() {
            if w < k {
                return i;
            }
            w -= k;
        }
        unreachable!()
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn helpers_of(&self, kinds: &[Helper]) -> Vec<String> {
        if !self.call_helpers {
            return Vec::new();
        }
        (self.helpers.iter().enumerate())
            .filter(|(_, h)| kinds.contains(h))
            .map(|(i, _)| format!("g{i}"))
            .collect()
    }

    /// A small integer (-5 to 5), one at the edges, or a float.
    fn lit(&mut self) -> String {
        match self.choose(&[6, 5, 1]) {
            0 => {
                let k = self.below(11) as i64;
                (if k % 2 == 0 { k / 2 } else { -(k + 1) / 2 }).to_string()
            }
            1 => self.pick(&EDGES).to_string(),
            // (A float path's edges too: -0.0, and a product that
            // overflows, `:badarith` in both tiers.)
            _ => self.pick(&["1.5", "-0.25", "-0.0", "1e300"]).to_string(),
        }
    }

    fn small(&mut self, below: usize) -> String {
        self.below(below).to_string()
    }

    fn int_leaf(&mut self, s: &Scope) -> String {
        if !s.ints.is_empty() && self.choose(&[1, 2]) == 1 {
            self.pick(&s.ints)
        } else {
            self.lit()
        }
    }

    /// Whether a compound expression may be made (and takes fuel).
    fn compound(&mut self, d: u32) -> bool {
        let yes = d > 0 && self.fuel > 0;
        self.fuel -= yes as u32;
        yes
    }

    /// A number-valued expression of depth at most `d`.
    fn int(&mut self, s: &Scope, d: u32) -> String {
        if !self.compound(d) {
            return self.int_leaf(s);
        }
        let e = d - 1;
        let has = |b: bool, w: u32| if b { w } else { 0 };
        let int_helpers = self.helpers_of(&[
            Helper::Int1,
            Helper::Int2,
            Helper::Apply1,
            Helper::Apply2,
            Helper::ApplyIn,
            Helper::Fold,
        ]);
        let nums = s.depth.is_some() && !self.nums.is_empty();
        let others = self.call_lists && self.lists > 0 || self.call_vecs && self.vecs > 0;
        let rec = self.rec_calls > 0 && self.mult == 1;
        let weights = [
            4,                                             // leaf
            5,                                             // + -
            3,                                             // if
            1,                                             // let
            1,                                             // * k
            2,                                             // inc dec
            has(nums, 6),                                  // number function
            has(others, 2),                                // list or vector function
            has(rec && s.list_rec.is_some(), 4),           // recursion on the rest
            has(rec && s.vec_rec.is_some(), 4),            // recursion on the rest
            has(!int_helpers.is_empty(), 2),               // helper
            2,                                             // count, reduce
            2,                                             // list match
            1,                                             // vector match
            1,                                             // first of a cons, nth
            has(!s.in_try, 1),                             // try
            if s.in_try { 5 } else { s.in_branch as u32 }, // raise
            has(!s.fns.is_empty(), 2),                     // closure in a register
            1,                                             // let a closure
            1,                                             // a named fn's loop
            1,                                             // println
            2,                                             // other built-ins
            1,                                             // lazy sequences
            has(self.mult == 1, 1),                        // yield, gc
        ];
        match self.choose(&weights) {
            0 => self.int_leaf(s),
            1 => {
                let op = self.pick(&["+", "-"]);
                let (x, y) = (self.int(s, e), self.int(s, e));
                format!("({op} {x} {y})")
            }
            2 => {
                let c = self.boolean(s, e);
                let mut t = s.clone();
                t.in_branch = true;
                let (x, y) = (self.int(&t, e), self.int(&t, e));
                format!("(if {c} {x} {y})")
            }
            3 => {
                let v = self.name("i");
                let x = self.int(s, e);
                let mut t = s.clone();
                t.ints.push(v.clone());
                let y = self.int(&t, e);
                format!("(let [{v} {x}] {y})")
            }
            // A product by a small factor: big integers grow, but
            // only so far.
            4 => {
                let x = self.int(s, e);
                let k = self.below(7) as i64 - 3;
                format!("(* {x} {k})")
            }
            5 => {
                let op = self.pick(&["inc", "dec"]);
                let x = self.int(s, e);
                format!("({op} {x})")
            }
            6 => self.num_call(s, e),
            7 => {
                let lists = self.call_lists && self.lists > 0;
                let vecs = self.call_vecs && self.vecs > 0;
                if lists && (!vecs || self.below(2) == 0) {
                    let k = self.below(self.lists);
                    let (l, a) = (self.list(s, e), self.int(s, e));
                    format!("(l{k} {l} {a})")
                } else {
                    let k = self.below(self.vecs);
                    let (v, a) = (self.vector(s, e), self.int(s, e));
                    format!("(v{k} {v} {a})")
                }
            }
            8 => {
                self.rec_calls -= 1;
                let k = self.below(self.lists);
                let rest = s.list_rec.clone().unwrap();
                let a = self.int(s, e);
                format!("(l{k} {rest} {a})")
            }
            9 => {
                self.rec_calls -= 1;
                let k = self.below(self.vecs);
                let rest = s.vec_rec.clone().unwrap();
                let a = self.int(s, e);
                format!("(v{k} {rest} {a})")
            }
            10 => {
                let g = self.pick(&int_helpers);
                let i: usize = g[1..].parse().unwrap();
                match self.helpers[i] {
                    Helper::Int1 => format!("({g} {})", self.int(s, e)),
                    Helper::Int2 => {
                        let (x, y) = (self.int(s, e), self.int(s, e));
                        format!("({g} {x} {y})")
                    }
                    Helper::Apply1 => format!("({g} {})", self.fn1(s, e)),
                    Helper::Apply2 | Helper::ApplyIn => {
                        let (f, x) = (self.fn1(s, e), self.int(s, e));
                        format!("({g} {f} {x})")
                    }
                    _ => format!("({g} {})", self.list(s, e)),
                }
            }
            11 => match self.choose(&[2, 2, 1, 1]) {
                0 => format!("(count {})", self.list(s, e)),
                1 => {
                    let r = self.reducer(s, e);
                    let (init, l) = (self.int(s, e), self.list(s, e));
                    format!("(reduce {r} {init} {l})")
                }
                2 => format!("(reduce + {})", self.list(s, e)),
                _ => format!("(count {})", self.vector(s, e)),
            },
            12 => self.list_match(s, e),
            13 => self.vec_match(s, e),
            14 => {
                if self.below(2) == 0 {
                    let (x, l) = (self.int(s, e), self.list(s, e));
                    format!("(first (cons {x} {l}))")
                } else {
                    let v = self.vector(s, e);
                    let i = self.small(4);
                    let x = self.int(s, e);
                    format!("(nth {v} {i} {x})")
                }
            }
            15 => {
                let mut t = s.clone();
                t.in_try = true;
                let x = self.int(&t, e);
                let v = self.name("e");
                let (k, l1, l2) = (self.name("i"), self.lit(), self.lit());
                let h = match self.choose(&[2, 2, 1]) {
                    0 => format!("(match {v} [:x {k}] {k} _ {l1})"),
                    1 => format!("(if (= {v} :badarith) {l1} {l2})"),
                    _ => l1,
                };
                if self.below(6) == 0 {
                    format!("(try {x} (catch :error {v} {h}) (finally (println :finally)))")
                } else {
                    format!("(try {x} (catch :error {v} {h}))")
                }
            }
            16 => match self.choose(&[3, 3, 1, 1, 1, 1, 1]) {
                0 => format!("(+ {} nil)", self.int(s, e)),
                1 => format!("(error [:x {}])", self.int(s, e)),
                2 => "(inc :k)".to_string(),
                3 => format!("(nth {} 9)", self.vector(s, e)),
                4 => format!("(quot {} 0)", self.int(s, e)),
                5 => {
                    // Through a register: not a function, a wrong
                    // arity.
                    let h = self.name("h");
                    let f = self.pick(&["7", "(fn [a b] a)", "nil"]);
                    format!("(let [{h} {f}] ({h} {}))", self.int(s, e))
                }
                _ => {
                    // A wrong arity.
                    if self.nums.is_empty() {
                        format!("(first {})", self.int(s, e))
                    } else {
                        let k = self.below(self.nums.len());
                        let n = self.nums[k].ints + self.nums[k].list as usize;
                        let args: Vec<String> = (0..n).map(|_| self.int(s, e)).collect();
                        format!("(f{k} {})", args.join(" "))
                    }
                }
            },
            17 => {
                let h = self.pick(&s.fns);
                format!("({h} {})", self.int(s, e))
            }
            18 => {
                let h = self.name("h");
                let f = self.fn1(s, e);
                let mut t = s.clone();
                t.fns.push(h.clone());
                let body = self.int(&t, e);
                format!("(let [{h} {f}] {body})")
            }
            19 => self.named_loop(s, e),
            20 => {
                let tag = self.name(":p");
                let (x, y) = (self.int(s, e), self.int(s, e));
                format!("(do (println {tag} {x}) {y})")
            }
            21 => match self.choose(&[2, 2, 1, 1]) {
                0 => {
                    let op = self.pick(&["quot", "rem", "mod"]);
                    let x = self.int(s, e);
                    let k = self.pick(&["-3", "-2", "-1", "1", "2", "3", "7"]);
                    format!("({op} {x} {k})")
                }
                1 => {
                    let op = self.pick(&["max", "min", "bit-xor", "bit-and"]);
                    let (x, y) = (self.int(s, e), self.int(s, e));
                    format!("({op} {x} {y})")
                }
                2 => format!("(abs {})", self.int(s, e)),
                _ => {
                    let (x, y) = (self.int(s, e), self.int(s, e));
                    format!("(compare {x} {y})")
                }
            },
            // Leaf built-ins on lazy sequences continue in the
            // prelude (a redirect).
            22 => {
                let k = self.below(6);
                let saved = self.mult;
                self.mult *= k as u64 + 1;
                let f = self.fn1(s, e);
                self.mult = saved;
                let x = self.int(s, e);
                match self.below(3) {
                    0 => format!("(nth (iterate {f} {x}) {k})"),
                    1 => format!("(first (rest (iterate {f} {x})))"),
                    _ => format!("(reduce + (take {k} (iterate {f} {x})))"),
                }
            }
            // Built-ins that ask the VM for something: the end of the
            // slice, a collection (not in number functions: so many
            // calls).
            _ => {
                let x = self.int(s, e);
                if self.requests && self.below(2) == 0 {
                    format!("(do (gc) {x})")
                } else {
                    format!("(do (yield) {x})")
                }
            }
        }
    }

    /// A call of a number function, one level deeper.
    fn num_call(&mut self, s: &Scope, e: u32) -> String {
        self.weight += self.mult;
        let k = self.below(self.nums.len());
        let Num { ints, list } = self.nums[k];
        let depth = s.depth.clone().unwrap();
        let mut out = format!("(f{k} {depth}");
        for _ in 0..ints {
            let x = self.int(s, e);
            write!(out, " {x}").unwrap();
        }
        if list {
            let l = self.list(s, e);
            write!(out, " {l}").unwrap();
        }
        out.push(')');
        out
    }

    /// `(match l (p & q) .. () ..)` and the like.
    fn list_match(&mut self, s: &Scope, e: u32) -> String {
        let l = self.list(s, e);
        let (p, q, r) = (self.name("i"), self.name("i"), self.name("s"));
        let mut one = s.clone();
        one.ints.push(p.clone());
        one.lists.push(r.clone());
        if self.below(2) == 0 {
            let x = self.int(&one, e);
            let y = self.int(s, e);
            format!("(match {l} ({p} & {r}) {x} () {y})")
        } else {
            let mut two = one.clone();
            two.ints.push(q.clone());
            let x = self.int(&two, e);
            let mut just = s.clone();
            just.ints.push(p.clone());
            let y = self.int(&just, e);
            let z = self.int(s, e);
            format!("(match {l} ({p} {q} & {r}) {x} ({p}) {y} _ {z})")
        }
    }

    /// `(match v [] .. [p] .. [p q & r] ..)` and the like.
    fn vec_match(&mut self, s: &Scope, e: u32) -> String {
        let v = self.vector(s, e);
        let (p, q, r) = (self.name("i"), self.name("i"), self.name("w"));
        let mut one = s.clone();
        one.ints.push(p.clone());
        let mut rest = one.clone();
        rest.vecs.push(r.clone());
        if self.below(2) == 0 {
            let x = self.int(&rest, e);
            let y = self.int(s, e);
            format!("(match {v} [{p} & {r}] {x} _ {y})")
        } else {
            let z = self.int(s, e);
            let x = self.int(&one, e);
            let mut two = rest.clone();
            two.ints.push(q.clone());
            let y = self.int(&two, e);
            format!("(match {v} [] {z} [{p}] {x} [{p} {q} & {r}] {y})")
        }
    }

    /// A named `fn` calling itself through its register a literal
    /// number of times, in tail position or not, called at once; or a
    /// `loop` (whose `recur` the interpreter may take into compiled code
    /// mid-loop: `jit/translate/resume.rs`).
    fn named_loop(&mut self, s: &Scope, e: u32) -> String {
        let (lp, k, acc) = (self.name("lp"), self.name("i"), self.name("i"));
        let times = self.below(13);
        let init = self.int(s, e);
        let mut t = s.clone();
        t.ints.push(k.clone());
        t.ints.push(acc.clone());
        let saved = self.mult;
        self.mult *= times as u64 + 1;
        let step = self.int(&t, e);
        self.mult = saved;
        let how = self.below(3);
        if how == 2 {
            format!(
                "(loop [{k} {times} {acc} {init}] (if (<= {k} 0) {acc} (recur (- {k} 1) {step})))"
            )
        } else if how == 0 {
            format!(
                "((fn {lp} [{k} {acc}] (if (<= {k} 0) {acc} ({lp} (- {k} 1) {step}))) {times} {init})"
            )
        } else {
            format!(
                "((fn {lp} [{k} {acc}] (if (<= {k} 0) {acc} (+ {step} ({lp} (- {k} 1) {acc})))) {times} {init})"
            )
        }
    }

    /// A function from a number to a number.
    fn fn1(&mut self, s: &Scope, e: u32) -> String {
        let helpers = self.helpers_of(&[Helper::Int1]);
        match self.choose(&[
            3,
            if helpers.is_empty() { 0 } else { 2 },
            3,
            if s.fns.is_empty() { 0 } else { 2 },
        ]) {
            0 => self.pick(&["inc", "dec", "identity", "-"]).to_string(),
            1 => self.pick(&helpers),
            2 => {
                let x = self.name("i");
                let mut t = s.clone();
                t.ints.push(x.clone());
                let saved = self.mult;
                self.mult *= FAN;
                let body = self.int(&t, e);
                self.mult = saved;
                format!("(fn [{x}] {body})")
            }
            _ => self.pick(&s.fns),
        }
    }

    /// A function from a number to a boolean.
    fn pred(&mut self, s: &Scope, e: u32) -> String {
        let helpers = self.helpers_of(&[Helper::Pred]);
        match self.choose(&[3, if helpers.is_empty() { 0 } else { 2 }, 2]) {
            0 => self
                .pick(&["even?", "odd?", "pos?", "neg?", "zero?"])
                .to_string(),
            1 => self.pick(&helpers),
            _ => {
                let x = self.name("i");
                let mut t = s.clone();
                t.ints.push(x.clone());
                let saved = self.mult;
                self.mult *= FAN;
                let body = self.boolean(&t, e);
                self.mult = saved;
                format!("(fn [{x}] {body})")
            }
        }
    }

    /// A function of an accumulator and a number to a number.
    fn reducer(&mut self, s: &Scope, e: u32) -> String {
        let helpers = self.helpers_of(&[Helper::Int2]);
        match self.choose(&[3, if helpers.is_empty() { 0 } else { 2 }, 2]) {
            0 => self.pick(&["+", "-", "*"]).to_string(),
            1 => self.pick(&helpers),
            _ => {
                let (acc, x) = (self.name("i"), self.name("i"));
                let mut t = s.clone();
                t.ints.push(acc.clone());
                t.ints.push(x.clone());
                let saved = self.mult;
                self.mult *= FAN;
                let body = self.int(&t, e);
                self.mult = saved;
                format!("(fn [{acc} {x}] {body})")
            }
        }
    }

    fn boolean(&mut self, s: &Scope, d: u32) -> String {
        let e = d.saturating_sub(1);
        let helpers = self.helpers_of(&[Helper::Pred]);
        match self.choose(&[5, 2, if helpers.is_empty() { 0 } else { 2 }, 1, 1, 1, 1]) {
            0 => {
                let c = self.pick(&["<", "<=", ">", ">=", "=", "=="]);
                let (x, y) = (self.int(s, e), self.int(s, e));
                format!("({c} {x} {y})")
            }
            1 => {
                let p = self.pick(&["even?", "odd?", "pos?", "neg?", "zero?"]);
                format!("({p} {})", self.int(s, e))
            }
            2 => {
                let g = self.pick(&helpers);
                format!("({g} {})", self.int(s, e))
            }
            3 => format!("(not {})", self.boolean(s, e)),
            4 => format!("(empty? {})", self.list(s, e)),
            5 => {
                let (x, y) = (self.list(s, e), self.list(s, e));
                format!("(= {x} {y})")
            }
            _ => {
                let op = self.pick(&["and", "or"]);
                let (x, y) = (self.boolean(s, e), self.boolean(s, e));
                format!("({op} {x} {y})")
            }
        }
    }

    /// A list of numbers (never `nil`, never lazy).
    fn list(&mut self, s: &Scope, d: u32) -> String {
        let helpers = self.helpers_of(&[Helper::Seq]);
        let leaf = |g: &mut Gen| {
            if !s.lists.is_empty() && g.choose(&[1, 2]) == 1 {
                return g.pick(&s.lists);
            }
            match g.choose(&[2, 2, 1]) {
                0 => "()".to_string(),
                1 => {
                    let n = g.below(5);
                    let xs: Vec<String> = (0..n).map(|_| g.lit()).collect();
                    format!("'({})", xs.join(" "))
                }
                _ => format!("(range {})", g.small(13)),
            }
        };
        if !self.compound(d) {
            return leaf(self);
        }
        let e = d - 1;
        match self.choose(&[
            4,
            3,
            1,
            3,
            2,
            1,
            1,
            if helpers.is_empty() { 0 } else { 1 },
            1,
            1,
        ]) {
            0 => leaf(self),
            1 => {
                let (x, l) = (self.int(s, e), self.list(s, e));
                format!("(cons {x} {l})")
            }
            2 => format!("(rest {})", self.list(s, e)),
            3 => {
                let f = self.fn1(s, e);
                if self.below(3) == 0 {
                    format!("(map {f} {})", self.vector(s, e))
                } else {
                    format!("(map {f} {})", self.list(s, e))
                }
            }
            4 => {
                let p = self.pred(s, e);
                format!("(filter {p} {})", self.list(s, e))
            }
            5 => format!("(reverse {})", self.list(s, e)),
            6 => {
                let a = self.below(7) as i64 - 3;
                format!("(range {a} {})", self.small(5))
            }
            7 => {
                let g = self.pick(&helpers);
                format!("({g} {})", self.list(s, e))
            }
            8 => {
                let c = self.boolean(s, e);
                let (x, y) = (self.list(s, e), self.list(s, e));
                format!("(if {c} {x} {y})")
            }
            _ => {
                let xs: Vec<String> = (0..self.below(4)).map(|_| self.int(s, e)).collect();
                format!("(list {})", xs.join(" "))
            }
        }
    }

    /// A vector of numbers.
    fn vector(&mut self, s: &Scope, d: u32) -> String {
        let leaf = |g: &mut Gen, e: u32| {
            if !s.vecs.is_empty() && g.choose(&[1, 2]) == 1 {
                return g.pick(&s.vecs);
            }
            let n = g.below(4);
            let xs: Vec<String> = (0..n).map(|_| g.int(s, e)).collect();
            format!("[{}]", xs.join(" "))
        };
        if !self.compound(d) {
            return leaf(self, 0);
        }
        let e = d - 1;
        match self.choose(&[4, 2, 2, 1, 1]) {
            0 => leaf(self, e),
            1 => {
                let (v, x) = (self.vector(s, e), self.int(s, e));
                format!("(conj {v} {x})")
            }
            2 => format!("(vec {})", self.list(s, e)),
            3 => {
                let f = self.fn1(s, e);
                format!("(mapv {f} {})", self.vector(s, e))
            }
            _ => {
                let c = self.boolean(s, e);
                let (x, y) = (self.vector(s, e), self.vector(s, e));
                format!("(if {c} {x} {y})")
            }
        }
    }

    /// The recursive case of a function: any expression, or a call
    /// (`call`) in tail position or not.
    fn recursion(
        &mut self,
        s: &Scope,
        d: u32,
        call: impl Fn(&mut Gen, &Scope, u32) -> String,
    ) -> String {
        match self.choose(&[2, 2, 2, 1]) {
            0 => self.int(s, d),
            1 => call(self, s, d - 1),
            // The call first: it may take the one recursion on the
            // rest allowed.
            2 => {
                let op = self.pick(&["+", "-"]);
                let c = call(self, s, d - 1);
                let x = self.int(s, d - 1);
                format!("({op} {x} {c})")
            }
            _ => {
                let y = call(self, s, d - 1);
                let c = self.boolean(s, d - 1);
                let x = self.int(s, d - 1);
                format!("(if {c} {x} {y})")
            }
        }
    }

    /// The definition of helper `gK`.
    fn helper(&mut self, k: usize) -> String {
        let x = Scope {
            ints: vec!["x".into()],
            ..Scope::default()
        };
        (self.call_lists, self.call_vecs, self.call_helpers) = (false, false, false);
        self.fuel = FUEL / 3;
        match self.helpers[k] {
            Helper::Pred => {
                let p = self.pick(&["even?", "odd?", "pos?", "neg?", "zero?"]);
                let a = if self.below(2) == 0 {
                    "x".to_string()
                } else {
                    self.int(&x, 1)
                };
                format!("(defn g{k} [x] ({p} {a}))")
            }
            Helper::Int1 => format!("(defn g{k} [x] {})", self.int(&x, 2)),
            Helper::Int2 => {
                let xy = Scope {
                    ints: vec!["x".into(), "y".into()],
                    ..Scope::default()
                };
                format!("(defn g{k} [x y] {})", self.int(&xy, 2))
            }
            Helper::Apply1 => format!("(defn g{k} [h] (h {}))", self.lit()),
            Helper::Apply2 => format!("(defn g{k} [h x] (h x))"),
            Helper::ApplyIn => {
                let y = self.int(&x, 1);
                format!("(defn g{k} [h x] (+ (h x) {y}))")
            }
            Helper::Fold => match self.below(3) {
                0 => format!("(defn g{k} [xs] (reduce + 0 xs))"),
                1 => format!("(defn g{k} [xs] (count xs))"),
                _ => format!("(defn g{k} [xs] (reduce * 1 xs))"),
            },
            Helper::Seq => match self.below(3) {
                0 => format!("(defn g{k} [xs] (map inc xs))"),
                1 => format!("(defn g{k} [xs] (filter even? xs))"),
                _ => format!("(defn g{k} [xs] (map - xs))"),
            },
        }
    }

    /// The definition of list function `lK [xs a]`: recursion on the
    /// list's rest, by `match` or by clauses.
    fn list_fn(&mut self, k: usize) -> String {
        self.rec_calls = 1;
        (self.call_lists, self.call_vecs, self.call_helpers) = (false, false, true);
        self.fuel = FUEL * 2 / 3;
        let a = Scope {
            ints: vec!["a".into()],
            ..Scope::default()
        };
        let step = Scope {
            ints: vec!["x".into(), "a".into()],
            lists: vec!["more".into()],
            list_rec: Some("more".into()),
            ..Scope::default()
        };
        let base = self.int(&a, 2);
        let rec = self.recursion(&step, 3, |g, s, e| {
            g.rec_calls -= 1;
            let j = g.below(g.lists);
            let a = g.int(s, e);
            format!("(l{j} more {a})")
        });
        if self.below(2) == 0 {
            format!("(defn l{k} [xs a] (match xs (x & more) {rec} () {base}))")
        } else {
            format!("(defn l{k} ([(x & more) a] {rec}) ([() a] {base}))")
        }
    }

    /// The definition of vector function `vK [v a]`: recursion on the
    /// vector's rest.
    fn vec_fn(&mut self, k: usize) -> String {
        self.rec_calls = 1;
        (self.call_lists, self.call_vecs, self.call_helpers) = (true, false, true);
        self.fuel = FUEL * 2 / 3;
        let a = Scope {
            ints: vec!["a".into()],
            ..Scope::default()
        };
        let mut step = Scope {
            ints: vec!["x".into(), "a".into()],
            vecs: vec!["r".into()],
            vec_rec: Some("r".into()),
            ..Scope::default()
        };
        let base = self.int(&a, 2);
        let call = |g: &mut Gen, s: &Scope, e: u32| {
            g.rec_calls -= 1;
            let j = g.below(g.vecs);
            let a = g.int(s, e);
            format!("(v{j} r {a})")
        };
        if self.below(2) == 0 {
            let rec = self.recursion(&step, 3, call);
            format!("(defn v{k} [v a] (match v [x & r] {rec} [] {base}))")
        } else {
            let one = Scope {
                ints: vec!["x".into(), "a".into()],
                ..Scope::default()
            };
            let x = self.int(&one, 2);
            step.ints.push("y".into());
            let rec = self.recursion(&step, 3, call);
            format!("(defn v{k} [v a] (match v [] {base} [x] {x} [x y & r] {rec}))")
        }
    }

    /// The definition of number function `fK [n a ...]` (calls of
    /// number functions with `n` less one where `n` is positive), and
    /// the calls it makes of number functions at most.
    fn num_fn(&mut self, k: usize) -> (String, u64) {
        self.weight = 0;
        self.mult = 1;
        self.rec_calls = 0;
        (self.call_lists, self.call_vecs, self.call_helpers) = (true, true, true);
        self.fuel = FUEL;
        self.requests = false;
        let Num { ints, list } = self.nums[k];
        let mut params: Vec<String> = ["a", "b", "c", "d", "e"][..ints]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut stop = Scope {
            ints: params.clone(),
            ..Scope::default()
        };
        if list {
            stop.lists.push("xs".into());
            params.push("xs".into());
        }
        let params = params.join(" ");
        let mut step = stop.clone();
        step.ints.push("n".into());
        step.depth = Some(self.pick(&["(- n 1)", "(dec n)"]).to_string());
        let shape = self.choose(&[3, 1, 1, 1, 1]);
        if shape != 3 {
            stop.ints.push("n".into());
        }
        let base = self.int(&stop, 2);
        let rec = self.recursion(&step, 3, |g, s, e| g.num_call(s, e));
        let text = match shape {
            0 => format!("(defn f{k} [n {params}] (if (<= n 0) {base} {rec}))"),
            1 => format!("(defn f{k} [n {params}] (if (zero? n) {base} {rec}))"),
            2 => format!("(defn f{k} [n {params}] (match n 0 {base} _ {rec}))"),
            3 => format!("(defn f{k} ([0 {params}] {base}) ([n {params}] {rec}))"),
            _ => {
                let c = self.boolean(&step, 1);
                let other = self.int(&step, 2);
                format!("(defn f{k} [n {params}] (cond (<= n 0) {base} {c} {rec} :else {other}))")
            }
        };
        (text, self.weight)
    }

    /// A whole program: definitions, then a printed call of each
    /// function and a top-level expression.
    pub fn program(&mut self) -> String {
        let nh = self.below(4);
        for _ in 0..nh {
            let h = self.pick(&[
                Helper::Pred,
                Helper::Int1,
                Helper::Int2,
                Helper::Apply1,
                Helper::Apply2,
                Helper::ApplyIn,
                Helper::Fold,
                Helper::Seq,
            ]);
            self.helpers.push(h);
        }
        let nn = 1 + self.choose(&[2, 3, 1]);
        for _ in 0..nn {
            // Up to 7 arguments: more than compiled code takes.
            let ints = self.choose(&[1, 4, 3, 1, 1, 1]);
            let list = self.below(3) == 0;
            self.nums.push(Num { ints, list });
        }
        self.lists = self.choose(&[4, 2, 1]);
        self.vecs = self.choose(&[4, 1]);
        let mut names: Vec<String> = (0..nn).map(|k| format!("f{k}")).collect();
        names.extend((0..self.lists).map(|k| format!("l{k}")));
        names.extend((0..self.vecs).map(|k| format!("v{k}")));
        // What prints the results: compiled in every program (it
        // calls itself; a built-in in tail position). The `declare`
        // in the same form, not compiled (it starts with a `def`).
        let mut out = format!(
            "(do (declare {})\n    (defn show [k x] (if (<= k 0) (println x) (show (dec k) x))))\n",
            names.join(" ")
        );
        for k in 0..nh {
            let h = self.helper(k);
            writeln!(out, "{h}").unwrap();
        }
        for k in 0..self.lists {
            let l = self.list_fn(k);
            writeln!(out, "{l}").unwrap();
        }
        for k in 0..self.vecs {
            let v = self.vec_fn(k);
            writeln!(out, "{v}").unwrap();
        }
        self.rec_calls = 0;
        let mut most = 1;
        for k in 0..nn {
            let (f, w) = self.num_fn(k);
            most = most.max(w);
            writeln!(out, "{f}").unwrap();
        }
        // The depth of the top-level calls: `most` calls a level.
        let deepest = if most <= 1 {
            40
        } else {
            (CALLS.ln() / (most as f64).ln()).floor().clamp(1.0, 40.0) as usize
        };
        self.weight = 0;
        self.mult = 1;
        self.fuel = FUEL;
        self.requests = true;
        let top = Scope::default();
        let catch = "(catch :error e [:error e])";
        for k in 0..nn {
            let Num { ints, list } = self.nums[k];
            let n = match self.choose(&[2, 4, if most <= 1 { 1 } else { 0 }]) {
                0 => self.below(deepest + 1),
                1 => deepest / 2 + self.below(deepest - deepest / 2 + 1),
                // Deep: compiled frames past what the interpreter's
                // stacks had room for, collections under them.
                _ => 100 + self.below(1400),
            };
            let mut call = format!("(f{k} {n}");
            for _ in 0..ints {
                let x = self.int(&top, 1);
                write!(call, " {x}").unwrap();
            }
            if list {
                let l = self.list(&top, 2);
                write!(call, " {l}").unwrap();
            }
            writeln!(out, "(show 1 (try {call}) {catch}))").unwrap();
        }
        for k in 0..self.lists {
            let (l, a) = (self.list(&top, 2), self.int(&top, 1));
            writeln!(out, "(show 1 (try (l{k} {l} {a}) {catch}))").unwrap();
        }
        for k in 0..self.vecs {
            let (v, a) = (self.vector(&top, 2), self.int(&top, 1));
            writeln!(out, "(show 1 (try (v{k} {v} {a}) {catch}))").unwrap();
        }
        let top = Scope {
            depth: Some(self.below(deepest.min(3) + 1).to_string()),
            ..Scope::default()
        };
        let x = self.int(&top, 2);
        writeln!(out, "(show 1 (try {x} {catch}))").unwrap();
        out
    }
}
