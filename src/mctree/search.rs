//! The tree search: which node of the [`Tree`] to evaluate next, as a [`Strategy`] of the
//! run's driver (so evaluation, the log, resume and progress are `run`'s own).
//!
//! - `greedy`: mctree's best-first expansion — an unevaluated child of the best node that
//!   has one left (the baseline).
//! - `mcts`: UCT with progressive widening — descend by the upper confidence bound on
//!   speed-up rewards, open a new child once a node's visits allow it (⌈√visits⌉ children).
//! - `rf`: the random forest of `run` over features of the transformation stack ranks the
//!   children of the best nodes by lower confidence bound.
//!
//! Every strategy starts with the same small design: the untransformed program, the Polly
//! knobs, and `parallel for` on each outermost loop that allows it (the changes that matter
//! most on a multi-core machine). Every draw depends only on the seed and the step, so a
//! resumed search proposes what the uninterrupted one would have. Children are drawn by
//! family first (polly, tile of k loops of loop L, interchange, …), weighted by how often
//! such a change pays off ([`family_weight`]), then uniformly within the family.

use std::collections::{BTreeMap, HashSet};

use crate::evaluate::outcome::{Measurement, Source, Status};
use crate::mctree::directive::{Op, Polly, Stacks};
use crate::mctree::legality::Legality;
use crate::mctree::tree::{State, Tree};
use crate::problem::param::OpenValues;
use crate::problem::space::Config;
use crate::rng::Rng;
use crate::search::acquisition::Scorer;
use crate::search::surrogate::{Forest, ForestParams};
use crate::search::unseen::NoProposal;
use crate::search::Strategy;

/// How the tree is searched (`--strategy`): greedy descent, Monte Carlo tree search, or a
/// random forest over the stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    Greedy,
    Mcts,
    Rf,
}

