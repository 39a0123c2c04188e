//! Calls of `eval`, `load` and `require`: code at run time needs to know
//! where the call is written. A call `(eval form)` whose head names the
//! core function (no local or var of the namespace shadows it) is compiled
//! as `(lona.core/eval-in 'ns "file" form)`, and likewise `load-in` and
//! `require-in`: `eval` compiles in the caller's namespace, `load` finds a
//! relative path beside the caller's file, `require` adds aliases and
//! refers to the caller's namespace. Used as values (`(map eval forms)`),
//! the functions work in namespace `user` (`src/lonala/load.lona`).

use super::Compiler;
use lona_reader::{Form, FormKind};

impl<X: Default + 'static> Compiler<'_, X> {
    /// The rewritten call, if `name` is one of these core functions.
    pub(super) fn code_call(&mut self, name: &str, f: &Form, items: &[Form]) -> Option<Form> {
        let target = match name {
            "eval" => "lona.core/eval-in",
            "load" => "lona.core/load-in",
            "require" => "lona.core/require-in",
            _ => return None,
        };
        if !self.is_core(name) || std::ptr::eq(self.ns, self.host.core()) {
            return None;
        }
        let pos = f.pos;
        let mut call = vec![
            Form::new(FormKind::Symbol(target.into()), pos),
            Form::new(
                FormKind::List(vec![
                    Form::new(FormKind::Symbol("quote".into()), pos),
                    Form::new(FormKind::Symbol(self.ns.name.to_string()), pos),
                ]),
                pos,
            ),
            Form::new(FormKind::Str(self.file.to_string()), pos),
        ];
        call.extend(items[1..].iter().cloned());
        Some(Form::new(FormKind::List(call), pos))
    }
}
