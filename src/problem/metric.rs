//! The problem file's `metric:`: what is read from each timed run (or told by a program),
//! and which way is better. A number a regex reads, or a value a program tells, may be an
//! accuracy or a loss: its `goal:` must be given; a time moldtune measures is minimised.

use serde_saphyr::Spanned;

use crate::error::Error;
use crate::problem::locate::Ctx;
use crate::problem::raw::RawMetric;
use crate::problem::vocabulary::{Goal, MetricKind};

#[derive(Debug, Clone)]
pub struct Metric {
    pub kind: MetricKind,
    pub goal: Goal,
    pub regex: Option<regex::Regex>,
    /// `instructions`/`cycles`: the functions counted (all when `None`).
    pub function: Option<regex::Regex>,
}

/// The metric: `kind: regex` needs a `regex` (and a `regex` alone means that kind), and a
/// given regex compiles.
pub(super) fn metric(
    cx: &Ctx,
    metric: Option<&Spanned<RawMetric>>,
    told: bool,
) -> Result<Metric, Error> {
    let none = RawMetric::default();
    let m = metric.map_or(&none, |m| &m.value);
    // A told value is a score unless the file says it is a time.
    let kind = m.kind.unwrap_or(if m.regex.is_some() || told {
        MetricKind::Regex
    } else {
        MetricKind::KernelTime
    });
    let regex = match (&kind, &m.regex) {
        (MetricKind::Regex, None) if !told => {
            let at = metric.expect("a kind was given").referenced;
            return cx.err(
                &at,
                "`metric.kind: regex` needs `metric.regex`".into(),
                Some("e.g. `regex: 'time: ([0-9.eE+-]+)'` (the first group is the number)"),
            );
        }
        (_, Some(r)) => Some(cx.number_regex(r, "metric.regex")?),
        _ => None,
    };
    let function = metric_function(cx, kind, m.function.as_ref())?;
    Ok(Metric {
        goal: goal(cx, metric, kind, told)?,
        kind,
        regex,
        function,
    })
}

/// `metric.goal`: a number read by a regex, or told, may be better high (an accuracy) or
/// low (a loss): the file must say which; a time moldtune measures is minimised.
fn goal(
    cx: &Ctx,
    metric: Option<&Spanned<RawMetric>>,
    kind: MetricKind,
    told: bool,
) -> Result<Goal, Error> {
    let given = metric.and_then(|m| m.value.goal);
    match given {
        Some(g) => Ok(g),
        None if kind == MetricKind::Regex || told => {
            let what = match told {
                true => "the values told by a program",
                false => "a number read by `metric.regex`",
            };
            let message = format!("`metric.goal` is missing: {what} may be better high (an accuracy) or low (a loss or a time)");
            let hint = Some("add `goal: maximize` or `goal: minimize` to `metric:`");
            match metric {
                Some(m) => cx.err(&m.referenced, message, hint),
                None => Err(Error::ConfigFile {
                    file: cx.file.to_path_buf(),
                    message,
                    hint: hint.map(str::to_string),
                }),
            }
        }
        None => Ok(Goal::Minimize),
    }
}

/// `metric.function`: a regex, for the kinds cachegrind counts only.
fn metric_function(
    cx: &Ctx,
    kind: MetricKind,
    f: Option<&Spanned<String>>,
) -> Result<Option<regex::Regex>, Error> {
    let Some(f) = f else { return Ok(None) };
    if !kind.is_simulated() {
        return cx.err(
            &f.referenced,
            "`metric.function` counts functions under cachegrind: it needs `kind: instructions` or `kind: cycles`".into(),
            None,
        );
    }
    match regex::Regex::new(&f.value) {
        Ok(re) => Ok(Some(re)),
        Err(e) => cx.err(
            &f.referenced,
            format!("invalid `metric.function` regex `{}`: {e}", f.value),
            Some("e.g. `function: '^kernel_gemm'` (the kernel and what OpenMP outlined from it)"),
        ),
    }
}
