//! Faults a variant or the machine can cause, each asserting the exit code, the message and
//! that every completed row is intact: runaway output, a grandchild that escapes with
//! setsid, a full disk (a small tmpfs under `--out`; needs root, as CI runs), corrupted run
//! directories, and a closed pipe.

use crate::common::fake::*;
use crate::common::*;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Peak resident memory (VmHWM, KiB) of a running process.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_variant_writing_without_end_is_stopped_by_the_output_limit() {
    let keys = "check: {mode: none}\nrepeats: 1\ntimeouts: {run_s: 20}\nmax_output_mb: 4\n";
    let p = FakeProblem::with(&["runaway"], 1, keys);
    let t0 = Instant::now();
    let mut child = p
        .command()
        .max_evals(1)
        .command()
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(peak_kib(child.id()).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "the only variant failed");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert!(peak < 100 * 1024, "moldtune peaked at {peak} KiB");
    let csv = Csv::read(&p.out());
    assert_eq!(csv.column("status"), ["run_error"]);
    let cause = &causes(&p.out())["0"];
    assert!(cause.contains("output limit"), "{cause}");
}

#[test]
fn ten_timeouts_of_a_program_whose_grandchild_calls_setsid_leave_nothing() {
    let keys = "check: {mode: none}\nrepeats: 1\ntimeouts: {run_s: 0.5}\n";
    let p = FakeProblem::with(&["setsid_sleep"], 10, keys);
    let o = p.command().max_evals(10).output();
    assert_code(&o, 3);
    let csv = Csv::read(&p.out());
    assert_eq!(csv.column("status"), vec!["run_timeout"; 10]);
    assert_no_leftover("sleep 600.0808");
    assert_no_leftover("sleep 600.0809");
}

/// A tmpfs of `kib` KiB mounted at `dir` for the guard's lifetime; `None` when this process
/// may not mount (not root).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_the_run_and_resume_completes_it() {
    let keys = "check: {mode: none}\nrepeats: 2\ntimeouts: {run_s: 20}\n";
    let p = FakeProblem::with(&["chatty"], 12, keys);
    let Some(_fs) = Tmpfs::mount(&p.out(), 600) else {
        eprintln!("note: cannot mount a tmpfs (not root); skipping the disk-full test");
        return;
    };
    let mut child = p
        .command()
        .max_evals(12)
        .command()
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Fill the disk once a few evaluations are recorded.
    let ballast = p.out().join("ballast");
    while Csv::try_rows(&p.out()) < 3 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the disk filled"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::write(&ballast, vec![0u8; 600 * 1024]);
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 5);
    let err = text(&o.stderr);
    assert!(
        err.contains("the machine failed") && err.contains("--resume"),
        "{err}"
    );
    // The rows the log completed (a row torn by the full disk is dropped by the resume).
    let copy = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(p.out().join("results.csv")).unwrap();
    bytes.truncate(bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
    std::fs::write(copy.path().join("results.csv"), bytes).unwrap();
    let before = Csv::read(copy.path());
    let kept = before.rows.len();
    assert!((3..12).contains(&kept), "{kept} rows");
    assert!(
        before.column("status").iter().all(|s| s == "ok"),
        "{:?}",
        before.rows
    );

    std::fs::remove_file(&ballast).unwrap();
    let o = p.command().max_evals(12).arg("--resume").output();
    assert_code(&o, 0);
    let after = Csv::read(&p.out());
    assert_eq!(
        after.rows[..kept],
        before.rows[..],
        "completed rows changed"
    );
    let ids: Vec<String> = (0..12).map(|i| i.to_string()).collect();
    assert_eq!(after.column("eval_id"), ids);
    let mut hashes = after.hashes();
    hashes.dedup();
    assert_eq!(hashes.len(), 12, "a configuration was repeated");
}

/// A finished mock run of 8 evaluations in `dir/run`.
fn finished_run(dir: &Path) -> std::path::PathBuf {
    write_toy(dir);
    let out = dir.join("run");
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .max_evals(8)
        .out(&out)
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    out
}