impl Walk {
    pub fn as_str(self) -> &'static str {
        match self {
            Walk::Greedy => "greedy",
            Walk::Mcts => "mcts",
            Walk::Rf => "rf",
        }
    }

    pub fn parse(s: &str) -> Option<Walk> {
        [Walk::Greedy, Walk::Mcts, Walk::Rf]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// κ of the rf strategy's lower confidence bound (1.96: the half-width of a normal's 95%
/// interval, in standard deviations).
const RF_KAPPA: f64 = 1.96;
const STREAM_PICK: u64 = 11;
const STREAM_FIT: u64 = 12;
/// UCT's exploration constant (rewards are scaled to the best one so far).
const UCT_C: f64 = 0.7;
/// rf: the children of this many best nodes form the candidate pool …
const RF_PARENTS: usize = 8;
/// … of at most this many candidates.
const RF_POOL: usize = 4000;
/// rf: every this-many-th step is a greedy one (as `run` interleaves random proposals).
const RF_INTERLEAVE: usize = 4;
/// rf: the model is fitted once this many nodes are measured.
const RF_MIN_FIT: usize = 4;

pub struct TreeSearch {
    pub tree: Tree,
    kind: Walk,
    seed: u64,
    /// The `transformations` parameter's values (coordinate = index).
    labels: OpenValues,
    /// Evaluations told so far (the next one's eval id).
    told: usize,
    /// Nodes whose subtree has nothing left to propose.
    dead: HashSet<usize>,
    /// What failed nodes added to their parents: directives (`L1: reverse`) and, for a
    /// wrong output, the whole kind on that loop (`L1 reverse`: a dependence a reversal or
    /// tiling of that loop violates, it violates for every size). Nodes holding one are
    /// not proposed.
    poisoned: HashSet<String>,
    /// Polly knobs that left a program's machine code unchanged: Polly does nothing to this
    /// kernel, so they are not proposed elsewhere (a directive that changed nothing is
    /// poisoned likewise).
    idle_knobs: HashSet<Polly>,
    /// Whether configurations carry the `legality` column.
    pub records_legality: bool,
}

impl TreeSearch {
    pub fn new(tree: Tree, kind: Walk, seed: u64, labels: OpenValues) -> TreeSearch {
        TreeSearch {
            tree,
            kind,
            seed,
            labels,
            told: 0,
            dead: HashSet::new(),
            poisoned: HashSet::new(),
            idle_knobs: HashSet::new(),
            records_legality: false,
        }
    }

    /// The configuration of node `n`: (transformations, polly).
    pub fn config(&self, n: usize) -> Config {
        let node = &self.tree.nodes[n];
        let polly = Polly::ALL.iter().position(|&p| p == node.stacks.polly);
        let mut c = vec![self.labels.intern(&node.text), polly.unwrap_or(0) as f64];
        if self.records_legality {
            let l = Legality::ALL.iter().position(|&l| l == node.legality);
            c.push(l.unwrap_or(0) as f64);
        }
        Config(c)
    }

    /// The node a configuration stands for.
    pub fn node_of(&mut self, c: &Config) -> Option<usize> {
        let text = self.labels.get(c.0[0]);
        let polly = *Polly::ALL.get(c.0[1] as usize)?;
        self.tree.find(&text, polly)
    }

    /// Whether node `c` holds what an earlier failure or an idle knob rules out.
    fn ruled_out(&self, c: usize) -> bool {
        let s = &self.tree.nodes[c].stacks;
        self.idle_knobs.contains(&s.polly)
            || (s.entries().iter())
                .any(|(e, f)| self.poisoned.contains(e) || self.poisoned.contains(f))
    }

    /// Children of `n` never proposed and not ruled out.
    fn candidates(&mut self, n: usize) -> Vec<usize> {
        let open = self.tree.open_children(n);
        open.into_iter().filter(|&c| !self.ruled_out(c)).collect()
    }

    /// Learns from node `n`'s outcome what not to propose again.
    fn learn(&mut self, n: usize) {
        let node = &self.tree.nodes[n];
        let Some(p) = node.parent else { return };
        let parent = &self.tree.nodes[p];
        let before = parent.stacks.entries();
        let added: Vec<(String, String)> = (node.stacks.entries().into_iter())
            .filter(|(entry, _)| !before.iter().any(|(e, _)| e == entry))
            .collect();
        match node.state {
            State::Duplicate if added.is_empty() => {
                self.idle_knobs.insert(node.stacks.polly);
            }
            State::Duplicate => {
                for (entry, family) in added {
                    // Strip-mining that left the machine code as it was is undone by the
                    // compiler whatever the size: no other size of it is tried.
                    if family.ends_with("tile1") {
                        self.poisoned.insert(family);
                    }
                    self.poisoned.insert(entry);
                }
            }
            State::Failed(status) => {
                for (entry, family) in added {
                    let whole_kind = status == Status::WrongOutput
                        && !family.ends_with("unroll")
                        && !family.ends_with("interchange");
                    if whole_kind {
                        self.poisoned.insert(family);
                    }
                    self.poisoned.insert(entry);
                }
            }
            _ => {}
        }
    }

    /// A child of `n` never proposed: a family drawn by its weight, then a member of it.
    fn draw_child(&mut self, n: usize, rng: &mut Rng) -> Option<usize> {
        let mut families: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let open = self.candidates(n);
        for &c in &open {
            families
                .entry(self.tree.nodes[c].family.as_str())
                .or_default()
                .push(c);
        }
        let weighted: Vec<(f64, &Vec<usize>)> = (families.iter())
            .map(|(f, m)| (family_weight(f, &self.tree), m))
            .collect();
        let total: f64 = weighted.iter().map(|w| w.0).sum();
        let mut u = rng.f64() * total;
        for (w, members) in &weighted {
            if u < *w {
                return Some(members[rng.below(members.len())]);
            }
            u -= w;
        }
        weighted.last().map(|(_, m)| m[rng.below(m.len())])
    }

    /// The next node of the starting design not yet proposed: the root, its Polly knobs,
    /// `parallel for` on each outermost loop.
    fn initial(&mut self) -> Option<usize> {
        if self.tree.nodes[0].state == State::Open {
            return Some(0);
        }
        if !self.tree.expandable(0) {
            return None;
        }
        let kids = self.tree.children(0);
        let roots = &self.tree.loops.roots;
        let starters: Vec<usize> = (kids.into_iter())
            .filter(|&c| {
                let n = &self.tree.nodes[c];
                let starter = n.family == "polly"
                    || roots.iter().any(|r| n.family == format!("L{r} parallel"));
                starter && n.state == State::Open
            })
            .collect();
        starters.into_iter().find(|&c| !self.ruled_out(c))
    }

    /// An unevaluated child of the best node that has one.
    fn greedy(&mut self, rng: &mut Rng) -> Option<usize> {
        for (n, _) in self.tree.ranked() {
            if let Some(c) = self.draw_child(n, rng) {
                return Some(c);
            }
        }
        None
    }

    /// Per node: (evaluations in its subtree, sum of their rewards). A reward is the speed-up
    /// over the root scaled by the best speed-up (failures and duplicates 0).
    fn subtree_stats(&self) -> Vec<(f64, f64)> {
        let t = &self.tree;
        let root = match t.nodes[0].state {
            State::Ok(y) => y,
            _ => 1.0,
        };
        let best = t.ranked().first().map_or(1.0, |b| root / b.1.max(1e-300));
        let mut stats = vec![(0.0, 0.0); t.nodes.len()];
        for (i, n) in t.nodes.iter().enumerate() {
            let reward = match n.state {
                State::Ok(y) => root / y.max(1e-300) / best,
                State::Duplicate | State::Failed(_) => 0.0,
                State::Open | State::Asked => continue,
            };
            let mut at = Some(i);
            while let Some(a) = at {
                stats[a].0 += 1.0;
                stats[a].1 += reward;
                at = t.nodes[a].parent;
            }
        }
        stats
    }

    /// UCT descent with progressive widening; a node with nothing left below is marked
    /// dead and the descent restarts.
    fn mcts(&mut self, rng: &mut Rng) -> Option<usize> {
        let stats = self.subtree_stats();
        while !self.dead.contains(&0) {
            if let Some(c) = self.descend(&stats, rng) {
                return Some(c);
            }
        }
        None
    }

    fn descend(&mut self, stats: &[(f64, f64)], rng: &mut Rng) -> Option<usize> {
        let mut n = 0;
        loop {
            let kids = self.tree.children(n);
            let tried = (kids.iter())
                .filter(|&&c| self.tree.nodes[c].state != State::Open)
                .count();
            let allowed = stats[n].0.max(1.0).sqrt().ceil() as usize;
            if tried < allowed {
                if let Some(c) = self.draw_child(n, rng) {
                    return Some(c);
                }
            }
            let visits = stats[n].0.max(1.0);
            let uct = |c: usize| {
                let (v, r) = stats[c];
                r / v + UCT_C * (visits.ln() / v).sqrt()
            };
            let next = (kids.iter().copied())
                .filter(|&c| self.tree.expandable(c) && !self.dead.contains(&c) && stats[c].0 > 0.0)
                .max_by(|&a, &b| uct(a).total_cmp(&uct(b)).then(b.cmp(&a)));
            match next {
                Some(c) => n = c,
                None => {
                    if let Some(c) = self.draw_child(n, rng) {
                        return Some(c);
                    }
                    self.dead.insert(n);
                    return None;
                }
            }
        }
    }

    /// The candidate with the lowest lower confidence bound of the forest's prediction among
    /// the children of the best nodes; greedy while there is too little to fit.
    fn rf(&mut self, step: usize, rng: &mut Rng) -> Option<(usize, Source)> {
        let ranked = self.tree.ranked();
        if ranked.len() < RF_MIN_FIT || step % RF_INTERLEAVE == RF_INTERLEAVE - 1 {
            return self.greedy(rng).map(|c| (c, Source::Tree));
        }
        let mut pool: Vec<usize> = Vec::new();
        for &(n, _) in ranked.iter().take(RF_PARENTS) {
            pool.extend(self.candidates(n));
        }
        pool.sort_unstable();
        pool.dedup();
        if pool.is_empty() {
            return self.greedy(rng).map(|c| (c, Source::Tree));
        }
        rng.shuffle(&mut pool);
        pool.truncate(RF_POOL);
        let d = features(&self.tree.nodes[0].stacks, &self.tree).len();
        let x: Vec<f64> = (ranked.iter())
            .flat_map(|&(n, _)| features(&self.tree.nodes[n].stacks, &self.tree))
            .collect();
        let y: Vec<f64> = ranked.iter().map(|&(_, v)| v.max(1e-300).ln()).collect();
        let xp: Vec<f64> = (pool.iter())
            .flat_map(|&n| features(&self.tree.nodes[n].stacks, &self.tree))
            .collect();
        let mut fit_rng = Rng::for_step(self.seed, STREAM_FIT, step as u64);
        let forest = Forest::fit(&x, d, &y, ForestParams::random_forest(), &mut fit_rng);
        let (mu, sd) = forest.predict(&xp);
        let acq = Scorer::lcb(RF_KAPPA);
        let lcb = |i: usize| acq.score(mu[i], sd[i], 1.0);
        let best = (0..pool.len()).min_by(|&a, &b| lcb(a).total_cmp(&lcb(b)))?;
        Some((pool[best], Source::Model))
    }
}

/// How likely a kind of transformation is to pay off, as a drawing weight: a Polly knob, a
/// `parallel for` on an outermost loop and multi-loop tiles first; inner `parallel for`
/// (a fork and join per outer iteration), one-loop tiles (strip-mining) and `reverse` last.
pub fn family_weight(family: &str, tree: &Tree) -> f64 {
    if family == "polly" {
        return 3.0;
    }
    let (l, kind) = family.split_once(' ').unwrap_or(("", family));
    let outermost = (l.strip_prefix('L').and_then(|x| x.parse::<usize>().ok()))
        .is_some_and(|l| tree.loops.loops.get(l).is_some_and(|x| x.parent.is_none()));
    match kind {
        "parallel" if outermost => 4.0,
        "parallel" => 0.5,
        "tile2" | "tile3" => 3.0,
        "interchange" => 2.0,
        "unroll" => 1.0,
        "tile1" => 0.5,
        _ => 0.3,
    }
}

/// Fixed-width features of a stack for the forest: per loop, the tile's width and log₂
/// sizes, the interchange (of the loops, of the tile's floors) as a number, reverse, log₂
/// unroll factor, parallel, log₂ vector width and interleave count; then the Polly knob.
pub fn features(s: &Stacks, tree: &Tree) -> Vec<f64> {
    let mut out = Vec::new();
    for l in 0..tree.loops.loops.len() {
        let mut f = [0.0; 11];
        let ops = s.ops.get(&l).map_or(&[][..], Vec::as_slice);
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Tile(sz) => {
                    f[0] = sz.len() as f64;
                    for (k, &v) in sz.iter().take(3).enumerate() {
                        f[1 + k] = (v as f64).log2();
                    }
                }
                Op::Interchange(p) => {
                    let code = p.iter().fold(0.0, |a, &x| a * 10.0 + x as f64);
                    f[if i == 0 { 4 } else { 5 }] = code;
                }
                Op::Reverse => f[6] = 1.0,
                Op::Unroll(u) => f[7] = (*u as f64).log2(),
                Op::Parallel => f[8] = 1.0,
                Op::Vectorize { width, interleave } => {
                    f[9] = (*width as f64).log2();
                    f[10] = (*interleave as f64).log2();
                }
            }
        }
        out.extend_from_slice(&f);
    }
    out.extend(Polly::ALL.iter().map(|&p| (s.polly == p) as u8 as f64));
    out
}

