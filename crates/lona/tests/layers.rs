//! The crates' layering, enforced: each workspace crate may depend (as a
//! normal or build dependency; tests and examples may reach further) only
//! on the crates below it in this table (`docs/architecture.md` draws it).
//! A new crate, or a new arrow, is a decision: make it here, with the
//! architecture document.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each crate and the workspace crates it may use.
const LAYERS: &[(&str, &[&str])] = &[
    // The value model and the runtime do not know each other.
    ("lona-term", &[]),
    ("lona-runtime", &[]),
    // Built on the runtime's public API only.
    ("lona-otp", &["lona-runtime"]),
    ("lona-http", &["lona-runtime"]),
    // Lonala: text to forms, knowing nothing else.
    ("lona-reader", &[]),
    // Lonala's front: forms to bytecode, vars, code areas; no machine,
    // no processes.
    ("lona-compiler", &["lona-reader", "lona-term"]),
    // Lonala's machine: the interpreter, the compiling tier, the
    // built-ins; no node service (processes as runtime processes, files,
    // sockets, distribution, code loading: `lona-vm`'s).
    (
        "lona-machine",
        &["lona-reader", "lona-compiler", "lona-term", "lona-runtime"],
    ),
    // The node, over the machine.
    (
        "lona-vm",
        &[
            "lona-reader",
            "lona-compiler",
            "lona-machine",
            "lona-term",
            "lona-runtime",
            "lona-otp",
            "lona-http",
        ],
    ),
    // The binary: everything.
    (
        "lona",
        &[
            "lona-term",
            "lona-runtime",
            "lona-otp",
            "lona-http",
            "lona-reader",
            "lona-compiler",
            "lona-machine",
            "lona-vm",
        ],
    ),
];

/// Every workspace crate and the workspace crates it depends on (normal
/// and build dependencies), from `cargo metadata`.
fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    dependencies(false)
}

/// As [`workspace_dependencies`], with dev-dependencies too when `dev`.
fn dependencies(dev: bool) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                // `kind` is null for a normal dependency, "build" or "dev".
                .filter(|d| dev || d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().expect("dependency name").to_string())
                .filter(|n| names.contains(n))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn every_crate_uses_only_the_layers_below_it() {
    let actual = workspace_dependencies();
    let allowed: BTreeMap<&str, BTreeSet<&str>> = LAYERS
        .iter()
        .map(|(c, deps)| (*c, deps.iter().copied().collect()))
        .collect();
    let mut wrong = Vec::new();
    for (krate, deps) in &actual {
        let Some(ok) = allowed.get(krate.as_str()) else {
            wrong.push(format!("{krate}: a crate the layer table does not know"));
            continue;
        };
        for d in deps {
            if !ok.contains(d.as_str()) {
                wrong.push(format!("{krate} depends on {d}, a layer it may not use"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The table itself is a DAG, so no arrow can run back up.
#[test]
fn the_layer_table_has_no_cycle() {
    let mut placed: Vec<&str> = Vec::new();
    for (krate, deps) in LAYERS {
        for d in *deps {
            assert!(
                placed.contains(d),
                "{krate} uses {d}, which is not below it in the table"
            );
        }
        placed.push(krate);
    }
}

/// The machine never reaches the node, not even from its tests: what it
/// needs from above is a trait or a callback the node hands down.
#[test]
fn the_machine_never_depends_on_the_node() {
    let all = dependencies(true);
    let machine = all
        .get("lona-machine")
        .expect("lona-machine is a workspace crate");
    for above in ["lona-vm", "lona", "lona-otp", "lona-http"] {
        assert!(
            !machine.contains(above),
            "lona-machine depends on {above} (normal, build or dev): the node is above the machine"
        );
    }
    assert!(
        all["lona-vm"].contains("lona-machine"),
        "lona-vm is the node over lona-machine"
    );
}