/// `moldtune run --quiet --max-evals 10 --resume OUT`.
fn resume_command(out: &Path) -> Moldtune {
    moldtune("run")
        .quiet()
        .max_evals(10)
        .arg("--resume")
        .arg(out)
}

fn resume(out: &Path, extra: &[&str]) -> std::process::Output {
    resume_command(out).args(extra).output()
}

#[test]
fn corrupted_run_directories_are_refused_with_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let out = finished_run(tmp.path());
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    // The first row with P0 set to another of its values.
    let mut cells: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    cells[0] = if cells[0] == "32" {
        "16".into()
    } else {
        "32".into()
    };
    let edited = [&[lines[0]][..], &[cells.join(",").as_str()], &lines[2..]]
        .concat()
        .join("\n")
        + "\n";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "deleted row",
            [&lines[..2], &lines[3..]].concat().join("\n") + "\n",
            "was deleted, repeated or moved",
        ),
        (
            "duplicated row",
            [&lines[..4], &lines[3..]].concat().join("\n") + "\n",
            "was deleted, repeated or moved",
        ),
        ("edited value", edited, "the row was edited"),
        (
            "garbage",
            "not,a,results\nfile\n".into(),
            "unexpected header",
        ),
    ];
    for (what, text, expect) in cases {
        std::fs::write(out.join("results.csv"), &text).unwrap();
        let o = resume(&out, &[]);
        assert_code(&o, 2);
        assert!(text_of(&o).contains(expect), "{what}: {}", describe(&o));
        let now = std::fs::read_to_string(out.join("results.csv")).unwrap();
        assert_eq!(now, text, "{what}: the log was changed");
    }
    std::fs::write(out.join("results.csv"), &csv).unwrap();
    damaged_results_json_and_run_json_are_refused(&out, &csv);
}

/// results.json replaced by a directory, run.json truncated: refused, nothing run.
fn damaged_results_json_and_run_json_are_refused(out: &Path, csv: &str) {
    // results.json replaced by a directory: refused at open, nothing run (it was run, its
    // row appended, then exit 1 with run.json left `running`: issue 42 item 7).
    let json = std::fs::read(out.join("results.json")).unwrap();
    std::fs::remove_file(out.join("results.json")).unwrap();
    std::fs::create_dir(out.join("results.json")).unwrap();
    let o = resume(out, &[]);
    assert_code(&o, 2);
    assert!(text_of(&o).contains("is not a file"), "{}", describe(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        csv
    );
    std::fs::remove_dir(out.join("results.json")).unwrap();
    std::fs::write(out.join("results.json"), json).unwrap();
    std::fs::write(out.join("run.json"), "{ truncated").unwrap();
    let o = resume(out, &[]);
    assert_code(&o, 2);
    assert!(
        text_of(&o).contains("unreadable run.json"),
        "{}",
        describe(&o)
    );
}

fn text_of(o: &std::process::Output) -> String {
    text(&o.stderr)
}

#[test]
fn an_edited_mold_is_refused_on_resume_unless_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let out = finished_run(tmp.path());
    let edited = format!("{TOY_MOLD}/* edited */\n");
    std::fs::write(tmp.path().join("m.c"), edited).unwrap();
    let o = resume(&out, &[]);
    assert_code(&o, 2);
    assert!(
        text_of(&o).contains("the mold") && text_of(&o).contains("changed"),
        "{}",
        describe(&o)
    );
    assert_eq!(Csv::read(&out).rows.len(), 8);
    let o = resume(&out, &["--accept-changed-mold"]);
    assert_code(&o, 0);
    assert_eq!(Csv::read(&out).rows.len(), 10);
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["mold_changes"][0]["from_eval"], 8, "{run}");
}

