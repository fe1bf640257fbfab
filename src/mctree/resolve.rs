//! What `moldtune mctree` is told, resolved into the [`Recorded`] settings of a run: the
//! flags, else the `--config` file, else what run.json recorded, else the defaults; validated
//! before anything is built.

use std::path::Path;

use crate::error::Error;
use crate::host::Host;
use crate::mctree::discover::read_source;
use crate::mctree::options::MctreeOptions;
use crate::mctree::search::Walk;
use crate::mctree::setup::{self, ConfigFile, Recorded};
use crate::mctree::transform;
use crate::problem::{limits, CheckMode, MetricKind, Stream};
use crate::run::executor_kind::ExecutorKind;
use crate::run::limits::flag;
use crate::run::meta::RunMeta;
use crate::run::settings::{self, Budget, Resolved};
use crate::search::{Acquisition, Design, Learner};

/// The settings of an mctree run directory; its C file is run.json's `problem` (written
/// relative to the directory, so a moved or cloned results tree still finds it).
pub(super) fn recorded_of(meta: &RunMeta) -> Option<Recorded> {
    let mut r: Recorded = serde_json::from_value(meta.mctree.clone()?).ok()?;
    r.file = meta.problem.clone();
    Some(r)
}

pub(super) fn load_config(path: Option<&Path>) -> Result<ConfigFile, Error> {
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
pub(super) fn resolve(
    o: &MctreeOptions,
    c: &ConfigFile,
    prev: Option<Recorded>,
) -> Result<Recorded, Error> {
    if let Some(prev) = prev {
        return Ok(prev);
    }
    let file = canonical_file(o)?;
    let mut args = c.args.clone().unwrap_or_default();
    args.extend(o.args.iter().cloned());
    let (args, sources) = setup::split_args(&args)?;
    let text = read_source(&file)?;
    let timeouts = c.timeouts.as_ref();
    let defaults = transform::Options::default();
    let host = Host::read();
    let mut env = vec![("OMP_NUM_THREADS".to_string(), setup::threads())];
    env.extend(c.env.clone().unwrap_or_default());
    let mut r = Recorded {
        file,
        kernel: o.kernel.clone().or(c.kernel.clone()).unwrap_or_default(),
        hosts: vec![],
        strategy: (o.strategy.clone().or(c.strategy.clone())).unwrap_or("rf".into()),
        depth: o.depth.or(c.depth).unwrap_or(defaults.depth),
        tile_sizes: (o.tile_sizes.clone().or(c.tile_sizes.clone())).unwrap_or(defaults.tile_sizes),
        tile_bound: tile_bound(o, c, &host),
        unroll: c.unroll.clone().unwrap_or(defaults.unroll),
        vector_widths: (c.vector_widths.clone()).unwrap_or_else(|| vector_widths(&host)),
        interleave: c.interleave.clone().unwrap_or(defaults.interleave),
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
        check_variations: vec![],
        check_build_flags: vec![],
        rtol: 1e-6,
        trust_output_check: o.trust_output_check || c.trust_output_check.unwrap_or(false),
        records_legality: true,
    };
    check_settings(&mut r, c.check.as_ref(), &text, &o.check_env)?;
    validate(&r)?;
    Ok(r)
}

/// `-O3 -march=native`; for a metric counted under valgrind, which cannot decode AVX-512,
/// `-march=x86-64-v3` (AVX2) instead.
pub(super) fn default_flags(metric: Option<MetricKind>) -> Vec<String> {
    let simulated = metric.is_some_and(MetricKind::is_simulated);
    let arch = if simulated { "x86-64-v3" } else { "native" };
    vec!["-O3".into(), format!("-march={arch}")]
}

/// The output check: stderr with `PB_DUMP=1` (moldtune's harness) against the untransformed
/// program, on random input where the program offers it (`PB_INPUT=random`: PolyBench's own
/// input cannot tell floyd-warshall's loop orders apart); for a file in PolyBench's layout
/// (compile-time array dump) a check build with `-DPOLYBENCH_DUMP_ARRAYS`; the config file's
/// `check:` on top; the check's inputs: `--check-env`, else `check.variations`, else two more
/// seeds of the random input.
pub(super) fn check_settings(
    r: &mut Recorded,
    check: Option<&setup::ConfigCheck>,
    text: &str,
    check_env: &[String],
) -> Result<(), Error> {
    let pb_dump = text.contains("polybench_prevent_dce") || text.contains("POLYBENCH_DUMP_ARRAYS");
    r.check_env = vec![
        ("PB_DUMP".to_string(), "1".to_string()),
        ("PB_INPUT".into(), "random".into()),
        ("OMP_NUM_THREADS".into(), setup::threads()),
    ];
    r.check_env
        .extend(check.and_then(|k| k.env.clone()).unwrap_or_default());
    r.check_variations = match check.and_then(|k| k.variations.clone()) {
        _ if !check_env.is_empty() => check_inputs(check_env)?,
        Some(v) => v.into_iter().map(|e| e.into_iter().collect()).collect(),
        None => ["2", "3"]
            .map(|seed| vec![("PB_SEED".to_string(), seed.to_string())])
            .to_vec(),
    };
    r.check_mode = check.and_then(|k| k.mode).unwrap_or(CheckMode::Output);
    r.check_stream = check.and_then(|k| k.stream).unwrap_or(Stream::Stderr);
    r.check_build_flags = match check.and_then(|k| k.build_flags.clone()) {
        Some(flags) => flags,
        None if pb_dump => vec!["-DPOLYBENCH_DUMP_ARRAYS".into()],
        None => vec![],
    };
    r.rtol = check.and_then(|k| k.rtol).unwrap_or(1e-6);
    Ok(())
}

/// The inputs `--check-env` names: each occurrence one, `KEY=VALUE` pairs joined by `,`.
fn check_inputs(given: &[String]) -> Result<Vec<Vec<(String, String)>>, Error> {
    let pair = |p: &str| {
        match p.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(Error::usage(
            format!("`--check-env {p}` is not `KEY=VALUE`"),
            Some("name each input of the output check as `--check-env PB_SEED=2` (several variables: `--check-env PB_SEED=2,N=100`)"),
        )),
    }
    };
    (given.iter())
        .map(|g| g.split(',').map(pair).collect())
        .collect()
}

