//! What a node of the tree is made of: the directives stacked above each loop ([`Op`], as
//! clang-22 spells them) and the Polly knob, with their text both ways.

use std::collections::BTreeMap;

use crate::mctree::looptree::LoopTree;

/// The Polly knob: the compiler flags a node adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Polly {
    Off,
    On,
    /// Polly's analysis without its own rescheduling (the paper's setting for pragmas).
    NoReschedule,
    /// Polly with its OpenMP code generation: loops it proves parallel run on all cores.
    Parallel,
}

impl Polly {
    pub const ALL: [Polly; 4] = [Polly::Off, Polly::On, Polly::NoReschedule, Polly::Parallel];

    /// The compiler flags, as the `polly` parameter's value.
    pub fn flags(self) -> &'static str {
        match self {
            Polly::Off => "",
            Polly::On => "-mllvm -polly",
            Polly::NoReschedule => {
                "-mllvm -polly -mllvm -polly-reschedule=0 -mllvm -polly-postopts=0"
            }
            Polly::Parallel => "-mllvm -polly -mllvm -polly-parallel",
        }
    }
}

/// How a vector width hint starts ([`Op::Vectorize`]).
const VECTORIZE: &str = "#pragma clang loop vectorize_width(";

/// clang's vector hint with `width` and `interleave` as written (numbers, or the markers of
/// an emitted mold).
pub fn vector_hint(width: impl std::fmt::Display, interleave: impl std::fmt::Display) -> String {
    format!("{VECTORIZE}{width}) interleave_count({interleave})")
}

/// One directive.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Tile(Vec<u32>),
    /// A permutation of the loops below, 1-based, never the identity.
    Interchange(Vec<usize>),
    Reverse,
    Unroll(u32),
    /// `parallel for`, with what it must make private ([`LoopTree::private_clause`]).
    Parallel,
    /// clang's `#pragma clang loop vectorize_width(width) interleave_count(interleave)` on an
    /// innermost loop no OpenMP directive consumes (one would drop it silently).
    Vectorize {
        width: u32,
        interleave: u32,
    },
}

impl Op {
    /// How many loops the directive consumes from below.
    pub fn width(&self) -> usize {
        match self {
            Op::Tile(s) => s.len(),
            Op::Interchange(p) => p.len(),
            _ => 1,
        }
    }

    /// The directive after `#pragma omp ` (without a `parallel for`'s private clause); a
    /// directive that is not OpenMP's is written whole (`#pragma clang loop …`), which the
    /// mold inserts as written.
    pub fn text(&self) -> String {
        let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(",");
        match self {
            Op::Tile(s) => format!("tile sizes({})", list(&mut s.iter().map(u32::to_string))),
            Op::Interchange(p) => format!(
                "interchange permutation({})",
                list(&mut p.iter().map(usize::to_string))
            ),
            Op::Reverse => "reverse".into(),
            Op::Unroll(f) => format!("unroll partial({f})"),
            Op::Parallel => "parallel for".into(),
            Op::Vectorize { width, interleave } => vector_hint(width, interleave),
        }
    }

    /// The kind of directive (tiles by how many loops): children are drawn kind first, so
    /// that thousands of tile sizes do not crowd out the few other choices.
    pub fn family(&self) -> String {
        match self {
            Op::Tile(s) => format!("tile{}", s.len()),
            Op::Interchange(_) => "interchange".into(),
            Op::Reverse => "reverse".into(),
            Op::Unroll(_) => "unroll".into(),
            Op::Parallel => "parallel".into(),
            Op::Vectorize { .. } => "vectorize".into(),
        }
    }

    /// Inverse of [`Op::text`] (a private clause is ignored).
    pub fn parse(text: &str) -> Option<Op> {
        let numbers = |inner: &str| -> Option<Vec<u64>> {
            let inner = inner.strip_suffix(')')?;
            inner.split(',').map(|x| x.trim().parse().ok()).collect()
        };
        if text.starts_with("parallel for") {
            return Some(Op::Parallel);
        }
        if text == "reverse" {
            return Some(Op::Reverse);
        }
        if let Some(r) = text.strip_prefix(VECTORIZE) {
            let (width, interleave) = r.split_once(") interleave_count(")?;
            let interleave = numbers(interleave)?;
            return Some(Op::Vectorize {
                width: width.trim().parse().ok()?,
                interleave: u32::try_from(*interleave.first()?).ok()?,
            });
        }
        if let Some(r) = text.strip_prefix("tile sizes(") {
            let v = numbers(r)?;
            return Some(Op::Tile(v.into_iter().map(|x| x as u32).collect()));
        }
        if let Some(r) = text.strip_prefix("interchange permutation(") {
            let v = numbers(r)?;
            return Some(Op::Interchange(v.into_iter().map(|x| x as usize).collect()));
        }
        let r = text.strip_prefix("unroll partial(")?;
        numbers(r)?.first().map(|&f| Op::Unroll(f as u32))
    }
}

/// A node: the directives above each loop (bottom first) and the Polly knob.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stacks {
    pub polly: Polly,
    pub ops: BTreeMap<usize, Vec<Op>>,
}

impl Stacks {
    pub fn root() -> Stacks {
        Stacks {
            polly: Polly::Off,
            ops: BTreeMap::new(),
        }
    }

    /// The number of transformations (the node's depth in the tree).
    pub fn depth(&self) -> usize {
        self.ops.values().map(Vec::len).sum::<usize>() + (self.polly != Polly::Off) as usize
    }

    pub(crate) fn stack(&self, l: usize) -> &[Op] {
        self.ops.get(&l).map_or(&[], Vec::as_slice)
    }

    /// The directives in source order, `L<k>: <directive>` joined by `; ` (the
    /// `transformations` column and the mold's insertion value); "" for the root.
    pub fn text(&self, tree: &LoopTree) -> String {
        let mut entries = Vec::new();
        for (&l, ops) in &self.ops {
            for op in ops.iter().rev() {
                let mut t = op.text();
                if *op == Op::Parallel {
                    t.push_str(&tree.private_clause(l, ops.len() > 1));
                }
                entries.push(format!("L{l}: {t}"));
            }
        }
        entries.join("; ")
    }

    /// Each directive as (`L<k>: <directive>`, `L<k> <family>`): what a failure poisons.
    pub fn entries(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (&l, ops) in &self.ops {
            for op in ops {
                out.push((
                    format!("L{l}: {}", op.text()),
                    format!("L{l} {}", op.family()),
                ));
            }
        }
        out
    }

    /// Inverse of [`Stacks::text`]; `None` if an entry names no loop of `tree`.
    pub fn parse(text: &str, polly: Polly, tree: &LoopTree) -> Option<Stacks> {
        let mut s = Stacks {
            polly,
            ops: BTreeMap::new(),
        };
        for (label, op) in crate::problem::mold::Placement::entries(text) {
            let l: usize = label.strip_prefix('L')?.parse().ok()?;
            if l >= tree.loops.len() {
                return None;
            }
            // Entries are listed top first; stacks are stored bottom first.
            s.ops.entry(l).or_default().insert(0, Op::parse(op)?);
        }
        Some(s)
    }
}
