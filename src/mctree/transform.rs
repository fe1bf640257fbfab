//! Transformations: clang-22's OpenMP loop directives stacked above the kernel's loops, the
//! Polly knob at the root, and which one-step extensions of a stack clang-22 accepts.
//!
//! A node of the tree is a [`Stacks`]: per loop, the directives written above its `for`
//! (applied bottom-up), and the Polly knob. clang-22's stacking rules (toolchain facts): a
//! directive acts on the loops the one below exposes — `tile` its floor loops, `interchange`,
//! `reverse` and `unroll partial` one loop, `parallel for` none; a multi-loop directive needs
//! a perfect, rectangular nest below it. So every stack follows one grammar, bottom to top:
//! a base (`tile`, `interchange`, `reverse` or `unroll partial`), an `interchange` of the tile's
//! floor loops, `unroll partial` above `reverse`, and `parallel for` last. An innermost loop
//! no directive of an outer loop consumes may instead have clang's vector hint
//! (`#pragma clang loop vectorize_width(..) interleave_count(..)`) as its base, with only
//! `parallel for` above it (clang accepts that order, not the other: a `clang loop` hint
//! may not stand above an OpenMP directive, and one on a loop an OpenMP directive consumes
//! is dropped without a word); a loop with the hint is consumed by no outer directive. Nothing else is
//! generated — in particular no identity permutation, no `apply` (clang-22 hangs), no
//! collapse into intra-tile loops (silently wrong).

use crate::mctree::footprint;
use crate::mctree::legality;
use crate::mctree::looptree::LoopTree;

use crate::mctree::directive::{Op, Polly, Stacks};

/// What the generator may use.
#[derive(Debug, Clone)]
pub struct Options {
    pub tile_sizes: Vec<u32>,
    pub unroll: Vec<u32>,
    /// At most this many transformations (directives, and the Polly knob) per node.
    pub depth: usize,
    /// Tile at most this many loops at once.
    pub max_tile: usize,
    /// Propose directives the dependence analysis does not prove legal (the output check
    /// is then their only guard).
    pub trust_output_check: bool,
    /// The Polly knobs to propose ([`crate::mctree::polly::knobs`]).
    pub polly: Vec<Polly>,
    /// The vector widths (in elements) and interleave counts an innermost loop is given;
    /// no widths, no vector hints.
    pub vector_widths: Vec<u32>,
    pub interleave: Vec<u32>,
    /// The cache a tile's working set ([`footprint::bytes`]) must fit, in bytes: where some
    /// tile of a band fits, the band's tiles that do not are not proposed. `None`: no bound.
    pub tile_bound: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tile_sizes: vec![4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 128, 256, 2048],
            unroll: vec![2, 4, 8],
            depth: 4,
            max_tile: 3,
            trust_output_check: false,
            polly: vec![Polly::On, Polly::NoReschedule, Polly::Parallel],
            vector_widths: vec![4, 8],
            interleave: vec![1, 4],
            tile_bound: None,
        }
    }
}

/// Every node one transformation below this one that clang-22 accepts and that is
/// proved legal (or, under `--trust-output-check`, every one), with the family of the
/// transformation added (`polly`, `L3 tile2`, …); and the ones refused.
pub fn children(
    node: &Stacks,
    tree: &LoopTree,
    o: &Options,
) -> (Vec<(Stacks, String)>, Vec<Stacks>) {
    if node.depth() >= o.depth {
        return (vec![], vec![]);
    }
    let mut out = Vec::new();
    if node.polly == Polly::Off {
        for &p in &o.polly {
            let c = Stacks {
                polly: p,
                ..node.clone()
            };
            out.push((c, "polly".to_string()));
        }
    }
    let mut refused = vec![];
    for l in 0..tree.loops.len() {
        for op in next_ops(node, tree, l, o) {
            let family = format!("L{l} {}", op.family());
            let mut c = node.clone();
            let stack = c.ops.entry(l).or_default();
            stack.push(op);
            let proved = legality::directive(tree, l, stack, stack.len() - 1).is_ok();
            if proved || o.trust_output_check {
                out.push((c, family));
            } else {
                refused.push(c);
            }
        }
    }
    (out, refused)
}

