//! Command templates (tera): the compile command, the run command and environment values.
//!
//! A template is rendered with the configuration's active parameters and a few built-in
//! variables, then split on whitespace into an argv. Nothing is ever passed to a shell, so a
//! parameter value such as `; rm -rf ~` is just an argument.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::problem::space::{Config, Space};

#[derive(Debug, Clone)]
pub struct Template {
    pub text: String,
}

/// The built-in template variables.
#[derive(Debug, Clone)]
pub struct Builtins {
    /// The rendered variant's file name (relative to `work_dir`, the compile's directory).
    pub source: String,
    /// The binary to produce / run.
    pub exe: String,
    pub sources: Vec<PathBuf>,
    pub problem_dir: PathBuf,
    pub work_dir: PathBuf,
}

impl Builtins {
    /// Stand-ins used to validate templates when the problem is loaded.
    pub fn placeholder(problem_dir: &Path, sources: &[PathBuf]) -> Builtins {
        Builtins {
            source: "variant.c".into(),
            exe: "./variant".into(),
            sources: sources.to_vec(),
            problem_dir: problem_dir.to_path_buf(),
            work_dir: problem_dir.to_path_buf(),
        }
    }
}

pub fn context(space: &Space, c: &Config, b: &Builtins) -> tera::Context {
    let mut ctx = tera::Context::new();
    for (p, &x) in space.params.iter().zip(&c.0) {
        ctx.insert(p.name.clone(), &p.json(x));
    }
    ctx.insert("source", &b.source);
    ctx.insert("exe", &b.exe);
    let srcs: Vec<String> = b.sources.iter().map(|p| p.display().to_string()).collect();
    ctx.insert("sources", &srcs.join(" "));
    ctx.insert("problem_dir", &b.problem_dir.display().to_string());
    ctx.insert("work_dir", &b.work_dir.display().to_string());
    ctx
}

impl Template {
    pub fn new(text: String) -> Template {
        Template { text }
    }

    pub fn render(&self, ctx: &tera::Context) -> Result<String, String> {
        if !self.text.contains("{{") && !self.text.contains("{%") {
            return Ok(self.text.clone());
        }
        tera::Tera::default()
            .render_str(&self.text, ctx, false)
            .map_err(|e| {
                // tera's errors chain their causes; show the whole chain on one line.
                let mut msg = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    msg.push_str(": ");
                    msg.push_str(&s.to_string());
                    src = s.source();
                }
                msg.replace('\n', " ")
            })
    }

    /// Renders and splits into arguments (empty pieces vanish, so an "off" flag is no argument).
    pub fn argv(&self, ctx: &tera::Context) -> Result<Vec<String>, String> {
        Ok(self
            .render(ctx)?
            .split_whitespace()
            .map(str::to_string)
            .collect())
    }

    /// Identifiers that appear inside `{{ }}` or `{% %}` blocks: which parameters the template
    /// uses (a best effort that errs towards "used").
    pub fn identifiers(&self) -> HashSet<String> {
        let blocks = Regex::new(r"(?s)\{\{(.*?)\}\}|\{%(.*?)%\}").expect("valid regex");
        let ident = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("valid regex");
        let mut out = HashSet::new();
        for cap in blocks.captures_iter(&self.text) {
            let body = cap.get(1).or(cap.get(2)).map_or("", |m| m.as_str());
            for m in ident.find_iter(body) {
                out.insert(m.as_str().to_string());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_splits_without_a_shell() {
        let mut ctx = tera::Context::new();
        ctx.insert("P0", &"-mllvm -polly");
        ctx.insert("P1", &"");
        ctx.insert("P2", &"; rm -rf ~");
        let t = Template::new("clang-22 -O3 {{ P0 }} {{ P1 }} -DX={{ P2 }}".into());
        assert_eq!(
            t.argv(&ctx).unwrap(),
            vec!["clang-22", "-O3", "-mllvm", "-polly", "-DX=;", "rm", "-rf", "~"]
        );
    }

    #[test]
    fn undefined_variable_is_an_error() {
        let ctx = tera::Context::new();
        let t = Template::new("cc {{ nope }}".into());
        let e = t.render(&ctx).unwrap_err();
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn identifiers_found_in_blocks_only() {
        let t = Template::new("cc P9 {{ P0 }} {% if P1 %}-fopenmp{% endif %}".into());
        let ids = t.identifiers();
        assert!(ids.contains("P0") && ids.contains("P1") && !ids.contains("P9"));
    }
}
