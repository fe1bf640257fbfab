//! `moldtune report DIR…`: one self-contained HTML page (figures as inline SVG, CSS inline,
//! no script, nothing fetched) and a Markdown summary whose figures are SVG files beside it,
//! over one or many run directories of `moldtune run` and `moldtune mctree`.
//!
//! Both are rendered from the embedded templates `report.html.tera` and `report.md.tera`
//! with the same context: the comparison [`table`](super::table) and, per run, its facts,
//! convergence [`curve`](super::curve), outcome counts, parameter importance
//! ([`bars`](super::bars), or why there is no ranking) and the [`diff`](super::diff) of its
//! best variant against the default.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::diff::{self, Diff};
use super::importance::{self, Importance};
use super::table::{self, Row};
use super::{bars, curve, format, front, templates};
use crate::error::Error;
use crate::report::run_dir::RunView;
use crate::run::front_ends::FrontEnds;
use crate::run::meta;

/// The page's file name in the output directory.
pub const HTML: &str = "report.html";
/// The summary's file name in the output directory.
pub const MARKDOWN: &str = "report.md";

/// What `report` wrote.
#[derive(Debug)]
pub struct Written {
    pub html: PathBuf,
    pub markdown: PathBuf,
    /// The SVG files the summary shows.
    pub figures: Vec<PathBuf>,
}

/// Where the report goes without `--out`: `DIR/report` for one run directory, else
/// `moldtune-report` in the current directory.
pub fn default_out(dirs: &[PathBuf]) -> PathBuf {
    match dirs {
        [one] => one.join("report"),
        _ => PathBuf::from("moldtune-report"),
    }
}

/// Reads the runs in `dirs` and writes the page, the summary and its figures into `out`.
pub fn report(dirs: &[PathBuf], out: &Path, fronts: &FrontEnds) -> Result<Written, Error> {
    if dirs.is_empty() {
        return Err(Error::usage(
            "no run directory to report on",
            Some("give one or more directories that `moldtune run` or `moldtune mctree` wrote"),
        ));
    }
    let runs = (dirs.iter())
        .map(|d| RunView::load(d, fronts))
        .collect::<Result<Vec<_>, _>>()?;
    let sections = (runs.iter().enumerate())
        .map(|(i, r)| Section::of(i, r))
        .collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(out).map_err(|e| {
        Error::usage(
            format!(
                "cannot create the report directory `{}`: {e}",
                out.display()
            ),
            Some("`--out` must name a directory moldtune may create and write"),
        )
    })?;
    let figures = write_figures(out, &sections)?;
    let (html, markdown) = write_documents(out, &sections)?;
    Ok(Written {
        html,
        markdown,
        figures,
    })
}

/// Renders the page and the summary of `sections` into `out`; returns their paths.
fn write_documents(out: &Path, sections: &[Section]) -> Result<(PathBuf, PathBuf), Error> {
    let mut ctx = tera::Context::new();
    ctx.insert("runs", sections);
    ctx.insert("version", env!("CARGO_PKG_VERSION"));
    let html = out.join(HTML);
    let markdown = out.join(MARKDOWN);
    meta::write_atomic(
        &html,
        templates::render("report.html.tera", &ctx)?.as_bytes(),
    )?;
    meta::write_atomic(
        &markdown,
        templates::render("report.md.tera", &ctx)?.as_bytes(),
    )?;
    Ok((html, markdown))
}

/// Writes each section's figures into `out` as the summary names them.
fn write_figures(out: &Path, sections: &[Section]) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for s in sections {
        let importance = s.importance.svg.as_ref().zip(s.importance.file.as_ref());
        let front = s.trade_off.as_ref().map(|t| (&t.svg, &t.file));
        let roofline = s.roofline_svg.as_ref().map(|r| (r, &s.roofline_file));
        for (svg, file) in [(&s.curve_svg, &s.curve_file)]
            .into_iter()
            .chain(roofline)
            .chain(importance)
            .chain(front)
        {
            let path = out.join(file);
            meta::write_atomic(&path, svg.as_bytes())?;
            written.push(path);
        }
    }
    Ok(written)
}

