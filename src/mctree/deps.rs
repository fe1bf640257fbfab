//! Data dependences of the kernel's loops, from clang-22's JSON AST: which iterations of
//! which loops must stay in order. [`super::legality`] decides from them whether a
//! transformation keeps every dependence (it is *proved* legal) or may break one.
//!
//! The test is the classic direction-vector test (Wolfe, *High Performance Compilers for
//! Parallel Computing*, 1996; Allen & Kennedy, 2001, ch. 3): for every pair of accesses to
//! the same array, one of them a write, and every direction (`<`, `=`, `>`) of each loop
//! both are in, it asks whether the subscripts can be equal — per dimension, an integer
//! equation in the two iterations, solved by the GCD test with the direction constraints
//! (a `<` is a distance of at least 1, the Banerjee bound of an unbounded loop). Loop bounds
//! are not used, so a dependence may be reported that bounds would rule out: the test errs
//! towards refusing, never towards accepting.
//!
//! What it cannot read it assumes the worst of, and says so (`exact: false`): a subscript
//! that is not affine in the loop variables and invariants (`A[B[i]]`, `A[i*n+j]`), a write
//! through a pointer or a member, a call to a function not known to be pure. Distinct named
//! arrays are assumed not to overlap (PolyBench passes distinct arrays; C gives no such
//! promise, so the output check stays on). A scalar written in the loops is a dependence in
//! every direction unless every iteration of some loop writes it before reading it and no
//! access lies outside that loop: then it is private to that loop (and its enclosing ones),
//! and a `parallel for` there lists it in `private(..)`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::mctree::affine::Dir;
use crate::mctree::affine::{dimension, Affine, Nest};
use crate::mctree::header::{assigns, header, is_write};
use crate::mctree::memory::{Memory, Place, Subscript};
use crate::mctree::node::{bare, decl_ref, inner, kind, literal, text_of};
use crate::mctree::unit::Function;
use crate::problem::mold::line_col;

/// One loop-carried dependence, oriented from the access that runs first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Dependence {
    /// The array or scalar (`memory` for an access the test cannot name).
    pub on: String,
    /// The loops both accesses are in, outermost first (loop ids).
    pub loops: Vec<usize>,
    /// The direction on each of `loops`; lexicographically positive.
    pub dirs: Vec<Dir>,
    /// Found by the test on affine subscripts; `false`: assumed, because an access could
    /// not be read.
    pub exact: bool,
}

impl Dependence {
    /// `(<,=,>)`.
    pub fn vector(&self) -> String {
        let d: Vec<String> = self.dirs.iter().map(|d| d.symbol().to_string()).collect();
        format!("({})", d.join(","))
    }
}

/// The kernel's loop-carried dependences and the scalars each loop must privatise.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dependences {
    pub deps: Vec<Dependence>,
    /// Per loop: scalars declared outside it that every iteration of a loop in it (or of
    /// itself) writes before reading; a `parallel for` on it makes them private.
    pub private: BTreeMap<usize, Vec<String>>,
    /// Why the analysis gave up on the whole kernel (then nothing is proved).
    pub unanalysable: Option<String>,
    /// The accesses in loops the test could not model (`` `expr` at line:col: why ``): each
    /// is assumed to depend on others in every direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled: Vec<String>,
}

/// Loops nested deeper than this in one pair are not enumerated (3^8 direction vectors).
const MAX_COMMON_LOOPS: usize = 8;

/// Functions without side effects on memory: calls to them are plain expressions.
const PURE: &[&str] = &[
    "sqrt", "exp", "log", "pow", "fabs", "fmin", "fmax", "sin", "cos", "tan", "floor", "ceil",
    "abs", "sqrtf", "expf", "logf", "powf", "fabsf", "fminf", "fmaxf", "sinf", "cosf", "tanf",
    "floorf", "ceilf", "exp2", "log2", "log10", "atan", "atan2", "tanh", "cbrt", "round",
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    Array(String),
    Scalar(String),
    /// Memory the test cannot name (a pointer, a member, an unknown call).
    Memory,
}

