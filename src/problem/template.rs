//! Command templates (tera): the compile command, the run command and environment values.
//!
//! A template is rendered with the configuration's active parameters and a few built-in
//! variables. For a command, whitespace written in the template separates arguments, and
//! the text a `{{ }}` expression outputs never does: a path or a value with spaces stays one
//! argument, an empty one vanishes (an "off" flag is no argument), and `{{ P | words }}`
//! passes a value's words as separate arguments (e.g. `-mllvm -polly`). Nothing is ever
//! passed to a shell, so a value such as `; rm -rf ~` is just an argument.
//!
//! How: tera's escape hook (on for commands) brackets everything a `{{ }}` writes with two
//! marker characters, and the rendered text is split on whitespace outside the brackets.
//! This keeps tera's own semantics (conditions, comparisons, filters) intact, which
//! substituting placeholders for values would not.
//!
//! Which names a template reads comes from tera's own parser ([`Template::variables`]), so a
//! misspelt name in a branch the default configuration does not take is found too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::problem::space::{Config, Space};

/// Opens and closes the output of one `{{ }}` expression in a command being rendered.
const OPEN: char = '\u{1}';
const CLOSE: char = '\u{2}';
/// Separates the paths of `sources`: each is its own argument, spaces or not.
const BREAK: char = '\u{1f}';

/// The built-in template variables, beside the parameters.
pub const BUILTINS: [&str; 5] = ["source", "exe", "sources", "problem_dir", "work_dir"];

/// The tera instance every template is rendered with: the `words` filter, and an escape
/// function that brackets each expression's output (used only when rendering commands).
static TERA: LazyLock<tera::Tera> = LazyLock::new(|| {
    let mut t = tera::Tera::default();
    t.set_escape_fn(bracket);
    t.register_filter("words", words);
    t
});

fn bracket(input: &str, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    write!(out, "{OPEN}{input}{CLOSE}")
}

