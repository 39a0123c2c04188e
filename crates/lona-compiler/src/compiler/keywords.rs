//! Auto-resolved keywords (`::a`, `::alias/a`): the reader knows no
//! namespace and reads `::a` as a keyword named `:a`; the compiler
//! resolves it to the namespace a top-level form is compiled in (or the
//! alias's) before compiling it, as Clojure's reader does.

use lona_reader::{Form, FormKind};

use super::{split_qualified, Compiler, R};

impl<X: Default + 'static> Compiler<'_, X> {
    /// `form` with its auto-resolved keywords (`::a`, read as the name
    /// `:a`) resolved: `::a` is `:ns/a` in this namespace, `::alias/a`
    /// names the alias's namespace (Clojure's reader does this; Lonala's
    /// reader knows no namespace).
    pub(super) fn resolve_auto_keywords(&self, form: &Form) -> R<Form> {
        let kind = match &form.kind {
            FormKind::Keyword(k) => match k.strip_prefix(':') {
                None => return Ok(form.clone()),
                Some(name) => match split_qualified(name) {
                    None => FormKind::Keyword(format!("{}/{name}", self.ns.name)),
                    Some((alias, n)) => match self.ns.alias(alias) {
                        Some(target) => FormKind::Keyword(format!("{target}/{n}")),
                        None => {
                            return Err(self.err(
                                form.pos,
                                format!("::{name}: no alias {alias} in {}", self.ns.name),
                            ))
                        }
                    },
                },
            },
            FormKind::List(v) => FormKind::List(self.resolve_all(v)?),
            FormKind::Vector(v) => FormKind::Vector(self.resolve_all(v)?),
            FormKind::Set(v) => FormKind::Set(self.resolve_all(v)?),
            FormKind::Map(pairs) => FormKind::Map(
                pairs
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            self.resolve_auto_keywords(k)?,
                            self.resolve_auto_keywords(v)?,
                        ))
                    })
                    .collect::<R<_>>()?,
            ),
            _ => return Ok(form.clone()),
        };
        Ok(Form::new(kind, form.pos))
    }

    fn resolve_all(&self, forms: &[Form]) -> R<Vec<Form>> {
        forms
            .iter()
            .map(|f| self.resolve_auto_keywords(f))
            .collect()
    }
}

/// Whether `f` holds an auto-resolved keyword (`::a`).
pub(super) fn has_auto_keyword(f: &Form) -> bool {
    match &f.kind {
        FormKind::Keyword(k) => k.starts_with(':'),
        FormKind::List(v) | FormKind::Vector(v) | FormKind::Set(v) => {
            v.iter().any(has_auto_keyword)
        }
        FormKind::Map(m) => m
            .iter()
            .any(|(k, v)| has_auto_keyword(k) || has_auto_keyword(v)),
        _ => false,
    }
}