#[derive(Debug, Clone)]
struct Access {
    target: Target,
    name: String,
    /// Per dimension, `None` when not affine.
    subs: Vec<Option<Affine>>,
    write: bool,
    /// The enclosing loops, outermost first.
    loops: Vec<usize>,
    /// A plain `=` (or an initialised declaration), as a statement directly in the
    /// innermost loop's body, not under a condition.
    defines: bool,
}

/// The walk that lists the accesses of the kernel's body.
struct Collector<'k> {
    memory: &'k Memory,
    text: &'k str,
    /// Induction variable declaration id → loop id.
    ivs: HashMap<String, usize>,
    /// Loop id → its step, for the loops whose induction variable is in `ivs`.
    steps: HashMap<usize, i64>,
    /// Why accesses could not be modelled (`` `expr` at line:col: why ``).
    unmodelled: BTreeSet<String>,
    /// Scalars assigned anywhere in the kernel (not invariants).
    assigned: HashSet<String>,
    next_loop: usize,
    stack: Vec<usize>,
    parent: HashMap<usize, Option<usize>>,
    /// Scalar declaration id → the innermost loop it is declared in.
    declared_in: HashMap<String, Option<usize>>,
    /// The current statement is directly in the innermost loop's body, unconditionally.
    direct: bool,
    accesses: Vec<Access>,
}