/// One run's part of the report.
#[derive(Debug, Serialize)]
struct Section {
    /// The HTML anchor and the prefix of its figure files: "1-gemm-medium-rf-s1".
    id: String,
    title: String,
    dir: String,
    row: Row,
    facts: Vec<Fact>,
    curve_svg: String,
    curve_file: String,
    /// With `work:` stated in bytes too, and the machine's limits: the roofline figure.
    roofline_svg: Option<String>,
    roofline_file: String,
    outcomes: Vec<Outcome>,
    importance: ImportanceView,
    /// The run's best variant's file: `best.c`, `best.py`.
    best_file: String,
    diff: Diff,
    /// With a tie rule (`prefer:`): the preferred configuration and the front.
    trade_off: Option<TradeOff>,
}

/// The tie rule's part of a section.
#[derive(Debug, Serialize)]
struct TradeOff {
    /// "within 0.002 of the best accuracy, the least train_s".
    rule: String,
    /// "eval 17: objective 0.9861, train_s 0.41 — batch=64 alpha=0.001 …".
    preferred: String,
    svg: String,
    file: String,
}

impl TradeOff {
    fn of(run: &RunView, id: &str) -> Result<Option<TradeOff>, Error> {
        let (Some(rule), Some(svg)) = (&run.problem.prefer, front::front_svg(run)?) else {
            return Ok(None);
        };
        let chosen = crate::run::prefer::preferred_json(&run.problem, &run.records);
        let preferred = chosen.map_or("none (no success has the quantity)".into(), |p| {
            format!(
                "eval {}: objective {}, {} {} — {}",
                p.eval_id,
                crate::number::sig(p.objective, 6),
                p.quantity,
                crate::number::sig(p.value, 4),
                p.config_text()
            )
        });
        Ok(Some(TradeOff {
            rule: format!(
                "within {} of the best objective, the {} {}",
                rule.within,
                crate::problem::record::end_word(rule.least),
                rule.quantity
            ),
            preferred,
            svg,
            file: format!("{id}-front.svg"),
        }))
    }
}

#[derive(Debug, Serialize)]
struct Fact {
    name: &'static str,
    value: String,
}

/// How many evaluations ended one way.
#[derive(Debug, Serialize)]
struct Outcome {
    status: String,
    count: usize,
    percent: String,
}

impl Section {
    fn of(index: usize, run: &RunView) -> Result<Section, Error> {
        let id = slug(&format!(
            "{}-{}-{}-s{}",
            index + 1,
            run.meta.problem_name,
            run.strategy(),
            run.meta.seed
        ));
        let n = run.records.len().max(1) as f64;
        let roofline = crate::report::roofline::Points::of(run);
        let roofline_svg = match &roofline {
            Some(p) => p.svg(&run.title())?,
            None => None,
        };
        Ok(Section {
            title: run.title(),
            dir: run.dir.display().to_string(),
            row: table::row(run),
            facts: facts(run),
            curve_svg: curve::curve_svg(run)?,
            curve_file: format!("{id}-curve.svg"),
            roofline_svg,
            roofline_file: format!("{id}-roofline.svg"),
            outcomes: (run.counts().into_iter())
                .map(|(s, count)| Outcome {
                    status: s.to_string(),
                    count,
                    percent: format!("{:.0}%", 100.0 * count as f64 / n),
                })
                .collect(),
            importance: ImportanceView::of(run, &id)?,
            best_file: run.problem.mold.best_file(),
            diff: diff::best_vs_default(run),
            trade_off: TradeOff::of(run, &id)?,
            id,
        })
    }
}

/// What the section's fact list says about the run.
fn facts(run: &RunView) -> Vec<Fact> {
    let m = &run.meta;
    let unknown = |v: &Option<String>, why: &str| v.clone().unwrap_or_else(|| why.into());
    let mut out = vec![
        ("directory", run.dir.display().to_string()),
        (
            "objective",
            format!("{}, {}", run.metric_label(), goal_word(m.goal)),
        ),
        ("search", search_settings(run)),
    ];
    out.extend(outcome_facts(run));
    if let Some(p) = crate::report::roofline::Points::of(run) {
        out.push(("roofline", p.fact()));
    }
    out.extend([
        (
            "started",
            format!("{} (last update {})", m.started_at, m.updated_at),
        ),
        (
            "compiler",
            unknown(
                &m.compiler_version,
                match m.mock {
                    true => "none (mock run)",
                    false => "not recorded (no compile step, or it did not say)",
                },
            ),
        ),
        ("CPU", unknown(&m.cpu_model, "not recorded")),
        ("command", m.command_line.join(" ")),
    ]);
    (out.into_iter())
        .map(|(name, value)| Fact { name, value })
        .collect()
}