impl Strategy for TreeSearch {
    fn ask(&mut self, step: usize) -> Result<(Config, Source), NoProposal> {
        let (n, source) = if let Some(n) = self.initial() {
            (
                n,
                if n == 0 {
                    Source::Default
                } else {
                    Source::Initial
                },
            )
        } else {
            let mut rng = Rng::for_step(self.seed, STREAM_PICK, step as u64);
            let picked = match self.kind {
                Walk::Greedy => self.greedy(&mut rng).map(|c| (c, Source::Tree)),
                Walk::Mcts => self.mcts(&mut rng).map(|c| (c, Source::Tree)),
                Walk::Rf => self.rf(step, &mut rng),
            };
            picked.ok_or(NoProposal::Exhausted)?
        };
        self.tree.nodes[n].state = State::Asked;
        Ok((self.config(n), source))
    }

    fn tell(&mut self, config: &Config, m: &Measurement, _source: Source) {
        let eval_id = self.told;
        self.told += 1;
        if let Some(n) = self.node_of(config) {
            self.tree.record(n, m, eval_id);
            self.learn(n);
        }
    }

    /// The root's Polly knobs (Polly alone is where a user starts: mctree must not end
    /// slower than it because a noisy search measurement ranked it below the top few).
    fn anchors(&self) -> Vec<usize> {
        let kids = self.tree.nodes[0].children.iter().flatten();
        kids.map(|&c| &self.tree.nodes[c])
            .filter(|n| n.family == "polly")
            .filter_map(|n| n.eval_id)
            .collect()
    }
}
