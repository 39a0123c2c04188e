//! The Benchmarks Game programs of `bench/game` (issue 44) give their
//! expected output, byte for byte, at the small size of their
//! `NAME.N.out`, in every tier `LONA_TIER` selects. Those that read a
//! FASTA file on standard input (`reverse-complement`, `k-nucleotide`,
//! `regex-redux`) get fasta's own output at N=1000, `fasta.1000.out`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn game() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/game")
}

/// Runs `NAME.lona N` (standard input from `stdin` if given) and
/// compares its output with `NAME.N.out`.
fn check(name: &str, n: u32, stdin: Option<&str>) {
    let dir = game();
    let expected = std::fs::read(dir.join(format!("{name}.{n}.out"))).unwrap();
    let input = match stdin {
        Some(f) => Stdio::from(std::fs::File::open(dir.join(f)).unwrap()),
        None => Stdio::null(),
    };
    let out = Command::new(env!("CARGO_BIN_EXE_lona"))
        .current_dir(&dir)
        .args(["run", &format!("{name}.lona"), &n.to_string()])
        .stdin(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == expected,
        "{name} {n}: output differs from {name}.{n}.out:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn binary_trees() {
    check("binary-trees", 10, None);
}

#[test]
fn fannkuch_redux() {
    check("fannkuch-redux", 7, None);
}

#[test]
fn fasta() {
    check("fasta", 1000, None);
}

#[test]
fn mandelbrot() {
    check("mandelbrot", 200, None);
}

#[test]
fn n_body() {
    check("n-body", 1000, None);
}

#[test]
fn spectral_norm() {
    check("spectral-norm", 100, None);
}

#[test]
fn pidigits() {
    check("pidigits", 27, None);
}

#[test]
fn reverse_complement() {
    check("reverse-complement", 1000, Some("fasta.1000.out"));
}

#[test]
fn k_nucleotide() {
    check("k-nucleotide", 1000, Some("fasta.1000.out"));
}

#[test]
fn regex_redux() {
    check("regex-redux", 1000, Some("fasta.1000.out"));
}
