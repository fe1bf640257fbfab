//! `moldtune mctree FILE.c`: tuning without a mold — the second front end onto the run's
//! evaluation. [`discover`] finds the kernel's loops and their dependences (clang-22's JSON
//! AST, then Polly as a second prover) into a [`looptree`]; [`transform`] says which
//! directive stacks clang-22 accepts; [`tree`] holds
//! the explored nodes and [`search`] chooses the next (greedy, mcts, rf); [`setup`] turns
//! the file and settings into the [`Problem`] that the run's driver evaluates, logs and
//! resumes like any other; [`emit`] writes the best node back as a mold for `moldtune run`.

pub mod accesses;
pub mod affine;
pub mod ast;
pub mod calls;
pub mod carried;
pub mod constants;
mod ctype;
mod cutter;
pub mod deps;
pub mod directive;
pub mod discover;
pub mod emit;
pub mod extents;
pub mod footprint;
pub mod header;
pub mod legality;
pub mod looptree;
pub mod memory;
pub mod model;
pub mod node;
pub mod objects;
pub mod options;
pub mod polly;
pub mod ranges;
pub mod rotation;
pub mod search;
pub mod second;
pub mod setup;
pub mod transform;
pub mod tree;
pub mod trips;
pub mod unit;
pub mod unmodelled;

mod kept;
mod preflight;
mod resolve;
use discover::{kernel_loops, read_source};
use kept::keep_discovered;
pub use kept::problem_of_run;
pub use options::MctreeOptions;
use preflight::preflight;
use resolve::{load_config, recorded_of, resolve, resolved};

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::problem::param::OpenValues;
use crate::problem::Problem;
use crate::run::driver::{self, Launch, Summary};
use crate::run::log;
use crate::run::meta;
use crate::run::meta::RunMeta;
use crate::run::settings;
use looptree::LoopTree;
use search::{TreeSearch, Walk};
use setup::Recorded;
use tree::Tree;

/// What a finished `mctree` command did.
pub enum Done {
    Listed(Box<LoopTree>),
    Tuned(Box<Tuned>),
}

/// A finished tuning: the run's summary (its `evaluations` are the experiments, its `spent`
/// the valid evaluations) and the emitted problem file.
pub struct Tuned {
    pub summary: Summary,
    pub emitted: Option<PathBuf>,
    pub legality: LegalityCounts,
    /// The output check's inputs: how many it ran each candidate on, of how many given (one
    /// on which the untransformed program prints what it prints on the first is dropped).
    pub check_inputs: (usize, usize),
}

/// How the evaluated nodes are known to be correct, and how many candidates were left out.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct LegalityCounts {
    /// Evaluated nodes whose every directive the dependence analysis proved legal.
    pub proved: usize,
    /// Evaluated nodes guarded by the output check alone (`--trust-output-check`).
    pub output_checked: usize,
    /// Candidate nodes not proposed: their legality was not proved.
    pub refused: usize,
}

impl LegalityCounts {
    fn of(tree: &Tree) -> LegalityCounts {
        let evaluated = || tree.nodes.iter().filter(|n| n.eval_id.is_some());
        let proved = evaluated()
            .filter(|n| n.legality == legality::Legality::Proved)
            .count();
        LegalityCounts {
            proved,
            output_checked: evaluated().count() - proved,
            refused: tree.refused.len(),
        }
    }
}

