//! The lock that keeps two runs out of one run directory: an `flock` on `.lock`, which holds
//! the holder's pid for the message a second run gets.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::error::Error;

/// Holds the directory's lock for the lifetime of the run (released by the kernel even on
/// SIGKILL).
pub struct Lock {
    _file: File,
}

pub fn lock(dir: &Path) -> Result<Lock, Error> {
    // A directory that cannot be made or written is a usage error: nothing has run yet.
    let unusable = |e: std::io::Error| {
        Error::usage(
            format!("cannot use `{}` as the run directory: {e}", dir.display()),
            Some("`--out` must name a directory moldtune may create and write (not a file)"),
        )
    };
    std::fs::create_dir_all(dir).map_err(unusable)?;
    if !dir.is_dir() {
        return Err(unusable(std::io::Error::from(
            std::io::ErrorKind::NotADirectory,
        )));
    }
    let path = dir.join(".lock");
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(unusable)?;
    // SAFETY: flock on a file descriptor we own.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        let pid = match holder(&mut f) {
            Some(p) => format!(" (pid {p})"),
            None => String::new(),
        };
        return Err(Error::usage(
            format!("`{}` is in use by another moldtune run{pid}", dir.display()),
            Some("wait for it to finish, or choose another directory with `--out`"),
        ));
    }
    let _ = f.set_len(0);
    let _ = f.seek(SeekFrom::Start(0));
    let _ = write!(f, "{}", std::process::id());
    Ok(Lock { _file: f })
}

/// The pid the lock's holder wrote, waiting up to 0.5 s for a holder that has just taken it
/// (it writes its pid right after).
fn holder(f: &mut File) -> Option<String> {
    for _ in 0..25 {
        let mut pid = String::new();
        let _ = f.seek(SeekFrom::Start(0));
        let _ = f.read_to_string(&mut pid);
        if !pid.trim().is_empty() {
            return Some(pid.trim().to_string());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}
