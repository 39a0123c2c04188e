//! The front on its own: forms compiled to bytecode with no machine, a
//! host that answers macro calls itself, and each way a host can refuse
//! an expansion reported as the compile error a user sees.

use std::sync::Mutex;

use lona_compiler::{CompileError, Compiler, ExpandError, Host, Namespace, Namespaces, Proto};
use lona_reader::{read_all, Form, FormKind, Pos, Source};
use lona_term::{RawTerm, Term};

/// A host with a `lona.core` and a `user` namespace, whose macros answer
/// `answer` and record what they were called with.
struct TestHost {
    namespaces: Namespaces,
    core: &'static Namespace,
    answer: Result<Form, ExpandError>,
    calls: Mutex<Vec<(u64, usize, Pos)>>,
}

impl TestHost {
    fn new(answer: Result<Form, ExpandError>) -> TestHost {
        let namespaces = Namespaces::default();
        let core = namespaces.get_or_create("lona.core");
        namespaces.get_or_create("user");
        TestHost {
            namespaces,
            core,
            answer,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn user(&self) -> &'static Namespace {
        self.namespaces.get("user").unwrap()
    }
}

impl Host for TestHost {
    fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    fn core(&self) -> &'static Namespace {
        self.core
    }

    fn expand(&self, f: RawTerm, args: &[Form], pos: Pos) -> Result<Form, ExpandError> {
        self.calls.lock().unwrap().push((f.bits(), args.len(), pos));
        self.answer.clone()
    }
}

fn form(text: &str) -> Form {
    read_all(&Source::new("front.lona", text))
        .unwrap()
        .remove(0)
}

fn compile(host: &TestHost, text: &str) -> Result<&'static Proto<()>, CompileError> {
    Compiler::<()>::new(host, host.user(), "front.lona".into()).compile_toplevel(&form(text))
}

/// A var of `user` marked as a macro and bound to the small integer 7 (a
/// host's expansion never runs it here: it only sees the word).
fn macro_var(host: &TestHost, name: &str) -> u64 {
    let v = host.user().intern(name);
    v.set_macro(true);
    v.set_copy(Term::small_int(7).unwrap());
    v.get().unwrap().bits()
}

#[test]
fn a_form_compiles_to_a_prototype_without_a_machine() {
    let host = TestHost::new(Err(ExpandError::Halt));
    let p = compile(&host, "(if true :yes :no)").unwrap();
    let listing = p.disassemble();
    assert!(listing.starts_with("user/<top> (front.lona)"), "{listing}");
    assert!(
        listing.contains(":yes") && listing.contains(":no"),
        "{listing}"
    );
    assert!(
        p.entry(0).is_some(),
        "a top-level form is a function of no arguments"
    );
    assert!(host.calls.lock().unwrap().is_empty(), "no macro was called");
}

#[test]
fn a_macro_call_is_compiled_as_what_the_host_expands_it_to() {
    let expansion = Form::new(FormKind::Keyword("expanded".into()), Pos::default());
    let host = TestHost::new(Ok(expansion));
    let word = macro_var(&host, "m");
    let p = compile(&host, "(m 1 2 3)").unwrap();
    assert!(p.disassemble().contains(":expanded"), "{}", p.disassemble());
    let calls = host.calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, word, "the host is given the macro's value");
    assert_eq!(calls[0].1, 3, "and the argument forms, not the head");
    assert_eq!(calls[0].2.line, 1);
}

#[test]
fn each_refusal_of_an_expansion_is_a_compile_error_naming_the_macro() {
    let cases = [
        (ExpandError::Unfinished, "expanding user/m did not finish"),
        (
            ExpandError::Raised(":boom".into()),
            "expanding user/m raised :boom",
        ),
        (ExpandError::Halt, "halt during macro expansion"),
        (ExpandError::Wait, "a macro cannot wait for messages"),
        (
            ExpandError::NotForm("a pid is no form".into()),
            "user/m: a pid is no form",
        ),
    ];
    for (refusal, message) in cases {
        let host = TestHost::new(Err(refusal.clone()));
        macro_var(&host, "m");
        let e = compile(&host, "(m)").unwrap_err();
        assert!(e.to_string().contains(message), "{refusal:?}: {e}");
    }
}

#[test]
fn a_macro_used_before_it_is_bound_is_an_error_and_the_host_is_not_asked() {
    let host = TestHost::new(Err(ExpandError::Halt));
    host.user().intern("m").set_macro(true);
    let e = compile(&host, "(m)").unwrap_err();
    assert!(e.to_string().contains("used before it is defined"), "{e}");
    assert!(host.calls.lock().unwrap().is_empty());
}

#[test]
fn a_closure_inside_a_form_is_a_prototype_of_its_own_in_the_same_area() {
    let host = TestHost::new(Err(ExpandError::Halt));
    let p = compile(&host, "(let [y (if true 1 2)] (fn [x] [x y]))").unwrap();
    assert_eq!(p.protos.len(), 1, "the inner function");
    let inner = p.protos[0];
    assert!(inner.entry(1).is_some() && inner.entry(0).is_none());
    assert!(
        inner.area.load(std::sync::atomic::Ordering::Acquire)
            == p.area.load(std::sync::atomic::Ordering::Acquire),
        "compiled together, freed together"
    );
    assert!(!p.area.load(std::sync::atomic::Ordering::Acquire).is_null());
}

#[test]
fn a_qualified_name_is_refused_where_a_binding_form_or_a_pattern_binds() {
    let host = TestHost::new(Err(ExpandError::Halt));
    let e = compile(&host, "(let [a/b 1] 2)").unwrap_err();
    assert!(
        e.to_string()
            .contains("bad binding: a/b is qualified; a binding form binds plain names"),
        "{e}"
    );
    let e = compile(&host, "(match 1 a/b 2)").unwrap_err();
    assert!(
        e.to_string()
            .contains("bad pattern: a/b is qualified; a pattern binds plain names"),
        "{e}"
    );
    // `/` alone is a name like any other.
    assert!(compile(&host, "(let [/ 1] /)").is_ok());
}
