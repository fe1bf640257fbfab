//! A problem whose evaluations a program tells (`moldtune serve`, `ask`, `tell`, the Python
//! module): a problem file without `mold:` and `run:`, and nothing that builds or runs.
//! The commands that build and run refuse it.

use crate::error::Error;
use crate::problem::locate::Ctx;
use crate::problem::raw::RawProblem;

/// Whether a program tells the evaluations (neither `mold:` nor `run:`, and nothing
/// that builds or runs); one of the two without the other is refused.
pub(super) fn told(cx: &Ctx, raw: &RawProblem) -> Result<bool, Error> {
    match (&raw.mold, &raw.run) {
        (Some(_), Some(_)) => Ok(false),
        (Some(m), None) => cx.err(
            &m.referenced,
            "the problem has a `mold:` but no `run:`: nothing would run its variants".into(),
            Some("add `run:` (e.g. `run: \"{{ exe }}\"`), or leave both out for a space whose values a program tells (`moldtune serve`)"),
        ),
        (None, Some(r)) => cx.err(
            &r.referenced,
            "the problem has a `run:` but no `mold:`: there is no source to render".into(),
            Some("add `mold: FILE`, or leave both out for a space whose values a program tells (`moldtune serve`)"),
        ),
        (None, None) => {
            let building = [
                ("compile", raw.compile.is_some()),
                ("sources", !raw.sources.is_empty()),
                ("env", !raw.env.is_empty()),
                ("check", raw.check.is_some()),
                ("work", raw.work.is_some()),
                ("timeouts", raw.timeouts.is_some()),
                ("repeats", raw.repeats.is_some()),
            ];
            match building.iter().find(|b| b.1) {
                Some((key, _)) => Err(Error::ConfigFile {
                    file: cx.file.to_path_buf(),
                    message: format!("`{key}:` is a setting of building and running variants, and the problem has neither `mold:` nor `run:`"),
                    hint: Some("add the mold and its `run:`, or leave it out: a program tells this problem's values (`moldtune serve`, `ask`, `tell`)".into()),
                }),
                None => Ok(true),
            }
        }
    }
}
