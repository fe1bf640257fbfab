//! What in a kernel lies outside the dependence test's model ([`super::model`], which
//! describes it): a walk of the kernel's body that records, per loop, each construct the
//! model does not list, with its position, against the loop and every loop around it.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use crate::mctree::header::{header, Header};
use crate::mctree::looptree::{LoopTree, Outside};
use crate::mctree::model::{
    changes_memory, effect, name_of, op, own_variables, reads_memory, EXPRESSIONS, STATEMENTS,
};
use crate::mctree::node::{bare, decl_ref, inner, kind, loop_key, offset, text_of};
use crate::mctree::unit::Function;
use crate::problem::mold::line_col;

/// A read of a counter: where, and the loops around it.
struct Read {
    at: (u32, u32),
    /// The byte offset of the read.
    offset: usize,
    stack: Vec<usize>,
}

/// The walk that finds what lies outside the model.
struct Model<'k> {
    text: &'k str,
    tree: &'k LoopTree,
    own: HashSet<String>,
    /// Scalars whose address the kernel takes (`&x`).
    /// Scalars that are not plainly the kernel's own, with why: their address is taken, or
    /// the kernel declares them `static` or `extern`.
    unowned: HashMap<String, String>,
    /// The loops around the node being walked.
    stack: Vec<usize>,
    /// Per counter declared outside its loop, the loops that count with it.
    counters: HashMap<String, Vec<usize>>,
    reads: HashMap<String, Vec<Read>>,
    found: BTreeMap<usize, Vec<Outside>>,
    /// Whether the kernel holds a `goto` (a read before a loop may then run after it).
    jumps: bool,
    /// The label each `goto` of the kernel targets.
    targets: Vec<String>,
    /// Loops whose jumps stay within one iteration ([`contained`]).
    contained: HashSet<usize>,
}

/// Fills every loop's [`crate::mctree::looptree::Loop::outside`] with what in it lies outside
/// the model (nothing: its transformations may be proved).
pub fn check(kernel: &Function, tree: &mut LoopTree, text: &str) {
    let mut m = Model {
        text,
        tree,
        own: own_variables(kernel),
        unowned: HashMap::new(),
        stack: vec![],
        counters: HashMap::new(),
        reads: HashMap::new(),
        found: BTreeMap::new(),
        jumps: holds_goto(&kernel.body),
        targets: goto_targets(&kernel.body),
        contained: HashSet::new(),
    };
    m.unowned(&kernel.body);
    m.node(&kernel.body, false);
    m.counters();
    let found = std::mem::take(&mut m.found);
    let contained = std::mem::take(&mut m.contained);
    for (l, mut outside) in found {
        if contained.contains(&l) {
            (outside.iter_mut())
                .filter(|o| {
                    o.construct == name_of("GotoStmt") || o.construct == name_of("LabelStmt")
                })
                .for_each(|o| o.keeps_order = true);
        }
        outside.sort();
        outside.dedup();
        if let Some(lp) = tree.loops.get_mut(l) {
            lp.outside = outside;
        }
    }
}

