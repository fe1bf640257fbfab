//! The loop tree of one kernel function: what discovery ([`super::ast`]) found, and what the
//! transformations ([`super::transform`]) may touch. `--list` prints it.

use serde::{Deserialize, Serialize};

use crate::mctree::deps::Dependences;

/// A construct outside the dependence test's model ([`crate::mctree::model`]), and where it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Outside {
    pub construct: String,
    pub line: u32,
    pub col: u32,
    /// It leaves each iteration of this loop whole and in order (a `goto` to a later label
    /// of the same body, none entering it): the transformations that keep the iterations'
    /// order — unrolling, strip-mining — stay proved.
    #[serde(default)]
    pub keeps_order: bool,
}

impl Outside {
    /// `FILE:LINE:COL: construct`.
    pub fn show(&self, file: &str) -> String {
        let kept = match self.keeps_order {
            true => " (jumps stay within an iteration: unroll and strip-mining stay proved)",
            false => "",
        };
        format!(
            "{file}:{}:{}: {}{kept}",
            self.line, self.col, self.construct
        )
    }
}

/// A loop bound, as far as legality needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Bound {
    /// A compile-time integer (macros are expanded: `N` is a literal here).
    Constant { value: i64 },
    /// Fixed while the loop nest runs (a parameter such as PolyBench's `_PB_N = n`, an
    /// expression of constants and parameters).
    Invariant { text: String },
    /// Reads the induction variables of these enclosing loops (a triangular nest: `j <= i`).
    Depends { loops: Vec<usize>, text: String },
}

impl Bound {
    fn loops(&self) -> &[usize] {
        match self {
            Bound::Depends { loops, .. } => loops,
            _ => &[],
        }
    }

    fn show(&self) -> String {
        match self {
            Bound::Constant { value } => value.to_string(),
            Bound::Invariant { text } => text.clone(),
            Bound::Depends { text, .. } => text.clone(),
        }
    }
}

/// One `for` loop of the kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Loop {
    /// Preorder index in the kernel; `L<id>` in transformations.
    pub id: usize,
    /// The induction variable.
    pub iv: String,
    /// Whether it is declared in the loop's init (`for (int i = …`); otherwise outside the
    /// loop, so a `parallel for` above an enclosing loop must make it private.
    pub iv_declared_in_loop: bool,
    pub line: u32,
    pub col: u32,
    /// Byte offset of the `for` keyword in the source file (the expansion's, in a macro).
    pub offset: usize,
    /// Inside a macro, the byte offset of the `for` where the macro spells it: with
    /// `offset`, the loop's identity ([`LoopTree::id_at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spelled_at: Option<usize>,
    /// The text before `for` on its line (the indentation a directive gets).
    pub indent: String,
    pub lower: Bound,
    pub upper: Bound,
    /// `i < n` and `i <= n` are both written as the bound text; `inclusive` says which.
    pub inclusive: bool,
    pub step: i64,
    /// The trip count when both bounds are constants.
    pub trip: Option<i64>,
    /// Whether the loop has OpenMP's canonical form (integer induction variable, a
    /// comparison with it, a constant step): only such loops can be transformed.
    pub canonical: bool,
    /// Why it cannot be transformed, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untouchable: Option<String>,
    pub parent: Option<usize>,
    /// Loops nested directly in the body (also those inside an `if` or a block).
    pub children: Vec<usize>,
    /// Statements in the body other than loops.
    pub statements: usize,
    /// The depth of the perfect nest starting here (1: the body is not a single loop).
    pub perfect: usize,
    /// How many leading loops of that perfect nest form a rectangular nest (no bound
    /// depends on an outer loop of the same nest).
    pub rectangular: usize,
    /// Scalars declared outside the loop that its body writes, other than the induction
    /// variables of nested loops: a `parallel for` on it would race on them.
    pub shared_writes: Vec<String>,
    /// What a `parallel for` on it lists in `private(...)`: induction variables of nested
    /// loops declared outside this loop, and scalars every iteration writes before reading.
    pub private: Vec<String>,
    /// What in the loop lies outside what the dependence test models ([`crate::mctree::model`]):
    /// when anything does, none of its transformations is proved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<Outside>,
    /// Why its trip count may be negative ([`crate::mctree::trips`]): `tile`, `reverse` and
    /// `interchange` of it are then not proved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_unknown: Option<String>,
    /// The most iterations it may run, from the ranges of its bounds ([`crate::mctree::trips`];
    /// a bound on a parameter whose callers pass a constant counts too): how much of an array
    /// an untiled loop sweeps inside a tile ([`crate::mctree::footprint`]). `None`: unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub most_trips: Option<i64>,
    /// Why Polly, the second prover ([`crate::mctree::second`]), disagrees that it carries
    /// no dependence: `reverse` and `parallel for` of it are then not proved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polly_disagrees: Option<String>,
    /// Whether it carries no dependence ([`crate::mctree::deps`]; privatisable scalars
    /// aside): its iterations may run in any order.
    pub independent: bool,
}