impl Collector<'_> {
    fn push(&mut self, target: Target, name: &str, subs: Vec<Option<Affine>>, write: bool) {
        self.accesses.push(Access {
            target,
            name: name.into(),
            subs,
            write,
            loops: self.stack.clone(),
            defines: false,
        });
    }

    fn stmt(&mut self, v: &Value) {
        match kind(v) {
            "ForStmt" => self.for_stmt(v),
            "CompoundStmt" => inner(v).iter().for_each(|c| self.stmt(c)),
            "IfStmt" | "SwitchStmt" | "WhileStmt" | "DoStmt" => self.conditional(v),
            "DeclStmt" => inner(v).iter().for_each(|d| self.declaration(d)),
            k if k.starts_with("OMP") || k.ends_with("Directive") => {
                inner(v).iter().for_each(|c| self.stmt(c))
            }
            k if k.ends_with("Stmt") && !k.ends_with("Expr") && k != "NullStmt" => {
                inner(v).iter().for_each(|c| self.stmt(c))
            }
            _ => self.expr(v),
        }
    }

    fn conditional(&mut self, v: &Value) {
        let was = std::mem::replace(&mut self.direct, false);
        for c in inner(v) {
            self.stmt(c);
        }
        self.direct = was;
    }

    /// A loop: its header's expressions (the initial value before it, the condition in it;
    /// all of a header that is not canonical), then its body. Only a canonical loop whose
    /// body leaves its counter alone gets an induction variable and a step; subscripts in the
    /// counter of any other loop are not affine.
    fn for_stmt(&mut self, v: &Value) {
        let id = self.next_loop;
        self.next_loop += 1;
        self.parent.insert(id, self.stack.last().copied());
        let parts = inner(v);
        let h = header(v).filter(|h| !assigns(parts.get(4), &h.iv_id));
        match &h {
            Some(h) => self.expr(&h.lower),
            None => parts.first().into_iter().for_each(|i| self.stmt(i)),
        }
        if let Some(h) = &h {
            self.ivs.insert(h.iv_id.clone(), id);
            self.steps.insert(id, h.step);
        }
        self.stack.push(id);
        let was = std::mem::replace(&mut self.direct, true);
        parts.get(2).into_iter().for_each(|c| self.expr(c));
        if h.is_none() {
            parts.get(3).into_iter().for_each(|c| self.expr(c));
        }
        if let Some(body) = parts.get(4) {
            self.stmt(body);
        }
        self.direct = was;
        self.stack.pop();
    }

    /// Records why the access `v` cannot be modelled (inside a loop only: elsewhere it
    /// carries nothing).
    fn note(&mut self, v: &Value, why: &str) {
        if self.stack.is_empty() {
            return;
        }
        let at = v.get("range").and_then(|r| r.get("begin"));
        let at = at.and_then(|l| l.get("expansionLoc").or(Some(l)));
        let offset = at.and_then(|l| l.get("offset")).and_then(Value::as_u64);
        let (line, col) = line_col(
            self.text,
            (offset.unwrap_or(0) as usize).min(self.text.len()),
        );
        let what = text_of(v, self.text);
        self.unmodelled
            .insert(format!("`{what}` at {line}:{col}: {why}"));
    }

    fn declaration(&mut self, d: &Value) {
        let (Some(id), Some(name)) = (d.get("id").and_then(Value::as_str), d.get("name")) else {
            return;
        };
        self.declared_in
            .insert(id.into(), self.stack.last().copied());
        if let Some(init) = inner(d).first() {
            self.expr(init);
            let name = name.as_str().unwrap_or("?");
            self.push(Target::Scalar(id.into()), name, vec![], true);
            let direct = self.direct;
            if let Some(a) = self.accesses.last_mut() {
                a.defines = direct;
            }
        }
    }

    fn expr(&mut self, v: &Value) {
        let op = v.get("opcode").and_then(Value::as_str);
        match (kind(v), op) {
            ("BinaryOperator", Some("=")) => {
                let kids = inner(v);
                kids.get(1).into_iter().for_each(|r| self.expr(r));
                if let Some(l) = kids.first() {
                    self.lvalue(l, true);
                }
            }
            ("CompoundAssignOperator", _) | ("UnaryOperator", Some("++" | "--")) => {
                let kids = inner(v);
                kids.get(1).into_iter().for_each(|r| self.expr(r));
                if let Some(l) = kids.first() {
                    self.expr(l);
                    self.lvalue(l, false);
                }
            }
            ("BinaryOperator", Some("&&" | "||")) | ("ConditionalOperator", _) => {
                self.conditional(v)
            }
            ("MemberExpr", _) => {
                self.note(v, "a member of a struct or union: any memory");
                self.push(Target::Memory, "memory", vec![], false);
                inner(v).iter().for_each(|c| self.expr(c));
            }
            ("UnaryOperator", Some("&")) => self.address(v),
            ("ImplicitCastExpr", _)
                if v.get("castKind").and_then(Value::as_str) == Some("ArrayToPointerDecay") =>
            {
                self.address(v)
            }
            ("CallExpr", _) => self.call(v),
            ("ArraySubscriptExpr", _) | ("UnaryOperator", Some("*")) => self.access(v, false),
            ("DeclRefExpr", _) => self.scalar(v, false),
            _ => inner(v).iter().for_each(|c| self.expr(c)),
        }
    }

    fn call(&mut self, v: &Value) {
        let kids = inner(v);
        let callee = kids.first().and_then(decl_ref).map(|(_, n, _)| n);
        if !callee.is_some_and(|c| PURE.contains(&c)) {
            let name = callee.unwrap_or("through a pointer");
            self.note(
                v,
                &format!("a call of `{name}`, which may write any memory"),
            );
            self.push(Target::Memory, "memory", vec![], true);
        }
        kids.iter().skip(1).for_each(|c| self.expr(c));
    }

    /// A write to `v` (`defines`: a plain `=`).
    fn lvalue(&mut self, v: &Value, defines: bool) {
        let b = bare(v);
        let before = self.accesses.len();
        let deref = b.get("opcode").and_then(Value::as_str) == Some("*");
        match kind(b) {
            "ArraySubscriptExpr" => self.access(b, true),
            "UnaryOperator" if deref => self.access(b, true),
            "DeclRefExpr" => self.scalar(b, true),
            _ => {
                self.note(b, "a write the test does not follow: any memory");
                self.push(Target::Memory, "memory", vec![], true);
                inner(b).iter().for_each(|c| self.expr(c));
            }
        }
        let direct = defines && self.direct;
        if let Some(a) = self.accesses.get_mut(before) {
            a.defines = direct;
        }
    }

    fn scalar(&mut self, v: &Value, write: bool) {
        let Some((id, name, ty)) = decl_ref(v) else {
            return;
        };
        let is_function = ty.contains('(');
        if is_function || self.ivs.contains_key(id) || !self.assigned.contains(id) {
            return;
        }
        self.push(Target::Scalar(id.into()), name, vec![], write);
    }

    /// An element access (`A[i][j]`, `p[i]`, `*p`): the place [`Memory`] finds, then the
    /// reads in its address.
    fn access(&mut self, v: &Value, write: bool) {
        match self.memory.lvalue(v) {
            Ok(place) => {
                let name = self.memory.spelling(&place.root).to_string();
                let subs = self.path(&place);
                if subs.iter().any(Option::is_none) {
                    let why = "an element the test cannot place (a subscript not affine in the loop counters and invariants, or a pointer reinterpreting the array)";
                    self.note(v, why);
                }
                self.push(Target::Array(place.root), &name, subs, write);
            }
            Err(why) => {
                self.note(v, &format!("through {why}: any memory"));
                self.push(Target::Memory, "memory", vec![], write);
            }
        }
        self.address(v);
    }

    /// The subscripts of `place`, per dimension of its array (one unknown subscript when the
    /// place does not take as many as the array has dimensions).
    fn path(&self, place: &Place) -> Vec<Option<Affine>> {
        match (&place.path, self.memory.rank(&place.root)) {
            (Some(path), Some(rank)) if path.len() == rank => {
                path.iter().map(|s| self.subscript(s)).collect()
            }
            _ => vec![None],
        }
    }

    fn subscript(&self, s: &Subscript) -> Option<Affine> {
        (s.iter()).try_fold(Affine::default(), |sum, (sign, e)| {
            sum.plus(self.affine(e)?.scaled(*sign)?)
        })
    }

    /// The reads an address computation makes (subscripts, pointer values), not counting
    /// the element it addresses.
    fn address(&mut self, v: &Value) {
        let op = v.get("opcode").and_then(Value::as_str);
        let cast = v.get("castKind").and_then(Value::as_str);
        match (kind(v), op, cast, inner(v)) {
            ("ArraySubscriptExpr", _, _, [base, index]) => {
                self.address(base);
                self.expr(index);
            }
            ("ParenExpr", _, _, [x]) => self.address(x),
            (_, _, Some("ArrayToPointerDecay" | "NoOp"), [x]) => self.address(x),
            ("UnaryOperator", Some("&"), _, [x]) => self.address(x),
            ("UnaryOperator", Some("*"), _, [x]) => self.expr(x),
            ("DeclRefExpr", _, _, _) => {}
            _ => self.expr(v),
        }
    }

    fn affine(&self, e: &Value) -> Option<Affine> {
        if let Some(c) = literal(e) {
            return Some(Affine {
                c,
                ..Affine::default()
            });
        }
        let e = bare(e);
        if let Some((id, _, _)) = decl_ref(e) {
            let mut a = Affine::default();
            match self.ivs.get(id) {
                Some(&l) if self.stack.contains(&l) => a.loops.insert(l, 1),
                Some(_) => return None,
                None if self.assigned.contains(id) => return None,
                None => a.params.insert(id.into(), 1),
            };
            return Some(a);
        }
        let op = e.get("opcode").and_then(Value::as_str);
        match (kind(e), op, inner(e)) {
            ("BinaryOperator", Some("+"), [x, y]) => self.affine(x)?.plus(self.affine(y)?),
            ("BinaryOperator", Some("-"), [x, y]) => {
                self.affine(x)?.plus(self.affine(y)?.scaled(-1)?)
            }
            ("BinaryOperator", Some("*"), [x, y]) => match (literal(x), literal(y)) {
                (Some(k), _) => self.affine(y)?.scaled(k),
                (_, Some(k)) => self.affine(x)?.scaled(k),
                _ => None,
            },
            ("UnaryOperator", Some("-"), [x]) => self.affine(x)?.scaled(-1),
            ("UnaryOperator", Some("+"), [x]) => self.affine(x),
            _ => None,
        }
    }
}

