//! mctree's settings and the [`Problem`] it hands to the run's driver: the user's file as a
//! mold whose insertion points are the kernel's loops, a space of two parameters
//! (`transformations`, open; `polly`, the knob's flags), the compile line, the output check
//! against the untransformed program and the metric.
//!
//! Every setting comes from the command line, else the `--config` YAML, else the resumed
//! run's run.json (`mctree` section), else a default; the resolved [`Recorded`] settings are
//! what run.json keeps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::mctree::directive::Polly;
use crate::mctree::legality::Legality;
use crate::mctree::looptree::LoopTree;
use crate::mctree::transform::Options;
use crate::problem::mold::{Mold, Placement, Point};
use crate::problem::param::{Kind, OpenValues, Param};
use crate::problem::space::{Config, Space};
use crate::problem::template::Template;
use crate::problem::SearchDefaults;
use crate::problem::{
    limits, CheckMode, CodeIdentity, Goal, Metric, MetricKind, OutputCheck, Problem, Reduce, Stream,
};

/// The optional `--config` file: the same settings as the flags (flags win).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub kernel: Option<String>,
    pub strategy: Option<String>,
    pub max_evals: Option<usize>,
    pub depth: Option<usize>,
    pub seed: Option<u64>,
    pub tile_sizes: Option<Vec<u32>>,
    pub unroll: Option<Vec<u32>>,
    /// Vector widths (elements) for clang's hint on innermost loops (default: one and two
    /// registers' worth of doubles on this machine; `[]`: no hints).
    pub vector_widths: Option<Vec<u32>>,
    /// Interleave counts that go with each width (default 1 and 4).
    pub interleave: Option<Vec<u32>>,
    pub compiler: Option<String>,
    /// Optimisation flags (default `-O3 -march=native`).
    pub flags: Option<Vec<String>>,
    /// Extra compiler and link arguments and sources (as after `--`).
    pub args: Option<Vec<String>>,
    pub repeats: Option<u32>,
    pub timeouts: Option<ConfigTimeouts>,
    pub metric: Option<MetricKind>,
    /// Environment of the timed runs.
    pub env: Option<BTreeMap<String, String>>,
    pub check: Option<ConfigCheck>,
    /// Propose transformations the dependence analysis does not prove legal.
    pub trust_output_check: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigTimeouts {
    pub compile_s: Option<f64>,
    pub run_s: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigCheck {
    /// `output` (default) or `none`.
    pub mode: Option<CheckMode>,
    pub stream: Option<Stream>,
    /// Environment of the check run (added to `PB_DUMP=1` and the thread count).
    pub env: Option<BTreeMap<String, String>>,
    /// More inputs to check on: each an environment on top of `env` (default: `PB_SEED` 2
    /// and 3, with PolyBench's random input; `[]`: the one input).
    pub variations: Option<Vec<BTreeMap<String, String>>>,
    /// Arguments of the separate check build (default: `-DPOLYBENCH_DUMP_ARRAYS` when the
    /// file uses PolyBench's compile-time array dump, else none).
    pub build_flags: Option<Vec<String>>,
    pub rtol: Option<f64>,
}

/// The resolved settings, recorded in run.json's `mctree` section.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recorded {
    /// The C file. Not written into the `mctree` section: run.json's `problem` holds it,
    /// relative to the run directory.
    #[serde(skip)]
    pub file: PathBuf,
    pub kernel: String,
    /// The file's functions that call the kernel: clang may inline it there (PolyBench's
    /// `static` kernels end up in `main`), so Polly acts on them too and the code identity
    /// reads them. Empty in runs recorded before it was kept.
    #[serde(default)]
    pub hosts: Vec<String>,
    pub strategy: String,
    pub depth: usize,
    pub tile_sizes: Vec<u32>,
    /// The cache (bytes) a proposed tile's working set must fit ([`Options::tile_bound`]):
    /// this machine's L2 when the tile sizes are the defaults; runs recorded before it have
    /// none.
    #[serde(default)]
    pub tile_bound: Option<u64>,
    pub unroll: Vec<u32>,
    /// The vector hints' widths and interleave counts; runs recorded before them have none.
    #[serde(default)]
    pub vector_widths: Vec<u32>,
    #[serde(default)]
    pub interleave: Vec<u32>,
    pub compiler: String,
    pub flags: Vec<String>,
    /// The user's compiler and link arguments (paths made absolute).
    pub args: Vec<String>,
    /// Extra sources compiled with the file (absolute).
    pub sources: Vec<PathBuf>,
    pub metric: MetricKind,
    pub repeats: u32,
    pub compile_timeout_s: f64,
    pub run_timeout_s: f64,
    pub env: Vec<(String, String)>,
    pub check_mode: CheckMode,
    pub check_stream: Stream,
    pub check_env: Vec<(String, String)>,
    /// More inputs the output check runs on (each an environment on top of `check_env`);
    /// runs recorded before them have none.
    #[serde(default)]
    pub check_variations: Vec<Vec<(String, String)>>,
    pub check_build_flags: Vec<String>,
    pub rtol: f64,
    /// Propose transformations the dependence analysis does not prove legal.
    #[serde(default)]
    pub trust_output_check: bool,
    /// Whether results.csv has the `legality` column (runs recorded before it have not).
    #[serde(default)]
    pub records_legality: bool,
}