/// How many dependences `--list` prints.
const SHOWN_DEPS: usize = 12;

/// The kernel's loops in preorder; `roots` are the outermost ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoopTree {
    pub kernel: String,
    /// The file's functions that call the kernel (directly or not): where clang may inline
    /// its code, so Polly and the code identity look there too.
    pub callers: Vec<String>,
    /// The dependences between the kernel's iterations (what legality is proved against).
    pub deps: Dependences,
    pub file: String,
    pub line: u32,
    pub loops: Vec<Loop>,
    pub roots: Vec<usize>,
    /// How many loops Polly's view was compared on ([`crate::mctree::second`]); `None`: Polly
    /// was not asked, or its compile failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polly_compared: Option<usize>,
    /// How many one-directive stacks are proved and how many are not (`--list` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth1: Option<StackCounts>,
}

/// The one-directive stacks of a kernel, proved and not proved.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct StackCounts {
    pub proved: usize,
    pub unproved: usize,
}

impl LoopTree {
    /// The loop whose `for` is at `key` ([`crate::mctree::node::loop_key`]): loops are named by
    /// their source position, never by a count that directives or macros could shift.
    /// Every loop's id by its position (what [`LoopTree::id_at`] reads).
    pub fn positions(&self) -> crate::mctree::node::Positions {
        (self.loops.iter())
            .map(|l| ((l.offset, l.spelled_at), l.id))
            .collect()
    }

    pub(crate) fn id_at(&self, key: (usize, Option<usize>)) -> Option<usize> {
        let at = |l: &&Loop| (l.offset, l.spelled_at) == key;
        self.loops.iter().find(at).map(|l| l.id)
    }

    /// The loops of the perfect nest starting at `id`, outermost first.
    pub fn perfect_nest(&self, id: usize) -> Vec<usize> {
        let mut nest = vec![id];
        let mut at = id;
        while nest.len() < self.loops[id].perfect {
            at = self.loops[at].children[0];
            nest.push(at);
        }
        nest
    }

    /// The ` private(..)` clause of a `parallel for` above loop `l` (empty when nothing needs
    /// it): inner induction variables and privatised scalars declared outside the loop, and —
    /// when the directive sits above other directives (`over`), so that it parallelises a
    /// loop clang generated — the loop's own induction variable too, which the generated
    /// loops assign and OpenMP then does not make private.
    pub fn private_clause(&self, l: usize, over: bool) -> String {
        let lp = &self.loops[l];
        let mut vars = lp.private.clone();
        if over && !lp.iv_declared_in_loop && !vars.contains(&lp.iv) {
            vars.insert(0, lp.iv.clone());
        }
        match vars.is_empty() {
            true => String::new(),
            false => format!(" private({})", vars.join(",")),
        }
    }

    /// Whether any loop can be transformed at all.
    pub fn touchable(&self) -> bool {
        self.loops.iter().any(|l| l.untouchable.is_none())
    }

