//! The accesses of the kernel's body, as the dependence test ([`super::deps`]) pairs them:
//! per access, the array or scalar (or memory the test cannot name), its subscripts as affine
//! expressions of the loop counters and invariants where they are, read or written, the
//! loops around it; and why what cannot be modelled was not.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::Value;

use crate::mctree::affine::Affine;
use crate::mctree::calls::{callee, is_pure};
use crate::mctree::header::{assigns, header};
use crate::mctree::memory::{Memory, Place, Subscript};
use crate::mctree::node::{
    bare, decl_ref, inner, is_write, kind, literal, loop_key, text_of, Positions,
};
use crate::problem::mold::line_col;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Target {
    Array(String),
    Scalar(String),
    /// Memory the test cannot name (a pointer, a member, an unknown call).
    Memory,
}

#[derive(Debug, Clone)]
pub(super) struct Access {
    pub(super) target: Target,
    pub(super) name: String,
    /// Per dimension, `None` when not affine.
    pub(super) subs: Vec<Option<Affine>>,
    pub(super) write: bool,
    /// The enclosing loops, outermost first.
    pub(super) loops: Vec<usize>,
    /// A plain `=` (or an initialised declaration), as a statement directly in the
    /// innermost loop's body, not under a condition.
    pub(super) defines: bool,
}

/// The walk that lists the accesses of the kernel's body.
pub(super) struct Collector<'k> {
    pub(super) memory: &'k Memory,
    pub(super) text: &'k str,
    /// Induction variable declaration id → loop id.
    pub(super) ivs: HashMap<String, usize>,
    /// Loop id → its step, for the loops whose induction variable is in `ivs`.
    pub(super) steps: HashMap<usize, i64>,
    /// Why accesses could not be modelled (`` `expr` at line:col: why ``).
    pub(super) unmodelled: BTreeSet<String>,
    /// Scalars assigned anywhere in the kernel (not invariants).
    pub(super) assigned: HashSet<String>,
    /// Each loop's id by its position ([`crate::mctree::looptree::LoopTree::positions`]).
    pub(super) ids: &'k Positions,
    /// The next number for a loop the tree does not hold (none should be walked).
    pub(super) unnumbered: usize,
    pub(super) stack: Vec<usize>,
    pub(super) parent: HashMap<usize, Option<usize>>,
    /// Scalar declaration id → the innermost loop it is declared in.
    pub(super) declared_in: HashMap<String, Option<usize>>,
    /// The current statement is directly in the innermost loop's body, unconditionally.
    pub(super) direct: bool,
    pub(super) accesses: Vec<Access>,
}

impl<'k> Collector<'k> {
    /// The accesses of the kernel body `body` (the names it subscripts reach what `memory`
    /// says; `text` for the messages).
    pub(super) fn of(
        body: &Value,
        memory: &'k Memory,
        text: &'k str,
        ids: &'k Positions,
    ) -> Collector<'k> {
        let mut set = HashSet::new();
        assigned(body, false, &mut set);
        let mut c = Collector {
            memory,
            text,
            ivs: HashMap::new(),
            steps: HashMap::new(),
            unmodelled: BTreeSet::new(),
            assigned: set,
            ids,
            unnumbered: ids.len(),
            stack: vec![],
            parent: HashMap::new(),
            declared_in: HashMap::new(),
            direct: false,
            accesses: vec![],
        };
        c.stmt(body);
        c
    }

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

    /// A loop, in the order it runs: the initial value before it; the condition, the body
    /// and (of a header that is not canonical) the increment in it. Only a canonical loop
    /// whose body leaves its counter alone gets an induction variable and a step; subscripts
    /// in the counter of any other loop are not affine.
    fn for_stmt(&mut self, v: &Value) {
        let id = (loop_key(v).and_then(|k| self.ids.get(&k).copied())).unwrap_or_else(|| {
            self.unnumbered += 1;
            self.unnumbered - 1
        });
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
        if let Some(body) = parts.get(4) {
            self.stmt(body);
        }
        if h.is_none() {
            self.direct = false;
            parts.get(3).into_iter().for_each(|c| self.expr(c));
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
            // `sizeof`'s operand is not evaluated: it accesses nothing.
            ("UnaryExprOrTypeTraitExpr", _) => {}
            // Its statements, as conditional as an `if`'s.
            ("StmtExpr", _) => {
                let was = std::mem::replace(&mut self.direct, false);
                inner(v).iter().for_each(|c| self.stmt(c));
                self.direct = was;
            }
            ("ArraySubscriptExpr", _) | ("UnaryOperator", Some("*")) => self.access(v, false),
            ("DeclRefExpr", _) => self.scalar(v, false),
            _ => inner(v).iter().for_each(|c| self.expr(c)),
        }
    }

    fn call(&mut self, v: &Value) {
        let kids = inner(v);
        if !is_pure(v) {
            let call = callee(v).map_or("a call through a pointer".into(), |(_, n)| {
                format!("a call of `{n}`")
            });
            self.note(v, &format!("{call}, which may write any memory"));
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
        // A counter is a scalar like any other outside its own loop (`i += k` after it).
        let counting = self.ivs.get(id).is_some_and(|l| self.stack.contains(l));
        let is_function = ty.contains('(');
        if is_function || counting || !self.assigned.contains(id) {
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
