//! `work:` — what one timed run of the kernel computes: its floating-point operations and the
//! bytes it must move at least, as numbers or as expressions over named sizes. With it a
//! time becomes a rate (GFLOP/s) and a point on the machine's roofline
//! ([`crate::evaluate::roofline`]).
//!
//! ```yaml
//! work:
//!   sizes: {NI: 1000, NJ: 1100, NK: 1200}
//!   flops: "2*NI*NJ*NK + NI*NJ"
//!   bytes: "8*(NI*NK + NK*NJ + 2*NI*NJ)"
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::error::Error;
use crate::problem::expr::{self, Val};
use crate::problem::locate::Ctx;
use crate::problem::vocabulary::MetricKind;

/// A work amount as written: a number or an expression over `sizes`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawAmount {
    Number(f64),
    Text(String),
}

/// The `work:` section as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWork {
    #[serde(default)]
    pub sizes: BTreeMap<String, Spanned<f64>>,
    pub flops: Spanned<RawAmount>,
    pub bytes: Option<Spanned<RawAmount>>,
}

/// What one timed run computes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// Floating-point operations (an FMA counts two).
    pub flops: f64,
    /// Bytes the kernel must move to and from memory at least (its compulsory traffic);
    /// without them there is no arithmetic intensity, and the bound is the peak rate alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
}

/// `work:`, checked: every amount evaluates to a positive finite number, and the metric
/// is a time (a rate needs seconds).
pub(super) fn work(
    cx: &Ctx,
    raw: Option<&Spanned<RawWork>>,
    metric: MetricKind,
) -> Result<Option<Work>, Error> {
    let Some(w) = raw else { return Ok(None) };
    if !matches!(
        metric,
        MetricKind::KernelTime | MetricKind::WallTime | MetricKind::CpuTime
    ) {
        return cx.err(
            &w.referenced,
            format!(
                "`work:` turns a time into GFLOP/s, and the metric is `{}`, not a time",
                serde_json::to_value(metric).map_or(String::new(), |v| v
                    .as_str()
                    .unwrap_or_default()
                    .to_string())
            ),
            Some("use `metric.kind: kernel_time`, `wall_time` or `cpu_time`, or leave `work:` out"),
        );
    }
    let sizes = &w.value.sizes;
    let flops = amount(cx, &w.value.flops, "work.flops", sizes)?;
    let bytes = (w.value.bytes.as_ref())
        .map(|b| amount(cx, b, "work.bytes", sizes))
        .transpose()?;
    Ok(Some(Work { flops, bytes }))
}

/// One amount: the number, or the expression's value over `sizes`.
fn amount(
    cx: &Ctx,
    a: &Spanned<RawAmount>,
    key: &str,
    sizes: &BTreeMap<String, Spanned<f64>>,
) -> Result<f64, Error> {
    let names: Vec<&String> = sizes.keys().collect();
    let value = match &a.value {
        RawAmount::Number(x) => Ok(*x),
        RawAmount::Text(t) => {
            let lookup = |n: &str| names.iter().position(|k| k.as_str() == n);
            let e = expr::parse(t, &lookup).map_err(|pe| {
                let mut span = cx.span(&a.referenced);
                span.col += pe.col as u32 + 1;
                Error::Config {
                    span,
                    message: format!(
                        "in `{key}` `{}`: {}",
                        clipped(t),
                        pe.message.replace("unknown parameter", "unknown size")
                    ),
                    hint: Some(sizes_hint(&names)),
                }
            })?;
            let get = |i: usize| Some(Val::Num(sizes[names[i]].value));
            e.eval(&get).and_then(|v| match v {
                Val::Num(x) => Ok(x),
                Val::Bool(_) => Err("it is a comparison, true or false, not an amount".into()),
                Val::Str(s) => Err(format!("it is the text `{}`, not an amount", clipped(&s))),
            })
        }
    };
    match value {
        Ok(x) if (1.0..=MAX_AMOUNT).contains(&x) => Ok(x),
        Ok(x) => cx.err(
            &a.referenced,
            format!(
                "`{key}` is {}: it must be at least 1 and at most {} (a day at 10 TFLOP/s)",
                short(x),
                short(MAX_AMOUNT)
            ),
            Some("count one timed run's operations (an FMA is two) or bytes"),
        ),
        Err(why) => cx.err(
            &a.referenced,
            format!("`{key}` cannot be evaluated: {why}"),
            None,
        ),
    }
}

/// The most operations or bytes a `work:` amount may state for one timed run.
pub const MAX_AMOUNT: f64 = 1e18;

/// A number as an error shows it: `1e300`, not three hundred digits.
fn short(x: f64) -> String {
    match x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        true => format!("{x:e}"),
        false => format!("{x}"),
    }
}

/// An expression as an error shows it: its first 80 characters.
fn clipped(t: &str) -> String {
    match t.char_indices().nth(80) {
        Some((at, _)) => format!("{}… ({} characters)", &t[..at], t.chars().count()),
        None => t.to_string(),
    }
}

/// The names an expression may use.
fn sizes_hint(names: &[&String]) -> String {
    match names.is_empty() {
        true => "name the sizes under `work.sizes`, e.g. `sizes: {N: 1000}`".into(),
        false => {
            let n: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("the sizes are {} (`work.sizes`)", n.join(", "))
        }
    }
}
