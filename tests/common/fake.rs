//! Fake compilers and programs written in sh (no C compiler needed): a problem whose one
//! parameter `MODE` picks how the compiler and the program behave, and helpers to find the
//! processes they leave.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;

/// eval_id → cause, from results.json.
pub fn causes(dir: &Path) -> HashMap<String, String> {
    let v = read_json(&dir.join("results.json"));
    v["evaluations"]
        .as_array()
        .expect("evaluations")
        .iter()
        .map(|e| {
            (
                e["eval_id"].to_string(),
                e["cause"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Pids of live processes whose command line contains `needle` (arguments joined by spaces).
pub fn processes_matching(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = raw
            .split(|&b| b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        if cmd.contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// Asserts that no process matching `needle` is left (allowing a moment for the kernel to
/// finish killing); kills any found, so a failure does not leak sleepers onto the machine.
#[track_caller]
pub fn assert_no_leftover(needle: &str) {
    let t0 = Instant::now();
    let mut left = processes_matching(needle);
    while !left.is_empty() && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        left = processes_matching(needle);
    }
    for &pid in &left {
        // SAFETY: killing a process this test caused to exist.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert!(left.is_empty(), "processes `{needle}` survived: {left:?}");
}

pub fn write_executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A problem whose one parameter `MODE` picks how the fake compiler and the program behave.
///
/// The fake compiler `fakecc.sh MODE EXE` builds a variant by copying `prog_MODE.sh` to EXE;
/// `hang_compile*` sleep instead, `build_fail` exits 1, `no_exe` produces nothing, `tmpdir`
/// notes its `TMPDIR` in `tmpdirs` (the problem's directory) and builds `ok`,
/// `slow_fourth` builds `ok` (a distinct program each time) but its fourth compile takes
/// 10.5 s (a busy machine), `ticking` writes `EXE NANOSECONDS` to `ticks` every 20 ms for
/// half a second before it builds a (distinct) program that notes `EXE START END` of its 0.3 s in
/// `spans` (both files in the problem's directory; the spans in `$SPANS_FILE` when set). The
/// programs print a kernel time on stdout, or misbehave as their name says. Every sleep has a
/// distinct duration (600.0xyz s) so tests running in parallel can find their own processes.
pub struct FakeProblem {
    pub tmp: tempfile::TempDir,
}

pub const FAKECC: &str = r#"#!/bin/sh
mode="$1"; exe="$2"; here="$(dirname "$0")"
case "$mode" in
  hang_compile) echo "compiling slowly" >&2; sleep 600.0101 ;;
  hang_compile_b) sleep 600.0606 ;;
  hang_compile_c) sleep 600.0707 ;;
  build_fail) echo "fakecc: error: this variant does not compile" >&2; exit 1 ;;
  no_exe) exit 0 ;;
  slow_fourth)
    n=$(cat "$here/compiles" 2>/dev/null || echo 0); echo $((n + 1)) > "$here/compiles"
    [ "$n" -eq 3 ] && sleep 10.5 ; mode=ok ;;
  chatty) n="$exe" ;;
  tmpdir) echo "$TMPDIR" >> "$here/tmpdirs"; mode=ok ;;
  ticking)
    i=0; while [ $i -lt 25 ]; do echo "$exe $(date +%s%N)" >> "$here/ticks"; sleep 0.02; i=$((i + 1)); done; n="$exe" ;;
esac
cp "$here/prog_$mode.sh" "$exe" && chmod +x "$exe"
[ -n "$n" ] && echo ": build $n" >> "$exe"
exit 0
"#;

