//! Commands of moldtune's own whose output it reads (the compiler's AST dump and
//! `--version`, the disassembler, Slurm's commands): run like every other child (its own
//! process group, killed on timeout or Ctrl-C) with their output in a private scratch
//! directory, read back whole ([`output`]) or streamed while the command runs ([`stream`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::process::{execute, Command, Finished};

/// What a helper command (the compiler's AST dump, the disassembler, `--version`) printed.
pub struct Output {
    pub finished: Finished,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs a helper command of moldtune's own like every other child (its own process group,
/// killed on timeout or Ctrl-C) and reads back all it printed (at most `max_bytes` each).
pub fn output(argv: &[String], timeout: Duration, max_bytes: u64) -> Output {
    let made = crate::scratch::Scratch::new("helper");
    let dir = made
        .as_ref()
        .map_or_else(|_| PathBuf::from("/"), |s| s.path().to_path_buf());
    let cmd = helper_command(argv, dir.join("stdout"), dir.join("stderr"), max_bytes);
    let finished = match &made {
        Ok(_) => execute(&cmd, timeout),
        Err(e) => Finished::spawn_error(format!("cannot create a scratch directory: {e}")),
    };
    let read = |p: &PathBuf| made.is_ok().then(|| std::fs::read(p).ok()).flatten();
    Output {
        stdout: read(&cmd.stdout).unwrap_or_default(),
        stderr: read(&cmd.stderr).unwrap_or_default(),
        finished,
    }
}

/// A helper command run from the current directory, its output to `stdout` and `stderr`.
fn helper_command(argv: &[String], stdout: PathBuf, stderr: PathBuf, max_bytes: u64) -> Command {
    Command {
        argv: argv.to_vec(),
        env: vec![],
        cwd: std::env::current_dir().unwrap_or_else(|_| "/".into()),
        stdout,
        stderr,
        max_file_bytes: max_bytes,
        pausable: false,
    }
}

/// Runs a helper command like [`output`], handing what it prints on stdout to `consume` as
/// it arrives, a chunk at a time (never more than a chunk in memory, however much it prints:
/// clang's JSON AST of a large file runs to gigabytes); its stderr is read back whole, at
/// most `max_stderr` bytes.
pub fn stream(
    argv: &[String],
    timeout: Duration,
    max_stderr: u64,
    consume: &mut dyn FnMut(&[u8]),
) -> Output {
    let made = crate::scratch::Scratch::new("helper");
    let piped = made.as_ref().map_err(|e| e.to_string()).and_then(|d| {
        let fifo = d.path().join("stdout");
        Pipe::open(&fifo).map(|p| (p, fifo))
    });
    let (pipe, fifo) = match piped {
        Ok(p) => p,
        Err(e) => {
            return Output {
                finished: Finished::spawn_error(format!("cannot make a pipe for its output: {e}")),
                stdout: vec![],
                stderr: vec![],
            }
        }
    };
    let dir = fifo.parent().unwrap_or(&fifo).to_path_buf();
    let cmd = helper_command(argv, fifo, dir.join("stderr"), max_stderr);
    let done = std::sync::atomic::AtomicBool::new(false);
    let finished = std::thread::scope(|s| {
        let Pipe { mut reader, writer } = pipe;
        let running = s.spawn(|| {
            let f = execute(&cmd, timeout);
            drop(writer); // the command and its group are gone: the stream may end
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            f
        });
        read_all(&mut reader, consume, &done);
        drop(reader); // a command still writing (the reader failed) gets EPIPE, not a wait
        running
            .join()
            .unwrap_or_else(|_| Finished::spawn_error("the helper's thread failed".into()))
    });
    Output {
        finished,
        stdout: vec![],
        stderr: std::fs::read(dir.join("stderr")).unwrap_or_default(),
    }
}

/// A named pipe's two ends: the reader, and a writer of our own that holds the stream open
/// until the command is over (without it, a read before the command opened its end would
/// see the end of the stream).
struct Pipe {
    reader: std::fs::File,
    writer: std::fs::File,
}

impl Pipe {
    fn open(path: &std::path::Path) -> Result<Pipe, String> {
        use nix::fcntl::{fcntl, FcntlArg, OFlag};
        use std::os::unix::fs::OpenOptionsExt;
        let mode = nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR;
        nix::unistd::mkfifo(path, mode).map_err(|e| e.to_string())?;
        // Non-blocking to open the reading end with no writer yet, then blocking to read.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| e.to_string())?;
        let writer = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| e.to_string())?;
        fcntl(&reader, FcntlArg::F_SETFL(OFlag::empty())).map_err(|e| e.to_string())?;
        Ok(Pipe { reader, writer })
    }
}

