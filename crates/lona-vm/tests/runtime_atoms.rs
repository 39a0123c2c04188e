//! Every keyword and symbol the VM's own code spells out is interned when
//! the atom table is created (`lona_term::RUNTIME_ATOMS`), so the paths
//! that make them (errors, signals, replies, `process-info`) never need a
//! new atom and work however full the table is (issue 17, defect 4).
//!
//! A new `Term::keyword("...")` in `src/` (or `lona-machine`'s) fails this test until its name
//! is added to `RUNTIME_ATOMS` (in `lona-term/src/atom.rs`); `kw!("...")`,
//! which the VM uses for its own names, does not compile until then.

use std::path::Path;

use lona_term::Atom;

/// The string literals that follow `pat` in `text`, outside test modules.
fn literals_after<'a>(text: &'a str, pat: &str, out: &mut Vec<&'a str>) {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut rest = code;
    while let Some(i) = rest.find(pat) {
        rest = &rest[i + pat.len()..];
        if let Some(end) = rest.find('"') {
            out.push(&rest[..end]);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_name_the_vm_spells_out_is_interned_from_the_start() {
    // The node's code and the machine's (`lona-machine`, beside it).
    let mut files = Vec::new();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    rust_files(&here.join("src"), &mut files);
    rust_files(&here.join("../lona-machine/src"), &mut files);
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("readable");
            (f.display().to_string(), text)
        })
        .collect();
    let mut missing = Vec::new();
    let mut seen = 0;
    for (file, text) in &texts {
        let mut names = Vec::new();
        for pat in [
            "Term::keyword(\"",
            "Term::symbol(\"",
            "kw!(\"",
            "Atom::new(\"",
        ] {
            literals_after(text, pat, &mut names);
        }
        seen += names.len();
        for n in names {
            if !Atom::existing(n).is_some_and(Atom::is_runtime) {
                missing.push(format!("{n} ({file})"));
            }
        }
    }
    assert!(
        seen > 100,
        "found only {seen} names: the patterns are stale"
    );
    // names the code computes from a fixed set
    for n in [
        "running",
        "waiting", // process-info's :status
        "low",
        "normal",
        "high",
        "max", // priorities
        "total",
        "binary",
        "code",
        "process-table", // runtime-info's :memory
    ] {
        if !Atom::existing(n).is_some_and(Atom::is_runtime) {
            missing.push(n.to_string());
        }
    }
    for p in [
        lona_runtime::Priority::Low,
        lona_runtime::Priority::Normal,
        lona_runtime::Priority::High,
        lona_runtime::Priority::Max,
    ] {
        assert!(Atom::existing(p.as_str()).is_some_and(Atom::is_runtime));
    }
    assert!(
        missing.is_empty(),
        "add these to lona_term::RUNTIME_ATOMS: {missing:?}"
    );
}