impl Recorded {
    /// The functions that hold the kernel's code wherever clang puts it: the kernel and
    /// the functions it may be inlined into.
    pub fn kernel_functions(&self) -> Vec<String> {
        let mut out = vec![self.kernel.clone()];
        out.extend(self.hosts.iter().cloned());
        out
    }

    /// A simulated metric's `function`: the kernel functions and what OpenMP outlined
    /// from them (`kernel_X.omp_outlined…`).
    pub fn counted_functions(&self) -> String {
        format!("^({})($|\\.)", self.kernel_functions().join("|"))
    }

    /// `-polly-only-func`'s regex: Polly restricted to [`Recorded::kernel_functions`].
    pub fn polly_scope(&self) -> String {
        match self.hosts.as_slice() {
            [] => format!("^{}$", self.kernel),
            _ => format!("^({})$", self.kernel_functions().join("|")),
        }
    }

    pub fn options(&self) -> Options {
        Options {
            tile_sizes: self.tile_sizes.clone(),
            tile_bound: self.tile_bound,
            unroll: self.unroll.clone(),
            vector_widths: self.vector_widths.clone(),
            interleave: self.interleave.clone(),
            depth: self.depth,
            trust_output_check: self.trust_output_check,
            ..Options::default()
        }
    }

    /// The compile timeout (which also bounds parsing the file for discovery).
    pub fn compile_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.compile_timeout_s.max(0.001))
    }

    /// `src` compiled alone to the object `obj` as the variants compile it (the user's flags,
    /// OpenMP, the file's folder on the include path), plus `extra`.
    pub fn object_argv(&self, src: &Path, obj: &Path, extra: &[String]) -> Vec<String> {
        let dir = self.file.parent().unwrap_or(Path::new("/"));
        let mut argv = vec![self.compiler.clone()];
        argv.extend(self.parse_flags());
        argv.extend(["-fopenmp".into(), "-fno-crash-diagnostics".into()]);
        argv.push(format!("-I{}", dir.display()));
        argv.extend(extra.iter().cloned());
        argv.extend([
            "-c".into(),
            src.display().to_string(),
            "-o".into(),
            obj.display().to_string(),
        ]);
        argv
    }

    /// The flags discovery parses the file with: the user's, minus sources and link-only
    /// arguments.
    pub fn parse_flags(&self) -> Vec<String> {
        let mut out = self.flags.clone();
        out.extend(
            (self.args.iter())
                .filter(|a| !a.starts_with("-l") && !a.starts_with("-L") && !a.starts_with("-Wl,"))
                .cloned(),
        );
        out.push("-DPOLYBENCH_TIME".into());
        out
    }
}

/// The number of threads of the runs and checks (at least 2: a race needs two).
pub fn threads() -> String {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    n.max(2).to_string()
}

