//! What tuning changed in the source: a unified diff (the `similar` crate) from the default
//! variant — the mold rendered at the problem's default configuration, or for mctree the
//! untransformed file — to the run's `best.c`.

use serde::Serialize;

use crate::report::run_dir::RunView;

/// Diff lines shown at most; a longer diff is cut there, with a note.
pub const MAX_LINES: usize = 400;

/// The diff of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// The unified diff (empty when there is none).
    pub text: String,
    /// Its lines, each with its kind, for colouring.
    pub lines: Vec<Line>,
    pub added: usize,
    pub removed: usize,
    /// Why there is no diff, or that it was cut.
    pub note: Option<String>,
}

/// One line of the diff: `kind` is `header`, `hunk`, `add`, `del` or `context`.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub kind: &'static str,
    pub text: String,
}

/// The diff from the default variant to `best.c` (or `best.py`, …) of `run`.
pub fn best_vs_default(run: &RunView) -> Diff {
    let name = run.problem.mold.best_file();
    let Ok(best) = std::fs::read_to_string(run.dir.join(&name)) else {
        return without(&format!(
            "the run directory holds no {name} (no variant succeeded)"
        ));
    };
    let p = &run.problem;
    let default = p.mold.render(&p.space, &p.default_config());
    let text = similar::TextDiff::from_lines(&default, &best)
        .unified_diff()
        .context_radius(3)
        .header(&name.replacen("best", "default", 1), &name)
        .to_string();
    if text.is_empty() {
        let why = format!("{name} is the default variant: tuning found nothing better to change");
        return without(&why);
    }
    // The first two lines are the file names; the rest is hunks.
    let all: Vec<Line> = (text.lines().enumerate())
        .map(|(i, t)| line(t, i < 2))
        .collect();
    cut(all)
}

/// The diff made of the lines `all`, cut at [`MAX_LINES`].
fn cut(all: Vec<Line>) -> Diff {
    let count = |k: &str| all.iter().filter(|l| l.kind == k).count();
    let (added, removed) = (count("add"), count("del"));
    let note = (all.len() > MAX_LINES).then(|| {
        format!(
            "the diff has {} lines; the first {MAX_LINES} are shown",
            all.len()
        )
    });
    let lines: Vec<Line> = all.into_iter().take(MAX_LINES).collect();
    let text = (lines.iter().map(|l| l.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    Diff {
        text,
        lines,
        added,
        removed,
        note,
    }
}

/// No diff, and why.
fn without(note: &str) -> Diff {
    Diff {
        text: String::new(),
        lines: vec![],
        added: 0,
        removed: 0,
        note: Some(note.into()),
    }
}

/// A line of a unified diff with its kind.
fn line(text: &str, header: bool) -> Line {
    let kind = if header {
        "header"
    } else if text.starts_with("@@") {
        "hunk"
    } else if text.starts_with('+') {
        "add"
    } else if text.starts_with('-') {
        "del"
    } else {
        "context"
    };
    Line {
        kind,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        let text = [
            "--- default.c",
            "+++ best.c",
            "@@ -1 +1 @@",
            "--- a",
            "+b",
            " c",
        ];
        let kinds: Vec<&str> = (text.iter().enumerate())
            .map(|(i, t)| line(t, i < 2).kind)
            .collect();
        assert_eq!(kinds, ["header", "header", "hunk", "del", "add", "context"]);
    }
}