impl Model<'_> {
    fn at(&self, v: &Value) -> (u32, u32) {
        let begin = v.get("range").and_then(|r| r.get("begin"));
        let o = begin.and_then(offset).unwrap_or(0);
        line_col(self.text, o.min(self.text.len()))
    }

    /// Records `construct` at `v` against `loops` and every loop around them.
    fn deny(&mut self, loops: &[usize], v: &Value, construct: String) {
        let (line, col) = self.at(v);
        let o = Outside {
            construct,
            line,
            col,
            keeps_order: false,
        };
        for &l in loops {
            self.record(l, &o);
        }
    }

    /// Records `o` against loop `l` and every loop around it (a loop mctree does not number
    /// has none).
    fn record(&mut self, l: usize, o: &Outside) {
        let mut up = Some(l);
        while let Some(x) = up {
            self.found.entry(x).or_default().push(o.clone());
            up = self.tree.loops.get(x).and_then(|lp| lp.parent);
        }
    }

    /// Every scalar whose address is taken, and every `static` or `extern` declaration.
    fn unowned(&mut self, v: &Value) {
        let address = kind(v) == "UnaryOperator" && op(v) == Some("&");
        if let Some((id, _, ty)) = inner(v).first().filter(|_| address).and_then(decl_ref) {
            if !ty.contains('[') && !ty.contains('(') {
                let (line, col) = self.at(v);
                let why =
                    format!("whose address is taken at {line}:{col} (a pointer may reach it)");
                self.unowned.entry(id.into()).or_insert(why);
            }
        }
        let class = v.get("storageClass").and_then(Value::as_str);
        if let (Some(c @ ("static" | "extern")), Some(id)) =
            (class, v.get("id").and_then(Value::as_str))
        {
            let (line, col) = self.at(v);
            let why = format!("declared `{c}` at {line}:{col} (its value outlives the kernel)");
            self.unowned.entry(id.into()).or_insert(why);
        }
        inner(v).iter().for_each(|c| self.unowned(c));
    }

    /// Walks `v`; `written`: `v` is the target of a plain `=` (a counter's write, not a read).
    fn node(&mut self, v: &Value, written: bool) {
        let k = kind(v);
        // An absent part of a header (`for (;;)`) is an empty node.
        let absent = k.is_empty() && v.as_object().is_some_and(|o| o.is_empty());
        let known = STATEMENTS.contains(&k) || EXPRESSIONS.contains(&k) || k.ends_with("Attr");
        let known = known || absent || plain_statement_expression(v);
        if !known && !self.stack.is_empty() {
            let stack = self.stack.clone();
            self.deny(&stack, v, name_of(k));
        }
        match k {
            "ForStmt" => return self.for_stmt(v),
            "VarDecl" => self.declaration(v),
            "DeclRefExpr" => self.name(v, written),
            _ => {}
        }
        if let Some(ty) = v
            .get("type")
            .and_then(|t| t.get("qualType"))
            .and_then(Value::as_str)
        {
            let qualified = ty.contains("volatile") || ty.contains("_Atomic");
            if qualified && !self.stack.is_empty() && k != "VarDecl" {
                let stack = self.stack.clone();
                self.deny(&stack, v, format!("a `{ty}` access (not modelled)"));
            }
        }
        let assignment = k == "BinaryOperator" && op(v) == Some("=");
        for (i, c) in inner(v).iter().enumerate() {
            self.node(c, assignment && i == 0 && kind(bare(c)) == "DeclRefExpr");
        }
    }

    fn declaration(&mut self, d: &Value) {
        let class = d.get("storageClass").and_then(Value::as_str);
        if let (Some(c @ ("static" | "extern")), false) = (class, self.stack.is_empty()) {
            let name = d.get("name").and_then(Value::as_str).unwrap_or("?");
            let stack = self.stack.clone();
            self.deny(&stack, d, format!("a `{c}` declaration of `{name}`"));
        }
    }

    /// A name: a counter's read, a scalar whose address is taken.
    fn name(&mut self, v: &Value, written: bool) {
        let Some((id, name, _)) = decl_ref(v) else {
            return;
        };
        if let (Some(why), false) = (self.unowned.get(id), self.stack.is_empty()) {
            let (stack, why) = (self.stack.clone(), format!("`{name}`, {why}"));
            self.deny(&stack, v, why);
        }
        if !written {
            let begin = v.get("range").and_then(|r| r.get("begin"));
            let read = Read {
                at: self.at(v),
                offset: begin.and_then(offset).unwrap_or(0),
                stack: self.stack.clone(),
            };
            self.reads.entry(id.into()).or_default().push(read);
        }
    }

    /// A loop: its initial value outside it, then the rest of its header and its body inside.
    fn for_stmt(&mut self, v: &Value) {
        let id = loop_key(v).and_then(|key| self.tree.id_at(key));
        let Some(id) = id else {
            let stack = self.stack.clone();
            self.deny(
                &stack,
                v,
                "a loop mctree does not number (inside an expression)".into(),
            );
            self.stack.push(usize::MAX);
            inner(v).iter().for_each(|c| self.node(c, false));
            self.stack.pop();
            return;
        };
        let parts = inner(v);
        if let Some(init) = parts.first() {
            self.node(init, false);
        }
        if contained(parts.get(4), &self.targets) {
            self.contained.insert(id);
        }
        self.stack.push(id);
        if let Some(h) = header(v) {
            self.header(id, v, &h);
            if !h.declared_in_loop {
                self.counters.entry(h.iv_id.clone()).or_default().push(id);
            }
        }
        for c in parts.iter().skip(1) {
            self.node(c, false);
        }
        self.stack.pop();
    }

    /// A canonical header's initial value and bound: side-effect free, and fixed while the
    /// loop runs.
    fn header(&mut self, id: usize, v: &Value, h: &Header) {
        let body = inner(v).get(4);
        for (what, e) in [("initial value", &h.lower), ("bound", &h.upper)] {
            let text = text_of(e, self.text).to_string();
            if let Some(why) = effect(e) {
                let stack = self.stack.clone();
                self.deny(&stack, e, format!("its {what} `{text}` {why}"));
            } else if reads_memory(e, &self.own) && body.is_some_and(changes_memory) {
                let stack = self.stack.clone();
                let why = format!("its {what} `{text}` reads memory that a call or a write through a pointer in L{id} may change");
                self.deny(&stack, e, why);
            }
        }
        if !self.own.contains(&h.iv_id) {
            let why = format!("its counter `{}` is not the kernel's own variable: its final value outlives the kernel", h.iv);
            self.deny(&[id], v, why);
        }
    }

    /// A counter read outside its loop and outside any loop that sets it first, where the
    /// loop's final value can reach it (after the loop, or in a loop around both): the loops
    /// that count with it and every loop around them are outside the model (a loop holding
    /// the read may run it in another iteration than the one that left the counter).
    fn counters(&mut self) {
        let counters = std::mem::take(&mut self.counters);
        for (iv, loops) in counters {
            let name = self.tree.loops[loops[0]].iv.clone();
            let mut named = HashSet::new();
            for r in self.reads.remove(&iv).unwrap_or_default() {
                if r.stack.iter().any(|s| loops.contains(s)) {
                    continue;
                }
                let reached: Vec<usize> = (loops.iter().copied())
                    .filter(|&l| self.reaches(l, &r))
                    .collect();
                for l in reached {
                    let (line, col) = r.at;
                    let construct = format!("the counter `{name}` read after its loop");
                    let o = Outside {
                        construct,
                        line,
                        col,
                        keeps_order: false,
                    };
                    if named.insert(l) {
                        self.record(l, &o);
                    }
                }
            }
        }
    }

    /// Whether the value loop `l` leaves in its counter can reach the read `r`: it comes
    /// after the loop, or a loop holds both, or a `goto` may jump back.
    fn reaches(&self, l: usize, r: &Read) -> bool {
        let around =
            std::iter::successors(self.tree.loops[l].parent, |&p| self.tree.loops[p].parent);
        self.jumps
            || r.offset > self.tree.loops[l].offset
            || around.into_iter().any(|p| r.stack.contains(&p))
    }
}

