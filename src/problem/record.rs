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
use crate::problem::space::Space;

/// A quantity every timed run reports on stdout (`record:`).
#[derive(Debug, Clone)]
pub struct Quantity {
    pub name: String,
    /// The first group (or the whole match) of its last match is the value.
    pub regex: regex::Regex,
}

/// The tie rule (`prefer:`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prefer {
    /// How far from the best objective a configuration may be and still count as equal, in
    /// the metric's units.
    pub within: f64,
    /// The quantity that decides among them: a `record:` name, `run_s` or `compile_s`.
    pub quantity: String,
    /// Whether the least of it is preferred (`min:`), else the most (`max:`).
    pub least: bool,
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
    pub regex: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrefer {
    pub within: Spanned<f64>,
    pub min: Option<Spanned<String>>,
    pub max: Option<Spanned<String>>,
}

impl Ctx<'_> {
    /// `record:` and `prefer:`, validated.
    pub(super) fn trade_off(
        &self,
        record: &[RawQuantity],
        prefer: Option<&Spanned<RawPrefer>>,
        space: &Space,
    ) -> Result<(Vec<Quantity>, Option<Prefer>), Error> {
        let quantities = self.quantities(record, space)?;
        let prefer = prefer.map(|p| self.prefer(p, &quantities)).transpose()?;
        Ok((quantities, prefer))
    }

    /// `record:`: names that are words, unique, and not a results.csv column (a parameter's
    /// or [`LOG_COLUMNS`]); regexes that compile.
    fn quantities(&self, raw: &[RawQuantity], space: &Space) -> Result<Vec<Quantity>, Error> {
        let taken: BTreeSet<&str> = (space.params.iter().map(|p| p.name.as_str()))
            .chain(LOG_COLUMNS)
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
                return self.err(
                    &q.name.referenced,
                    message,
                    Some("letters, digits and `_`, e.g. `train_s`"),
                );
            }
            if taken.contains(name.as_str()) || !seen.insert(name) {
                let message = format!("`record` name `{name}` is already a column of results.csv");
                return self.err(
                    &q.name.referenced,
                    message,
                    Some("give it a name of its own"),
                );
            }
            let regex = regex::Regex::new(&q.regex.value).or_else(|e| {
                let message = format!("invalid `record` regex `{}`: {e}", q.regex.value);
                self.err(&q.regex.referenced, message, None)
            })?;
            out.push(Quantity {
                name: name.clone(),
                regex,
            });
        }
        Ok(out)
    }

    /// `prefer:`: `within` a finite number, 0 or more; exactly one of `min`/`max`, naming a
    /// recorded quantity or a built-in one.
    fn prefer(&self, raw: &Spanned<RawPrefer>, quantities: &[Quantity]) -> Result<Prefer, Error> {
        let p = &raw.value;
        let within = self.valid(&p.within, "prefer.within", |&x| {
            crate::problem::limits::non_negative(x)
        })?;
        let (name, least) = match (&p.min, &p.max) {
            (Some(n), None) => (n, true),
            (None, Some(n)) => (n, false),
            _ => {
                let message = "`prefer` needs one of `min:` or `max:`".to_string();
                let hint = "e.g. `prefer: {within: 0.002, min: train_s}`";
                return self.err(&raw.referenced, message, Some(hint));
            }
        };
        let known = (quantities.iter().map(|q| q.name.as_str()))
            .chain(BUILT_IN)
            .collect::<Vec<_>>();
        if !known.contains(&name.value.as_str()) {
            let message = format!("`prefer` names `{}`, which is not recorded", name.value);
            let hint = format!("one of: {}", known.join(", "));
            return self.err(&name.referenced, message, Some(&hint));
        }
        Ok(Prefer {
            within,
            quantity: name.value.clone(),
            least,
        })
    }
}
