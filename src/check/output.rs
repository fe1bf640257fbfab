//! What `moldtune check` shows and writes: a line per guard as it is decided, a table at
//! the end, and Markdown, HTML and JUnit XML for CI systems (tera templates `check.md.tera`,
//! `check.html.tera` and `junit.xml.tera` in `templates/`).

use std::path::Path;

use crate::check::gate::{Checked, Guarded};
use crate::check::rule::Drift;
use crate::error::Error;
use crate::number::sig;
use crate::problem::objective::Gain;
use crate::report::templates;
use crate::stats::Ratio;

/// "gemm-medium/tuned: ok: 1.52x faster than the reference (95% CI 1.48–1.57), recorded
/// 1.50x faster; loss ×0.99 of recorded (0.96–1.02) after 20 rounds" (a loss above 1 is
/// worse than recorded: [`crate::check::rule`]).
pub fn line(g: &Guarded) -> String {
    let mut s = format!("{}/{}: {}", g.name, g.guard, g.verdict.as_str());
    if let Some(m) = &g.measured {
        s += &format!(": {}", gain_text(m));
    }
    if let Some(r) = &g.recorded {
        s += &format!(", recorded {}", r.describe());
    }
    if let Some(c) = &g.change {
        s += &format!("; loss ×{} of recorded", change_text(c));
    }
    if let Some(d) = &g.drift {
        s += &format!(
            "; {} now, {} recorded: loss {}",
            sig(d.now, 6),
            sig(d.then, 6),
            drift_text(d)
        );
    }
    s += &format!(" after {} rounds ({:.0} s)", g.rounds, g.seconds);
    if let Some(why) = &g.cause {
        s += &format!("\n  {why}");
    }
    s
}

/// "1.52x faster than the reference (95% CI 1.48–1.57)".
fn gain_text(g: &Gain) -> String {
    format!(
        "{} than the reference (95% CI {})",
        g.describe(),
        g.interval()
    )
}

/// "0.99 (0.96–1.02)".
fn change_text(r: &Ratio) -> String {
    format!("{:.2} ({:.2}–{:.2})", r.ratio, r.low, r.high)
}

/// "0.04 (0.035–0.045) of 0.01 allowed": a score's loss in its units, judged by value.
fn drift_text(d: &Drift) -> String {
    let l = &d.loss;
    format!(
        "{} ({}–{}) of {} allowed",
        sig(l.ratio, 4),
        sig(l.low, 4),
        sig(l.high, 4),
        sig(d.tolerance, 4)
    )
}

