//! Errors that end a moldtune command, each with its exit code.
//!
//! A failing *variant* is never an error (see [`crate::evaluate::outcome`]); these are failures of the
//! problem file, the command line or the machine, which stop the command before or between
//! evaluations without losing recorded results.

use std::path::PathBuf;

/// Exit codes, the one place they are defined (docs/files.md repeats this table).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// Internal error (a bug, or an I/O failure of the machine).
    pub const INTERNAL: u8 = 1;
    /// Usage or configuration error: bad command line, bad problem file, busy results directory.
    pub const USAGE: u8 = 2;
    /// The search ran but no variant succeeded.
    pub const NO_SUCCESS: u8 = 3;
    /// The regression gate found a regression.
    pub const REGRESSION: u8 = 4;
    /// The machine failed the run (disk full, directory unwritable, too many open files,
    /// compiler vanished); nothing was recorded for the evaluation in progress: fix it and
    /// `--resume`.
    pub const ENVIRONMENT: u8 = 5;
    /// The regression gate found a guarded configuration (or its reference) broken: it
    /// no longer builds, runs, or gives the reference's output.
    pub const BROKEN: u8 = 6;
    /// The regression gate could not decide within its rounds: the machine was too noisy
    /// for the threshold.
    pub const UNDECIDED: u8 = 7;
    /// Interrupted by SIGINT/SIGTERM; the summary was written and the run can be resumed.
    pub const INTERRUPTED: u8 = 130;
}

/// A position in a file, 1-based, printed as `file:line:col`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem-file error with a location: `file:line:col: message` plus a hint.
    #[error("{span}: {message}{}", hint_suffix(.hint))]
    Config {
        span: Span,
        message: String,
        hint: Option<String>,
    },
    /// A configuration error that has a file but no precise position.
    #[error("{}: {message}{}", .file.display(), hint_suffix(.hint))]
    ConfigFile {
        file: PathBuf,
        message: String,
        hint: Option<String>,
    },
    /// Bad command-line usage.
    #[error("{message}{}", hint_suffix(.hint))]
    Usage {
        message: String,
        hint: Option<String>,
    },
    /// The reference configuration could not be built or run, so no variant can be checked.
    /// `built` says whether it got as far as a program.
    #[error("the reference failed: {message}")]
    Reference { message: String, built: bool },
    #[error("{}", no_success(*evaluations, cause.as_ref(), *early))]
    NoSuccess {
        evaluations: usize,
        /// The most common cause and how many evaluations it ended.
        cause: Option<(String, usize)>,
        /// The run stopped before its budget: every evaluation failed for that cause.
        early: bool,
    },
    /// Interrupted: the run directory, and the command that resumes it (`run`, `mctree`).
    #[error("interrupted; resume with `moldtune {} --resume {}`", .1, .0.display())]
    Interrupted(PathBuf, &'static str),
    /// Interrupted where there is nothing to resume (`moldtune check`).
    #[error("interrupted: {0}")]
    Cancelled(String),
    /// The machine, not a variant, failed (see `evaluate::environment`).
    #[error("the machine failed, not the variant: {0}\n  hint: fix it, then continue the run with `--resume DIR` (`moldtune run`, or `moldtune mctree` for a run it started)")]
    Environment(String),
    /// Measurements too noisy to decide what was asked (`baseline --strict`).
    #[error("{message}{}", hint_suffix(.hint))]
    Undecidable {
        message: String,
        hint: Option<String>,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Internal(String),
}

/// "no variant succeeded (5 evaluations; all 5 ended: the program exited with code 1:
/// ModuleNotFoundError: …)": the cause, so that nobody has to open results.csv.
fn no_success(evaluations: usize, cause: Option<&(String, usize)>, early: bool) -> String {
    let head = format!("no variant succeeded ({evaluations} evaluations");
    match (cause, early) {
        (Some((why, _)), true) => format!(
            "{head}; the run stopped early: the default and every evaluation after it failed the same way, and the rest of the budget would too):\n  {}",
            why.replace('\n', "\n  ")
        ),
        (Some((why, n)), false) => format!(
            "{head}; the most common cause, {n} of them):\n  {}",
            why.replace('\n', "\n  ")
        ),
        (None, _) => format!("{head}, see results.csv `status`)"),
    }
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(h) => format!("\n  hint: {h}"),
        None => String::new(),
    }
}

impl Error {
    pub fn code(&self) -> u8 {
        match self {
            Error::Config { .. }
            | Error::ConfigFile { .. }
            | Error::Usage { .. }
            | Error::Reference { .. } => exit::USAGE,
            Error::NoSuccess { .. } => exit::NO_SUCCESS,
            Error::Interrupted(..) | Error::Cancelled(_) => exit::INTERRUPTED,
            Error::Environment(_) => exit::ENVIRONMENT,
            Error::Undecidable { .. } => exit::UNDECIDED,
            Error::Io { .. } | Error::Internal(_) => exit::INTERNAL,
        }
    }

    /// What went wrong, without its hint: for an error wrapped by one with a hint of its own.
    pub fn message(&self) -> String {
        let text = self.to_string();
        text.split("\n  hint: ")
            .next()
            .unwrap_or_default()
            .to_string()
    }

    pub fn usage(message: impl Into<String>, hint: Option<&str>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }

    /// An I/O failure: the environment's ([`is_environment`]: full, read-only, forbidden,
    /// out of files) or, otherwise, an internal error.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        let context = context.into();
        if is_environment(&source) {
            return Error::Environment(format!("{context}: {source}"));
        }
        Error::Io { context, source }
    }
}

/// Whether an I/O error is the environment's fault (full, read-only, forbidden, out of
/// files or memory) rather than a bug.
pub fn is_environment(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EROFS | libc::EACCES | libc::EPERM)
            | Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::EIO)
    )
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The candidate closest to `name` (edit distance, ignoring case) when it is close enough to
/// be a typo of it: at most one edit per three characters, and at least one.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance: insertions, deletions and substitutions of characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names_only() {
        let names = ["POLLY", "PTILE", "P0"];
        assert_eq!(did_you_mean("POLY", names), Some("POLLY"));
        assert_eq!(did_you_mean("ptile", names), Some("PTILE"));
        assert_eq!(did_you_mean("OMP_THREADS", names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
