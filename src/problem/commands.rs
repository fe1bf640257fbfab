//! The commands of the problem file (`compile`, `run`, each `env.NAME`) checked against the
//! space before anything runs: they render, name only variables that exist, split a
//! multi-flag value into arguments, and every parameter is used by a marker or a command.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use serde_saphyr::{Location, Spanned};

use crate::error::{did_you_mean, Error, Span};
use crate::problem::locate::Ctx;
use crate::problem::mold::Mold;
use crate::problem::param::{Kind, Param, Scalar};
use crate::problem::permutation::Permutation;
use crate::problem::raw::RawProblem;
use crate::problem::space::{Config, Space};
use crate::problem::template::{self, Template};

/// A template with where it is written and what to call it in an error.
pub(super) struct NamedTemplate<'a> {
    template: &'a Template,
    loc: &'a Location,
    what: String,
    /// A command (split into arguments), not an environment value.
    command: bool,
}

impl<'a> NamedTemplate<'a> {
    fn new(template: &'a Template, loc: &'a Location, what: String) -> Self {
        let command = !what.starts_with("env.");
        NamedTemplate {
            template,
            loc,
            what,
            command,
        }
    }
}

pub(super) fn env_templates(env: &BTreeMap<String, Spanned<String>>) -> Vec<(String, Template)> {
    env.iter()
        .map(|(k, v)| (k.clone(), Template::new(v.value.clone())))
        .collect()
}

/// compile, run and each `env.NAME`, in that order (the order their errors are reported in).
pub(super) fn named_templates<'a>(
    raw: &'a RawProblem,
    compile: &'a Template,
    run: &'a Template,
    env: &'a [(String, Template)],
) -> Vec<NamedTemplate<'a>> {
    let mut out = vec![];
    if let Some(c) = &raw.compile {
        out.push(NamedTemplate::new(compile, &c.referenced, "compile".into()));
    }
    if let Some(r) = &raw.run {
        out.push(NamedTemplate::new(run, &r.referenced, "run".into()));
    }
    for ((k, t), (_, sp)) in env.iter().zip(raw.env.iter()) {
        out.push(NamedTemplate::new(t, &sp.referenced, format!("env.{k}")));
    }
    out
}

/// The values of `p` that hold several flags (`-mllvm -polly`: two or more words, each
/// starting with `-`), with their coordinates.
pub(super) fn flag_values(p: &Param) -> Vec<(f64, String)> {
    let texts: Vec<String> = match &p.kind {
        Kind::Categorical(v) | Kind::Permutation(Permutation { texts: v, .. }) => v.clone(),
        Kind::Ordinal(v) => v.iter().map(Scalar::to_string).collect(),
        _ => vec![],
    };
    let is_flags = |v: &str| {
        let words: Vec<&str> = v.split_whitespace().collect();
        words.len() > 1 && words.iter().all(|w| w.starts_with('-'))
    };
    (texts.into_iter().enumerate())
        .filter(|(_, v)| is_flags(v))
        .map(|(k, v)| (k as f64, v))
        .collect()
}

/// Every template parses, reads only parameters and built-ins, passes no value that
/// holds several flags as one argument, and renders with the default configuration
/// (which finds what tera reports only when rendering, e.g. a filter's bad argument).
pub(super) fn check_templates(
    cx: &Ctx,
    named: &[NamedTemplate],
    space: &Space,
    sources: &[PathBuf],
    source: &str,
) -> Result<(), Error> {
    let builtins = template::Builtins::placeholder(cx.dir, sources, source);
    let vars = template::context(space, &space.default_config(), &builtins);
    for t in named {
        let read = match t.template.variables() {
            Ok(read) => read,
            Err(e) => return template_error(cx, t, format!("does not parse: {e}")),
        };
        check_names_known(cx, t, &read, space)?;
        if t.command {
            check_flags_split(cx, t, &read, space, &builtins)?;
        }
        let rendered = if t.command {
            t.template.argv(&vars).map(|argv| argv.is_empty())
        } else {
            t.template.render(&vars).map(|_| false)
        };
        match rendered {
            Err(e) => return template_error(cx, t, format!("does not render: {e}")),
            Ok(true) => return empty_command(cx, t),
            Ok(false) => {}
        }
    }
    Ok(())
}

/// A compile or run command that names no program (with the default configuration).
pub(super) fn empty_command(cx: &Ctx, t: &NamedTemplate) -> Result<(), Error> {
    let example = match t.what.as_str() {
        "compile" => "clang-22 -O3 {{ source }} -o {{ exe }}",
        _ => "{{ exe }}",
    };
    cx.err(
        t.loc,
        format!("the `{}` command is empty", t.what),
        Some(&format!("e.g. `{}: \"{example}\"`", t.what)),
    )
}