/// The loop whose directive consumes loop `l` (a loop of its perfect nest below a
/// multi-loop directive), if any.
fn consumer(node: &Stacks, tree: &LoopTree, l: usize) -> Option<usize> {
    node.ops.iter().find_map(|(&a, ops)| {
        let width = ops.first().map_or(1, Op::width);
        let nest = tree.perfect_nest(a);
        nest[1..width.min(nest.len())].contains(&l).then_some(a)
    })
}

/// The directives that may go above loop `l`'s current stack.
fn next_ops(node: &Stacks, tree: &LoopTree, l: usize, o: &Options) -> Vec<Op> {
    let lp = &tree.loops[l];
    if lp.untouchable.is_some() {
        return vec![];
    }
    let stack = node.stack(l);
    let leaf = lp.children.is_empty();
    if consumer(node, tree, l).is_some() {
        // Inside another loop's transformed nest only a one-loop directive fits.
        return match stack {
            [] if leaf => o.unroll.iter().map(|&f| Op::Unroll(f)).collect(),
            _ => vec![],
        };
    }
    let mut ops = match stack.last() {
        None => bases(node, tree, l, o),
        Some(Op::Tile(s)) if s.len() >= 2 => permutations(s.len()),
        Some(Op::Reverse) if leaf => o.unroll.iter().map(|&f| Op::Unroll(f)).collect(),
        _ => vec![],
    };
    if stack.last() != Some(&Op::Parallel) && may_parallelize(node, tree, l) {
        ops.push(Op::Parallel);
    }
    ops
}

/// The first directive of an empty stack: tiles and interchanges of the rectangular
/// perfect nest (its inner loops untransformed, except a leaf's `unroll partial`),
/// `reverse`, and `unroll partial` on an innermost loop.
fn bases(node: &Stacks, tree: &LoopTree, l: usize, o: &Options) -> Vec<Op> {
    let nest = tree.perfect_nest(l);
    let free = 1 + nest[1..]
        .iter()
        .take_while(|&&n| matches!(node.stack(n), [] | [Op::Unroll(_)]))
        .count();
    let width = tree.loops[l].rectangular.min(free);
    let mut ops = Vec::new();
    // Strip-mining a loop that carries a dependence is legal but a dead end: nothing
    // legal stacks on it (no interchange of one loop, no parallel for, no reverse).
    let dead_end = tree.deps.unanalysable.is_none() && legality::carries(tree, l);
    for k in (1 + dead_end as usize)..=width.min(o.max_tile) {
        ops.extend(tiles(&nest[..k], tree, o));
    }
    for k in 2..=width.min(o.max_tile) {
        ops.extend(permutations(k));
    }
    ops.push(Op::Reverse);
    if tree.loops[l].children.is_empty() {
        ops.extend(o.unroll.iter().map(|&f| Op::Unroll(f)));
        ops.extend(vector_hints(o));
    }
    ops
}

/// Every vector width with every interleave count ([`Op::Vectorize`]).
fn vector_hints(o: &Options) -> impl Iterator<Item = Op> + '_ {
    (o.vector_widths.iter()).flat_map(|&width| {
        (o.interleave.iter()).map(move |&interleave| Op::Vectorize { width, interleave })
    })
}

/// `parallel for` on loop `l`: no loop around it or inside it is parallel already
/// (whether its iterations are independent is [`legality`]'s to prove).
fn may_parallelize(node: &Stacks, tree: &LoopTree, l: usize) -> bool {
    let lp = &tree.loops[l];
    let parallel = |x: usize| node.stack(x).contains(&Op::Parallel);
    let mut up = lp.parent;
    while let Some(p) = up {
        if parallel(p) {
            return false;
        }
        up = tree.loops[p].parent;
    }
    !node
        .ops
        .keys()
        .any(|&x| x != l && is_below(tree, x, l) && parallel(x))
}

/// Whether loop `x` is nested (at any depth) inside loop `l`.
fn is_below(tree: &LoopTree, x: usize, l: usize) -> bool {
    let mut up = tree.loops[x].parent;
    while let Some(p) = up {
        if p == l {
            return true;
        }
        up = tree.loops[p].parent;
    }
    false
}