    /// The tree as indented text, one loop per line.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} ({}:{}): {} loops\n",
            self.kernel,
            self.file,
            self.line,
            self.loops.len()
        );
        for &r in &self.roots {
            self.render_loop(r, 1, &mut out);
        }
        out.push_str(&self.render_deps());
        out.push_str(&self.render_outside());
        if let Some(c) = self.depth1 {
            out.push_str(&format!(
                "one-directive stacks: {} proved, {} not proved (those are tried only with --trust-output-check)\n",
                c.proved, c.unproved
            ));
        }
        if let Some(n) = self.polly_compared {
            let k = self
                .loops
                .iter()
                .filter(|l| l.polly_disagrees.is_some())
                .count();
            out.push_str(&format!(
                "Polly, the second prover: {n} loops compared, {k} disagreement(s)\n"
            ));
        }
        out
    }

    /// What lies outside the dependence test's model, with where, once per construct.
    fn render_outside(&self) -> String {
        let mut all: Vec<(&Outside, Vec<usize>)> = vec![];
        for l in self.loops.iter().filter(|l| l.untouchable.is_none()) {
            for o in &l.outside {
                match all.iter_mut().find(|(x, _)| *x == o) {
                    Some((_, ls)) => ls.push(l.id),
                    None => all.push((o, vec![l.id])),
                }
            }
        }
        if all.is_empty() {
            return String::new();
        }
        all.sort();
        let mut out = "outside what the dependence test models (their loops' transformations are not proved; tried only with --trust-output-check):\n".to_string();
        for (o, ls) in all {
            let names: Vec<String> = ls.iter().map(|l| format!("L{l}")).collect();
            out.push_str(&format!(
                "  {} ({})\n",
                o.show(&self.file),
                names.join(", ")
            ));
        }
        out
    }

    /// The loop-carried dependences, at most [`SHOWN_DEPS`] of them.
    fn render_deps(&self) -> String {
        let d = &self.deps;
        if let Some(why) = &d.unanalysable {
            return format!(
                "dependences: not analysed ({why}); only `unroll partial` is proved legal\n"
            );
        }
        let mut out = format!(
            "{} loop-carried dependences (directions in the order the iterations run)\n",
            d.deps.len()
        );
        for dep in d.deps.iter().take(SHOWN_DEPS) {
            out.push_str(&format!("  {}\n", crate::mctree::deps::describe(dep)));
        }
        if d.deps.len() > SHOWN_DEPS {
            out.push_str(&format!(
                "  … {} more (`--list --json`)\n",
                d.deps.len() - SHOWN_DEPS
            ));
        }
        if !d.unmodelled.is_empty() {
            out.push_str(
                "accesses the test cannot model (dependences assumed in every direction):\n",
            );
        }
        for why in d.unmodelled.iter().take(SHOWN_DEPS) {
            out.push_str(&format!("  {why}\n"));
        }
        if d.unmodelled.len() > SHOWN_DEPS {
            let more = d.unmodelled.len() - SHOWN_DEPS;
            out.push_str(&format!("  … {more} more (`--list --json`)\n"));
        }
        for (l, vars) in &d.private {
            out.push_str(&format!(
                "  L{l}: {} private to its iterations\n",
                vars.join(", ")
            ));
        }
        out
    }

    fn render_loop(&self, id: usize, depth: usize, out: &mut String) {
        let l = &self.loops[id];
        let close = if l.inclusive { ']' } else { ')' };
        let step = if l.step == 1 {
            String::new()
        } else {
            format!(" step {}", l.step)
        };
        let mut declared = if l.iv_declared_in_loop {
            "declared in the loop".to_string()
        } else {
            "declared outside".to_string()
        };
        let mut on: Vec<usize> = [l.lower.loops(), l.upper.loops()].concat();
        on.sort_unstable();
        on.dedup();
        if !on.is_empty() {
            let names: Vec<String> = on.iter().map(|d| format!("L{d}")).collect();
            declared += &format!("; bounds depend on {}", names.join(", "));
        }
        let header = match l.canonical {
            true => format!(
                "for {} in [{}, {}{close}{step} ({declared})",
                l.iv,
                l.lower.show(),
                l.upper.show()
            ),
            false => "for (a header outside OpenMP's canonical form)".to_string(),
        };
        out.push_str(&format!(
            "{:indent$}L{id} {header}  at {}:{}  \
             perfect nest {}, rectangular {}, {} statement(s)",
            "",
            l.line,
            l.col,
            l.perfect,
            l.rectangular,
            l.statements,
            indent = depth * 2
        ));
        out.push_str(&notes(l));
        out.push('\n');
        for &c in &l.children {
            self.render_loop(c, depth + 1, out);
        }
    }
}

/// What `--list` says after a loop: why it cannot be transformed, or which of its
/// transformations are not proved and why.
fn notes(l: &Loop) -> String {
    if let Some(why) = &l.untouchable {
        return format!("  [not transformable: {why}]");
    }
    let mut out = String::new();
    if let Some(o) = l.outside.first() {
        let more = match l.outside.len() - 1 {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let (c, line, col) = (&o.construct, o.line, o.col);
        out.push_str(&format!("  [unproved: {c} at {line}:{col}{more}]"));
    } else if !l.independent {
        out.push_str("  carries a dependence");
    }
    if let Some(why) = &l.trip_unknown {
        out.push_str(&format!("  [tile, reverse, interchange unproved: {why}]"));
    }
    if let Some(why) = &l.polly_disagrees {
        out.push_str(&format!("  [reverse, parallel for unproved: {why}]"));
    }
    out
}