pub(super) fn template_error(cx: &Ctx, t: &NamedTemplate, what: String) -> Result<(), Error> {
    cx.err(
        t.loc,
        format!("the `{}` template {what}", t.what),
        Some("template variables are the parameter names plus source, exe, sources, problem_dir, work_dir"),
    )
}

/// Every name the template reads is a parameter or a built-in, in every branch: a
/// misspelt name is otherwise silently false in `{% if %}`, or an error only in the
/// configurations that take the branch reading it.
pub(super) fn check_names_known(
    cx: &Ctx,
    t: &NamedTemplate,
    read: &BTreeSet<String>,
    space: &Space,
) -> Result<(), Error> {
    let known = || (space.params.iter().map(|p| p.name.as_str())).chain(template::BUILTINS);
    let Some(name) = read.iter().find(|n| !known().any(|k| k == n.as_str())) else {
        return Ok(());
    };
    let hint = match did_you_mean(name, known()) {
        Some(near) => format!("did you mean `{near}`?"),
        None => {
            let params: Vec<String> = known().map(|n| format!("`{n}`")).collect();
            format!("the names a template can read are {}", params.join(", "))
        }
    };
    Err(Error::Config {
        span: template_span(cx, t, name),
        message: format!(
            "the `{}` template reads `{name}`, which is neither a parameter nor a built-in",
            t.what
        ),
        hint: Some(hint),
    })
}

/// A value that holds several flags (`-mllvm -polly`) is not passed as one argument: a
/// compiler would reject it in every variant that takes it. `{{ P | words }}` splits it.
pub(super) fn check_flags_split(
    cx: &Ctx,
    t: &NamedTemplate,
    read: &BTreeSet<String>,
    space: &Space,
    builtins: &template::Builtins,
) -> Result<(), Error> {
    let base: Vec<f64> = space.params.iter().map(|p| p.default).collect();
    for (i, p) in space.params.iter().enumerate() {
        if !read.contains(&p.name) {
            continue;
        }
        for (coord, value) in flag_values(p) {
            let mut c = Config(base.clone());
            c.0[i] = coord;
            let ctx = template::context(space, &c, builtins);
            let argv = t.template.argv(&ctx).unwrap_or_default();
            if argv.iter().any(|a| a.contains(value.as_str())) {
                return Err(Error::Config {
                    span: template_span(cx, t, &p.name),
                    message: format!(
                        "the `{}` template passes the value `{value}` of `{}` as one argument",
                        t.what, p.name
                    ),
                    hint: Some(format!(
                        "a value stays one argument (so paths with spaces work); write `{{{{ {} | words }}}}` to pass its words as separate arguments",
                        p.name
                    )),
                });
            }
        }
    }
    Ok(())
}

/// Where `name` is first read in template `t`, in the YAML file: exact when the template
/// is written on one line as it reads (plain or quoted, no escape before that point),
/// else the template's start.
pub(super) fn template_span(cx: &Ctx, t: &NamedTemplate, name: &str) -> Span {
    let mut span = cx.span(t.loc);
    let Some(offset) = t.template.position_of(name) else {
        return span;
    };
    let prefix = &t.template.text[..offset];
    let line = (cx.text.lines()).nth((span.line as usize).saturating_sub(1));
    let rest: String = line
        .unwrap_or("")
        .chars()
        .skip((span.col as usize).saturating_sub(1))
        .collect();
    let quote = usize::from(rest.starts_with(['"', '\'']));
    if rest[quote..].starts_with(prefix) {
        span.col += (quote + prefix.chars().count()) as u32;
    }
    span
}

/// Every parameter is used: by a marker in the mold or as a template variable.
pub(super) fn check_every_param_used(
    cx: &Ctx,
    named: &[NamedTemplate],
    space: &Space,
    mold: &Mold,
    raw: &RawProblem,
) -> Result<(), Error> {
    let in_templates: HashSet<String> = named
        .iter()
        .flat_map(|t| t.template.identifiers())
        .collect();
    for (i, p) in space.params.iter().enumerate() {
        if !mold.uses(i) && !in_templates.contains(&p.name) {
            return cx.err(
                &raw.params.value[i].name.referenced,
                format!("parameter `{}` is used nowhere", p.name),
                Some(&format!(
                    "put a `#{}` marker in `{}`, or use `{{{{ {} }}}}` in compile, run or env",
                    p.name,
                    raw.mold.as_ref().map_or("", |m| m.value.as_str()),
                    p.name
                )),
            );
        }
    }
    Ok(())
}
