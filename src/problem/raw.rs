//! The problem file as written: the serde types the YAML is read into, with the position of
//! every value a later check may point at, and the YAML parser's errors as `file:line:col`.
//!
//! Nothing here is validated beyond what serde checks (keys and types); [`file`](super::file)
//! turns a [`RawProblem`] into a [`Problem`](super::Problem).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::{Error, Span};
use crate::problem::param::Scalar;
use crate::problem::vocabulary::{CheckMode, Goal, MetricKind, Reduce, Stream};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSearch {
    pub learner: Option<Spanned<String>>,
    pub max_evals: Option<Spanned<usize>>,
    pub initial: Option<Spanned<usize>>,
    pub kappa: Option<Spanned<f64>>,
    pub seed: Option<u64>,
    pub pool: Option<Spanned<usize>>,
    /// How many of the best the end-of-run verification re-measures (0: none), and in how
    /// many rounds (`--verify`, `--verify-rounds`).
    pub verify: Option<Spanned<usize>>,
    pub verify_rounds: Option<Spanned<usize>>,
    /// `local` or `slurm` (checked where the run's settings are resolved).
    pub executor: Option<Spanned<String>>,
}

/// The `slurm:` section: how `--executor slurm` submits its jobs.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlurm {
    pub workers: Option<Spanned<usize>>,
    pub partition: Option<String>,
    pub time: Option<String>,
    pub account: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawScalar {
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(String),
}

/// A value, or a list of values meaning "any of these" (a forbidden entry's
/// `{P0: [a, b], P2: c}`, as ConfigSpace's ForbiddenInClause).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawValues {
    One(RawScalar),
    AnyOf(Vec<RawScalar>),
}

impl RawValues {
    pub fn values(&self) -> Vec<RawScalar> {
        match self {
            RawValues::One(v) => vec![v.clone()],
            RawValues::AnyOf(v) => v.clone(),
        }
    }
}