/// Scalars the kernel assigns (`=`, `op=`, `++`, `--`) and the ones declared in its loops.
fn assigned(v: &Value, in_loop: bool, out: &mut HashSet<String>) {
    if is_write(v) {
        if let Some((id, _, _)) = inner(v).first().and_then(decl_ref) {
            out.insert(id.into());
        }
    }
    if kind(v) == "VarDecl" && in_loop {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            out.insert(id.into());
        }
    }
    let in_loop = in_loop || kind(v) == "ForStmt";
    for c in inner(v) {
        assigned(c, in_loop, out);
    }
}

/// The dependences of the kernel whose body is `body` (loop ids in preorder, as
/// [`super::ast::loop_tree`] numbers them).
pub fn analyse(kernel: &Function, memory: &Memory, text: &str) -> Dependences {
    let body = &kernel.body;
    let mut set = HashSet::new();
    assigned(body, false, &mut set);
    let mut c = Collector {
        memory,
        text,
        ivs: HashMap::new(),
        steps: HashMap::new(),
        unmodelled: BTreeSet::new(),
        assigned: set,
        next_loop: 0,
        stack: vec![],
        parent: HashMap::new(),
        declared_in: HashMap::new(),
        direct: false,
        accesses: vec![],
    };
    c.stmt(body);
    let private_at = privatisable(&c.accesses, &locals(kernel));
    let mut found = BTreeSet::new();
    let mut unanalysable = None;
    let acc = &c.accesses;
    for i in 0..acc.len() {
        for j in i..acc.len() {
            match pair(&acc[i], &acc[j], i == j, &private_at, &c.steps) {
                Ok(deps) => found.extend(deps),
                Err(why) => unanalysable = Some(why),
            }
        }
    }
    Dependences {
        deps: found.into_iter().collect(),
        private: private_lists(&c, &private_at),
        unanalysable,
        unmodelled: c.unmodelled.into_iter().collect(),
    }
}