/// The table printed at the end.
pub fn table(c: &Checked) -> String {
    let head = [
        "baseline",
        "guard",
        "verdict",
        "vs reference now (95% CI)",
        "recorded",
        "loss vs recorded (95% CI)",
        "rounds",
    ];
    let rows: Vec<[String; 7]> = c.guarded.iter().map(row).collect();
    let width = |k: usize| {
        rows.iter()
            .map(|r| r[k].chars().count())
            .chain([head[k].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let fmt = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = (cells.iter().zip(&widths))
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = fmt(head.to_vec()) + "\n";
    for r in &rows {
        out += &(fmt(r.iter().map(String::as_str).collect()) + "\n");
    }
    out + &summary(c)
}

fn row(g: &Guarded) -> [String; 7] {
    let gain = |r: &Option<Gain>, f: &dyn Fn(&Gain) -> String| r.as_ref().map_or("–".into(), f);
    let both = |m: &Gain| format!("{} ({})", m.describe(), m.interval());
    [
        g.name.clone(),
        g.guard.clone(),
        g.verdict.as_str().into(),
        gain(&g.measured, &both),
        gain(&g.recorded, &Gain::describe),
        match (&g.change, &g.drift) {
            (Some(c), _) => format!("×{}", change_text(c)),
            (None, Some(d)) => drift_text(d),
            (None, None) => "–".into(),
        },
        g.rounds.to_string(),
    ]
}

/// "12.30 GFLOP/s, …, 34% of the roofline bound (…); the reference 4.10 GFLOP/s, …", or
/// empty when the problem declares no work.
fn reach_text(g: &Guarded) -> String {
    let mut parts = Vec::new();
    if let Some(r) = &g.reach {
        parts.push(r.describe());
    }
    if let Some(r) = &g.reference_reach {
        parts.push(format!("the reference {}", r.describe()));
    }
    parts.join("; ")
}

/// "7 guarded: 7 ok; threshold 10%; 212 s; exit 0".
fn summary(c: &Checked) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for g in &c.guarded {
        match counts.iter_mut().find(|(v, _)| *v == g.verdict.as_str()) {
            Some((_, n)) => *n += 1,
            None => counts.push((g.verdict.as_str(), 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    format!(
        "{} guarded: {}; threshold {:.0}%; {:.0} s; exit {}",
        c.guarded.len(),
        counts.join(", "),
        c.rule.threshold * 100.0,
        c.seconds,
        c.exit_code()
    )
}

fn context(c: &Checked) -> tera::Context {
    let mut ctx = tera::Context::new();
    let rows: Vec<serde_json::Value> = (c.guarded.iter())
        .map(|g| {
            let mut v = serde_json::to_value(g).unwrap_or_default();
            let cells = row(g);
            v["verdict_text"] = match c.fails(g.verdict) || g.verdict.severity() == 0 {
                true => cells[2].clone().into(),
                false => format!("{} (passed: --undecided pass)", cells[2]).into(),
            };
            v["measured_text"] = cells[3].clone().into();
            v["recorded_text"] = cells[4].clone().into();
            v["change_text"] = cells[5].clone().into();
            v["failed"] = c.fails(g.verdict).into();
            v["reach_text"] = reach_text(g).into();
            v
        })
        .collect();
    ctx.insert("rows", &rows);
    ctx.insert("summary", &summary(c));
    ctx.insert("rule", &c.rule);
    // 10 for 10%, 12.5 for 12.5% (f64 prints no needless ".0").
    ctx.insert(
        "threshold_pct",
        &((c.rule.threshold * 1000.0).round() / 10.0).to_string(),
    );
    ctx.insert("seconds", &c.seconds);
    let failures = c.guarded.iter().filter(|g| c.fails(g.verdict)).count();
    ctx.insert("failures", &failures);
    ctx.insert("tests", &c.guarded.len());
    ctx
}

/// Writes the Markdown summary.
pub fn markdown(c: &Checked, file: &Path) -> Result<(), Error> {
    write(file, &templates::render("check.md.tera", &context(c))?)
}

/// Writes a self-contained HTML page (no script, nothing fetched).
pub fn html(c: &Checked, file: &Path) -> Result<(), Error> {
    write(file, &templates::render("check.html.tera", &context(c))?)
}

/// Writes JUnit XML: one test case per guard, regressions and broken guards as failures,
/// undecided ones as errors.
pub fn junit(c: &Checked, file: &Path) -> Result<(), Error> {
    write(file, &templates::render("junit.xml.tera", &context(c))?)
}

/// Refuses, before anything is measured, a report path (`--markdown`, `--html`, `--junit`,
/// with its flag) that cannot be written — its folder missing, a folder itself — or that
/// names an input: a baseline file, a file of a baseline folder, a problem's file or mold —
/// or another report's file (whether it exists yet or not).
pub fn check_reports(
    reports: &[(&str, &Path)],
    inputs: &[(std::path::PathBuf, &str)],
) -> Result<(), Error> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let mut read: Vec<(std::path::PathBuf, &str)> = vec![];
    for (i, what) in inputs {
        match std::fs::read_dir(i) {
            Ok(entries) => read.extend(
                entries
                    .flatten()
                    .filter_map(|e| Some((canon(&e.path())?, *what))),
            ),
            Err(_) => read.extend(canon(i).map(|c| (c, *what))),
        }
    }
    for (k, (flag, f)) in reports.iter().enumerate() {
        let refuse = |why: String| {
            Error::usage(
                format!("`{flag} {}` {why}; nothing was measured", f.display()),
                Some("name a new file in an existing folder"),
            )
        };
        let folder = f
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !folder.is_dir() {
            return Err(refuse(format!(
                "cannot be written: its folder `{}` does not exist",
                folder.display()
            )));
        }
        if f.is_dir() {
            return Err(refuse("is a folder".into()));
        }
        let named = canon(f).and_then(|c| read.iter().find(|(r, _)| *r == c));
        if let Some((_, what)) = named {
            return Err(refuse(format!(
                "is {what} this check reads: it would be overwritten"
            )));
        }
        if reports[..k].iter().any(|(_, g)| target(g) == target(f)) {
            return Err(refuse("is also another report's file".into()));
        }
    }
    Ok(())
}

/// Where writing `f` lands: its folder resolved (links, `..`) and its name; `None` when the
/// folder cannot be resolved.
fn target(f: &Path) -> Option<std::path::PathBuf> {
    let folder = f.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = std::fs::canonicalize(folder.unwrap_or(Path::new("."))).ok()?;
    match std::fs::canonicalize(f) {
        Ok(resolved) => Some(resolved),
        Err(_) => Some(folder.join(f.file_name()?)),
    }
}

/// Writes a report; a report that cannot be written is the path's fault as far as the user
/// can act on it (a full device, a folder that is not there): no run to resume.
fn write(file: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(file, text).map_err(|e| {
        Error::usage(
            format!("cannot write the report `{}`: {e}", file.display()),
            Some("name a file in a folder with room that you can write; the measurements are in the check's own output above"),
        )
    })
}