/// `{{ P | words }}`: the value as template text, so its whitespace separates arguments.
fn words(v: tera::Value, _: tera::Kwargs, _: &tera::State) -> tera::Value {
    tera::Value::safe_string(&v.to_string())
}

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
    pub fn placeholder(problem_dir: &Path, sources: &[PathBuf], source: &str) -> Builtins {
        Builtins {
            source: source.into(),
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
    ctx.insert("sources", &srcs.join(&BREAK.to_string()));
    ctx.insert("problem_dir", &b.problem_dir.display().to_string());
    ctx.insert("work_dir", &b.work_dir.display().to_string());
    ctx
}

impl Template {
    pub fn new(text: String) -> Template {
        Template { text }
    }

    /// The rendered text, e.g. an environment value (`sources` joined by spaces).
    pub fn render(&self, ctx: &tera::Context) -> Result<String, String> {
        Ok(self.render_with(ctx, false)?.replace(BREAK, " "))
    }

    /// Renders and splits into arguments (see the module documentation).
    pub fn argv(&self, ctx: &tera::Context) -> Result<Vec<String>, String> {
        Ok(split_args(&self.render_with(ctx, true)?))
    }

    fn render_with(&self, ctx: &tera::Context, bracketed: bool) -> Result<String, String> {
        if !self.text.contains("{{") && !self.text.contains("{%") {
            return Ok(self.text.clone());
        }
        TERA.render_str(&self.text, ctx, bracketed)
            .map_err(|e| error_chain(&e))
    }

    /// Every variable the template reads (`{{ X }}`, `{% if X %}`, `{% for x in X %}`, filter
    /// arguments, `X.y`, ...), by tera's parser: loop variables, `set` variables and `loop`
    /// are not reads. An error when the template does not parse.
    pub fn variables(&self) -> Result<BTreeSet<String>, String> {
        let mut t = TERA.clone();
        t.add_raw_template("template", &self.text)
            .map_err(|e| error_chain(&e))?;
        let vars = t
            .get_template_variables("template")
            .map_err(|e| error_chain(&e))?;
        Ok(vars.into_iter().map(str::to_string).collect())
    }

    /// The variables the template reads ([`Template::variables`]); none if it does not parse.
    pub fn identifiers(&self) -> BTreeSet<String> {
        self.variables().unwrap_or_default()
    }

    /// The byte offset of the first read of `name` inside a `{{ }}` or `{% %}` block (not in a
    /// string literal, not as an attribute `x.name`), for error positions.
    pub fn position_of(&self, name: &str) -> Option<usize> {
        blocks(&self.text)
            .into_iter()
            .find_map(|(start, body)| ident_in(body, name).map(|k| start + k))
    }
}

/// tera's errors chain their causes; the whole chain on one line.
fn error_chain(e: &tera::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg.replace('\n', " ")
}

/// Splits a bracketed rendering into arguments: at whitespace outside brackets and at every
/// [`BREAK`]; empty arguments are dropped.
fn split_args(rendered: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut cur = String::new();
    // Brackets can nest (a filter applied to a captured `set` block): count them.
    let mut depth = 0usize;
    for ch in rendered.chars() {
        match ch {
            OPEN => depth += 1,
            CLOSE => depth = depth.saturating_sub(1),
            BREAK => args.push(std::mem::take(&mut cur)),
            c if c.is_whitespace() && depth == 0 => args.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    args.push(cur);
    args.retain(|a| !a.is_empty());
    args
}

/// The bodies of the `{{ }}` and `{% %}` blocks of `text`, with their byte offsets
/// (comments `{# #}` skipped; a closing delimiter inside a string literal does not close).
fn blocks(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = text[i..].find('{') {
        let at = i + k;
        let close = match text.get(at + 1..at + 2) {
            Some("{") => "}}",
            Some("%") => "%}",
            Some("#") => "#}",
            _ => {
                i = at + 1;
                continue;
            }
        };
        let start = at + 2;
        let end = block_end(text, start, close).unwrap_or(text.len());
        if close != "#}" {
            out.push((start, &text[start..end]));
        }
        i = (end + 2).min(text.len());
    }
    out
}

/// Where `close` ends the block starting at `start`, skipping string literals.
fn block_end(text: &str, start: usize, close: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if matches!(b, b'"' | b'\'' | b'`') && close != "#}" => quote = Some(b),
            None if text[i..].starts_with(close) => return Some(i),
            None => {}
        }
        i += 1;
    }
    None
}

/// The offset in a block's body of the first identifier token `name` outside string
/// literals and not after a `.` (an attribute).
fn ident_in(body: &str, name: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    // `prev`: the last byte that is not whitespace, outside string literals.
    let (mut i, mut quote, mut prev) = (0, None, b' ');
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            quote = (b != q).then_some(q);
        } else if matches!(b, b'"' | b'\'' | b'`') {
            quote = Some(b);
        } else if is_ident(b) {
            // Whole tokens are skipped, so `i` is always at a token's start here.
            let len = bytes[i..].iter().take_while(|&&c| is_ident(c)).count();
            if &body[i..i + len] == name && prev != b'.' {
                return Some(i);
            }
            i += len;
            prev = bytes[i - 1];
            continue;
        }
        if !b.is_ascii_whitespace() {
            prev = b;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtins(exe: &str, sources: &[&str]) -> Builtins {
        Builtins {
            source: "variant.c".into(),
            exe: exe.into(),
            sources: sources.iter().map(PathBuf::from).collect(),
            problem_dir: "/p q".into(),
            work_dir: "/w".into(),
        }
    }

    fn ctx_with(pairs: &[(&str, serde_json::Value)], b: &Builtins) -> tera::Context {
        let space = Space {
            params: vec![],
            order: vec![],
            forbidden: vec![],
            constraints: vec![],
        };
        let mut ctx = context(&space, &Config(vec![]), b);
        for (k, v) in pairs {
            ctx.insert(k.to_string(), v);
        }
        ctx
    }

    #[test]
    fn renders_and_splits_without_a_shell() {
        let mut ctx = tera::Context::new();
        ctx.insert("P0", &"-mllvm -polly");
        ctx.insert("P1", &"");
        ctx.insert("P2", &"; rm -rf ~");
        let t = Template::new("clang-22 -O3 {{ P0 | words }} {{ P1 }} -DX={{ P2 | words }}".into());
        assert_eq!(
            t.argv(&ctx).unwrap(),
            vec!["clang-22", "-O3", "-mllvm", "-polly", "-DX=;", "rm", "-rf", "~"]
        );
    }

    #[test]
    fn a_value_or_path_with_spaces_stays_one_argument() {
        let b = builtins("/my dir/variant", &[]);
        let ctx = ctx_with(&[("D", "a b".into()), ("OFF", "".into())], &b);
        let t =
            Template::new("cc -DX={{ D }} {{ OFF }} -I{{ problem_dir }}/inc -o {{ exe }}".into());
        assert_eq!(
            t.argv(&ctx).unwrap(),
            vec!["cc", "-DX=a b", "-I/p q/inc", "-o", "/my dir/variant"]
        );
        let t = Template::new("{{ D | upper }} {% set s = D %}{{ s }}".into());
        assert_eq!(t.argv(&ctx).unwrap(), vec!["A B", "a b"]);
    }

    #[test]
    fn a_condition_spanning_words_gives_each_word_an_argument() {
        let b = builtins("x", &[]);
        let t = Template::new("cc {% if POLLY %}-mllvm -polly{% endif %} {{ source }}".into());
        let on = ctx_with(&[("POLLY", true.into())], &b);
        assert_eq!(
            t.argv(&on).unwrap(),
            vec!["cc", "-mllvm", "-polly", "variant.c"]
        );
        let off = ctx_with(&[("POLLY", false.into())], &b);
        assert_eq!(t.argv(&off).unwrap(), vec!["cc", "variant.c"]);
    }

    #[test]
    fn each_source_is_an_argument_and_env_values_are_text() {
        let b = builtins("x", &["/a b/u.c", "/v.c"]);
        let ctx = ctx_with(&[], &b);
        let t = Template::new("cc {{ sources }}".into());
        assert_eq!(t.argv(&ctx).unwrap(), vec!["cc", "/a b/u.c", "/v.c"]);
        assert_eq!(t.render(&ctx).unwrap(), "cc /a b/u.c /v.c");
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

    #[test]
    fn variables_are_what_tera_reads() {
        let t = Template::new(
            "{% if POLY is defined %}x{% endif %} {% for f in L %}{{ f }}{{ loop.index }}{% endfor %} \
             {% set s = A %}{{ s }} {{ B | default(value=C) }} {{ D.y }} {{ \"E\" }} {# F #}"
                .into(),
        );
        let got: Vec<String> = t.variables().unwrap().into_iter().collect();
        assert_eq!(got, vec!["A", "B", "C", "D", "L", "POLY"]);
        assert!(Template::new("{% if %}".into()).variables().is_err());
    }

    #[test]
    fn position_of_skips_strings_attributes_and_comments() {
        let text = "cc {# POLY #} {{ \"POLY\" }} {{ x.POLY }} {% if POLY %}{% endif %}";
        let t = Template::new(text.into());
        assert_eq!(t.position_of("POLY"), Some(text.rfind("POLY").unwrap()));
        assert_eq!(t.position_of("NONE"), None);
    }
}