/// A problem in `d` whose "compiler" is the script `cc` (`cc.sh SOURCE EXE`) and whose mold
/// is `mold`, its output checked; `moldtune run p.yaml --out run <extra…>` for it.
fn edit_problem(d: &Path, cc: &str, mold: &str) -> impl Fn(&[&str]) -> std::process::Output {
    write_executable(&d.join("cc.sh"), cc);
    std::fs::write(d.join("m.c"), mold).unwrap();
    let yaml = "name: edit\nmold: m.c\nparams:\n  - {name: P0, type: integer, low: 0, high: 50}\n\
                compile: \"sh {{ problem_dir }}/cc.sh {{ source }} {{ exe }}\"\nrun: \"{{ exe }}\"\n\
                metric: {kind: kernel_time}\nrepeats: 1\ncheck: {mode: output, stream: stderr}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let d = d.to_path_buf();
    move |extra: &[&str]| {
        moldtune("run")
            .arg("p.yaml")
            .quiet()
            .args(["--verify", "0"])
            .out("run")
            .args(extra)
            .cwd(&d)
            .output()
    }
}

/// An accepted mold edit that changes what the program prints rebuilds the reference from the
/// new mold: the evaluations after it are checked against what the new mold computes (before:
/// every one was `wrong_output` against the old reference, exit 0, no warning).
#[test]
fn an_accepted_mold_change_rebuilds_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // The "compiler" makes a program that prints the mold's VALUE line on stderr.
    let cc = "#!/bin/sh\nv=$(grep VALUE \"$1\")\nprintf '#!/bin/sh\\necho 0.25\\necho \"%s\" >&2\\n' \"$v\" > \"$2\"\nchmod +x \"$2\"\n";
    let run = edit_problem(d, cc, "/* VALUE 1 */\nint p = #P0;\n");
    assert_code(&run(&["--max-evals", "3"]), 0);
    std::fs::write(d.join("m.c"), "/* VALUE 2 */\nint p = #P0;\n").unwrap();
    let o = run(&["--max-evals", "6", "--resume", "--accept-changed-mold"]);
    assert_code(&o, 0);
    let csv = Csv::read(&d.join("run"));
    let status = csv.column("status");
    assert_eq!(status.len(), 6);
    assert!(status.iter().all(|s| s == "ok"), "{status:?}");
    let meta = read_json(&d.join("run/run.json"));
    assert_eq!(meta["mold_changes"][0]["from_eval"], 3, "{meta}");
}

/// A run directory whose lock was just taken (its holder has not written its pid yet) is
/// refused naming the pid once it is there, not with none.
#[test]
fn a_lock_refusal_names_the_holder_that_has_just_taken_it() {
    use std::os::unix::io::AsRawFd;
    let tmp = tempfile::tempdir().unwrap();
    let out = finished_run(tmp.path());
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .truncate(true)
        .open(out.join(".lock"))
        .unwrap();
    // SAFETY: flock on a file descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let child = resume_command(&out).spawn();
    std::thread::sleep(Duration::from_millis(150));
    std::fs::write(out.join(".lock"), "4242").unwrap();
    let o = child.wait_with_output().unwrap();
    drop(lock);
    assert_code(&o, 2);
    assert!(text_of(&o).contains("(pid 4242)"), "{}", describe(&o));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = finished_run(tmp.path());
    for _ in 0..5 {
        let mut child = moldtune("best").arg(&out).spawn();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{err}"
        );
        assert!(o.status.code() != Some(101), "{err}");
    }
}

#[test]
fn a_build_cut_by_the_adapted_timeout_is_retried_at_the_configured_one() {
    // Three 0 s compiles adapt the compile timeout to its 10 s floor; the fourth takes
    // 10.5 s (a busy machine): cut, retried at `timeouts.compile_s`, it builds.
    let keys = "check: {mode: none}\nrepeats: 1\ntimeouts: {compile_s: 30, run_s: 30}\n";
    let p = FakeProblem::with(&["slow_fourth"], 5, keys);
    // One build at a time: the fourth is cut by the timeout adapted to the three before it.
    let o = p.command().max_evals(5).args(["--jobs", "1"]).output();
    assert_code(&o, 0);
    let csv = Csv::read(&p.out());
    assert_eq!(
        csv.column("status"),
        vec!["ok"; 5],
        "{:?}",
        causes(&p.out())
    );
    let compile_s: Vec<f64> = (csv.column("compile_s").iter())
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        compile_s[3] >= 10.0,
        "the cut attempt counts: {compile_s:?}"
    );
    assert_no_leftover("sleep 10.5");
}