impl From<RawScalar> for Scalar {
    fn from(r: RawScalar) -> Scalar {
        match r {
            RawScalar::Bool(b) => Scalar::Bool(b),
            RawScalar::Int(i) => Scalar::Int(i),
            RawScalar::Real(x) => Scalar::Real(x),
            RawScalar::Str(s) => Scalar::Str(s),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    Ordinal,
    Categorical,
    Integer,
    Real,
    Boolean,
    Permutation,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub kind: Spanned<ParamType>,
    pub values: Option<Spanned<Vec<RawScalar>>>,
    pub choices: Option<Spanned<Vec<String>>>,
    /// A permutation's items, and what its value joins them with (a space by default).
    pub items: Option<Spanned<Vec<String>>>,
    pub separator: Option<Spanned<String>>,
    pub low: Option<Spanned<f64>>,
    pub high: Option<Spanned<f64>>,
    #[serde(default)]
    pub log: bool,
    pub default: Option<Spanned<RawScalar>>,
    pub when: Option<Spanned<BTreeMap<String, Vec<RawScalar>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawCommand {
    Line(String),
    Args(Vec<String>),
}

impl RawCommand {
    /// The command as one template text (a list is joined with spaces).
    pub fn text(&self) -> String {
        match self {
            RawCommand::Line(s) => s.clone(),
            RawCommand::Args(v) => v.join(" "),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    pub kind: Option<MetricKind>,
    /// Required for a number read by a regex and for a told value (either may be a time, an
    /// accuracy or a loss); a time measured by moldtune is minimised when it is absent.
    pub goal: Option<Goal>,
    pub regex: Option<Spanned<String>>,
    /// `instructions`/`cycles`: count only functions whose names match this regex.
    pub function: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTimeouts {
    pub compile_s: Option<Spanned<f64>>,
    pub run_s: Option<Spanned<f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    #[serde(default)]
    pub mode: CheckMode,
    #[serde(default)]
    pub stream: Stream,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub rtol: Option<Spanned<f64>>,
    pub atol: Option<Spanned<f64>>,
    /// Extra compile arguments of the check build only (a string or a list).
    pub compile_extra: Option<RawCommand>,
    pub reference: Option<Spanned<String>>,
    /// More inputs to check on: environment sets, each on top of `env`.
    #[serde(default)]
    pub variations: Vec<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProblem {
    pub name: Option<Spanned<String>>,
    /// Absent with `run:`: the evaluations are told by a program (`moldtune serve`, `ask`,
    /// `tell`), nothing is built or run.
    pub mold: Option<Spanned<String>>,
    #[serde(default)]
    pub sources: Vec<Spanned<String>>,
    pub params: Spanned<Vec<RawParam>>,
    #[serde(default)]
    pub constraints: Vec<Spanned<String>>,
    #[serde(default)]
    pub forbidden: Vec<Spanned<BTreeMap<String, RawValues>>>,
    /// Absent: no build step, the variant is run as rendered (a script).
    pub compile: Option<Spanned<RawCommand>>,
    pub run: Option<Spanned<RawCommand>>,
    #[serde(default)]
    pub env: BTreeMap<String, Spanned<String>>,
    pub metric: Option<Spanned<RawMetric>>,
    pub repeats: Option<Spanned<u64>>,
    pub reduce: Option<Reduce>,
    pub timeouts: Option<RawTimeouts>,
    pub max_output_mb: Option<Spanned<u64>>,
    pub check: Option<RawCheck>,
    pub search: Option<RawSearch>,
    pub slurm: Option<RawSlurm>,
    /// Quantities read from each timed run beside the metric.
    #[serde(default)]
    pub record: Vec<crate::problem::record::RawQuantity>,
    /// The tie rule among near-equal objectives.
    pub prefer: Option<Spanned<crate::problem::record::RawPrefer>>,
    /// Intermediate values the program prints while it runs (for pruning).
    pub progress: Option<crate::problem::progress::RawProgress>,
    /// What one timed run computes (GFLOP/s and the roofline).
    pub work: Option<Spanned<crate::problem::work::RawWork>>,
}

/// Parses the problem file's text; unknown keys and wrong types are errors at their position.
pub fn parse(file: &Path, text: &str) -> Result<RawProblem, Error> {
    from_yaml(file, text)
}

/// Parses a YAML file of moldtune's (a problem file, an mctree `--config`) into `T`; unknown
/// keys and wrong types are errors at their `file:line:col`.
pub fn from_yaml<T: serde::de::DeserializeOwned>(file: &Path, text: &str) -> Result<T, Error> {
    serde_saphyr::from_str(text).map_err(|e| yaml_error(file, e))
}

/// The parser's "budget breached: Nodes { nodes: 250001 }" in words.
fn budget_text(raw: &str) -> String {
    let re = regex::Regex::new(r"budget breached: (\w+) \{ \w+: (\d+) \}").expect("valid regex");
    let Some(c) = re.captures(raw) else {
        return "the file is too large or too deeply nested for a problem file".into();
    };
    let what = match &c[1] {
        "Nodes" => "values (YAML nodes)",
        "Depth" => "levels of nesting",
        "Aliases" | "AliasExpansions" => "alias expansions",
        "Documents" => "documents",
        _ => "elements",
    };
    format!(
        "the file is too large for a problem file: {} {what} is past the limit",
        &c[2]
    )
}

/// The parser's messages that read as its own internals, said as a user reads the file.
const OUR_WORDS: &[(&str, &str)] = &[
    (
        r"^expected sequence start$",
        "a list is expected here (`[a, b]`, or one `- item` a line)",
    ),
    (
        r"^expected mapping start$",
        "a map is expected here (`{key: value}`, or one `key: value` a line)",
    ),
    (r"^expected string scalar$", "a text is expected here"),
    (r"^invalid floating point.*$", "a number is expected here"),
    (
        r"^invalid (unsigned )?integer.*$",
        "a whole number is expected here",
    ),
    (
        r"^invalid bool(ean)?.*$",
        "`true` or `false` is expected here",
    ),
    (r"^duplicate mapping key: (.+)$", "`$1` is given twice"),
    (r"^missing field `(.+)`$", "`$1` is missing"),
    (
        r"^unknown variant `(.*)`, expected one of (.+)$",
        "`$1` is not one of $2",
    ),
    (
        r"^unknown variant `(.*)`, expected `(.+)`$",
        "`$1` is not `$2`",
    ),
    (r"^unclosed bracket '(.)'$", "a `$1` is never closed"),
    (
        r"^invalid type: (.+), expected (.+)$",
        "$1 where $2 is expected",
    ),
    (
        r"^invalid [ui](8|16|32|64|128|size)\b.*$",
        "a whole number of 0 or more is expected here",
    ),
    (
        r"^cannot deserialize null into .*$",
        "a value is missing here (empty, or `null`)",
    ),
    (
        r"^cannot deserialize tagged scalar into .*$",
        "a YAML tag (`!!…`) is not allowed here: write the value alone",
    ),
    (
        r"^externally tagged enum expected scalar or mapping$",
        "a word or a map is expected here",
    ),
    (
        r"^invalid enum variant$",
        "one of the words allowed here is expected",
    ),
    (
        r"^data did not match any variant of untagged enum \w+$",
        "this value has none of the forms allowed here",
    ),
    (
        r"^non-finite float `(.+)` rejected by .*$",
        "`$1` is not a finite number",
    ),
    // The YAML syntax itself: the scanner's words, said as such.
    (
        r"^(.*(?:while parsing|while scanning|did not find expected|not allowed in this context|simple key expected|bracket|unclosed quote|indentation|trailing content|only valid inside a block|illegal placement|unexpected EOF|unexpected character|found a tab|unknown escape|comments must be separated|may not precede).*)$",
        "not valid YAML here: $1",
    ),
];

/// `message` in [`OUR_WORDS`] when one of them says it.
fn in_our_words(message: &str) -> String {
    for (pattern, words) in OUR_WORDS {
        let re = regex::Regex::new(pattern).expect("valid regex");
        if re.is_match(message) {
            return re.replace(message, *words).into_owned();
        }
    }
    message.to_string()
}

/// Converts a serde-saphyr error into `file:line:col: message` plus a hint.
fn yaml_error(file: &Path, e: serde_saphyr::Error) -> Error {
    let text = e.to_string();
    // The rendered message may carry a source snippet; keep its first line, which says what.
    let first = text.lines().next().unwrap_or("invalid YAML").trim();
    // Drop the parser's own "error: line N column M:" prefix: we print file:line:col.
    let first = regex::Regex::new(r"^(error:\s*)?(line \d+ column \d+:\s*)?")
        .expect("valid regex")
        .replace(first, "")
        .to_string();
    // The parser's advice to its own API users means nothing to ours.
    let first = first.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    let first = match first.contains("budget breached") {
        true => budget_text(&first),
        false => in_our_words(&first),
    };
    let hint = if first.contains("unknown field") {
        Some(
            "see docs/problem-file.md (or docs/mctree.md, \"Defaults\") for the allowed keys"
                .to_string(),
        )
    } else if first.starts_with("not valid YAML") {
        Some(
            "check the indentation, the quotes and the brackets on this line and the one before"
                .to_string(),
        )
    } else if first.contains("expected") || first.contains("is not one of") {
        Some("check the value's type against docs/problem-file.md".to_string())
    } else {
        None
    };
    match e.location() {
        Some(loc) if loc.line() > 0 => Error::Config {
            span: Span {
                file: file.to_path_buf(),
                line: loc.line() as u32,
                col: loc.column() as u32,
            },
            message: first,
            hint,
        },
        _ => Error::ConfigFile {
            file: file.to_path_buf(),
            message: first,
            hint,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The YAML library's wording (`expected sequence start`, `invalid floating point`,
    /// `duplicate mapping key`, `unknown variant`, `missing field`) reached users; each is
    /// said in the file's terms now, at its line and column.
    #[test]
    fn the_parser_s_messages_are_said_in_the_file_s_terms() {
        let cases = [
            ("params: 5\n", "1:9: a list is expected here"),
            (
                "params:\n  - {name: X, type: real, low: a, high: 2}\n",
                "a number is expected here",
            ),
            ("name: [1]\nparams: []\n", "1:7: a text is expected here"),
            (
                "params:\n  - name: X\n    type: real\n    low: 1\n    low: 2\n",
                "`low` is given twice",
            ),
            (
                "metric: {goal: up}\nparams: []\n",
                "`up` is not one of minimize, maximize",
            ),
            ("params:\n  - {name: X, low: 1}\n", "`type` is missing"),
            ("params: [\n", "a `[` is never closed"),
            (
                "params:\n  - {name: ~, type: real, low: 1, high: 2}\n",
                "a value is missing here",
            ),
            ("name: !!int 5\nparams: []\n", "a YAML tag"),
            (
                "params:\n  - {name: X, type: ordinal, values: [[1]]}\n",
                "none of the forms allowed here",
            ),
            ("repeats: -3\nparams: []\n", "a whole number of 0 or more"),
            (
                "params:\n  - {name: X, type: !!int real, low: 1, high: 2}\n",
                "one of the words allowed here",
            ),
            ("name: a: b\nparams: []\n", "not valid YAML here"),
        ];
        for (yaml, says) in cases {
            let e = parse(Path::new("p.yaml"), yaml)
                .expect_err(yaml)
                .to_string();
            assert!(e.contains(says), "{yaml:?}: {e}");
            let library = [
                "sequence start",
                "floating point",
                "mapping key",
                "variant",
                "missing field",
                "bracket '",
                "Option<",
                "u64",
                "untagged",
                "tagged scalar",
                "policy",
            ];
            for library in library {
                assert!(!e.contains(library), "{yaml:?}: {e}");
            }
        }
    }
}