/// Splits what follows `--` into compiler arguments and extra sources, paths made absolute
/// (the variants compile in their own directories).
pub fn split_args(args: &[String]) -> Result<(Vec<String>, Vec<PathBuf>), Error> {
    let mut flags = Vec::new();
    let mut sources = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let is_source =
            [".c", ".o", ".a", ".so"].iter().any(|e| a.ends_with(e)) && !a.starts_with('-');
        if is_source {
            sources.push(absolute(a, "source")?);
            continue;
        }
        let path_flags = ["-I", "-L", "-isystem", "-iquote", "-include"];
        match path_flags.iter().find(|f| a.starts_with(*f)) {
            Some(f) if a.len() > f.len() => {
                flags.push(format!("{f}{}", absolute_loose(&a[f.len()..])));
            }
            Some(f) => {
                let Some(p) = it.next() else {
                    return Err(Error::usage(format!("`{f}` needs a path after it"), None));
                };
                flags.push(f.to_string());
                flags.push(absolute_loose(p));
            }
            None => flags.push(a.clone()),
        }
    }
    Ok((flags, sources))
}

fn absolute(p: &str, what: &str) -> Result<PathBuf, Error> {
    std::fs::canonicalize(p).map_err(|e| {
        Error::usage(
            format!("cannot find the {what} `{p}` given after `--`: {e}"),
            Some("paths are relative to the directory moldtune runs in"),
        )
    })
}

/// A path made absolute against the current directory (it need not exist).
fn absolute_loose(p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        return p.to_string();
    }
    std::env::current_dir()
        .map(|d| d.join(path).display().to_string())
        .unwrap_or_else(|_| p.to_string())
}

/// A word of the compile template: as is when plain, else a tera string literal (one
/// argument, braces and all).
fn literal(word: &str) -> Result<String, Error> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=+,:^$@".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return Ok(word.to_string());
    }
    for q in ['"', '\''] {
        if !word.contains(q) && !word.contains('\\') {
            return Ok(format!("{{{{ {q}{word}{q} }}}}"));
        }
    }
    Err(Error::usage(
        format!("the argument `{word}` holds both kinds of quotes and a backslash"),
        Some("pass it through a response file (`@file`) instead"),
    ))
}

/// The compile command: the user's compiler and flags, OpenMP for the directives, the Polly
/// knob, the variant, the extra sources and the user's arguments.
fn compile_template(r: &Recorded, dir: &Path) -> Result<Template, Error> {
    let mut words = vec![literal(&r.compiler)?];
    for f in &r.flags {
        words.push(literal(f)?);
    }
    words.extend(["-fopenmp", "-fno-crash-diagnostics"].map(String::from));
    // `#include "x.h"` of the file's own directory, now that the variant lives elsewhere.
    words.push(literal(&format!("-I{}", dir.display()))?);
    words.push("-DPOLYBENCH_TIME".into());
    words.push("{{ polly | words }}".into());
    words.push("-mllvm".into());
    words.push(literal(&format!("-polly-only-func={}", r.polly_scope()))?);
    words.push("{{ source }} {{ sources }}".into());
    for a in &r.args {
        words.push(literal(a)?);
    }
    words.push("-o {{ exe }} -lm".into());
    Ok(Template::new(words.join(" ")))
}

/// The space: `transformations` (open: the tree's stacks), `polly` (the knob's flags) and,
/// when the run records it, `legality` (derived from the transformations: how the node is
/// known to be correct; never tuned).
fn space(labels: &OpenValues, legality: bool) -> Space {
    labels.intern("");
    let polly = Polly::ALL.iter().map(|p| p.flags().to_string()).collect();
    let mut params = vec![
        Param::new("transformations", Kind::Open(labels.clone()), None),
        Param::new("polly", Kind::Categorical(polly), None),
    ];
    if legality {
        let values = Legality::ALL.iter().map(|l| l.as_str().to_string());
        params.push(Param::new(
            "legality",
            Kind::Categorical(values.collect()),
            None,
        ));
    }
    Space {
        order: (0..params.len()).collect(),
        params,
        forbidden: vec![],
        constraints: vec![],
    }
}