/// Runs `moldtune mctree`: lists the loop tree (`--list`), or tunes it.
pub fn mctree(o: MctreeOptions) -> Result<Done, Error> {
    // From the start: discovery runs the compiler, and Ctrl-C must end it cleanly.
    crate::process::take_charge();
    let prev = settings::previous_run(&o.shared)?;
    let recorded = prev.as_ref().and_then(recorded_of);
    if prev.is_some() && recorded.is_none() {
        return Err(Error::usage(
            "this run directory was not written by `moldtune mctree`",
            Some("resume it with `moldtune run --resume DIR`"),
        ));
    }
    let file_cfg = load_config(o.config.as_deref())?;
    let mut o = o;
    o.shared.max_evals = o.shared.max_evals.or(file_cfg.max_evals);
    o.shared.seed = o.shared.seed.or(file_cfg.seed);
    let r = resolve(&o, &file_cfg, recorded)?;
    let text = read_source(&r.file)?;
    let mut tree = kernel_loops(&r, &text)?;
    if o.list {
        tree.depth1 = Some(one_directive(&tree, &r));
        return Ok(Done::Listed(Box::new(tree)));
    }
    if !tree.touchable() {
        return Err(untouchable(&r, &tree));
    }
    tune(o, r, text, tree, prev.as_ref())
}

/// The one-directive stacks of `tree` that are proved, and those that are not.
fn one_directive(tree: &LoopTree, r: &Recorded) -> looptree::StackCounts {
    let strict = transform::Options {
        trust_output_check: false,
        ..r.options()
    };
    let (proved, refused) = transform::children(&directive::Stacks::root(), tree, &strict);
    looptree::StackCounts {
        proved: proved.iter().filter(|(_, f)| f != "polly").count(),
        unproved: refused.len(),
    }
}

fn untouchable(r: &Recorded, tree: &LoopTree) -> Error {
    let why = if tree.loops.is_empty() {
        "has no loops".to_string()
    } else {
        let reasons: Vec<String> = (tree.loops.iter())
            .filter_map(|l| {
                Some(format!(
                    "L{} ({}:{}): {}",
                    l.id,
                    l.line,
                    l.col,
                    l.untouchable.as_ref()?
                ))
            })
            .collect();
        format!(
            "has no loop a transformation can touch:\n  {}",
            reasons.join("\n  ")
        )
    };
    Error::usage(
        format!(
            "the kernel `{}` of `{}` {why}",
            tree.kernel,
            r.file.display()
        ),
        Some("`moldtune mctree FILE --list` shows the loops found; name another with `--kernel`"),
    )
}

/// Tunes the kernel: the run's driver with the tree search as its strategy.
fn tune(
    o: MctreeOptions,
    mut r: Recorded,
    text: String,
    loops: LoopTree,
    prev: Option<&RunMeta>,
) -> Result<Done, Error> {
    r.kernel = loops.kernel.clone();
    r.hosts = loops.callers.clone();
    let labels = OpenValues::default();
    let mut problem = setup::problem(&r, &text, &loops, &labels)?;
    emit::check_targets(o.emit_mold.as_deref().filter(|_| !o.force), &r)?;
    if prev.is_none() && !o.shared.mock {
        preflight(&mut r, &mut problem, o.shared.quiet)?;
    }
    let kind = Walk::parse(&r.strategy).unwrap_or(Walk::Rf);
    let s = resolved(&o, prev, kind)?;
    if !o.shared.quiet {
        announce(&r, &loops);
    }
    let mut opts = o.shared.clone();
    let out = (opts.run_dir()).unwrap_or_else(|| driver::default_out(&problem));
    opts.out = Some(out.clone());
    keep_discovered(&out, opts.resuming(), &text, &loops)?;
    let mut options = r.options();
    if !o.shared.mock && (opts.resuming() || !log::has_rows(&out)) {
        objects::link_compiled(&r, &mut problem, &out.join(kept::OBJECTS));
    }
    if !o.shared.mock {
        options.polly = polly_knobs(&r, &loops, &problem, &out, o.shared.quiet);
    }
    let mut search = TreeSearch::new(Tree::new(loops, options), kind, s.seed, labels);
    search.records_legality = r.records_legality;
    let launch = Launch {
        problem: &problem,
        s,
        opts: &opts,
        prev,
        mctree: serde_json::to_value(&r).ok(),
        warm_start: None,
    };
    let result = driver::drive(launch, &mut search);
    if out.is_dir() {
        let _ = meta::write_atomic(&out.join("tree.dot"), search.tree.dot().as_bytes());
    }
    let summary = result.map_err(resumed_by_mctree)?;
    let emitted = match (&o.emit_mold, &summary.best) {
        (Some(dir), Some((eval_id, _, _))) => {
            Some(emit_best(dir, &problem, &r, &search.tree, *eval_id)?)
        }
        _ => None,
    };
    Ok(Done::Tuned(Box::new(Tuned {
        summary,
        emitted,
        legality: LegalityCounts::of(&search.tree),
        check_inputs: check_inputs(&problem, &out),
    })))
}

