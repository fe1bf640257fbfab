//! Where a problem file's errors point: its path and text, the directory its relative
//! paths start from, and the `file:line:col` of a value.

use std::path::Path;

use serde_saphyr::{Location, Spanned};

use crate::error::{Error, Span};

/// Where errors point: the problem file (its path and text), and the directory its
/// relative paths start from.
pub struct Ctx<'a> {
    pub file: &'a Path,
    pub dir: &'a Path,
    pub text: &'a str,
}

impl Ctx<'_> {
    pub fn span(&self, loc: &Location) -> Span {
        Span {
            file: self.file.to_path_buf(),
            line: loc.line() as u32,
            col: loc.column() as u32,
        }
    }

    pub fn err<T>(&self, loc: &Location, message: String, hint: Option<&str>) -> Result<T, Error> {
        Err(Error::Config {
            span: self.span(loc),
            message,
            hint: hint.map(str::to_string),
        })
    }

    /// A regex that reads one number from a program's output (`metric.regex`, a `record:`
    /// regex): it compiles and has exactly one capture group, the number (without one, the
    /// whole match was taken, silently; with two, which one counts is a guess).
    pub fn number_regex(&self, r: &Spanned<String>, key: &str) -> Result<regex::Regex, Error> {
        let re = regex::Regex::new(&r.value).or_else(|e| {
            self.err(
                &r.referenced,
                format!("invalid `{key}` regex `{}`: {e}", r.value),
                None,
            )
        })?;
        match re.captures_len() - 1 {
            1 => Ok(re),
            n => self.err(
                &r.referenced,
                format!("`{key}` regex `{}` has {n} capture groups; it needs exactly one, around the number", r.value),
                Some("e.g. `'accuracy: ([0-9.]+)'`; write other groups as `(?:…)`"),
            ),
        }
    }

    /// `check(v)` on a value of the file, or an error at its position naming `key`.
    pub fn valid<T, U>(
        &self,
        v: &Spanned<T>,
        key: &str,
        check: impl Fn(&T) -> Result<U, String>,
    ) -> Result<U, Error> {
        check(&v.value).or_else(|why| self.err(&v.referenced, format!("`{key}` {why}"), None))
    }
}
