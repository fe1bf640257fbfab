//! `--emit-mold DIR`: the best node's structure as a code mold and a problem file, so that
//! `moldtune run` fine-tunes its numbers with a learner (mctree's "parametric" mode without
//! its patched compiler). Tile sizes, unroll factors, vector widths and interleave counts
//! become ordinal parameters,
//! `parallel for` an on/off choice, the Polly knob a categorical one; each parameter's
//! default is the mctree best's value, so the problem's default configuration is that best.
//! The output check compares against the untransformed file, as mctree's did.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::mctree::directive::{vector_hint, Op, Polly, Stacks};
use crate::mctree::looptree::LoopTree;
use crate::mctree::setup::Recorded;
use crate::problem::param::{Kind, OpenValues, Param};
use crate::problem::space::{Config, Space};
use crate::problem::Problem;
use crate::rng::hex_hash;

/// One parameter of the emitted problem, as YAML lines.
struct Emitted {
    yaml: String,
    next: usize,
}

impl Emitted {
    /// An ordinal parameter over `values` (plus `default` if missing); returns its marker.
    fn ordinal(&mut self, values: &[u32], default: u32, trip: Option<i64>) -> String {
        let mut v: Vec<u32> = (values.iter().copied())
            .filter(|&s| trip.is_none_or(|t| (s as i64) < t))
            .collect();
        v.push(default);
        v.sort_unstable();
        v.dedup();
        let list: Vec<String> = v.iter().map(u32::to_string).collect();
        self.param(&format!(
            "    type: ordinal\n    values: [{}]\n    default: {default}\n",
            list.join(", ")
        ))
    }

    /// A categorical parameter; returns its marker.
    fn categorical(&mut self, choices: &[String], default: &str) -> String {
        let quoted: Vec<String> = choices.iter().map(|c| json(c)).collect();
        self.param(&format!(
            "    type: categorical\n    choices: [{}]\n    default: {}\n",
            quoted.join(", "),
            json(default)
        ))
    }

    fn param(&mut self, body: &str) -> String {
        let name = format!("P{}", self.next);
        self.next += 1;
        self.yaml += &format!("  - name: {name}\n{body}");
        format!("#{name}")
    }
}

/// A YAML scalar (a JSON string is a YAML double-quoted scalar).
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The insertion of one directive with markers for its numbers.
/// (`over`: other directives are below it.)
fn directive(
    op: &Op,
    (l, over): (usize, bool),
    loops: &LoopTree,
    r: &Recorded,
    e: &mut Emitted,
) -> String {
    let nest = loops.perfect_nest(l);
    match op {
        Op::Tile(sizes) => {
            let markers: Vec<String> = (sizes.iter().enumerate())
                .map(|(k, &s)| {
                    e.ordinal(
                        &r.tile_sizes,
                        s,
                        nest.get(k).and_then(|&n| loops.loops[n].trip),
                    )
                })
                .collect();
            format!("#pragma omp tile sizes({})", markers.join(","))
        }
        Op::Unroll(f) => format!(
            "#pragma omp unroll partial({})",
            e.ordinal(&r.unroll, *f, None)
        ),
        Op::Parallel => {
            let text = format!("#pragma omp parallel for{}", loops.private_clause(l, over));
            e.categorical(&[text.clone(), String::new()], &text)
        }
        Op::Interchange(_) | Op::Reverse => format!("#pragma omp {}", op.text()),
        Op::Vectorize { width, interleave } => vector_hint(
            e.ordinal(&r.vector_widths, *width, None),
            e.ordinal(&r.interleave, *interleave, None),
        ),
    }
}

/// Writes `DIR/<stem>.mold.c` and `DIR/<stem>.yaml` for the node `best`; returns the YAML.
pub fn emit(
    dir: &Path,
    problem: &Problem,
    r: &Recorded,
    loops: &LoopTree,
    best: &Stacks,
) -> Result<PathBuf, Error> {
    let mut e = Emitted {
        yaml: String::new(),
        next: 0,
    };
    let mut entries = Vec::new();
    for (&l, ops) in &best.ops {
        for op in ops.iter().rev() {
            let at = (l, ops.len() > 1);
            entries.push(format!("L{l}: {}", directive(op, at, loops, r, &mut e)));
        }
    }
    let polly: Vec<String> = Polly::ALL.iter().map(|p| p.flags().to_string()).collect();
    e.yaml += &format!(
        "  - name: polly\n    type: categorical\n    choices: [{}]\n    default: {}\n",
        polly.iter().map(|p| json(p)).collect::<Vec<_>>().join(", "),
        json(best.polly.flags())
    );
    let mold_text = render(&problem.mold.text, loops, &entries.join("; "));
    let stem = (r.file.file_stem()).map_or("kernel".into(), |s| s.to_string_lossy().to_string());
    let [mold, yaml] = targets(dir, r);
    let write = |p: &Path, t: &str, (open, close): (&str, &str)| {
        let signed = format!("{open}{MARK} {}{close}\n{t}", hex_hash(t.as_bytes()));
        std::fs::write(p, signed)
            .map_err(|err| Error::io(format!("cannot write `{}`", p.display()), err))
    };
    std::fs::create_dir_all(dir)
        .map_err(|err| Error::io(format!("cannot create `{}`", dir.display()), err))?;
    write(&mold, &mold_text, ("/* ", " */"))?;
    write(&yaml, &problem_yaml(&stem, problem, r, &e.yaml), ("# ", ""))?;
    Ok(yaml)
}