/// The kernel's own variables: its parameters and the non-`static` variables of its body.
/// Only these may be private to a loop: any other scalar (a global, a `static`) keeps its
/// last value after the kernel returns, which a reordered loop would change.
fn locals(kernel: &Function) -> HashSet<String> {
    fn walk(v: &Value, out: &mut HashSet<String>) {
        let is_static = v.get("storageClass").and_then(Value::as_str) == Some("static");
        if kind(v) == "VarDecl" && !is_static {
            out.extend(v.get("id").and_then(Value::as_str).map(String::from));
        }
        inner(v).iter().for_each(|c| walk(c, out));
    }
    let mut out = HashSet::new();
    walk(&kernel.body, &mut out);
    let params = kernel.params.iter().filter_map(|p| p.get("id")?.as_str());
    out.extend(params.map(String::from));
    out
}

/// Per scalar, the loop whose every iteration writes it before any read, when all its
/// accesses lie in that loop.
fn privatisable(accesses: &[Access], locals: &HashSet<String>) -> HashMap<String, usize> {
    let mut first: HashMap<&str, &Access> = HashMap::new();
    let mut all: HashMap<&str, Vec<&Access>> = HashMap::new();
    for a in accesses {
        if let Target::Scalar(id) = &a.target {
            first.entry(id).or_insert(a);
            all.entry(id).or_default().push(a);
        }
    }
    let mut out = HashMap::new();
    for (id, f) in first {
        let Some(&m) = f.loops.last() else { continue };
        if locals.contains(id)
            && f.write
            && f.defines
            && all[id].iter().all(|a| a.loops.contains(&m))
        {
            out.insert(id.to_string(), m);
        }
    }
    out
}

/// Per loop, the privatisable scalars declared outside it of the loops at or below it.
fn private_lists(
    c: &Collector,
    private_at: &HashMap<String, usize>,
) -> BTreeMap<usize, Vec<String>> {
    let chain = |mut l: Option<usize>| {
        let mut v = vec![];
        while let Some(x) = l {
            v.push(x);
            l = c.parent.get(&x).copied().flatten();
        }
        v
    };
    let mut out: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for (id, &m) in private_at {
        let declared = chain(c.declared_in.get(id).copied().flatten());
        let Some(name) = (c.accesses.iter()).find(|a| a.target == Target::Scalar(id.clone()))
        else {
            continue;
        };
        for l in chain(Some(m)) {
            if !declared.contains(&l) {
                out.entry(l).or_default().insert(name.name.clone());
            }
        }
    }
    out.into_iter()
        .map(|(l, s)| (l, s.into_iter().collect()))
        .collect()
}

