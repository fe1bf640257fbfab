//! `moldtune mctree FILE.c`: tuning without a mold — the second front end onto the run's
//! evaluation. [`ast`] discovers the kernel's loops from clang-22's JSON AST into a
//! [`looptree`]; [`transform`] says which directive stacks clang-22 accepts; [`tree`] holds
//! the explored nodes and [`search`] chooses the next (greedy, mcts, rf); [`setup`] turns
//! the file and settings into the [`Problem`] that the run's driver evaluates, logs and
//! resumes like any other; [`emit`] writes the best node back as a mold for `moldtune run`.

pub mod affine;
pub mod ast;
pub mod deps;
pub mod emit;
pub mod header;
pub mod legality;
pub mod looptree;
pub mod memory;
pub mod objects;
pub mod polly;
pub mod search;
pub mod setup;
pub mod transform;
pub mod tree;
pub mod unit;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::evaluate::build::build;
use crate::evaluate::evaluator::reference_output;
use crate::evaluate::outcome::Step;
use crate::evaluate::time::parse_kernel_time;
use crate::evaluate::variant::{describe_exit, Variant};
use crate::problem::space::{Config, OpenValues};
use crate::problem::{limits, mold, CheckMode, MetricKind, Problem, Stream};
use crate::run::driver::{self, Launch, Summary};
use crate::run::log;
use crate::run::meta;
use crate::run::meta::RunMeta;
use crate::run::settings::{self, flag, Budget, Resolved, Shared};
use crate::search::{Acquisition, Design, Learner};
use looptree::LoopTree;
use search::{Kind, TreeSearch};
use setup::{ConfigFile, Recorded};
use tree::Tree;

/// Everything `moldtune mctree` can be told.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MctreeOptions {
    /// The C file holding the kernel. Optional with `--resume DIR`.
    pub file: Option<PathBuf>,
    /// The kernel function [default: the one `kernel_*` function, or the one holding
    /// `#pragma scop`].
    #[arg(long)]
    pub kernel: Option<String>,
    /// Tree search [default: rf, the best of the three in results/mctree].
    #[arg(long, value_parser = ["greedy", "mcts", "rf"])]
    pub strategy: Option<String>,
    /// At most this many transformations per node [default: 4].
    #[arg(long)]
    pub depth: Option<usize>,
    /// Tile sizes to try [default: 4,8,16,20,32,50,64,80,96,100,128,256,2048].
    #[arg(long, value_delimiter = ',')]
    pub tile_sizes: Option<Vec<u32>>,
    /// Print the kernel's loop tree and stop.
    #[arg(long)]
    pub list: bool,
    /// After tuning, write the best node as a mold and problem file into DIR for `moldtune run`.
    #[arg(long, value_name = "DIR")]
    pub emit_mold: Option<PathBuf>,
    /// A YAML file with the same settings (and the compiler, flags, check and environment).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also propose transformations the dependence analysis does not prove legal; the
    /// output check is then their only guard (recorded as `legality: output-checked`).
    #[arg(long)]
    pub trust_output_check: bool,
    #[command(flatten)]
    pub shared: Shared,
    /// Compiler and link arguments and extra sources (e.g. `-- -Iutilities utilities/polybench.c`).
    #[arg(last = true)]
    pub args: Vec<String>,
}

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
    let tree = discover(&r, &text)?;
    if o.list {
        return Ok(Done::Listed(Box::new(tree)));
    }
    if !tree.touchable() {
        return Err(untouchable(&r, &tree));
    }
    tune(o, r, text, tree, prev.as_ref())
}

/// The settings of an mctree run directory; its C file is run.json's `problem` (written
/// relative to the directory, so a moved or cloned results tree still finds it).
fn recorded_of(meta: &RunMeta) -> Option<Recorded> {
    let mut r: Recorded = serde_json::from_value(meta.mctree.clone()?).ok()?;
    r.file = meta.problem.clone();
    Some(r)
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

/// The C file's text (bytes that are not UTF-8 only in comments: [`mold::c_text`]).
fn read_source(file: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(file).map_err(|e| {
        Error::usage(
            format!("cannot read `{}`: {e}", file.display()),
            Some("give the C file that holds the kernel: `moldtune mctree kernel.c`"),
        )
    })?;
    mold::c_text(file, bytes)
}

/// The kernel's loop tree, from the AST of the file parsed with the user's flags. On a thread
/// of its own with a large stack: the AST is as deep as the code (clang compiles a 60-deep
/// nest or a 500-term expression), and reading it, walking it and dropping it all recurse.
fn discover(r: &Recorded, text: &str) -> Result<LoopTree, Error> {
    const STACK: usize = 1 << 30; // reserved, not committed: only the pages touched count
    std::thread::scope(|s| {
        let t = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, || {
                let wanted = Some(r.kernel.as_str()).filter(|k| !k.is_empty());
                let (flags, timeout) = (r.parse_flags(), r.compile_timeout());
                let unit = unit::read(&r.compiler, &r.file, &flags, timeout, text, wanted)?;
                ast::kernel_tree(&unit, text, &r.file, wanted, &r.sources)
            });
        let t = t.map_err(|e| Error::Internal(format!("cannot start discovery's thread: {e}")))?;
        (t.join()).unwrap_or_else(|_| Err(Error::Internal("discovery's thread panicked".into())))
    })
}