/// Every tile of the loops `nest` with sizes from the options; a size at or above a loop's
/// constant trip count tiles nothing and is left out, and so are the tiles whose working set
/// exceeds the options' bound when another fits it.
fn tiles(nest: &[usize], tree: &LoopTree, o: &Options) -> Vec<Op> {
    let per_loop: Vec<Vec<u32>> = nest
        .iter()
        .map(|&n| {
            let trip = tree.loops[n].trip;
            (o.tile_sizes.iter().copied())
                .filter(|&s| trip.is_none_or(|t| (s as i64) < t))
                .collect()
        })
        .collect();
    let mut all = products(&per_loop);
    if let Some(bound) = o.tile_bound {
        let fits = |v: &&Vec<u32>| footprint::bytes(tree, nest, v).is_some_and(|b| b <= bound);
        let fitting: Vec<Vec<u32>> = all.iter().filter(fits).cloned().collect();
        if !fitting.is_empty() {
            all = fitting;
        }
    }
    all.into_iter().map(Op::Tile).collect()
}

/// Every choice of one value per list, in order (none if a list is empty).
fn products(per_loop: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = vec![vec![]];
    for choices in per_loop {
        out = out
            .iter()
            .flat_map(|prefix| {
                choices.iter().map(move |&s| {
                    let mut v = prefix.clone();
                    v.push(s);
                    v
                })
            })
            .collect();
    }
    out.retain(|v| !v.is_empty());
    out
}

/// Every permutation of `1..=k` but the identity, as interchanges.
fn permutations(k: usize) -> Vec<Op> {
    let mut out = Vec::new();
    let mut p: Vec<usize> = (1..=k).collect();
    permute(&mut p, 0, &mut out);
    out.retain(|v| v.iter().enumerate().any(|(i, &x)| x != i + 1));
    out.sort();
    out.into_iter().map(Op::Interchange).collect()
}