/// The loop-carried dependences between accesses `a` and `b` (`same`: one access with
/// itself), lexicographically positive in the order the iterations run (`steps`: each
/// loop's step; a loop without one has no affine subscripts).
fn pair(
    a: &Access,
    b: &Access,
    same: bool,
    private_at: &HashMap<String, usize>,
    steps: &HashMap<usize, i64>,
) -> Result<Vec<Dependence>, String> {
    let conflict = match (&a.target, &b.target) {
        (Target::Memory, _) | (_, Target::Memory) => true,
        (x, y) => x == y,
    };
    if !conflict || !(a.write || b.write) || (same && !a.write) {
        return Ok(vec![]);
    }
    let common: Vec<usize> = (a.loops.iter().zip(&b.loops))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| *x)
        .collect();
    if common.is_empty() {
        return Ok(vec![]);
    }
    if common.len() > MAX_COMMON_LOOPS {
        return Err(format!(
            "more than {MAX_COMMON_LOOPS} loops around one access"
        ));
    }
    // A private scalar carries nothing on its loop and the loops around it.
    let fixed = match &a.target {
        Target::Scalar(id) if a.target == b.target => private_at
            .get(id)
            .and_then(|m| common.iter().position(|l| l == m))
            .map_or(0, |p| p + 1),
        _ => 0,
    };
    let exact = !matches!(
        (&a.target, &b.target),
        (Target::Memory, _) | (_, Target::Memory)
    ) && a.subs.len() == b.subs.len()
        && a.subs.iter().chain(&b.subs).all(Option::is_some);
    let on = if a.target == Target::Memory {
        &b.name
    } else {
        &a.name
    };
    let steps: Vec<i64> = common
        .iter()
        .map(|l| steps.get(l).copied().unwrap_or(1))
        .collect();
    let mut out = vec![];
    for dirs in vectors(common.len()) {
        let nest = Nest {
            loops: &common,
            steps: &steps,
            dirs: &dirs,
        };
        if dirs[..fixed].iter().any(|&d| d != Dir::Eq) || !feasible(a, b, &nest) {
            continue;
        }
        let dirs = match dirs.iter().find(|&&d| d != Dir::Eq) {
            None => continue,
            Some(Dir::Gt) => dirs.iter().map(|d| d.flip()).collect(),
            Some(_) => dirs,
        };
        out.push(Dependence {
            on: on.clone(),
            loops: common.clone(),
            dirs,
            exact,
        });
    }
    Ok(out)
}

/// Every direction vector over `m` loops.
fn vectors(m: usize) -> Vec<Vec<Dir>> {
    let mut out = vec![vec![]];
    for _ in 0..m {
        out = (out.into_iter())
            .flat_map(|v| {
                Dir::ALL.iter().map(move |&d| {
                    let mut w = v.clone();
                    w.push(d);
                    w
                })
            })
            .collect();
    }
    out
}

/// Whether `a` in one iteration and `b` in another, related as `nest` says, can touch the
/// same element: every dimension's subscripts can be equal.
fn feasible(a: &Access, b: &Access, nest: &Nest) -> bool {
    if a.subs.len() != b.subs.len() {
        return true;
    }
    (a.subs.iter().zip(&b.subs)).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => dimension(x, y, nest),
        _ => true,
    })
}

/// `a dependence on `path` (<,>,=) over L0,L1,L2`.
pub fn describe(d: &Dependence) -> String {
    let loops: Vec<String> = d.loops.iter().map(|l| format!("L{l}")).collect();
    let how = if d.exact {
        ""
    } else {
        " (assumed: an access the analysis cannot read)"
    };
    format!(
        "a dependence on `{}` {} over {}{how}",
        d.on,
        d.vector(),
        loops.join(",")
    )
}
