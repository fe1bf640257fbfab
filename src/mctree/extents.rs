//! Whether every subscript stays in its dimension. The dependence test ([`super::deps`])
//! compares subscripts dimension by dimension, which is right only if `A[i][j]`'s `j` never
//! leaves its row: C's subscript rule says it does not, but a program that reads `A[i][j + 1]`
//! at `j = N - 1` reaches `A[i + 1][0]`, and the test then misses the dependence that crosses
//! rows (measured on the first nest of `tests/mctree/adversarial/rows.c`: 49 of 80 stacks
//! built changed the output). So a subscript of an inner dimension (one whose array is itself
//! an element of an array, the size of the dimension written in its type) counts as modelled
//! only where its values ([`super::ranges`]) are known to lie in the dimension. Any other makes
//! unproved each loop around it that may write the array (an assignment to it, or any write
//! through a pointer or call of a function not known to be pure: those may write every array),
//! and `--list` names it; an array a loop only reads has no dependence in it for a subscript
//! to hide. The outermost dimension is the object's own bound: leaving it is leaving the
//! array, which the test assumes of no access.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::mctree::looptree::{LoopTree, Outside};
use crate::mctree::model::{array_of, effect_of_call};
use crate::mctree::node::{bare, decl_ref, inner, is_write, kind, offset, text_of};
use crate::mctree::ranges::{kernel_env, range, walk, Env, Visitor};
use crate::mctree::unit::{Function, Unit};
use crate::problem::mold::line_col;

/// Adds to every loop's [`crate::mctree::looptree::Loop::outside`] each subscript in it not
/// known to stay in its dimension; `whole_program`: no other source calls the kernel.
pub fn check(unit: &Unit, kernel: &Function, tree: &mut LoopTree, text: &str, whole_program: bool) {
    let env = kernel_env(unit, kernel, whole_program);
    let mut written = Written(HashMap::new());
    walk(
        &kernel.body,
        tree,
        &mut env.clone(),
        &mut vec![],
        &mut written,
    );
    let mut found = Subscripts {
        text,
        written: written.0,
        found: vec![],
        sizes: sizes(kernel),
        counters: HashMap::new(),
    };
    walk(
        &kernel.body,
        tree,
        &mut env.clone(),
        &mut vec![],
        &mut found,
    );
    for (l, o) in found.found {
        if let Some(lp) = tree.loops.get_mut(l) {
            if !lp.outside.contains(&o) {
                lp.outside.push(o);
            }
        }
    }
}

/// What each loop may write: `None` for every array (a write through a pointer, a call).
struct Written(HashMap<usize, Option<HashSet<String>>>);

impl Visitor for Written {
    fn node(&mut self, v: &Value, _env: &Env, loops: &[usize]) {
        let target = inner(v).first().filter(|_| is_write(v));
        if !effect_of_call(v) && target.is_none_or(|t| decl_ref(t).is_some()) {
            return; // nothing written, or a scalar
        }
        let array = target.and_then(array_of).map(str::to_string);
        for l in loops {
            let entry = self.0.entry(*l).or_insert_with(|| Some(HashSet::new()));
            match (entry.as_mut(), &array) {
                (Some(set), Some(a)) => {
                    set.insert(a.clone());
                }
                _ => *entry = None,
            }
        }
    }
}

/// The subscripts not known to stay in their dimension, against the loops that may write
/// their array.
struct Subscripts<'t> {
    text: &'t str,
    written: HashMap<usize, Option<HashSet<String>>>,
    found: Vec<(usize, Outside)>,
    /// The kernel's integer parameters it never assigns, by name: the sizes a variable-length
    /// array parameter (`double a[n][m]`) was declared with.
    sizes: HashMap<String, String>,
    /// Counters that run from a constant at or above 0 up to below a size: (counter id) →
    /// (the size's id, the byte range of the loop).
    counters: HashMap<String, (String, (usize, usize))>,
}

/// The kernel's integer parameters that its body never assigns, name → id.
fn sizes(kernel: &Function) -> HashMap<String, String> {
    (kernel.params.iter())
        .filter_map(|p| {
            let id = p.get("id")?.as_str()?;
            let ty = crate::mctree::header::type_of(p)?;
            crate::mctree::header::integer_type(ty)?;
            let name = p.get("name")?.as_str()?;
            let kept = !crate::mctree::header::assigns(Some(&kernel.body), id);
            kept.then(|| (name.to_string(), id.to_string()))
        })
        .collect()
}

/// The byte range a node spans.
fn span(v: &Value) -> Option<(usize, usize)> {
    let r = v.get("range")?;
    Some((offset(r.get("begin")?)?, offset(r.get("end")?)?))
}

impl Subscripts<'_> {
    fn writes(&self, l: usize, array: Option<&str>) -> bool {
        match (self.written.get(&l), array) {
            (None, _) => false,
            (Some(Some(set)), Some(a)) => set.contains(a),
            (Some(_), _) => true,
        }
    }
}

