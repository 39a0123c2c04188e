//! The children's start order as a dependency graph: a child starts after
//! every sibling it depends on ([`ChildSpec::depends_on`]), ties broken by
//! spec order (so without dependencies the order is the spec order, as in
//! OTP); the stop order is the reverse. Duplicate ids, unknown
//! dependencies and cycles are errors.

use super::spec::ChildSpec;
use super::SupervisorError;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The start order of `specs` (indices into it): Kahn's algorithm, taking
/// the lowest spec index among the children ready to start.
pub(crate) fn start_order(specs: &[ChildSpec]) -> Result<Vec<usize>, SupervisorError> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        if index.insert(s.id.as_str(), i).is_some() {
            return Err(SupervisorError::DuplicateId(s.id.clone()));
        }
    }
    let mut waiting_on = vec![0usize; specs.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); specs.len()];
    for (i, s) in specs.iter().enumerate() {
        for d in &s.depends_on {
            let Some(&j) = index.get(d.as_str()) else {
                return Err(SupervisorError::UnknownDependency {
                    child: s.id.clone(),
                    missing: d.clone(),
                });
            };
            waiting_on[i] += 1;
            dependents[j].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..specs.len())
        .filter(|&i| waiting_on[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(specs.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &k in &dependents[i] {
            waiting_on[k] -= 1;
            if waiting_on[k] == 0 {
                ready.push(Reverse(k));
            }
        }
    }
    if order.len() < specs.len() {
        let cycle = (0..specs.len())
            .filter(|&i| waiting_on[i] > 0)
            .map(|i| specs[i].id.clone())
            .collect();
        return Err(SupervisorError::Cycle(cycle));
    }
    Ok(order)
}

/// Whether child `i` depends on `j`, directly or through others
/// (`specs` is known acyclic).
pub(crate) fn dependents_of(specs: &[ChildSpec], roots: &[usize]) -> Vec<bool> {
    let mut marked = vec![false; specs.len()];
    let mut stack: Vec<usize> = roots.to_vec();
    for &r in roots {
        marked[r] = true;
    }
    while let Some(j) = stack.pop() {
        let id = specs[j].id.as_str();
        for (k, s) in specs.iter().enumerate() {
            if !marked[k] && s.depends_on.iter().any(|d| d == id) {
                marked[k] = true;
                stack.push(k);
            }
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;
    use lona_runtime::Reason;

    fn spec(id: &str, deps: &[&str]) -> ChildSpec {
        let mut s = ChildSpec::new(id, |_| Box::pin(async { Err(Reason::Normal) }));
        for d in deps {
            s = s.depends_on(*d);
        }
        s
    }

    fn ids(specs: &[ChildSpec], order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| specs[i].id.clone()).collect()
    }

    #[test]
    fn no_dependencies_is_spec_order() {
        let s = [spec("a", &[]), spec("b", &[]), spec("c", &[])];
        assert_eq!(ids(&s, &start_order(&s).unwrap()), ["a", "b", "c"]);
    }

    #[test]
    fn dependencies_come_first_ties_by_spec_order() {
        let s = [
            spec("web", &["db", "cache"]),
            spec("cache", &[]),
            spec("log", &[]),
            spec("db", &["log"]),
        ];
        assert_eq!(
            ids(&s, &start_order(&s).unwrap()),
            ["cache", "log", "db", "web"]
        );
    }

    #[test]
    fn cycles_unknown_and_duplicates_are_errors() {
        let s = [spec("a", &["b"]), spec("b", &["a"]), spec("c", &[])];
        assert_eq!(
            start_order(&s),
            Err(SupervisorError::Cycle(vec!["a".into(), "b".into()]))
        );
        let s = [spec("a", &["a"])];
        assert!(matches!(start_order(&s), Err(SupervisorError::Cycle(_))));
        let s = [spec("a", &["zz"])];
        assert_eq!(
            start_order(&s),
            Err(SupervisorError::UnknownDependency {
                child: "a".into(),
                missing: "zz".into()
            })
        );
        let s = [spec("a", &[]), spec("a", &[])];
        assert_eq!(
            start_order(&s),
            Err(SupervisorError::DuplicateId("a".into()))
        );
    }

    #[test]
    fn dependents_are_transitive() {
        let s = [
            spec("a", &[]),
            spec("b", &["a"]),
            spec("c", &["b"]),
            spec("d", &[]),
        ];
        assert_eq!(dependents_of(&s, &[0]), [true, true, true, false]);
        assert_eq!(dependents_of(&s, &[3]), [false, false, false, true]);
    }
}
