//! Never measure the same thing twice: outcomes remembered by *build key* (the rendered
//! source + compile command + run command + environment: [`Variant::build_key`]) and by *binary key* (the built
//! program's bytes + run command + environment). An evaluation whose key was seen carries
//! the earlier outcome instead of being compiled or timed again.

use std::collections::HashMap;

use crate::evaluate::outcome::{Measurement, Status};
use crate::evaluate::variant::Variant;
use crate::problem::CodeIdentity;
use crate::rng::hex_hash;

#[derive(Default)]
pub struct Reuse {
    by_build: HashMap<String, (usize, Measurement)>,
    by_binary: HashMap<String, (usize, Measurement)>,
}

/// The program's bytes plus how it is run: equal keys, equal behaviour.
pub fn binary_key(v: &Variant, exe: &[u8]) -> String {
    hex_hash(format!("{}{}", hex_hash(exe), v.run_key).as_bytes())
}

/// The machine code of the problem's [`CodeIdentity`] functions (the kernel and the
/// functions clang may inline it into) and of the functions outlined from them
/// (`kernel.omp_outlined`, `kernel_polly_subfn`), addresses stripped, plus how it is run: programs that differ
/// only elsewhere (an OpenMP source location string, a shifted line) are the same, programs
/// whose kernel code differs wherever it ended up are not. `None` when the program has none
/// of those functions or cannot be disassembled (within [`HELPER_TIMEOUT`]).
pub fn code_key(v: &Variant, exe: &std::path::Path) -> Option<String> {
    let code = kernel_code_of(v.problem.code_identity.as_ref()?, exe)?;
    let key = hex_hash(format!("{}{}", hex_hash(code.as_bytes()), v.run_key).as_bytes());
    Some(format!("{CODE_KEY}{key}"))
}

/// The machine code of `id`'s functions (and what was outlined from them) in the program or
/// object file `path`, addresses stripped; `None` when there is none or it cannot be read.
pub fn kernel_code_of(id: &CodeIdentity, path: &std::path::Path) -> Option<String> {
    let argv: Vec<String> = [
        &id.disassembler,
        "-d",
        "--no-show-raw-insn",
        "--no-leading-addr",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([path.display().to_string()])
    .collect();
    let out = crate::process::helper::output(&argv, HELPER_TIMEOUT, 1 << 30);
    if !out.finished.success() {
        return None;
    }
    let code = kernel_code(&String::from_utf8_lossy(&out.stdout), &id.functions);
    (!code.is_empty()).then_some(code)
}

/// How long a helper command (disassembler, AST dump, `--version`) may take.
pub const HELPER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The disassembly of `functions` and of what was outlined from them, addresses stripped.
fn kernel_code(disassembly: &str, functions: &[String]) -> String {
    static ADDRESSES: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(^|[^$])0x[0-9a-f]+").expect("valid regex")
    });
    let ours = |name: &str| {
        (functions.iter()).any(|f| {
            name == f
                || (name.strip_prefix(f.as_str()))
                    .is_some_and(|r| r.starts_with('.') || r.starts_with("_polly_subfn"))
        })
    };
    let mut code = String::new();
    let mut inside = false;
    for line in disassembly.lines() {
        if let Some(name) = line.strip_prefix('<').and_then(|l| l.strip_suffix(">:")) {
            inside = ours(name);
        }
        if inside {
            code.push_str(&ADDRESSES.replace_all(line, "$1"));
            code.push('\n');
        }
    }
    code
}

/// How a [`code_key`] starts (in results.json's `binary_hash`).
const CODE_KEY: &str = "kernel:";

impl Reuse {
    /// The earlier outcome of an identical build, as this evaluation's.
    pub fn by_build(&self, key: &str) -> Option<Measurement> {
        let hit = self.by_build.get(key)?;
        Some(reused(hit, 0.0, "the rendered source and commands are"))
    }

    /// The earlier outcome of an identical program; this evaluation paid `compile_s`.
    pub fn by_binary(&self, key: &str, compile_s: f64) -> Option<Measurement> {
        let hit = self.by_binary.get(key)?;
        let what = if key.starts_with(CODE_KEY) {
            "the kernel's machine code is"
        } else {
            "the built program (machine code) is"
        };
        Some(reused(hit, compile_s, what))
    }

    /// Remembers an outcome under its keys. Timeouts depend on the (adaptive) timeout, not
    /// only on the program, so they are not reused; nor is a reused outcome remembered again.
    pub fn remember(&mut self, m: &Measurement, eval_id: usize) {
        if matches!(m.status, Status::BuildTimeout | Status::RunTimeout) || m.reused_from.is_some()
        {
            return;
        }
        let entry = || (eval_id, m.clone());
        if let Some(k) = &m.build_hash {
            self.by_build.entry(k.clone()).or_insert_with(entry);
        }
        if let Some(k) = &m.binary_hash {
            self.by_binary.entry(k.clone()).or_insert_with(entry);
        }
    }
}

fn reused(hit: &(usize, Measurement), compile_s: f64, what: &str) -> Measurement {
    let (id, m) = hit;
    let mut m = m.clone();
    m.compile_s = compile_s;
    m.run_s = 0.0;
    m.reused_from = Some(*id);
    let note = format!("{what} identical to eval {id}: its outcome is reused, not measured again");
    m.cause = Some(match m.cause {
        Some(c) => format!("{note}; {c}"),
        None => note,
    });
    m
}