impl Subscripts<'_> {
    /// Records the loop `v` when its counter runs from a constant ≥ 0 up to below a size
    /// ([`Subscripts::sizes`]) and its body leaves the counter alone.
    fn counter(&mut self, v: &Value) {
        let Some(h) = crate::mctree::header::header(v) else {
            return;
        };
        let moved = crate::mctree::header::assigns(inner(v).get(4), &h.iv_id);
        let from = crate::mctree::node::literal(&h.lower).is_some_and(|c| c >= 0);
        let size = decl_ref(&h.upper).map(|(id, _, _)| id.to_string());
        if let (false, true, true, false, Some(size), Some(at)) =
            (moved, from, h.step > 0, h.inclusive, size, span(v))
        {
            self.counters.insert(h.iv_id, (size, at));
        }
    }

    /// Whether `index` is the counter of a loop around it that stays below the size the
    /// row's type (`double[m]`) was declared with.
    fn within_declared_size(&self, index: &Value, row: &Value) -> bool {
        let ty = crate::mctree::header::type_of(row).unwrap_or("");
        let dim = ty.split_once('[').and_then(|(_, r)| r.split_once(']'));
        let size = dim.and_then(|(d, _)| self.sizes.get(d.trim()));
        let counter = decl_ref(index).and_then(|(id, _, _)| self.counters.get(id));
        let at = span(index).map(|(b, _)| b);
        match (size, counter, at) {
            (Some(size), Some((bound, (begin, end))), Some(at)) => {
                size == bound && *begin < at && at <= *end
            }
            _ => false,
        }
    }
}

impl Visitor for Subscripts<'_> {
    fn node(&mut self, v: &Value, env: &Env, loops: &[usize]) {
        if kind(v) == "ForStmt" {
            self.counter(v);
        }
        if kind(v) != "ArraySubscriptExpr" {
            return;
        }
        let [base, index] = inner(v) else {
            return;
        };
        let row = bare(base);
        if kind(row) != "ArraySubscriptExpr" {
            return;
        }
        let array = array_of(v);
        let at: Vec<usize> = (loops.iter().copied())
            .filter(|&l| self.writes(l, array))
            .collect();
        if at.is_empty() || self.within_declared_size(index, row) {
            return;
        }
        let Some(why) = leaves(index, extent(row), env, self.text) else {
            return;
        };
        let begin = v.get("range").and_then(|r| r.get("begin"));
        let offset = begin.and_then(offset).unwrap_or(0).min(self.text.len());
        let (line, col) = line_col(self.text, offset);
        let construct = format!("`{}`: {why}", text_of(v, self.text));
        let o = Outside {
            construct,
            line,
            col,
            keeps_order: false,
        };
        self.found.extend(at.into_iter().map(|l| (l, o.clone())));
    }
}

/// Why `index` may leave a dimension of `extent` elements; `None` when it cannot.
fn leaves(index: &Value, extent: Option<i64>, env: &Env, text: &str) -> Option<String> {
    let sub = text_of(index, text);
    let Some(n) = extent else {
        return Some("a subscript of a dimension whose size is not a constant".into());
    };
    match range(index, env) {
        None => Some(format!(
            "the subscript `{sub}`, which the analysis cannot bound, may leave its dimension of {n}"
        )),
        Some(r) if r.lo < 0 || r.hi >= n => Some(format!(
            "the subscript `{sub}` (values {}..{}) may leave its dimension of {n}",
            r.lo, r.hi
        )),
        Some(_) => None,
    }
}

/// The number of elements of the array `row` is (its type `double[24]`), when a constant.
fn extent(row: &Value) -> Option<i64> {
    let ty = row.get("type")?;
    let spelled = (ty.get("desugaredQualType").or_else(|| ty.get("qualType")))?.as_str()?;
    let inside = spelled.split_once('[')?.1.split_once(']')?.0;
    inside.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mctree::ranges::Range;
    use serde_json::json;

    fn env() -> Env {
        Env::from([("j".to_string(), Range::of(0, 23))])
    }

    fn index(name: &str, plus: i64) -> Value {
        let j = json!({"kind": "DeclRefExpr",
            "referencedDecl": {"id": name, "name": name, "type": {"qualType": "int"}},
            "type": {"qualType": "int"}});
        let k = json!({"kind": "IntegerLiteral", "value": plus.to_string(),
            "type": {"qualType": "int"}});
        json!({"kind": "BinaryOperator", "opcode": "+", "inner": [j, k]})
    }

    #[test]
    fn a_subscript_is_modelled_only_inside_its_dimension() {
        assert_eq!(leaves(&index("j", 0), Some(24), &env(), ""), None);
        let past = leaves(&index("j", 1), Some(24), &env(), "").unwrap();
        assert!(past.contains("values 1..24"), "{past}");
        assert!(leaves(&index("k", 0), Some(24), &env(), "").is_some());
        assert!(leaves(&index("j", 0), None, &env(), "").is_some());
    }

    #[test]
    fn the_extent_is_read_from_the_row_type() {
        let row = |t: &str| json!({"type": {"qualType": t}});
        assert_eq!(extent(&row("double[24]")), Some(24));
        assert_eq!(extent(&row("real_t[256][256]")), Some(256));
        assert_eq!(extent(&row("double[n]")), None);
        let typedefed = json!({"type": {"qualType": "row_t", "desugaredQualType": "float[8]"}});
        assert_eq!(extent(&typedefed), Some(8));
    }
}
