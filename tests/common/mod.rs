//! Helpers shared by the integration tests: the `moldtune` command builder, process output,
//! results.csv and JSON readers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt::Display;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

pub mod fake;

/// The seven PolyBench kernels of `polybench/`.
pub const KERNELS: [&str; 7] = [
    "syr2k",
    "3mm",
    "lu",
    "heat-3d",
    "covariance",
    "floyd-warshall",
    "gemm",
];
pub mod mctree;

/// The toy problem most CLI tests start from. Line numbers matter: the bad-input tests expect errors at known lines.
///
/// ```text
///  1 name: toy
///  2 mold: m.c
///  3 params:
///  4   - name: P0
///  5     type: ordinal
///  6     values: [1, 2, 4, 8, 16, 32]
///  7     default: 4
///  8   - name: P1
///  9     type: categorical
/// 10     choices: ["a", "b", "c"]
/// 11     default: "a"
/// 12   - name: P2
/// 13     type: integer
/// 14     low: 0
/// 15     high: 100
/// 16 compile: "cc {{ source }} -o {{ exe }}"
/// 17 run: "{{ exe }}"
/// ```
pub const TOY_YAML: &str = r#"name: toy
mold: m.c
params:
  - name: P0
    type: ordinal
    values: [1, 2, 4, 8, 16, 32]
    default: 4
  - name: P1
    type: categorical
    choices: ["a", "b", "c"]
    default: "a"
  - name: P2
    type: integer
    low: 0
    high: 100
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"#;

pub const TOY_MOLD: &str = "/* toy mold */\nint p0 = #P0;\n/* #P1 */\nint p2 = #P2;\n";

/// A toy problem and its mold written into `dir` (as `p.yaml` and `m.c`).
pub fn write_toy(dir: &Path) {
    std::fs::write(dir.join("p.yaml"), TOY_YAML).unwrap();
    std::fs::write(dir.join("m.c"), TOY_MOLD).unwrap();
}

/// Whether clang-22 can be run (the real-compiler tests are skipped, loudly, without it).
/// Whether valgrind runs here (else says the test is skipped).
pub fn have_valgrind() -> bool {
    let ok = std::process::Command::new("valgrind")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: no valgrind (bash scripts/setup.sh --test installs it)");
    }
    ok
}

/// The guard of every test that needs clang-22: returns from the test, saying it is skipped,
/// when clang-22 is missing — unless `MOLDTUNE_REQUIRE_CLANG=1` (set by `scripts/test.sh`,
/// which installs it), when a missing clang-22 fails the test instead of passing it unseen.
macro_rules! require_clang {
    () => {
        if !$crate::common::clang_or_skip() {
            return;
        }
    };
}

/// Whether clang-22 is there; see [`require_clang!`].
pub fn clang_or_skip() -> bool {
    if have_clang() {
        return true;
    }
    let required = std::env::var("MOLDTUNE_REQUIRE_CLANG").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "clang-22 is not on PATH and MOLDTUNE_REQUIRE_CLANG=1"
    );
    eprintln!("SKIPPED: clang-22 not found (bash scripts/setup.sh --test installs it)");
    false
}

