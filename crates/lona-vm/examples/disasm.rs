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
        match lona_vm::introspect::disassemble(&env, ns, n) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("{e}"),
        }
    }
}