/// How many inputs the output check ran on (the references the run directory keeps), of
/// how many given.
fn check_inputs(problem: &Problem, out: &Path) -> (usize, usize) {
    let given = problem.check.variations.len() + 1;
    let saved = |k: &usize| crate::evaluate::evaluator::saved_reference(out, *k).is_file();
    ((0..given).filter(saved).count(), given)
}

/// An interruption's error names `moldtune mctree --resume` (not `run`'s, which reads a
/// problem file).
fn resumed_by_mctree(e: Error) -> Error {
    match e {
        Error::Interrupted(dir, _) => Error::Interrupted(dir, "mctree"),
        e => e,
    }
}

/// Writes evaluation `eval_id`'s node as a mold and problem file into `dir` (`--emit-mold`).
fn emit_best(
    dir: &Path,
    problem: &Problem,
    r: &Recorded,
    tree: &Tree,
    eval_id: usize,
) -> Result<PathBuf, Error> {
    let n = (tree.nodes.iter()).position(|n| n.eval_id == Some(eval_id));
    let best = n.map_or_else(directive::Stacks::root, |n| tree.nodes[n].stacks.clone());
    emit::emit(dir, problem, r, &tree.loops, &best)
}

/// The Polly knobs worth a build, saying which are not and why.
fn polly_knobs(
    r: &Recorded,
    loops: &LoopTree,
    problem: &Problem,
    out: &Path,
    quiet: bool,
) -> Vec<directive::Polly> {
    let id = problem.code_identity.as_ref();
    let k = polly::knobs(r, loops, id, &out.join("work").join("polly-knobs"));
    if quiet {
        return k.kept;
    }
    if k.no_scop {
        eprintln!(
            "mctree: Polly finds no SCoP in `{}` (-Rpass-analysis=polly-scops): only `-mllvm -polly` is a candidate (its other knobs schedule SCoPs)",
            loops.kernel
        );
    }
    for (knob, same) in &k.same {
        let other = match same {
            directive::Polly::Off => "the plain build's".to_string(),
            s => format!("`{}`'s", s.flags()),
        };
        eprintln!(
            "mctree: `{}` is not tried: the kernel's machine code it builds is {other} (the file compiled alone, before the search)",
            knob.flags()
        );
    }
    k.kept
}

/// Says on stderr what mctree found and where Polly acts.
fn announce(r: &Recorded, loops: &LoopTree) {
    let touchable = loops
        .loops
        .iter()
        .filter(|l| l.untouchable.is_none())
        .count();
    eprintln!(
        "mctree: {} ({}:{}): {} loops, {touchable} transformable; metric {}, run timeout {:.2} s",
        loops.kernel,
        r.file.display(),
        loops.line,
        loops.loops.len(),
        serde_json::to_value(r.metric)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        r.run_timeout_s
    );
    if !r.hosts.is_empty() {
        eprintln!(
            "mctree: `{}` is called from {}, where clang may inline it: Polly acts on \
             `-polly-only-func={}` and a program's identity is the machine code of all of them",
            r.kernel,
            r.hosts
                .iter()
                .map(|h| format!("`{h}`"))
                .collect::<Vec<_>>()
                .join(", "),
            r.polly_scope()
        );
    }
}