fn env(pairs: &[(String, String)]) -> Result<Vec<(String, Template)>, Error> {
    (pairs.iter())
        .map(|(k, v)| Ok((k.clone(), Template::new(literal(v)?))))
        .collect()
}

/// The file as a mold whose insertion points are the kernel's transformable loops (`L<k>`),
/// fed by the `transformations` parameter (the first), each entry written after `prefix`.
pub fn mold(file: &Path, text: &str, tree: &LoopTree, prefix: &str) -> Mold {
    let points = (tree.loops.iter())
        .filter(|l| l.untouchable.is_none())
        .map(|l| Point {
            label: format!("L{}", l.id),
            at: l.offset,
            indent: l.indent.clone(),
        })
        .collect();
    let placement = Placement {
        param: 0,
        points,
        prefix: prefix.into(),
    };
    Mold::with_placement(file, text.to_string(), placement)
}

/// The output check of settings `r`: against the untransformed file's output.
fn output_check(r: &Recorded) -> OutputCheck {
    OutputCheck {
        mode: r.check_mode,
        stream: r.check_stream,
        env: r.check_env.clone(),
        rtol: r.rtol,
        atol: 1e-12,
        reference: None,
        reference_name: Some(format!("the untransformed `{}`", r.file.display())),
        compile_extra: r.check_build_flags.clone(),
        variations: r.check_variations.clone(),
    }
}

/// The problem of tuning `tree`'s kernel in `text` with settings `r`.
pub fn problem(
    r: &Recorded,
    text: &str,
    tree: &LoopTree,
    labels: &OpenValues,
) -> Result<Problem, Error> {
    let dir = r.file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let stem = (r.file.file_stem()).map_or("kernel".into(), |s| s.to_string_lossy().to_string());
    let settings = serde_json::to_string(r).unwrap_or_default() + "\n" + text;
    Ok(Problem {
        name: format!("{stem}-mctree"),
        path: r.file.clone(),
        dir: dir.clone(),
        hash: crate::rng::hex_hash(settings.as_bytes()),
        space: space(labels, r.records_legality),
        mold: mold(&r.file, text, tree, "#pragma omp "),
        sources: r.sources.clone(),
        compile: compile_template(r, &dir)?,
        compile_at: None,
        run_at: None,
        run: Template::new("{{ exe }}".into()),
        env: env(&r.env)?,
        metric: Metric {
            kind: r.metric,
            goal: Goal::Minimize,
            regex: None,
            // A simulated metric counts what the kernel became, wherever it was inlined.
            function: (r.metric.is_simulated())
                .then(|| regex::Regex::new(&r.counted_functions()).ok())
                .flatten(),
        },
        repeats: r.repeats,
        reduce: Reduce::Median,
        compile_timeout_s: r.compile_timeout_s,
        run_timeout_s: r.run_timeout_s,
        run_timeout_given: r.run_timeout_s > 0.0,
        max_output_bytes: limits::DEFAULT_OUTPUT_BYTES,
        syntax_check: Some(vec!["-fsyntax-only".into()]),
        code_identity: Some(CodeIdentity {
            disassembler: disassembler(&r.compiler),
            functions: r.kernel_functions(),
        }),
        check: output_check(r),
        search: SearchDefaults::default(),
        record: Vec::new(),
        prefer: None,
        progress: None,
        work: None,
        told: false,
    })
}

/// The disassembler of the compiler's release (`clang-22` → `llvm-objdump-22`).
fn disassembler(compiler: &str) -> String {
    let name = Path::new(compiler)
        .file_name()
        .map_or(compiler.into(), |n| n.to_string_lossy().to_string());
    match name.strip_prefix("clang") {
        Some(version) => format!("llvm-objdump{version}"),
        None => "llvm-objdump".into(),
    }
}

/// The root configuration (untransformed, Polly off, proved) of `problem`.
pub fn root_config(problem: &Problem) -> Config {
    Config(vec![0.0; problem.space.params.len()])
}