/// What the search did, and how far its numbers were checked.
fn outcome_facts(run: &RunView) -> Vec<(&'static str, String)> {
    let m = &run.meta;
    let (n, counts) = (run.records.len(), run.counts_text());
    let reused = (run.records.iter())
        .filter(|r| r.m.reused_from.is_some())
        .count();
    let verified = m.verification.as_ref().map(|v| v.describe());
    let mut out = vec![(
        "evaluations",
        format!("{n} ({counts}), stopped by {}", m.termination),
    )];
    if reused > 0 {
        let what = "evaluations identical to an earlier one carry its outcome";
        out.push(("not re-measured", format!("{reused} {what}")));
    }
    let own = "none: the speed-up is the search's own numbers";
    out.push(("verification", verified.unwrap_or_else(|| own.into())));
    out.push(("search time", format::duration(run.wall_s())));
    out
}

/// "rf, seed 1, 10 initial, LCB κ 1.96" or "mctree rf, seed 0, depth 4".
fn search_settings(run: &RunView) -> String {
    let m = &run.meta;
    match &m.mctree {
        Some(t) => format!("{}, seed {}, depth {}", run.strategy(), m.seed, t["depth"]),
        None => format!(
            "{}, seed {}, {} initial ({}), acquisition {}, κ {}, budget {}",
            m.learner,
            m.seed,
            m.initial,
            format!("{:?}", m.design).to_lowercase(),
            format!("{:?}", m.acquisition).to_uppercase(),
            m.kappa,
            m.max_evals
        ),
    }
}

fn goal_word(goal: crate::problem::Goal) -> &'static str {
    match goal {
        crate::problem::Goal::Minimize => "minimised",
        crate::problem::Goal::Maximize => "maximised",
    }
}

/// `text` as a file name and HTML id: letters, digits, `.`, `_` and `-`.
fn slug(text: &str) -> String {
    let s: String = (text.chars())
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '-',
        })
        .collect();
    s.trim_matches('-').to_string()
}

/// The importance part of a section: the bars, or why there are none.
#[derive(Debug, Serialize)]
struct ImportanceView {
    /// "53 of 60 evaluations used (the successes), out-of-bag R² 0.42".
    numbers: String,
    method: String,
    /// Why there is no ranking; `None` when ranked.
    reason: Option<String>,
    /// Each parameter's share in percent, most important first (empty when withheld).
    ranking: Vec<ShareView>,
    svg: Option<String>,
    file: Option<String>,
}

/// A parameter and its share: ("P2", "67.6%").
#[derive(Debug, Serialize)]
struct ShareView {
    parameter: String,
    percent: String,
}

impl ImportanceView {
    fn of(run: &RunView, id: &str) -> Result<ImportanceView, Error> {
        let r: Importance = importance::importance_of(&run.problem, &run.records);
        let r2 = r.oob_r2.map_or("–".to_string(), |v| format!("{v:.2}"));
        let ranking = r.ranking.clone().unwrap_or_default();
        let svg = match &r.ranking {
            Some(shares) => Some(bars::importance_svg(shares)?),
            None => None,
        };
        Ok(ImportanceView {
            numbers: format!(
                "{} of {} evaluations used (the successes), out-of-bag R² {r2}",
                r.successes, r.evaluations
            ),
            method: r.method,
            reason: r.reason,
            ranking: (ranking.iter())
                .map(|s| ShareView {
                    parameter: s.parameter.clone(),
                    percent: format!("{:.1}%", 100.0 * s.importance),
                })
                .collect(),
            file: svg.as_ref().map(|_| format!("{id}-importance.svg")),
            svg,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(
            slug("1-gemm medium-mctree rf-s0"),
            "1-gemm-medium-mctree-rf-s0"
        );
        assert_eq!(slug("2-a/b\\c-<x>"), "2-a-b-c--x");
    }

    #[test]
    fn the_default_output_directory() {
        let one = [PathBuf::from("r/1")];
        assert_eq!(default_out(&one), PathBuf::from("r/1/report"));
        let two = [PathBuf::from("a"), PathBuf::from("b")];
        assert_eq!(default_out(&two), PathBuf::from("moldtune-report"));
    }
}