fn load_config(path: Option<&Path>) -> Result<ConfigFile, Error> {
    let Some(p) = path else {
        return Ok(ConfigFile::default());
    };
    let text = std::fs::read_to_string(p).map_err(|e| Error::ConfigFile {
        file: p.to_path_buf(),
        message: format!("cannot read the mctree config: {e}"),
        hint: None,
    })?;
    crate::problem::from_yaml(p, &text)
}

/// The settings: flags, else the config file, else run.json (resuming), else defaults.
fn resolve(o: &MctreeOptions, c: &ConfigFile, prev: Option<Recorded>) -> Result<Recorded, Error> {
    if let Some(prev) = prev {
        return Ok(prev);
    }
    let Some(file) = &o.file else {
        return Err(Error::usage(
            "no C file given",
            Some("`moldtune mctree kernel.c`"),
        ));
    };
    let file = std::fs::canonicalize(file)
        .map_err(|e| Error::usage(format!("cannot find `{}`: {e}", file.display()), None))?;
    let mut args = c.args.clone().unwrap_or_default();
    args.extend(o.args.iter().cloned());
    let (args, sources) = setup::split_args(&args)?;
    let text = read_source(&file)?;
    let timeouts = c.timeouts.as_ref();
    let defaults = transform::Options::default();
    let mut env = vec![("OMP_NUM_THREADS".to_string(), setup::threads())];
    env.extend(c.env.clone().unwrap_or_default());
    let mut r = Recorded {
        file,
        kernel: o.kernel.clone().or(c.kernel.clone()).unwrap_or_default(),
        hosts: vec![],
        strategy: (o.strategy.clone().or(c.strategy.clone())).unwrap_or("rf".into()),
        depth: o.depth.or(c.depth).unwrap_or(defaults.depth),
        tile_sizes: (o.tile_sizes.clone().or(c.tile_sizes.clone())).unwrap_or(defaults.tile_sizes),
        unroll: c.unroll.clone().unwrap_or(defaults.unroll),
        compiler: c.compiler.clone().unwrap_or("clang-22".into()),
        flags: (c.flags.clone()).unwrap_or_else(|| default_flags(c.metric)),
        args,
        sources,
        metric: c.metric.unwrap_or(MetricKind::KernelTime),
        repeats: o.shared.repeats.or(c.repeats).unwrap_or(3),
        compile_timeout_s: (o
            .shared
            .compile_timeout
            .or(timeouts.and_then(|t| t.compile_s)))
        .unwrap_or(120.0),
        run_timeout_s: (o.shared.run_timeout.or(timeouts.and_then(|t| t.run_s))).unwrap_or(0.0),
        env,
        check_mode: CheckMode::Output,
        check_stream: Stream::Stderr,
        check_env: vec![],
        check_build_flags: vec![],
        rtol: 1e-6,
        trust_output_check: o.trust_output_check || c.trust_output_check.unwrap_or(false),
        records_legality: true,
    };
    check_settings(&mut r, c.check.as_ref(), &text);
    validate(&r)?;
    Ok(r)
}

/// `-O3 -march=native`; for a metric counted under valgrind, which cannot decode AVX-512,
/// `-march=x86-64-v3` (AVX2) instead.
fn default_flags(metric: Option<MetricKind>) -> Vec<String> {
    let simulated = metric.is_some_and(MetricKind::is_simulated);
    let arch = if simulated { "x86-64-v3" } else { "native" };
    vec!["-O3".into(), format!("-march={arch}")]
}

