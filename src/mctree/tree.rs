//! The tree of transformation stacks: the untransformed program at the root, each child one
//! transformation more. Nodes are created when their parent is expanded, identified by their
//! canonical stack (two orders of the same transformations are one node), and carry the
//! outcome of their evaluation. A failed or duplicate node is never expanded.

use std::collections::{HashMap, HashSet};

use crate::evaluate::outcome::{Measurement, Status};
use crate::mctree::directive::{Polly, Stacks};
use crate::mctree::legality::{self, Legality};
use crate::mctree::looptree::LoopTree;
use crate::mctree::transform::{self, Options};

/// What evaluating a node gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// Not evaluated (nor proposed).
    Open,
    /// Proposed, its outcome not yet told.
    Asked,
    /// Measured and correct: the objective (smaller is better).
    Ok(f64),
    /// Same program as an earlier node (reused, not re-timed).
    Duplicate,
    /// Build error or timeout, wrong output, crash: its subtree is pruned.
    Failed(Status),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub stacks: Stacks,
    /// The `transformations` text.
    pub text: String,
    pub parent: Option<usize>,
    /// The kind of transformation that made it from its parent (`L3 tile2`).
    pub family: String,
    /// `None` until expanded.
    pub children: Option<Vec<usize>>,
    pub state: State,
    /// The evaluation that measured it.
    pub eval_id: Option<usize>,
    /// Proved legal by the dependence analysis, or guarded by the output check alone.
    pub legality: Legality,
}

pub struct Tree {
    pub loops: LoopTree,
    pub options: Options,
    pub nodes: Vec<Node>,
    /// Candidate nodes left out because their legality was not proved.
    pub refused: HashSet<(Polly, String)>,
    index: HashMap<(Polly, String), usize>,
}

impl Tree {
    pub fn new(loops: LoopTree, options: Options) -> Tree {
        let mut t = Tree {
            loops,
            options,
            nodes: vec![],
            refused: HashSet::new(),
            index: HashMap::new(),
        };
        t.node(Stacks::root(), None, "");
        t
    }

    /// The node of `stacks`, created below `parent` if it is new.
    pub fn node(&mut self, stacks: Stacks, parent: Option<usize>, family: &str) -> usize {
        let text = stacks.text(&self.loops);
        let key = (stacks.polly, text.clone());
        if let Some(&n) = self.index.get(&key) {
            return n;
        }
        let n = self.nodes.len();
        let legality = match legality::of(&self.loops, &stacks) {
            Ok(()) => Legality::Proved,
            Err(_) => Legality::OutputChecked,
        };
        self.nodes.push(Node {
            legality,
            stacks,
            text,
            parent,
            family: family.into(),
            children: None,
            state: State::Open,
            eval_id: None,
        });
        self.index.insert(key, n);
        n
    }

    /// The node with this `transformations` text and Polly knob, created (without a parent)
    /// if the tree has not reached it yet; `None` if the text names no loop of the kernel.
    pub fn find(&mut self, text: &str, polly: Polly) -> Option<usize> {
        if let Some(&n) = self.index.get(&(polly, text.to_string())) {
            return Some(n);
        }
        let stacks = Stacks::parse(text, polly, &self.loops)?;
        Some(self.node(stacks, None, ""))
    }

    /// Whether `n` may have children evaluated: it was measured correct and is new.
    pub fn expandable(&self, n: usize) -> bool {
        matches!(self.nodes[n].state, State::Ok(_))
    }

    /// The children of `n` (created on first use).
    pub fn children(&mut self, n: usize) -> Vec<usize> {
        if let Some(c) = &self.nodes[n].children {
            return c.clone();
        }
        let (kids, refused) =
            transform::children(&self.nodes[n].stacks, &self.loops, &self.options);
        for s in refused {
            self.refused.insert((s.polly, s.text(&self.loops)));
        }
        // A child reached before through another parent keeps that parent.
        let ids: Vec<usize> = (kids.into_iter())
            .map(|(s, family)| self.node(s, Some(n), &family))
            .collect();
        self.nodes[n].children = Some(ids.clone());
        ids
    }

    /// Children of `n` never proposed.
    pub fn open_children(&mut self, n: usize) -> Vec<usize> {
        (self.children(n).into_iter())
            .filter(|&c| self.nodes[c].state == State::Open)
            .collect()
    }

    /// Records the outcome of node `n`'s evaluation `eval_id`.
    pub fn record(&mut self, n: usize, m: &Measurement, eval_id: usize) {
        let node = &mut self.nodes[n];
        node.eval_id = Some(eval_id);
        node.state = match (m.status, m.objective, m.reused_from) {
            (_, _, Some(_)) => State::Duplicate,
            (Status::Ok, Some(y), None) => State::Ok(y),
            (s, _, None) => State::Failed(s),
        };
    }

    /// Measured nodes, best first.
    pub fn ranked(&self) -> Vec<(usize, f64)> {
        let mut v: Vec<(usize, f64)> = (self.nodes.iter().enumerate())
            .filter_map(|(i, n)| match n.state {
                State::Ok(y) => Some((i, y)),
                _ => None,
            })
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        v
    }

    /// The explored tree in Graphviz dot: evaluated nodes with their outcome, the best
    /// highlighted; never-proposed nodes are left out.
    pub fn dot(&self) -> String {
        let best = self.ranked().first().map(|b| b.0);
        let mut out =
            String::from("digraph mctree {\n  node [shape=box, fontname=\"monospace\"];\n");
        for (i, n) in self.nodes.iter().enumerate() {
            if matches!(n.state, State::Open | State::Asked) {
                continue;
            }
            let what = match n.state {
                State::Ok(y) => format!("{y:.6}"),
                State::Duplicate => "duplicate".into(),
                State::Failed(s) => s.as_str().into(),
                State::Open | State::Asked => String::new(),
            };
            let last = self.last_step(i).replace('"', "'");
            let eval = n.eval_id.map_or(String::new(), |e| format!("eval {e}: "));
            let what = format!("{what}, {}", n.legality.as_str());
            let style = if Some(i) == best {
                ", style=bold, color=blue"
            } else {
                ""
            };
            out.push_str(&format!(
                "  n{i} [label=\"{eval}{last}\\n{what}\"{style}];\n"
            ));
            if let Some(p) = n.parent {
                out.push_str(&format!("  n{p} -> n{i};\n"));
            }
        }
        out.push_str("}\n");
        out
    }

    /// What node `i` adds to its parent (the whole stack for the root or an orphan).
    fn last_step(&self, i: usize) -> String {
        let n = &self.nodes[i];
        let Some(p) = n.parent else {
            return if n.text.is_empty() && n.stacks.polly == Polly::Off {
                "untransformed".into()
            } else {
                format!("{} {}", n.stacks.polly.flags(), n.text)
                    .trim()
                    .to_string()
            };
        };
        let parent = &self.nodes[p];
        if parent.stacks.polly != n.stacks.polly {
            return n.stacks.polly.flags().to_string();
        }
        let before: Vec<&str> = parent.text.split("; ").collect();
        let added: Vec<&str> = (n.text.split("; "))
            .filter(|e| !before.contains(e))
            .collect();
        added.join("; ")
    }
}