pub(super) fn validate(r: &Recorded) -> Result<(), Error> {
    if Walk::parse(&r.strategy).is_none() {
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

/// The search settings of an mctree run (budget in valid evaluations).
pub(super) fn resolved(
    o: &MctreeOptions,
    prev: Option<&RunMeta>,
    kind: Walk,
) -> Result<Resolved, Error> {
    let c = settings::common(&o.shared, prev, 60, 0, (None, None))?;
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
        executor: ExecutorKind::of(1, settings::resolve_executor(&o.executor, prev, None)?),
        budget: Budget::Valid,
        strategy: Some(kind.as_str().into()),
    })
}

/// The C file, as an absolute path.
fn canonical_file(o: &MctreeOptions) -> Result<std::path::PathBuf, Error> {
    let Some(file) = &o.file else {
        let hint = Some("`moldtune mctree kernel.c`");
        return Err(Error::usage("no C file given", hint));
    };
    std::fs::canonicalize(file)
        .map_err(|e| Error::usage(format!("cannot find `{}`: {e}", file.display()), None))
}

/// The cache a tile's working set must fit: this machine's L2 when the tile sizes are the
/// defaults (sizes the user gives are all tried).
fn tile_bound(o: &MctreeOptions, c: &ConfigFile, host: &Host) -> Option<u64> {
    let defaults = o.tile_sizes.is_none() && c.tile_sizes.is_none();
    defaults.then_some(host.caches[1]).flatten()
}

/// The vector hints' default widths: one and two registers' worth of doubles on this machine
/// ([`Host`]), none where it does not say.
fn vector_widths(host: &Host) -> Vec<u32> {
    host.vectors
        .map_or(vec![], |(doubles, _)| vec![doubles, 2 * doubles])
}