/// The output check: stderr with `PB_DUMP=1` (moldtune's harness) against the untransformed
/// program, on random input where the program offers it (`PB_INPUT=random`: PolyBench's own
/// input cannot tell floyd-warshall's loop orders apart); for a file in PolyBench's layout
/// (compile-time array dump) a check build with `-DPOLYBENCH_DUMP_ARRAYS`; the config file's
/// `check:` on top.
fn check_settings(r: &mut Recorded, check: Option<&setup::ConfigCheck>, text: &str) {
    let pb_dump = text.contains("polybench_prevent_dce") || text.contains("POLYBENCH_DUMP_ARRAYS");
    r.check_env = vec![
        ("PB_DUMP".to_string(), "1".to_string()),
        ("PB_INPUT".into(), "random".into()),
        ("OMP_NUM_THREADS".into(), setup::threads()),
    ];
    r.check_env
        .extend(check.and_then(|k| k.env.clone()).unwrap_or_default());
    r.check_mode = check.and_then(|k| k.mode).unwrap_or(CheckMode::Output);
    r.check_stream = check.and_then(|k| k.stream).unwrap_or(Stream::Stderr);
    r.check_build_flags = match check.and_then(|k| k.build_flags.clone()) {
        Some(flags) => flags,
        None if pb_dump => vec!["-DPOLYBENCH_DUMP_ARRAYS".into()],
        None => vec![],
    };
    r.rtol = check.and_then(|k| k.rtol).unwrap_or(1e-6);
}

fn validate(r: &Recorded) -> Result<(), Error> {
    if Kind::parse(&r.strategy).is_none() {
        return Err(Error::usage(
            format!("unknown strategy `{}`", r.strategy),
            Some("use greedy, mcts or rf"),
        ));
    }
    flag("--depth", limits::at_least(r.depth, 1))?;
    flag("--repeats", limits::repeats(r.repeats as u64))?;
    flag("--compile-timeout", limits::timeout(r.compile_timeout_s))?;
    if r.run_timeout_s != 0.0 {
        flag("--run-timeout", limits::timeout(r.run_timeout_s))?;
    }
    if r.tile_sizes.is_empty() || r.tile_sizes.iter().any(|&s| s < 2) {
        return Err(Error::usage(
            format!(
                "`--tile-sizes` must list sizes of at least 2, got {:?}",
                r.tile_sizes
            ),
            Some("e.g. `--tile-sizes 8,32,128`"),
        ));
    }
    flag("check rtol", limits::non_negative(r.rtol))?;
    Ok(())
}

/// Builds and runs the untransformed program once (before a run directory exists): a file
/// that does not build or run, or whose check run prints nothing to compare, is a usage
/// error; decides the metric (the kernel time the program prints, else wall time) and the
/// run timeout (30× this run, 5 s to 10 min).
fn preflight(r: &mut Recorded, problem: &mut Problem) -> Result<(), Error> {
    let scratch = crate::scratch::Scratch::new("mctree")
        .map_err(|e| Error::io("cannot create a scratch directory", e))?;
    let dir = scratch.path().to_path_buf();
    let config = setup::root_config(problem);
    problem.run_timeout_s = if r.run_timeout_s > 0.0 {
        r.run_timeout_s
    } else {
        600.0
    };
    let result = probe(problem, &config, &dir).and_then(|timed| {
        if problem.check.mode == CheckMode::Output {
            reference_output(problem, &dir.join("reference"), &dir).map_err(|e| match e {
                Error::Reference { message: why, .. } => Error::usage(
                    format!("the output check cannot work on the untransformed program: {why}"),
                    Some(
                        "the check compares what the program prints on stderr with `PB_DUMP=1` \
                          (PolyBench: when built with -DPOLYBENCH_DUMP_ARRAYS); set `check: \
                          {stream, env, build_flags}` in `--config`, or `check: {mode: none}`",
                    ),
                ),
                other => other,
            })?;
        }
        Ok(timed)
    });
    drop(scratch);
    let (wall, kernel) = result?;
    if r.metric == MetricKind::KernelTime && kernel.is_none() {
        r.metric = MetricKind::WallTime;
    }
    if r.run_timeout_s == 0.0 {
        r.run_timeout_s = (30.0 * wall).clamp(5.0, 600.0);
    }
    problem.metric.kind = r.metric;
    problem.run_timeout_s = r.run_timeout_s;
    Ok(())
}

