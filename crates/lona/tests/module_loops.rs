//! The crates' modules form no loop: each top-level module of
//! `lona-compiler`, `lona-machine`, `lona-vm`, `lona-runtime` and `lona-term` uses (`crate::name` in code, not in
//! comments) only modules that do not use it back, directly or through
//! others. `layers.rs` holds the crates to their table; this holds the
//! modules inside them to the floors `docs/architecture.md` draws, until
//! the floors are crates of their own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The crate's top-level modules (a file `name.rs` or a folder `name/`
/// under `src/`, `lib.rs` and `main.rs` aside) and the others each uses.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            rust_files(&p, files.entry(name).or_default());
        } else if p.extension().is_some_and(|x| x == "rs") && name != "lib" && name != "main" {
            files.entry(name).or_default().push(p);
        }
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (m, fs) in &files {
        let mut uses = BTreeSet::new();
        for f in fs {
            for line in std::fs::read_to_string(f).unwrap().lines() {
                let code = line.split("//").next().unwrap_or("");
                for (i, _) in code.match_indices("crate::") {
                    let name: String = code[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if name != *m && names.contains(&name) {
                        uses.insert(name);
                    }
                }
            }
        }
        graph.insert(m.clone(), uses);
    }
    graph
}

/// The modules on a loop through `from`, if any (a path back to it).
fn loop_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((m, path)) = stack.pop() {
        for next in &graph[&m] {
            if next == from {
                return Some(path);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

fn assert_no_loop(krate: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../")
        .join(krate)
        .join("src");
    let graph = module_graph(&src);
    assert!(
        graph.len() > 5,
        "{krate}: modules found: {:?}",
        graph.keys()
    );
    let loops: Vec<String> = graph
        .keys()
        .filter_map(|m| loop_through(&graph, m))
        .map(|p| p.join(" -> "))
        .collect();
    assert!(
        loops.is_empty(),
        "{krate}: modules in a loop:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_front_has_no_module_loop() {
    assert_no_loop("lona-compiler");
}

#[test]
fn the_machine_has_no_module_loop() {
    assert_no_loop("lona-machine");
}

#[test]
fn the_node_has_no_module_loop() {
    assert_no_loop("lona-vm");
}

#[test]
fn the_runtime_and_the_terms_have_no_module_loop() {
    // The runtime's floors (`base/`, `sched/`, `rules/`, ...): the knot
    // of `sched/`'s core types is inside one floor.
    assert_no_loop("lona-runtime");
    assert_no_loop("lona-term");
}

#[test]
fn a_loop_is_found_when_there_is_one() {
    // The check itself: two modules that use each other, and a third
    // that only uses them.
    let dir = std::env::temp_dir().join(format!("lona-module-loops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "use crate::b::x; // crate::c in a comment\n",
    )
    .unwrap();
    std::fs::write(dir.join("b/mod.rs"), "fn f() { crate::a::g() }\n").unwrap();
    std::fs::write(dir.join("c.rs"), "use crate::a;\n").unwrap();
    let graph = module_graph(&dir);
    assert_eq!(graph["a"], BTreeSet::from(["b".to_string()]));
    assert!(loop_through(&graph, "a").is_some());
    assert!(loop_through(&graph, "b").is_some());
    assert!(loop_through(&graph, "c").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
