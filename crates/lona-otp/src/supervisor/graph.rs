//! The children's start order as a dependency graph: a child starts after
//! every sibling it depends on ([`ChildSpec::depends_on`]), ties broken by
//! spec order (so without dependencies the order is the spec order, as in
//! OTP); the stop order is the reverse. Duplicate ids, unknown
//! dependencies and cycles are errors.

use super::SupervisorError;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A child as the graph sees it: its id and the ids it depends on.
pub(crate) type Node<'a> = (&'a str, &'a [String]);

/// For each child, the children that depend on it directly.
fn dependents(specs: &[Node<'_>]) -> Result<Vec<Vec<usize>>, SupervisorError> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(specs.len());
    for (i, (id, _)) in specs.iter().enumerate() {
        if index.insert(id, i).is_some() {
            return Err(SupervisorError::DuplicateId(id.to_string()));
        }
    }
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); specs.len()];
    for (i, (id, deps)) in specs.iter().enumerate() {
        for d in deps.iter() {
            let Some(&j) = index.get(d.as_str()) else {
                return Err(SupervisorError::UnknownDependency {
                    child: id.to_string(),
                    missing: d.clone(),
                });
            };
            dependents[j].push(i);
        }
    }
    Ok(dependents)
}

/// The start order of `specs` (indices into it): Kahn's algorithm, taking
/// the lowest spec index among the children ready to start.
pub(crate) fn start_order(specs: &[Node<'_>]) -> Result<Vec<usize>, SupervisorError> {
    let dependents = dependents(specs)?;
    let mut waiting_on: Vec<usize> = specs.iter().map(|(_, d)| d.len()).collect();
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
            .map(|i| specs[i].0.to_string())
            .collect();
        return Err(SupervisorError::Cycle(cycle));
    }
    Ok(order)
}

/// The `roots` and every child that depends on one of them, directly or
/// through others, as a mask (`specs` were checked by [`start_order`]).
pub(crate) fn dependents_of(specs: &[Node<'_>], roots: &[usize]) -> Vec<bool> {
    let mut marked = vec![false; specs.len()];
    let Ok(dependents) = dependents(specs) else {
        unreachable!("specs were checked when added")
    };
    let mut stack: Vec<usize> = roots.to_vec();
    for &r in roots {
        marked[r] = true;
    }
    while let Some(j) = stack.pop() {
        for &k in &dependents[j] {
            if !marked[k] {
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

    struct Spec(&'static str, Vec<String>);

    fn spec(id: &'static str, deps: &[&str]) -> Spec {
        Spec(id, deps.iter().map(|d| d.to_string()).collect())
    }

    fn nodes(specs: &[Spec]) -> Vec<Node<'_>> {
        specs.iter().map(|s| (s.0, s.1.as_slice())).collect()
    }

    fn start_order(specs: &[Spec]) -> Result<Vec<usize>, SupervisorError> {
        super::start_order(&nodes(specs))
    }

    fn dependents_of(specs: &[Spec], roots: &[usize]) -> Vec<bool> {
        super::dependents_of(&nodes(specs), roots)
    }

    fn ids(specs: &[Spec], order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| specs[i].0.to_string()).collect()
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