/// One build and run: (wall seconds, the kernel time printed, if any).
fn probe(problem: &Problem, config: &Config, dir: &Path) -> Result<(f64, Option<f64>), Error> {
    let v = Variant::render(problem, config, dir)
        .map_err(|u| Error::usage(format!("the untransformed program: {}", u.cause), None))?;
    match build(&v, &v.compile) {
        Step::Ok(_) => {}
        Step::Fail(m) => {
            return Err(Error::usage(
                format!("the untransformed program does not build ({}):\n{}", m.status, m.cause.unwrap_or_default()),
                Some("pass what it needs after `--`: include paths, macros, extra sources such as polybench.c"),
            ))
        }
        Step::Stop(s) => return Err(s.into_error(&v.dir)),
    }
    let t0 = std::time::Instant::now();
    let ran = v.run_timed("probe", problem.run_timeout_s);
    let wall = t0.elapsed().as_secs_f64();
    if !ran.finished.success() {
        return Err(Error::usage(
            format!(
                "the untransformed program fails: {}",
                describe_exit(&ran.finished, &ran.stderr, "it")
            ),
            None,
        ));
    }
    let stdout = String::from_utf8_lossy(&ran.stdout_tail()).to_string();
    Ok((wall, parse_kernel_time(&stdout)))
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
    if prev.is_none() && !o.shared.mock {
        if !o.shared.quiet {
            let run = match r.run_timeout_s > 0.0 {
                true => format!("{} s", r.run_timeout_s),
                false => "600 s; then 30× its time".to_string(),
            };
            eprintln!(
                "mctree: building and running the untransformed `{}` (compile timeout {} s, run timeout {run}) ...",
                r.file.display(),
                r.compile_timeout_s
            );
        }
        preflight(&mut r, &mut problem)?;
    }
    let kind = Kind::parse(&r.strategy).unwrap_or(Kind::Rf);
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
        objects::link_compiled(&r, &mut problem, &out.join("work").join("objects"));
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
    let summary = result?;
    let emitted = match (&o.emit_mold, &summary.best) {
        (Some(dir), Some((eval_id, _, _))) => {
            let n = (search.tree.nodes.iter()).position(|n| n.eval_id == Some(*eval_id));
            let best = n.map_or_else(transform::Stacks::root, |n| {
                search.tree.nodes[n].stacks.clone()
            });
            Some(emit::emit(dir, &problem, &r, &search.tree.loops, &best)?)
        }
        _ => None,
    };
    let legality = LegalityCounts::of(&search.tree);
    Ok(Done::Tuned(Box::new(Tuned {
        summary,
        emitted,
        legality,
    })))
}

/// The Polly knobs worth a build, saying which are not and why.
fn polly_knobs(
    r: &Recorded,
    loops: &LoopTree,
    problem: &Problem,
    out: &Path,
    quiet: bool,
) -> Vec<transform::Polly> {
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
            transform::Polly::Off => "the plain build's".to_string(),
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

/// The search settings of an mctree run (budget in valid evaluations).
fn resolved(o: &MctreeOptions, prev: Option<&RunMeta>, kind: Kind) -> Result<Resolved, Error> {
    let c = settings::common(&o.shared, prev, 60, 0)?;
    Ok(Resolved {
        learner: Learner::Random,
        max_evals: c.max_evals,
        seed: c.seed,
        initial: 0,
        kappa: 1.96,
        pool: 0,
        mock: c.mock,
        acquisition: Acquisition::default(),
        design: Design::default(),
        feasibility: false,
        interleave: 0,
        verify: c.verify,
        jobs: c.jobs,
        slurm: None,
        budget: Budget::Valid,
        strategy: Some(kind.as_str().into()),
    })
}

/// What discovery found, kept in the run directory (`mctree.json`) so that reading the run
/// later (`best`, `report`) needs neither clang nor the C file as it was.
#[derive(serde::Serialize, serde::Deserialize)]
struct Discovered {
    /// The C file's text as tuned.
    source: String,
    loops: LoopTree,
}

const DISCOVERED: &str = "mctree.json";

/// Writes `mctree.json` into a run directory that holds no other run's results.
fn keep_discovered(out: &Path, resume: bool, text: &str, loops: &LoopTree) -> Result<(), Error> {
    if !resume && log::has_rows(out) {
        return Ok(()); // the driver refuses this directory; its file is not ours to replace
    }
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io(format!("cannot create `{}`", out.display()), e))?;
    let d = Discovered {
        source: text.to_string(),
        loops: loops.clone(),
    };
    let json = serde_json::to_vec(&d).map_err(|e| Error::Internal(e.to_string()))?;
    meta::write_atomic(&out.join(DISCOVERED), &json)
}

/// The problem of an mctree run directory: from its `mctree.json` and run.json, else (a run
/// recorded before it was kept) rebuilt by discovery on the C file.
pub fn problem_of_run(dir: &Path, meta: &RunMeta) -> Option<Result<Problem, Error>> {
    let r = recorded_of(meta)?;
    Some((|| {
        let labels = OpenValues::default();
        if let Ok(bytes) = std::fs::read(dir.join(DISCOVERED)) {
            let d: Discovered = serde_json::from_slice(&bytes).map_err(|e| {
                Error::usage(
                    format!("`{}` does not parse: {e}", dir.join(DISCOVERED).display()),
                    None,
                )
            })?;
            return setup::problem(&r, &d.source, &d.loops, &labels);
        }
        let text = read_source(&r.file)?;
        let tree = discover(&r, &text)?;
        setup::problem(&r, &text, &tree, &labels)
    })())
}