/// How long the stream is read after its command ended: what is left in the pipe, not what
/// a process that escaped the command's group and still holds the pipe may write.
const DRAIN: Duration = Duration::from_millis(500);

/// Reads the stream until it ends, or until [`DRAIN`] after the command ended (`done`).
fn read_all(
    reader: &mut std::fs::File,
    consume: &mut dyn FnMut(&[u8]),
    done: &std::sync::atomic::AtomicBool,
) {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut buf = vec![0u8; 1 << 20];
    let mut ended: Option<std::time::Instant> = None;
    loop {
        if done.load(std::sync::atomic::Ordering::SeqCst) {
            let at = *ended.get_or_insert_with(std::time::Instant::now);
            if at.elapsed() > DRAIN {
                return;
            }
        }
        let mut ready = libc::pollfd {
            fd: reader.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd of a descriptor we own.
        if unsafe { libc::poll(&mut ready, 1, 50) } <= 0 {
            continue; // nothing yet, or a signal: look at `done` again
        }
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => consume(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// At most the last `max` bytes of a file (all of a shorter one); never more in memory,
/// however much a child wrote.
pub fn tail_bytes(path: &std::path::Path, max: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return vec![];
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut out = Vec::with_capacity(len.min(max) as usize);
    let _ = f.take(max).read_to_end(&mut out);
    out
}

/// The last `max_lines` lines of a file (lossy UTF-8, from its last 16 KiB), for error
/// messages and results.
pub fn tail(path: &std::path::Path, max_lines: usize) -> String {
    let bytes = tail_bytes(path, 16 * 1024);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max_lines);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a command prints on stdout arrives in chunks, all of it and never whole; its
    /// stderr is read back; a command past its timeout is killed.
    #[test]
    fn a_streamed_command_hands_over_all_it_prints_in_chunks() {
        let argv: Vec<String> = ["sh", "-c", "head -c 3000000 /dev/zero; echo done >&2"]
            .map(String::from)
            .to_vec();
        let (mut bytes, mut chunks) = (0, 0);
        let out = stream(&argv, Duration::from_secs(30), 1 << 10, &mut |c| {
            bytes += c.len();
            chunks += 1;
        });
        assert!(out.finished.success(), "{:?}", out.finished.exit);
        assert_eq!(bytes, 3_000_000);
        assert!(chunks >= 3, "{chunks} chunks");
        assert_eq!(out.stderr, b"done\n");
        let argv: Vec<String> = ["sleep", "30.0123"].map(String::from).to_vec();
        let out = stream(&argv, Duration::from_millis(300), 1 << 10, &mut |_| {});
        assert_eq!(out.finished.exit, crate::process::Exit::Timeout);
    }

    /// Another local user's directories and symlinks planted at every name the helper's output
    /// could once have gone to (`/tmp/moldtune-helper-<pid>-<n>/stdout`) are never written.
    #[test]
    fn helper_output_never_goes_through_a_planted_path() {
        let victim_dir = tempfile::tempdir().unwrap();
        let victim = victim_dir.path().join("precious");
        std::fs::write(&victim, "keep me").unwrap();
        let pid = std::process::id();
        let planted: Vec<PathBuf> = (0..500)
            .map(|n| std::env::temp_dir().join(format!("moldtune-helper-{pid}-{n}")))
            .filter(|d| std::fs::create_dir(d).is_ok())
            .collect();
        for d in &planted {
            let _ = std::os::unix::fs::symlink(&victim, d.join("stdout"));
            let _ = std::os::unix::fs::symlink(&victim, d.join("stderr"));
        }
        let out = output(
            &["echo".into(), "hello".into()],
            Duration::from_secs(10),
            1 << 10,
        );
        for d in &planted {
            let _ = std::fs::remove_dir_all(d);
        }
        assert_eq!(out.stdout, b"hello\n");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    }
}
