//! Prints the bytecode of functions: `cargo run -p lona-vm --example
//! disasm -- FILE ns/name...` (after evaluating FILE; names of lona.core
//! work without a file: `-`).
fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("FILE or -");
    let env = lona_vm::Env::stdout();
    if file != "-" {
        let src = std::fs::read_to_string(&file).expect("read FILE");
        if let Err(e) = lona_vm::eval_str(&env, &file, &src) {
            eprintln!("{e}");
        }
    }
    for name in args {
        let (ns, n) = name.rsplit_once('/').unwrap_or(("user", &name));
        let Some(v) = env.namespaces.get(ns).and_then(|ns| ns.lookup(n)) else {
            eprintln!("no var {name}");
            continue;
        };
        match v.term().map(|t| t.view()) {
            Some(lona_term::View::Closure { code, .. }) => {
                // SAFETY: closures of this VM carry leaked Proto addresses.
                let p = unsafe { lona_vm::bytecode::Proto::from_code(code) };
                println!("{}", p.disassemble());
            }
            _ => eprintln!("{name} is not a function"),
        }
    }
}