#[test]
fn builds_run_ahead_but_never_while_a_variant_is_timed() {
    // Six distinct variants whose builds tick for half a second and whose timed runs note
    // their spans: with --jobs 3 the next builds run during the previous evaluations, but
    // no build ticks inside a timed run (held stopped by SIGSTOP).
    let keys = "check: {mode: none}\nrepeats: 2\ntimeouts: {compile_s: 30, run_s: 30}\n";
    let p = FakeProblem::with(&["ticking"], 6, keys);
    let o = p.command().max_evals(6).args(["--jobs", "3"]).output();
    assert_code(&o, 0);
    let csv = Csv::read(&p.out());
    assert_eq!(
        csv.column("status"),
        vec!["ok"; 6],
        "{:?}",
        causes(&p.out())
    );
    let ids: Vec<String> = (0..6).map(|i| i.to_string()).collect();
    assert_eq!(csv.column("eval_id"), ids, "rows in evaluation order");
    assert_eq!(read_json(&p.out().join("run.json"))["jobs"], 3);
    let (ticks, spans) = (noted_ticks(p.dir()), noted_spans(p.dir()));
    let slack = 30_000_000; // 30 ms: a tick already under way when the pause began
    for (exe, s, e) in &spans {
        let inside = ticks
            .iter()
            .filter(|(_, t)| *t > s + slack && *t + slack < *e);
        let inside: Vec<_> = inside.collect();
        assert!(
            inside.is_empty(),
            "builds ticked while {exe} was timed: {inside:?}"
        );
    }
    let first_tick = |k: usize| {
        let exe = format!("eval-{k}/variant");
        (ticks.iter())
            .filter(|(x, _)| x.ends_with(&exe))
            .map(|t| t.1)
            .min()
            .unwrap()
    };
    let last_end = |k: usize| {
        let exe = format!("eval-{k}/variant");
        (spans.iter())
            .filter(|(x, ..)| x.ends_with(&exe))
            .map(|s| s.2)
            .max()
            .unwrap()
    };
    let ahead = (1..6).filter(|&k| first_tick(k) < last_end(k - 1)).count();
    assert!(ahead >= 3, "builds ran ahead for {ahead} of 5 evaluations");
}

/// When the ticking builds of a directory ticked: (executable, time) of every tick.
fn noted_ticks(dir: &Path) -> Vec<(String, u128)> {
    let ticks = std::fs::read_to_string(dir.join("ticks")).unwrap();
    (ticks.lines())
        .map(|l| l.split_once(' ').unwrap())
        .map(|(exe, t)| (exe.to_string(), t.parse().unwrap()))
        .collect()
}

