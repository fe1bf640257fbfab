//! The repeats and timeouts a run uses instead of its problem file's, and a command-line
//! value checked by the problem's [`limits`] (a usage error naming its flag).

use crate::error::Error;
use crate::problem::limits;
use crate::problem::Problem;
use crate::run::meta::RunMeta;

/// The repeats and timeouts a run uses instead of its problem file's: a flag's, else what
/// run.json recorded.
pub struct Limits {
    pub repeats: Option<u32>,
    pub compile_timeout: Option<f64>,
    pub run_timeout: Option<f64>,
}

impl Limits {
    /// What run.json `meta` recorded.
    pub fn recorded(meta: &RunMeta) -> Limits {
        Limits {
            repeats: Some(meta.repeats),
            compile_timeout: Some(meta.compile_timeout_s),
            run_timeout: Some(meta.run_timeout_s),
        }
    }

    /// Sets them on `problem`, each checked by [`limits`] (a usage error naming its flag).
    pub fn apply(&self, problem: &mut Problem) -> Result<(), Error> {
        if let Some(r) = self.repeats {
            problem.repeats = flag("--repeats", limits::repeats(r as u64))?;
        }
        if let Some(t) = self.compile_timeout {
            problem.compile_timeout_s = flag("--compile-timeout", limits::timeout(t))?;
        }
        if let Some(t) = self.run_timeout {
            problem.run_timeout_s = flag("--run-timeout", limits::timeout(t))?;
        }
        Ok(())
    }
}

/// A command-line value checked by [`limits`]: a usage error naming the flag.
pub fn flag<T>(name: &str, checked: Result<T, String>) -> Result<T, Error> {
    checked.map_err(|why| Error::usage(format!("`{name}` {why}"), None))
}