/// What each emitted file's first line says, with the hash of the rest: a file whose rest
/// still has that hash is moldtune's own, unedited.
const MARK: &str = "moldtune mctree --emit-mold";

/// The mold and problem file `--emit-mold DIR` writes for `r`'s file.
fn targets(dir: &Path, r: &Recorded) -> [PathBuf; 2] {
    let stem = (r.file.file_stem()).map_or("kernel".into(), |s| s.to_string_lossy().to_string());
    [
        dir.join(format!("{stem}.mold.c")),
        dir.join(format!("{stem}.yaml")),
    ]
}

/// Before the search: `--emit-mold DIR` must not overwrite a file moldtune did not write or
/// that was edited since (its hand edits would be lost at the end of the run). `None`:
/// nothing to check (no `--emit-mold`, or `--force`).
pub fn check_targets(dir: Option<&Path>, r: &Recorded) -> Result<(), Error> {
    for p in dir.map(|d| targets(d, r)).into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&p) else {
            if p.exists() {
                return Err(overwrite(&p));
            }
            continue;
        };
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        if !first.contains(&format!("{MARK} {}", hex_hash(rest.as_bytes()))) {
            return Err(overwrite(&p));
        }
    }
    Ok(())
}

fn overwrite(p: &Path) -> Error {
    Error::usage(
        format!(
            "`--emit-mold` would overwrite `{}`, which moldtune did not write or which was edited since",
            p.display()
        ),
        Some("name another folder with `--emit-mold DIR`, or add `--force` to overwrite it"),
    )
}

/// The file with the entries inserted above their loops (the mold's own placement).
fn render(text: &str, loops: &LoopTree, value: &str) -> String {
    let labels = OpenValues::default();
    let space = Space {
        params: vec![Param::new(
            "transformations",
            Kind::Open(labels.clone()),
            None,
        )],
        order: vec![0],
        forbidden: vec![],
        constraints: vec![],
    };
    let mold = crate::mctree::setup::mold(Path::new("emitted"), text, loops, "");
    mold.render(&space, &Config(vec![labels.intern(value)]))
}

fn problem_yaml(stem: &str, problem: &Problem, r: &Recorded, params: &str) -> String {
    let map = |pairs: &[(String, String)]| {
        let items: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}: {}", json(k), json(v)))
            .collect();
        format!("{{{}}}", items.join(", "))
    };
    let sources: Vec<String> = r
        .sources
        .iter()
        .map(|s| json(&s.display().to_string()))
        .collect();
    let extra: Vec<String> = r.check_build_flags.iter().map(|s| json(s)).collect();
    let metric = serde_json::to_value(r.metric)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let stream = serde_json::to_value(r.check_stream)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mode = serde_json::to_value(r.check_mode)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    format!(
        "# moldtune problem emitted by `moldtune mctree --emit-mold` from {file} (kernel {kernel}):\n\
         # the best transformation stack found, its numbers as parameters (defaults = that best).\n\
         name: {name}\nmold: {stem}.mold.c\nsources: [{sources}]\nparams:\n{params}\
         compile: {compile}\nrun: \"{{{{ exe }}}}\"\nenv: {env}\n\
         metric: {{kind: {metric}, goal: minimize}}\nrepeats: {repeats}\nreduce: median\n\
         timeouts: {{compile_s: {ct}, run_s: {rt}}}\n\
         check:\n  mode: {mode}\n  stream: {stream}\n  env: {cenv}\n  variations: [{variations}]\n  rtol: {rtol}\n  atol: 1.0e-12\n  compile_extra: [{extra}]\n  reference: {reference}\n\
         search: {{learner: rf, max_evals: 60}}\n",
        file = r.file.display(),
        kernel = r.kernel,
        name = json(&format!("{stem}-tuned")),
        sources = sources.join(", "),
        compile = json(&problem.compile.text),
        env = map(&r.env),
        repeats = r.repeats,
        ct = r.compile_timeout_s,
        rt = r.run_timeout_s,
        cenv = map(&r.check_env),
        variations = (r.check_variations.iter().map(|v| map(v)))
            .collect::<Vec<_>>()
            .join(", "),
        rtol = r.rtol,
        extra = extra.join(", "),
        reference = json(&r.file.display().to_string()),
    )
}
