//! The reader never panics or hangs on any text, and whatever it reads
//! prints back to text that reads as the same forms.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_vm::{read_all, Form, FormKind, Source};

fn same(a: &Form, b: &Form) -> bool {
    match (&a.kind, &b.kind) {
        (FormKind::List(x), FormKind::List(y)) | (FormKind::Vector(x), FormKind::Vector(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (FormKind::Map(x), FormKind::Map(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, v), (k2, v2))| same(k, k2) && same(v, v2))
        }
        (FormKind::Float(x), FormKind::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (p, q) => p == q,
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(forms) = read_all(&Source::new("fuzz", text.as_ref())) {
        for f in forms {
            let printed = f.to_string();
            let back = read_all(&Source::new("printed", printed.as_str())).expect("printed form reads");
            assert_eq!(back.len(), 1, "{printed}");
            assert!(same(&f, &back[0]), "{printed}");
        }
    }
});