fn permute(p: &mut Vec<usize>, i: usize, out: &mut Vec<Vec<usize>>) {
    if i == p.len() {
        out.push(p.clone());
        return;
    }
    for j in i..p.len() {
        p.swap(i, j);
        permute(p, i + 1, out);
        p.swap(i, j);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mctree::looptree::{Bound, Loop};

    fn lp(id: usize, parent: Option<usize>, children: Vec<usize>, iv: &str) -> Loop {
        Loop {
            id,
            iv: iv.into(),
            iv_declared_in_loop: false,
            line: 1 + id as u32,
            col: 1,
            offset: 10 * id,
            spelled_at: None,
            indent: String::new(),
            lower: Bound::Constant { value: 0 },
            upper: Bound::Constant { value: 100 },
            inclusive: false,
            step: 1,
            trip: Some(100),
            canonical: true,
            untouchable: None,
            parent,
            children,
            statements: 0,
            perfect: 1,
            rectangular: 1,
            shared_writes: vec![],
            private: vec![],
            outside: vec![],
            trip_unknown: None,
            most_trips: Some(100),
            polly_disagrees: None,
            independent: true,
        }
    }

    /// L0 i { L1 j { L2 k } } (perfect, rectangular) and L3 a { L4 b <= a } (triangular).
    pub(crate) fn tree() -> LoopTree {
        let mut loops = vec![
            lp(0, None, vec![1], "i"),
            lp(1, Some(0), vec![2], "j"),
            lp(2, Some(1), vec![], "k"),
            lp(3, None, vec![4], "a"),
            lp(4, Some(3), vec![], "b"),
        ];
        (loops[0].perfect, loops[0].rectangular) = (3, 3);
        (loops[1].perfect, loops[1].rectangular) = (2, 2);
        loops[0].private = vec!["j".into(), "k".into()];
        (loops[3].perfect, loops[3].rectangular) = (2, 1);
        loops[4].upper = Bound::Depends {
            loops: vec![3],
            text: "a".into(),
        };
        loops[4].trip = None;
        LoopTree {
            kernel: "k".into(),
            callers: vec![],
            deps: Default::default(),
            file: "k.c".into(),
            line: 1,
            loops,
            roots: vec![0, 3],
            polly_compared: None,
            depth1: None,
        }
    }

    fn opts() -> Options {
        Options {
            tile_sizes: vec![8, 32, 128],
            ..Options::default()
        }
    }

    fn ops_on(children: &[(Stacks, String)], parent: &Stacks, l: usize) -> Vec<Op> {
        (children.iter())
            .filter(|(c, _)| c.polly == parent.polly)
            .filter_map(|(c, _)| {
                let s = c.ops.get(&l)?;
                (Some(s) != parent.ops.get(&l))
                    .then(|| s.last().cloned())
                    .flatten()
            })
            .collect()
    }

    #[test]
    fn the_root_offers_tiles_of_the_rectangular_nest_and_no_identity_permutation() {
        let (t, root) = (tree(), Stacks::root());
        let (kids, _) = children(&root, &t, &opts());
        let on0 = ops_on(&kids, &root, 0);
        // Sizes 8 and 32 (128 is not below the trip count 100): 2 + 4 + 8 tiles.
        assert_eq!(on0.iter().filter(|o| matches!(o, Op::Tile(_))).count(), 14);
        assert!(!on0.contains(&Op::Tile(vec![128])));
        let perms: Vec<&Op> = on0
            .iter()
            .filter(|o| matches!(o, Op::Interchange(_)))
            .collect();
        assert_eq!(perms.len(), 6);
        assert!(!on0.contains(&Op::Interchange(vec![1, 2, 3])));
        assert!(!on0.contains(&Op::Interchange(vec![1, 2])));
        // The triangular nest: only one-loop tiles at its top, no interchange.
        let on3 = ops_on(&kids, &root, 3);
        assert!(on3.iter().all(|o| o.width() == 1), "{on3:?}");
        assert_eq!(kids.iter().filter(|(_, f)| f == "polly").count(), 3);
    }

    #[test]
    fn tiles_whose_working_set_exceeds_the_cache_are_left_out_where_one_fits() {
        let (t, root) = (crate::mctree::footprint::tests::gemm(), Stacks::root());
        let tiles = |bound: Option<u64>| -> Vec<Op> {
            let o = Options {
                tile_sizes: vec![8, 32, 64],
                tile_bound: bound,
                ..Options::default()
            };
            let on0 = ops_on(&children(&root, &t, &o).0, &root, 0);
            on0.into_iter()
                .filter(|o| matches!(o, Op::Tile(_)))
                .collect()
        };
        let all = tiles(None);
        // Three 32 x 32 blocks of doubles fit; 64 x 64 x 64 does not.
        let bounded = tiles(Some(3 * 32 * 32 * 8));
        assert!(all.contains(&Op::Tile(vec![64, 64, 64])));
        assert!(!bounded.contains(&Op::Tile(vec![64, 64, 64])));
        assert!(bounded.contains(&Op::Tile(vec![32, 32, 32])));
        assert!(bounded.contains(&Op::Tile(vec![8, 64, 8])));
        // One loop tiled, the other two sweep their 100 iterations: no size fits, all stay.
        assert!(bounded.contains(&Op::Tile(vec![64])));
        assert!(
            bounded.len() < all.len(),
            "{} of {}",
            bounded.len(),
            all.len()
        );
    }

    #[test]
    fn a_loop_that_carries_a_dependence_is_not_strip_mined_but_its_band_is_tiled() {
        use crate::mctree::affine::Dir;
        use crate::mctree::deps::Dependence;
        let mut t = tree();
        // Carried by i, with `=` on j and k (a fully permutable band).
        t.deps.deps = vec![Dependence {
            on: "x".into(),
            loops: vec![0, 1, 2],
            dirs: vec![Dir::Lt, Dir::Eq, Dir::Eq],
            exact: true,
        }];
        let root = Stacks::root();
        let (kids, refused) = children(&root, &t, &opts());
        let on0 = ops_on(&kids, &root, 0);
        assert!(
            on0.iter()
                .all(|o| !matches!(o, Op::Tile(s) if s.len() == 1)),
            "{on0:?}"
        );
        assert_eq!(on0.iter().filter(|o| matches!(o, Op::Tile(_))).count(), 12);
        // Reverse and parallel for on i are refused; nothing legal is counted as refused.
        let refused_on0: Vec<Op> = (refused.iter())
            .filter_map(|c| c.ops.get(&0)?.last().cloned())
            .collect();
        assert!(
            refused_on0
                .iter()
                .all(|o| matches!(o, Op::Reverse | Op::Parallel)),
            "{refused_on0:?}"
        );
    }

    #[test]
    fn above_a_tile_only_floor_interchanges_and_parallel_fit_and_inside_it_only_unroll() {
        let t = tree();
        let mut s = Stacks::root();
        s.ops.insert(0, vec![Op::Tile(vec![32, 32])]);
        let (kids, _) = children(&s, &t, &opts());
        let on0 = ops_on(&kids, &s, 0);
        assert_eq!(on0, vec![Op::Interchange(vec![2, 1]), Op::Parallel]);
        // L1 is consumed by the tile: nothing; L2 (a leaf below the tiled pair) keeps its own.
        assert!(ops_on(&kids, &s, 1).is_empty());
        s.ops.insert(0, vec![Op::Tile(vec![32, 32, 32])]);
        let (kids, _) = children(&s, &t, &opts());
        assert_eq!(
            ops_on(&kids, &s, 2),
            vec![Op::Unroll(2), Op::Unroll(4), Op::Unroll(8)]
        );
    }

    #[test]
    fn parallel_for_never_nests_and_needs_independent_iterations() {
        let mut t = tree();
        let mut s = Stacks::root();
        s.ops.insert(0, vec![Op::Parallel]);
        let (kids, _) = children(&s, &t, &opts());
        assert!(!ops_on(&kids, &s, 1).contains(&Op::Parallel));
        assert!(!ops_on(&kids, &s, 2).contains(&Op::Parallel));
        assert!(ops_on(&kids, &s, 3).contains(&Op::Parallel));
        t.deps.deps.push(crate::mctree::deps::Dependence {
            on: "x".into(),
            loops: vec![3, 4],
            dirs: vec![
                crate::mctree::affine::Dir::Lt,
                crate::mctree::affine::Dir::Eq,
            ],
            exact: true,
        });
        let (kids, refused) = children(&Stacks::root(), &t, &opts());
        assert!(refused.len() >= 2);
        let on3 = ops_on(&kids, &Stacks::root(), 3);
        assert!(!on3.contains(&Op::Parallel) && !on3.contains(&Op::Reverse));
    }

    #[test]
    fn a_free_innermost_loop_takes_a_vector_hint_and_nothing_consumes_it_after() {
        let t = tree();
        let root = Stacks::root();
        let (kids, _) = children(&root, &t, &opts());
        let hint = |width, interleave| Op::Vectorize { width, interleave };
        let hints = |ops: Vec<Op>| -> Vec<Op> {
            ops.into_iter()
                .filter(|o| matches!(o, Op::Vectorize { .. }))
                .collect()
        };
        let on2 = hints(ops_on(&kids, &root, 2));
        assert_eq!(on2, vec![hint(4, 1), hint(4, 4), hint(8, 1), hint(8, 4)]);
        assert!(hints(ops_on(&kids, &root, 0)).is_empty(), "not innermost");
        // With a hint on k, the nest's tiles stop above it and only parallel for stacks on it.
        let mut s = Stacks::root();
        s.ops.insert(2, vec![hint(8, 4)]);
        let (kids, _) = children(&s, &t, &opts());
        let widest = (ops_on(&kids, &s, 0).iter()).map(Op::width).max();
        assert_eq!(widest, Some(2));
        assert_eq!(ops_on(&kids, &s, 2), vec![Op::Parallel]);
        // A leaf a tile consumes gets no hint (clang would drop it).
        s.ops.clear();
        s.ops.insert(0, vec![Op::Tile(vec![32, 32, 32])]);
        let (kids, _) = children(&s, &t, &opts());
        assert!(hints(ops_on(&kids, &s, 2)).is_empty());
    }

    #[test]
    fn text_round_trips_and_the_depth_limit_holds() {
        let t = tree();
        let mut s = Stacks::root();
        s.ops.insert(
            0,
            vec![
                Op::Tile(vec![8, 128]),
                Op::Interchange(vec![2, 1]),
                Op::Parallel,
            ],
        );
        s.ops.insert(4, vec![Op::Unroll(4)]);
        let text = s.text(&t);
        assert_eq!(
            text,
            "L0: parallel for private(i,j,k); L0: interchange permutation(2,1); L0: tile sizes(8,128); L4: unroll partial(4)"
        );
        assert_eq!(Stacks::parse(&text, Polly::Off, &t), Some(s.clone()));
        assert_eq!(Stacks::parse("L9: reverse", Polly::Off, &t), None);
        assert_eq!(s.depth(), 4);
        assert!(children(&s, &t, &opts()).0.is_empty());
        let hinted = Op::Vectorize {
            width: 16,
            interleave: 4,
        };
        s.ops.insert(2, vec![hinted.clone(), Op::Parallel]);
        let text = s.text(&t);
        assert!(text.ends_with(
            "L2: parallel for private(k); L2: #pragma clang loop vectorize_width(16) interleave_count(4); L4: unroll partial(4)"
        ), "{text}");
        assert_eq!(Stacks::parse(&text, Polly::Off, &t), Some(s));
        assert_eq!(Op::parse(&hinted.text()), Some(hinted));
    }
}