/// The `key` (a declaration id) of every `kind_` node below `v`: the labels `goto`s target
/// (`GotoStmt`, `targetLabelDeclId`), the labels declared (`LabelStmt`, `declId`).
fn ids_of(v: &Value, kind_: &str, key: &str) -> Vec<String> {
    let mut nodes = vec![];
    crate::mctree::header::nodes_of(Some(v), kind_, &mut nodes);
    (nodes.iter())
        .filter_map(|n| Some(n.get(key)?.as_str()?.to_string()))
        .collect()
}

fn goto_targets(v: &Value) -> Vec<String> {
    ids_of(v, "GotoStmt", "targetLabelDeclId")
}

/// Whether every jump into or within loop body `body` stays within one iteration: its own
/// `goto`s go forward to its own labels ([`crate::mctree::header::leaves_early`]), and no
/// `goto` of the kernel (`targets`) outside it enters it. A computed `goto` never does.
fn contained(body: Option<&Value>, targets: &[String]) -> bool {
    let Some(body) = body else { return false };
    let mut computed = vec![];
    crate::mctree::header::nodes_of(Some(body), "IndirectGotoStmt", &mut computed);
    let inside = ids_of(body, "LabelStmt", "declId");
    let into = |ts: &[String]| ts.iter().filter(|t| inside.contains(t)).count();
    computed.is_empty()
        && into(targets) == into(&goto_targets(body))
        && !crate::mctree::header::leaves_early(Some(body))
}

/// A GNU statement expression `({ … })` the grammar reads as a block (glibc's `assert` is one):
/// no loop and no jump in it.
fn plain_statement_expression(v: &Value) -> bool {
    const JUMPS: &[&str] = &[
        "ForStmt",
        "WhileStmt",
        "DoStmt",
        "ReturnStmt",
        "BreakStmt",
        "ContinueStmt",
        "GotoStmt",
        "IndirectGotoStmt",
        "LabelStmt",
    ];
    fn jumps(v: &Value) -> bool {
        JUMPS.contains(&kind(v)) || inner(v).iter().any(jumps)
    }
    kind(v) == "StmtExpr" && !jumps(v)
}

fn holds_goto(v: &Value) -> bool {
    matches!(kind(v), "GotoStmt" | "IndirectGotoStmt") || inner(v).iter().any(holds_goto)
}