pub fn have_clang() -> bool {
    std::process::Command::new("clang-22")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The `moldtune` binary under test.
const BIN: &str = env!("CARGO_BIN_EXE_moldtune");

/// A `moldtune` command line: `moldtune("run").arg("p.yaml").mock().out("run").output()`.
/// Its stdin is null; it runs in the test's working directory unless `.cwd(dir)` says.
pub struct Moldtune(Command);

/// `moldtune SUBCOMMAND`, to which the methods of [`Moldtune`] add.
pub fn moldtune(subcommand: &str) -> Moldtune {
    let mut c = Command::new(BIN);
    c.arg(subcommand).stdin(Stdio::null());
    Moldtune(c)
}

impl Moldtune {
    /// One more argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Moldtune {
        self.0.arg(a);
        self
    }
    /// More arguments, in order.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Moldtune {
        self.0.args(args);
        self
    }
    /// `--mock`: the synthetic evaluator instead of compile and run.
    pub fn mock(self) -> Moldtune {
        self.arg("--mock")
    }
    /// `--quiet`.
    pub fn quiet(self) -> Moldtune {
        self.arg("--quiet")
    }
    /// `--json`.
    pub fn json(self) -> Moldtune {
        self.arg("--json")
    }
    /// `--out DIR`.
    pub fn out(self, dir: impl AsRef<OsStr>) -> Moldtune {
        self.arg("--out").arg(dir)
    }
    /// `--max-evals N`.
    pub fn max_evals(self, n: impl Display) -> Moldtune {
        self.arg("--max-evals").arg(n.to_string())
    }
    /// `--rounds N`.
    pub fn rounds(self, n: impl Display) -> Moldtune {
        self.arg("--rounds").arg(n.to_string())
    }
    /// `--seed N`.
    pub fn seed(self, n: impl Display) -> Moldtune {
        self.arg("--seed").arg(n.to_string())
    }
    /// `--learner NAME`.
    pub fn learner(self, name: &str) -> Moldtune {
        self.arg("--learner").arg(name)
    }
    /// Runs in `dir`.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Moldtune {
        self.0.current_dir(dir);
        self
    }
    /// Sets the environment variable `k` to `v`.
    pub fn env(mut self, k: &str, v: impl AsRef<OsStr>) -> Moldtune {
        self.0.env(k, v);
        self
    }
    /// Removes the environment variable `k`.
    pub fn env_remove(mut self, k: &str) -> Moldtune {
        self.0.env_remove(k);
        self
    }
    /// Runs it to the end, stdout and stderr captured.
    pub fn output(mut self) -> Output {
        self.0
            .output()
            .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
    }
    /// Starts it, stdout and stderr piped.
    pub fn spawn(mut self) -> Child {
        self.0.stdout(Stdio::piped()).stderr(Stdio::piped());
        self.0
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
    }
    /// The [`Command`] itself, for what the methods above do not say.
    pub fn command(self) -> Command {
        self.0
    }
}

/// Reads the JSON file, lets `f` change it, writes it back.
pub fn edit_json(file: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn describe(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

#[track_caller]
pub fn assert_code(o: &std::process::Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "{}", describe(o));
}

/// results.csv as (header, rows). Panics on a malformed file.
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn read(dir: &Path) -> Csv {
        let path = dir.join("results.csv");
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<Vec<String>> = rd
            .records()
            .map(|r| {
                r.unwrap_or_else(|e| panic!("{}: malformed row: {e}", path.display()))
                    .iter()
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        Csv { header, rows }
    }
    /// The number of complete rows in `dir/results.csv` so far (0 when there is none).
    pub fn try_rows(dir: &Path) -> usize {
        std::fs::read(dir.join("results.csv")).map_or(0, |b| {
            b.iter().filter(|&&c| c == b'\n').count().saturating_sub(1)
        })
    }
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.header))
    }
    pub fn column(&self, name: &str) -> Vec<String> {
        let i = self.col(name);
        self.rows.iter().map(|r| r[i].clone()).collect()
    }
    pub fn hashes(&self) -> Vec<String> {
        self.column("config_hash")
    }
    /// (row index, objective) of the best `ok` row (minimum).
    pub fn min_ok(&self) -> Option<(usize, f64)> {
        let (st, obj) = (self.col("status"), self.col("objective"));
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r[st] == "ok")
            .map(|(i, r)| {
                (
                    i,
                    r[obj]
                        .parse::<f64>()
                        .expect("ok rows have a numeric objective"),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
    pub fn get<'a>(&self, row: &'a [String], name: &str) -> &'a str {
        &row[self.col(name)]
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
}