/// When the timed runs of a directory ran: (executable, start, end) of every timed run.
fn noted_spans(dir: &Path) -> Vec<(String, u128, u128)> {
    let spans = std::fs::read_to_string(dir.join("spans")).unwrap();
    (spans.lines())
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .map(|w| {
            (
                w[0].to_string(),
                w[1].parse().unwrap(),
                w[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_baseline_builds_its_configurations_at_once_and_times_them_alone() {
    // The reference and the guard of a baseline build at once (`--jobs 2`): their builds'
    // ticks overlap; the timed rounds come after every build has ended.
    let keys = "check: {mode: none}\nrepeats: 1\ntimeouts: {compile_s: 30, run_s: 30}\n";
    let p = FakeProblem::with(&["ticking"], 6, keys);
    let o = p
        .command()
        .max_evals(3)
        .args(["--jobs", "1", "--verify", "0"]);
    assert_code(&o.output(), 0);
    for f in ["ticks", "spans"] {
        let _ = std::fs::remove_file(p.dir().join(f));
    }
    let o = moldtune("baseline")
        .arg("run")
        .out("b")
        .rounds(5)
        .args(["--jobs", "2"])
        .env("SPANS_FILE", p.dir().join("spans"))
        .cwd(p.dir())
        .output();
    assert_code(&o, 0);
    let read = |f: &str| {
        std::fs::read_to_string(p.dir().join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}: {}", describe(&o)))
    };
    let ticks: Vec<(String, u128)> = (read("ticks").lines())
        .map(|l| l.split_once(' ').unwrap())
        .map(|(exe, t)| (exe.to_string(), t.parse().unwrap()))
        .collect();
    let span_of = |k: usize| {
        let mine = ticks
            .iter()
            .filter(|(x, _)| x.contains(&format!("verify-{k}/")));
        let t: Vec<u128> = mine.map(|t| t.1).collect();
        (*t.iter().min().unwrap(), *t.iter().max().unwrap())
    };
    let (a, b) = (span_of(0), span_of(1));
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the builds did not overlap: {a:?} {b:?}"
    );
    let first_timed = (read("spans").lines())
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u128>().unwrap())
        .min()
        .unwrap();
    assert!(
        a.1.max(b.1) < first_timed,
        "a build ran into the timed rounds"
    );
}

/// A build's temporaries (clang's `variant-*.o`) go to a folder of its own build directory —
/// its `TMPDIR` — which is removed with it: a build that is killed leaves nothing in the
/// system's temporary folder (issue 42 item 6).
#[test]
fn builds_keep_their_temporaries_in_their_own_directory() {
    let p = FakeProblem::new(&["tmpdir"]);
    let o = p.command().max_evals(1).output();
    assert_code(&o, 0);
    let seen = std::fs::read_to_string(p.dir().join("tmpdirs")).unwrap();
    let work = p.out().join("work");
    assert!(!seen.trim().is_empty());
    for line in seen.lines() {
        let t = Path::new(line);
        assert!(t.starts_with(&work) && t.ends_with("tmp"), "{line}");
        assert!(!t.exists(), "{line} left behind");
    }
}

/// An accepted mold edit that does not build leaves nothing recorded: after the failed resume,
/// a plain resume with the original mold goes on (it was refused: run.json named the broken
/// mold as the run's; issue 42 item 7).
#[test]
fn an_accepted_mold_that_no_evaluation_used_is_not_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cc = "#!/bin/sh\nif grep -q BROKEN \"$1\"; then echo 'cc: broken' >&2; exit 1; fi\n\
              printf '#!/bin/sh\\necho 0.25\\necho same >&2\\n' > \"$2\"\nchmod +x \"$2\"\n";
    let mold = "int p = #P0;\n";
    let run = edit_problem(d, cc, mold);
    assert_code(&run(&["--max-evals", "3"]), 0);
    std::fs::write(d.join("m.c"), format!("/* BROKEN */\n{mold}")).unwrap();
    let o = run(&["--max-evals", "6", "--resume", "--accept-changed-mold"]);
    assert_ne!(o.status.code(), Some(0), "{}", describe(&o));
    std::fs::write(d.join("m.c"), mold).unwrap();
    let o = run(&["--max-evals", "6", "--resume"]);
    assert_code(&o, 0);
    assert_eq!(Csv::read(&d.join("run")).rows.len(), 6);
    let meta = read_json(&d.join("run/run.json"));
    let changes = meta["mold_changes"].as_array();
    assert!(changes.is_none_or(|c| c.is_empty()), "{meta}");
}

/// A log written before the `learner` column existed is read, and given the column (empty in
/// its old rows) when the run is resumed.
#[test]
fn a_log_without_the_learner_column_is_resumed_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = finished_run(tmp.path());
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let cut: String = csv
        .lines()
        .map(|l| l.rsplit_once(',').map_or(l, |(a, _)| a).to_string() + "\n")
        .collect();
    assert!(!cut.lines().next().unwrap().ends_with("learner"));
    std::fs::write(out.join("results.csv"), cut).unwrap();
    let o = resume(&out, &[]);
    assert_code(&o, 0);
    let after = Csv::read(&out);
    assert_eq!(after.header.last().map(String::as_str), Some("learner"));
    assert_eq!(after.rows.len(), 10);
    assert!(after.rows[..8].iter().all(|r| r.last().unwrap().is_empty()));
}
