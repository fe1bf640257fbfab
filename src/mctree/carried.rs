//! Which loops of Polly's AST carry a dependence on memory the program names. Polly marks a
//! loop `minimal dependence distance` when any of its dependences crosses iterations,
//! including the write-after-read and write-after-write of its own scalar temporaries
//! (`[Scalar: 1]` in `-polly-print-scops`: a value the compiler keeps in a register, such as
//! TSVC_2's s235 `a[i]` forwarded from its store to the inner loop). Those are not the
//! program's: each iteration computes its own value, as a `parallel for` runs it. Here the
//! reference-wise dependences (`-polly-dependences-analysis-level=reference-wise`) are read
//! clause by clause and placed on the AST's loops by the statements' arguments; a mark
//! stands unless every clause the loop may carry is a WAR or WAW on a temporary. A flow
//! (RAW) of a temporary always counts — a value passed from one iteration to the next is a
//! real dependence. Anything not read with certainty leaves Polly's mark as it is.

use std::collections::{HashMap, HashSet};

/// The kind of a dependence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Raw,
    War,
    Waw,
}

/// A statement instance as ISL prints it: `Stmt1[i0, 1 + i1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub stmt: String,
    pub dims: Vec<String>,
}

/// One clause of a reference-wise dependence map: `[S[..] -> M[]] -> [T[..] -> M[]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub kind: Kind,
    pub array: String,
    pub source: Instance,
    pub target: Instance,
}

/// Splits `s` on `sep` where no bracket or parenthesis is open.
fn split_top<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let (mut out, mut depth, mut start) = (vec![], 0i32, 0);
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < s.len() {
        match bytes[i] {
            b'[' | b'(' | b'{' => depth += 1,
            b']' | b')' | b'}' => depth -= 1,
            _ if depth == 0 && s[i..].starts_with(sep) => {
                out.push(&s[start..i]);
                i += sep.len();
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&s[start..]);
    out
}

/// `Stmt1[i0, 1 + i1]` → the statement and its dimensions.
fn instance(s: &str) -> Option<Instance> {
    let (stmt, rest) = s.trim().split_once('[')?;
    let inner = rest.strip_suffix(']')?;
    let dims = if inner.trim().is_empty() {
        vec![]
    } else {
        split_top(inner, ",")
            .iter()
            .map(|d| d.trim().into())
            .collect()
    };
    Some(Instance {
        stmt: stmt.into(),
        dims,
    })
}

/// `[Stmt0[i0] -> MemRef3[]]` → the instance and the array it names.
fn tagged(s: &str) -> Option<(Instance, String)> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let [stmt, array] = split_top(inner, " -> ")[..] else {
        return None;
    };
    let array = instance(array)?.stmt;
    Some((instance(stmt)?, array))
}

/// The tagged clauses of one printed union map (`[p] -> { …; … }`); the untagged
/// statement-wise ones are left out. `None` when the text is not read with certainty.
pub fn parse(kind: Kind, text: &str) -> Option<Vec<Clause>> {
    let body = text.get(text.find('{')? + 1..text.rfind('}')?)?;
    let mut out = vec![];
    for clause in split_top(body, ";").into_iter().map(str::trim) {
        let map = split_top(clause, " : ")[0].trim();
        if map.is_empty() || !map.starts_with('[') {
            continue;
        }
        let [from, to] = split_top(map, " -> ")[..] else {
            return None;
        };
        let ((source, array), (target, other)) = (tagged(from)?, tagged(to)?);
        if array != other {
            return None;
        }
        out.push(Clause {
            kind,
            array,
            source,
            target,
        });
    }
    Some(out)
}

/// How two affine expressions of the same dimension compare.
#[derive(Debug, PartialEq)]
enum Relation {
    Equal,
    Different,
    Maybe,
}

/// An expression as its sorted variable terms and its constant: `-1 + i0` → (["i0"], -1).
fn terms(e: &str) -> (Vec<String>, i64) {
    let spaced = e.replace(" - ", " + -");
    let (mut vars, mut constant) = (vec![], 0i64);
    for t in split_top(&spaced, " + ").into_iter().map(str::trim) {
        match t.parse::<i64>() {
            Ok(c) => constant = constant.saturating_add(c),
            Err(_) => vars.push(t.to_string()),
        }
    }
    vars.sort();
    (vars, constant)
}

fn relation(a: &str, b: &str) -> Relation {
    let ((va, ca), (vb, cb)) = (terms(a), terms(b));
    match (va == vb, ca == cb) {
        (true, true) => Relation::Equal,
        (true, false) => Relation::Different,
        _ => Relation::Maybe,
    }
}

/// Where each statement runs in the AST: per dimension, the index of the loop whose counter
/// it is. A statement placed twice, or with an argument that is not a counter, is absent.
pub type Placement = HashMap<String, Vec<usize>>;

/// Polly's temporaries (`[Scalar: 1]` arrays) and the statements that read each.
pub type Temporaries = HashMap<String, HashSet<String>>;

/// The loops a clause may be carried by, outermost first; `None` when its statements are not
/// placed.
fn carriers(c: &Clause, placement: &Placement) -> Option<Vec<usize>> {
    let (from, to) = (
        placement.get(&c.source.stmt)?,
        placement.get(&c.target.stmt)?,
    );
    if from.len() != c.source.dims.len() || to.len() != c.target.dims.len() {
        return None;
    }
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let mut out = vec![];
    let dims = c.source.dims.iter().zip(&c.target.dims);
    for (&l, (a, b)) in from.iter().zip(dims).take(common) {
        match relation(a, b) {
            Relation::Equal => {}
            Relation::Maybe => out.push(l),
            Relation::Different => {
                out.push(l);
                break;
            }
        }
    }
    Some(out)
}

