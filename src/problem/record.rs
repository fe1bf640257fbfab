//! What a run records beside its objective, and how it chooses among near-equals: the
//! problem file's `record:` (quantities read from each timed run's stdout, e.g. an
//! application's training seconds, reduced over the repeats by their median and written as
//! columns of results.csv) and `prefer:` (the tie rule: among the configurations within
//! `within` of the best objective, the one with the least — or most — of a quantity).

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::Error;
use crate::problem::locate::Ctx;
use crate::problem::progress::{self, Progress, RawProgress};
use crate::problem::space::Space;
use crate::problem::Goal;

/// A quantity every timed run reports on stdout (`record:`).
#[derive(Debug, Clone)]
pub struct Quantity {
    pub name: String,
    /// Its capture group `group`, in its last match, is the value; `None` in a problem whose
    /// evaluations are told (`moldtune tell` gives the value).
    pub regex: Option<regex::Regex>,
    /// 1 for a `record:` regex (its one group); the progress quantities read group 1 (the
    /// step) or 2 (the value) of the `progress:` regex.
    pub group: usize,
}

impl Quantity {
    /// The value in `stdout`: the group of the last match, when it is a finite number.
    pub fn read(&self, stdout: &str) -> Option<f64> {
        let caps = self.regex.as_ref()?.captures_iter(stdout).last()?;
        let m = caps.get(self.group)?;
        m.as_str()
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    }
}

/// The tie rule (`prefer:`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prefer {
    /// How far from the best objective a configuration may be and still count as equal.
    pub within: Band,
    /// The quantity that decides among them: a `record:` name, `run_s` or `compile_s`.
    pub quantity: String,
    /// Whether the least of it is preferred (`min:`), else the most (`max:`).
    pub least: bool,
}

/// How far from the best objective counts as equal: a width in the metric's units
/// (`within: 0.002`) or a fraction of the best's size (`within: 5%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Band {
    Absolute(f64),
    Relative(f64),
}

impl Band {
    /// The width around `best`.
    pub fn width(self, best: f64) -> f64 {
        match self {
            Band::Absolute(w) => w,
            Band::Relative(f) => f * best.abs(),
        }
    }

    /// Whether `y` is within the band of `best`. The edge counts, with a tolerance of a few
    /// units in the last place of the values compared: 0.9741 − 0.9721 is
    /// 0.0020000000000000018 in binary, and is within 0.002.
    pub fn holds(self, y: f64, best: f64) -> bool {
        let w = self.width(best);
        let slack = 4.0 * f64::EPSILON * y.abs().max(best.abs()).max(w);
        (y - best).abs() <= w + slack
    }
}

impl std::fmt::Display for Band {
    /// "0.002", "5%".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Band::Absolute(w) => write!(f, "{w}"),
            Band::Relative(x) => write!(f, "{}%", x * 100.0),
        }
    }
}

/// The columns results.csv gives every run after the parameters and before the recorded
/// quantities (`learner` came last, later than the others: logs without it are read, and
/// given it when a run is resumed). A quantity may not take one of these names.
pub const LOG_COLUMNS: [&str; 11] = [
    "objective",
    "elapsed_sec",
    "eval_id",
    "status",
    "compile_s",
    "run_s",
    "repeats",
    "spread",
    "source",
    "config_hash",
    "learner",
];

/// "least" or "most": which end of the quantity a rule with `least` prefers.
pub fn end_word(least: bool) -> &'static str {
    if least {
        "least"
    } else {
        "most"
    }
}

