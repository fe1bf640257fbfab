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