/// Per loop of an AST of `loops` loops, whether it may carry a clause of `clauses` that is
/// the program's: every flow, and a WAR/WAW unless it is on a temporary read only inside the
/// loop (one read outside, as by a statement after it, means its last value leaves the loop).
/// `None` when a clause's statements are not placed.
pub fn loops_carrying(
    clauses: &[Clause],
    temporaries: &Temporaries,
    placement: &Placement,
    loops: usize,
) -> Option<Vec<bool>> {
    let inside = |reader: &String, l: usize| placement.get(reader).is_some_and(|p| p.contains(&l));
    let private = |c: &Clause, l: usize| {
        let readers = temporaries.get(&c.array).filter(|_| c.kind != Kind::Raw);
        readers.is_some_and(|r| !r.is_empty() && r.iter().all(|s| inside(s, l)))
    };
    let mut carries = vec![false; loops];
    for c in clauses {
        for l in carriers(c, placement)? {
            if !private(c, l) {
                *carries.get_mut(l)? = true;
            }
        }
    }
    Some(carries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAR: &str = "{ [Stmt1[i0, i1] -> MemRef3[]] -> [Stmt0[1 + i0] -> MemRef3[]] : \
                       0 <= i0 <= 254 and 0 <= i1 <= 254; Stmt1[i0, i1] -> Stmt0[1 + i0] : \
                       0 <= i0 <= 254 and 0 <= i1 <= 254 }";

    #[test]
    fn tagged_clauses_are_read_and_untagged_ones_left_out() {
        let c = parse(Kind::War, WAR).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].array, "MemRef3");
        assert_eq!(c[0].source.dims, ["i0", "i1"]);
        assert_eq!(c[0].target.stmt, "Stmt0");
        assert_eq!(c[0].target.dims, ["1 + i0"]);
        let params = "[n] -> { [S[i0] -> A[]] -> [S[o0] -> A[]] : o0 > i0 }";
        assert_eq!(parse(Kind::Raw, params).unwrap()[0].target.dims, ["o0"]);
        assert_eq!(parse(Kind::Raw, "{  }"), Some(vec![]));
        assert_eq!(parse(Kind::Raw, "no map here"), None);
    }

    #[test]
    fn expressions_compare_by_terms_and_constant() {
        assert_eq!(relation("i0", "i0"), Relation::Equal);
        assert_eq!(relation("i0", "1 + i0"), Relation::Different);
        assert_eq!(relation("i0 - 1", "-1 + i0"), Relation::Equal);
        assert_eq!(relation("3", "4"), Relation::Different);
        assert_eq!(relation("i0", "o0"), Relation::Maybe);
        assert_eq!(relation("i0", "2i0"), Relation::Maybe);
    }

    fn s235() -> (Vec<Clause>, Placement) {
        let raw = "{ [Stmt0[i0] -> MemRef3[]] -> [Stmt1[i0, o1] -> MemRef3[]] : 0 <= o1; \
                   [Stmt1[i0, i1] -> MemRef4[]] -> [Stmt1[i0, 1 + i1] -> MemRef4[]] : i1 <= 253 }";
        let waw = "{ [Stmt0[i0] -> MemRef3[]] -> [Stmt0[1 + i0] -> MemRef3[]] : 0 <= i0 <= 254 }";
        let mut clauses = parse(Kind::Raw, raw).unwrap();
        clauses.extend(parse(Kind::War, WAR).unwrap());
        clauses.extend(parse(Kind::Waw, waw).unwrap());
        let placement = [("Stmt0", vec![0]), ("Stmt1", vec![0, 1]), ("After", vec![])]
            .map(|(s, p)| (s.to_string(), p))
            .into();
        (clauses, placement)
    }

    #[test]
    fn a_temporary_rewritten_every_iteration_carries_nothing() {
        let (clauses, placement) = s235();
        let read_by = |s: &[&str]| {
            Temporaries::from([("MemRef3".into(), s.iter().map(|s| s.to_string()).collect())])
        };
        let carries = loops_carrying(&clauses, &read_by(&["Stmt1"]), &placement, 2);
        assert_eq!(carries, Some(vec![false, true]));
        // Were MemRef3 the program's array, its reuse across `i` would count; so would a
        // temporary read after the loop (its last value is kept) or never read in the SCoP.
        for temporaries in [
            Temporaries::new(),
            read_by(&["Stmt1", "After"]),
            read_by(&[]),
        ] {
            let carries = loops_carrying(&clauses, &temporaries, &placement, 2);
            assert_eq!(carries, Some(vec![true, true]));
        }
    }

    #[test]
    fn a_temporary_flowing_across_iterations_counts() {
        let raw = "{ [S[i0] -> T[]] -> [S[1 + i0] -> T[]] : 0 <= i0 <= 9 }";
        let clauses = parse(Kind::Raw, raw).unwrap();
        let temporaries = Temporaries::from([("T".into(), HashSet::from(["S".into()]))]);
        let placement = Placement::from([("S".to_string(), vec![0])]);
        let carries = loops_carrying(&clauses, &temporaries, &placement, 1);
        assert_eq!(carries, Some(vec![true]));
    }

    #[test]
    fn an_unplaced_statement_reads_nothing() {
        let (clauses, mut placement) = s235();
        placement.remove("Stmt0");
        assert_eq!(
            loops_carrying(&clauses, &Temporaries::new(), &placement, 2),
            None
        );
    }
}
