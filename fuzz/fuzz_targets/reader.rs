//! The reader never panics or hangs on any text; an `incomplete` error is
//! at the end of the input; whatever it reads prints back to text that
//! reads as the same forms, and prints the same again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_vm::{read_all, Form, FormKind, Pos, Source};

/// Equal ignoring positions; NaN equals NaN.
fn same(a: &Form, b: &Form) -> bool {
    a.same_as(b)
}

/// The position just after the last character of `text`.
fn end_pos(text: &str) -> Pos {
    let line = 1 + text.matches('\n').count() as u32;
    let last = text.rsplit('\n').next().unwrap_or("");
    Pos {
        line,
        col: 1 + last.chars().count() as u32,
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match read_all(&Source::new("fuzz", text.as_ref())) {
        Ok(forms) => {
            for f in forms {
                let printed = f.to_string();
                let back = read_all(&Source::new("printed", printed.as_str()))
                    .unwrap_or_else(|e| panic!("{printed:?} does not read: {e}"));
                assert_eq!(back.len(), 1, "{printed:?}");
                assert!(same(&f, &back[0]), "{printed:?}");
                assert_eq!(back[0].to_string(), printed);
            }
        }
        Err(e) => {
            assert!(e.pos.line >= 1 && e.pos.col >= 1, "{e}");
            if e.incomplete {
                assert_eq!(e.pos, end_pos(&text), "{e}");
            }
        }
    }
});