pub const PROGRAMS: [(&str, &str); 12] = [
    (
        "ticking",
        "s=$(date +%s%N)\nsleep 0.3\necho \"$0 $s $(date +%s%N)\" >> \"${SPANS_FILE:-$(dirname \"$0\")/../../../spans}\"\necho 0.25\n",
    ),
    // Alternates 0.1 and 0.3 from run to run (a counter in its directory): a noisy variant.
    (
        "noisy",
        "n=$(cat count 2>/dev/null || echo 0)\necho $((n + 1)) > count\nif [ $((n % 2)) -eq 0 ]; then echo 0.1; else echo 0.3; fi\n",
    ),
    // A grandchild that leaves the group with setsid; the program waits on its own sleep.
    ("setsid_sleep", "setsid sleep 600.0808 &\nsleep 600.0809\n"),
    // Writes without end.
    (
        "runaway",
        "while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done\n",
    ),
    // Prints 64 KiB on stdout, then its time: fills a small disk quickly. Each build is a
    // distinct program (the compiler marks it), so none is reused: every evaluation runs.
    (
        "chatty",
        "head -c 65536 /dev/zero | tr '\\0' 'y'\necho\nsleep 0.2\necho 0.25\n",
    ),
    ("ok", "echo 'some chatter'\necho 0.25\n"),
    // A grandchild that sleeps; the program waits for it.
    ("fork_sleep", "sleep 600.0202 &\nwait\n"),
    // The same, but leader and grandchild ignore SIGTERM: only the SIGKILL after the grace
    // period ends them.
    (
        "fork_sleep_noterm",
        "trap '' TERM\nsleep 600.0303 &\nwait\n",
    ),
    // The program succeeds at once but leaves a grandchild behind.
    ("daemon", "sleep 600.0404 &\necho 0.5\n"),
    ("no_number", "echo hello\necho 'time: soon'\n"),
    ("exit3", "echo 0.1\necho 'boom' >&2\nexit 3\n"),
    ("segv", "echo 0.1\nkill -SEGV $$\n"),
];

impl FakeProblem {
    pub fn new(modes: &[&str]) -> FakeProblem {
        FakeProblem::with(
            modes,
            1,
            "check: {mode: none}\nrepeats: 1\ntimeouts: {compile_s: 30, run_s: 30}\n",
        )
    }

    /// With a second parameter `REP` (0..reps, a marker in the mold) when `reps` > 1, so
    /// that one MODE can be evaluated `reps` times, and `keys` (top-level YAML: check,
    /// repeats, timeouts, …) at the end.
    pub fn with(modes: &[&str], reps: usize, keys: &str) -> FakeProblem {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        write_executable(&d.join("fakecc.sh"), FAKECC);
        for (name, body) in PROGRAMS {
            write_executable(
                &d.join(format!("prog_{name}.sh")),
                &format!("#!/bin/sh\n{body}"),
            );
        }
        let (rep_param, rep_marker) = match reps {
            0 | 1 => (String::new(), ""),
            n => (
                format!(
                    "  - name: REP\n    type: integer\n    low: 0\n    high: {}\n",
                    n - 1
                ),
                "/* #REP */\n",
            ),
        };
        let mold = format!("{rep_marker}int main(void) {{ return 0; }}\n");
        std::fs::write(d.join("m.c"), mold).unwrap();
        let yaml = format!(
            "name: fake\nmold: m.c\nparams:\n  - name: MODE\n    type: categorical\n    choices: {}\n{rep_param}\
             compile: \"sh {{{{ problem_dir }}}}/fakecc.sh {{{{ MODE }}}} {{{{ exe }}}}\"\n\
             run: \"{{{{ exe }}}}\"\nmetric: {{kind: kernel_time}}\n{keys}",
            serde_json::to_string(modes).unwrap()
        );
        std::fs::write(d.join("p.yaml"), yaml).unwrap();
        FakeProblem { tmp }
    }
    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }
    pub fn out(&self) -> PathBuf {
        self.dir().join("run")
    }
    /// `moldtune run p.yaml --quiet --learner random --seed 1 --out run` in the problem's
    /// directory.
    pub fn command(&self) -> Moldtune {
        moldtune("run")
            .arg("p.yaml")
            .quiet()
            .learner("random")
            .seed(1)
            .out(self.out())
            .cwd(self.dir())
    }
}

/// The row of each MODE.
pub fn by_mode(csv: &Csv) -> HashMap<String, Vec<String>> {
    csv.rows
        .iter()
        .map(|r| (csv.get(r, "MODE").to_string(), r.clone()))
        .collect()
}