/// Quantities moldtune measures itself, which `prefer` may name too: the seconds of one timed
/// run (`run_s` / `repeats` of a row) and of the build.
pub const BUILT_IN: [&str; 2] = ["run_s", "compile_s"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuantity {
    pub name: Spanned<String>,
    /// Absent only in a problem whose evaluations are told (its values come with them).
    pub regex: Option<Spanned<String>>,
}

/// What a run records, its tie rule and its progress reports.
type TradeOff = (Vec<Quantity>, Option<Prefer>, Option<Progress>);

/// The two quantities results.csv records of `progress:`: the last step and its value.
fn progress_quantities(p: &Progress) -> [Quantity; 2] {
    let q = |name: &str, group| Quantity {
        name: name.into(),
        regex: p.regex.clone(),
        group,
    };
    [q(progress::STEP, 1), q(progress::VALUE, 2)]
}

/// `within:` as written: a number, or a text such as `5%`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawBand {
    Number(f64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrefer {
    pub within: Spanned<RawBand>,
    pub min: Option<Spanned<String>>,
    pub max: Option<Spanned<String>>,
}

/// `within:`: a number 0 or more, or a percentage (`5%`) of 0 or more.
fn band(raw: &RawBand) -> Result<Band, String> {
    let non_negative = crate::problem::limits::non_negative;
    match raw {
        RawBand::Number(x) => non_negative(*x).map(Band::Absolute),
        RawBand::Text(t) => {
            let pct = t.trim().strip_suffix('%').map(str::trim);
            let x = pct.and_then(|p| p.parse::<f64>().ok());
            match x {
                Some(x) => non_negative(x).map(|x| Band::Relative(x / 100.0)),
                None => Err(format!(
                    "is `{t}`: give a width in the metric's units (`0.002`) or a percentage of the best (`5%`)"
                )),
            }
        }
    }
}

/// `record:` and `prefer:`, validated.
/// The quantities are `record:`'s, then the two of `progress:` when there is one
/// (its value better by `goal` unless it says otherwise).
pub(super) fn trade_off(
    cx: &Ctx,
    (record, progress, goal): (&[RawQuantity], Option<&RawProgress>, Goal),
    prefer: Option<&Spanned<RawPrefer>>,
    (space, told): (&Space, bool),
) -> Result<TradeOff, Error> {
    let progress = progress
        .map(|p| super::progress::progress(cx, p, goal, told))
        .transpose()?;
    let mut quantities = quantities(cx, record, space, told)?;
    quantities.extend(progress.iter().flat_map(progress_quantities));
    let prefer = prefer.map(|p| tie_rule(cx, p, &quantities)).transpose()?;
    Ok((quantities, prefer, progress))
}

/// `record:`: names that are words, unique, and not a results.csv column (a parameter's,
/// [`LOG_COLUMNS`] or the progress columns); regexes that compile, given unless the
/// evaluations are `told`.
fn quantities(
    cx: &Ctx,
    raw: &[RawQuantity],
    space: &Space,
    told: bool,
) -> Result<Vec<Quantity>, Error> {
    let taken: BTreeSet<&str> = (space.params.iter().map(|p| p.name.as_str()))
        .chain(LOG_COLUMNS)
        .chain([progress::STEP, progress::VALUE])
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for q in raw {
        let name = &q.name.value;
        let word = !name.is_empty()
            && (name.chars()).all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !word {
            let message = format!("`record` name `{name}` is not a word");
            return cx.err(
                &q.name.referenced,
                message,
                Some("letters, digits and `_`, e.g. `train_s`"),
            );
        }
        if taken.contains(name.as_str()) || !seen.insert(name) {
            let message = format!("`record` name `{name}` is already a column of results.csv");
            return cx.err(
                &q.name.referenced,
                message,
                Some("give it a name of its own"),
            );
        }
        let regex = match &q.regex {
            Some(r) => Some(cx.number_regex(r, "record")?),
            None if told => None,
            None => {
                let message = format!("`record` `{name}` has no `regex:`: nothing would read its value from the program's output");
                let hint = "e.g. `regex: 'train_s: ([0-9.]+)'` (the first group is the number)";
                return cx.err(&q.name.referenced, message, Some(hint));
            }
        };
        out.push(Quantity {
            name: name.clone(),
            regex,
            group: 1,
        });
    }
    Ok(out)
}

/// `prefer:`: `within` a finite number, 0 or more; exactly one of `min`/`max`, naming a
/// recorded quantity or a built-in one.
fn tie_rule(cx: &Ctx, raw: &Spanned<RawPrefer>, quantities: &[Quantity]) -> Result<Prefer, Error> {
    let p = &raw.value;
    let within = cx.valid(&p.within, "prefer.within", band)?;
    let (name, least) = match (&p.min, &p.max) {
        (Some(n), None) => (n, true),
        (None, Some(n)) => (n, false),
        _ => {
            let message = "`prefer` needs one of `min:` or `max:`".to_string();
            let hint = "e.g. `prefer: {within: 0.002, min: train_s}`";
            return cx.err(&raw.referenced, message, Some(hint));
        }
    };
    let known = (quantities.iter().map(|q| q.name.as_str()))
        .chain(BUILT_IN)
        .collect::<Vec<_>>();
    if !known.contains(&name.value.as_str()) {
        let message = format!("`prefer` names `{}`, which is not recorded", name.value);
        let hint = format!("one of: {}", known.join(", "));
        return cx.err(&name.referenced, message, Some(&hint));
    }
    Ok(Prefer {
        within,
        quantity: name.value.clone(),
        least,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_s_edge_counts_despite_binary_rounding() {
        let (y, best) = (0.9721_f64, 0.9741_f64);
        assert!(best - y > 0.002, "the rounding this guards against");
        assert!(Band::Absolute(0.002).holds(y, best));
        assert!(!Band::Absolute(0.002).holds(0.9720, 0.9741));
        assert!(Band::Relative(0.05).holds(-2.1, -2.0));
        assert!(!Band::Relative(0.05).holds(-2.11, -2.0));
        assert_eq!(Band::Relative(0.05).to_string(), "5%");
    }

    #[test]
    fn within_reads_a_width_or_a_percentage() {
        assert_eq!(band(&RawBand::Text("5%".into())), Ok(Band::Relative(0.05)));
        assert_eq!(band(&RawBand::Number(0.002)), Ok(Band::Absolute(0.002)));
        assert!(band(&RawBand::Text("5".into())).is_err());
        assert!(band(&RawBand::Text("-5%".into())).is_err());
    }
}
