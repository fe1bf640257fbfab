//! The templates of the files moldtune generates (the report page, its Markdown summary),
//! kept as files in the top-level `templates/` folder and embedded in the binary, so that
//! the tool renders them from any directory.
//!
//! A template whose name ends in `.html.tera` or `.xml.tera` is HTML-escaped (tera's
//! autoescape: every `{{ }}` is escaped unless marked `| safe`); any other (Markdown) is not.
//! Adding a template is one entry in [`TEMPLATES`].

use std::sync::LazyLock;

use crate::error::Error;

/// Every embedded template: its name and its text.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "report.html.tera",
        include_str!("../../templates/report.html.tera"),
    ),
    (
        "report.md.tera",
        include_str!("../../templates/report.md.tera"),
    ),
    (
        "check.md.tera",
        include_str!("../../templates/check.md.tera"),
    ),
    (
        "check.html.tera",
        include_str!("../../templates/check.html.tera"),
    ),
    (
        "junit.xml.tera",
        include_str!("../../templates/junit.xml.tera"),
    ),
];

/// Suffixes of the names whose output is HTML-escaped.
const ESCAPED: [&str; 2] = [".html.tera", ".xml.tera"];

/// The parsed templates, or why one does not parse (a bug, reported when it is used).
static TERA: LazyLock<Result<tera::Tera, String>> = LazyLock::new(|| {
    let mut t = tera::Tera::default();
    // Before the templates are added: tera decides each template's escaping as it adds it.
    t.autoescape_on(ESCAPED);
    t.add_raw_templates(TEMPLATES.iter().copied())
        .map_err(|e| chain(&e))?;
    Ok(t)
});

/// Renders the embedded template `name` (e.g. `report.html.tera`) with `ctx`.
pub fn render(name: &str, ctx: &tera::Context) -> Result<String, Error> {
    let tera = TERA
        .as_ref()
        .map_err(|e| Error::Internal(format!("the embedded templates do not parse: {e}")))?;
    tera.render(name, ctx)
        .map_err(|e| Error::Internal(format!("cannot render template `{name}`: {}", chain(&e))))
}

/// tera's error and its causes on one line.
fn chain(e: &tera::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out += &format!(": {s}");
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        assert!(TERA.is_ok(), "{:?}", TERA.as_ref().err());
        for (name, _) in TEMPLATES {
            assert!(TERA.as_ref().unwrap().contains_template(name), "{name}");
        }
    }

    #[test]
    fn html_is_escaped_and_markdown_is_not() {
        let mut t = tera::Tera::default();
        t.autoescape_on(ESCAPED);
        t.add_raw_templates([("a.html.tera", "{{ x }}"), ("a.md.tera", "{{ x }}")])
            .unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("x", "<b>&");
        assert_eq!(t.render("a.html.tera", &ctx).unwrap(), "&lt;b&gt;&amp;");
        assert_eq!(t.render("a.md.tera", &ctx).unwrap(), "<b>&");
    }

    #[test]
    fn an_unknown_template_is_an_error() {
        assert!(render("nope.md.tera", &tera::Context::new()).is_err());
    }
}
