//! Private scratch directories in the system's temporary directory (helper output, `check`'s
//! builds, `best --measure`, mctree's pre-flight). Each is created atomically under an
//! unpredictable name with mode 0700 (the `tempfile` crate), so no path another local user
//! planted first — a directory, a symlink — is ever written through; each is removed when
//! dropped.
//!
//! A process killed with SIGKILL cannot remove its own, so the first scratch directory a
//! moldtune makes sweeps those a dead moldtune left. Only what moldtune provably made and no
//! live process holds is removed: each directory holds a marker file, [`MARKER`], on which
//! its maker keeps an `flock` for the directory's whole life (the marker is locked before it
//! is put in place, so it is never seen unlocked while its maker lives). The sweep removes a
//! directory named `moldtune-<kind>-<pid>-<random>`, owned by this user, untouched for a
//! minute, whose marker is a regular file it can lock — and holds that lock while it removes
//! it. A directory without the marker (a user's own named like ours) is never touched, and a
//! lock, unlike a pid, is seen from another pid namespace (a container sharing `/tmp`) and,
//! through NFS's lock manager, from another node sharing the folder.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A private directory, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    /// The marker, locked while the directory lives (dropped after it: fields drop in order).
    _claim: File,
}

/// The file inside each scratch directory whose lock says its maker lives.
pub const MARKER: &str = ".moldtune-scratch";

/// How long an abandoned scratch directory must have been untouched to be swept.
const STALE: Duration = Duration::from_secs(60);

impl Scratch {
    /// A new directory `moldtune-<kind>-<pid>-<random>` in the temporary directory.
    pub fn new(kind: &str) -> std::io::Result<Scratch> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(&std::env::temp_dir(), STALE));
        use std::os::unix::fs::PermissionsExt;
        let tmp = std::env::temp_dir();
        let unusable = |e: std::io::Error| {
            let why = format!(
                "the temporary folder `{}` (`TMPDIR`) cannot be used: {e}; set `TMPDIR` to a folder you can write",
                tmp.display()
            );
            std::io::Error::new(e.kind(), why)
        };
        let dir = tempfile::Builder::new()
            .prefix(&format!("moldtune-{kind}-{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&tmp)
            .map_err(unusable)?;
        let claim = claim(dir.path()).map_err(unusable)?;
        Ok(Scratch { dir, _claim: claim })
    }

    /// [`Scratch::new`] for a command: a temporary folder that cannot be used is the
    /// user's to fix (exit 2), named with what to do.
    pub fn for_command(kind: &str) -> Result<Scratch, crate::error::Error> {
        Scratch::new(kind).map_err(|e| {
            crate::error::Error::usage(
                e.to_string(),
                Some("e.g. `TMPDIR=/tmp`, or a folder on a disk with room"),
            )
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Puts the locked marker into `dir`: made under another name, locked, then renamed into
/// place (the lock belongs to the open file, and follows it).
fn claim(dir: &Path) -> std::io::Result<File> {
    let fresh = dir.join(format!("{MARKER}.new"));
    let f = File::options().write(true).create_new(true).open(&fresh)?;
    if !try_lock(&f) {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::rename(&fresh, dir.join(MARKER))?;
    Ok(f)
}

/// An exclusive lock on `f`, if nobody holds one.
fn try_lock(f: &File) -> bool {
    // SAFETY: flock on a file descriptor we own.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Removes the scratch directories in `tmp` that a dead moldtune left (see the module's doc).
pub fn sweep(tmp: &Path, stale: Duration) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if let Some(_held) = abandoned(&path, stale) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// The locked marker of `path` when it is a scratch directory of a moldtune that is gone.
fn abandoned(path: &Path, stale: Duration) -> Option<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    path.file_name()
        .and_then(|n| pid_of(&n.to_string_lossy()))?;
    let meta = std::fs::symlink_metadata(path).ok()?;
    let old = (meta.modified().ok())
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= stale);
    let mine = meta.uid() == nix::unistd::geteuid().as_raw();
    if !(meta.is_dir() && mine && old) {
        return None;
    }
    let marker = path.join(MARKER);
    if !std::fs::symlink_metadata(&marker).ok()?.is_file() {
        return None;
    }
    let f = (File::options().read(true))
        .custom_flags(libc::O_NOFOLLOW)
        .open(&marker)
        .ok()?;
    try_lock(&f).then_some(f)
}

/// The pid in `moldtune-<kind>-<pid>-<random>` (the shape of the name; the pid itself decides
/// nothing).
fn pid_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("moldtune-")?;
    let mut parts = rest.split('-');
    let (_kind, pid, random) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && !random.is_empty())
        .then(|| pid.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_strictly() {
        assert_eq!(pid_of("moldtune-helper-123-a1B2c3"), Some(123));
        assert_eq!(pid_of("moldtune-helper-123-0"), Some(123));
        assert_eq!(pid_of("moldtune-helper-123"), None);
        assert_eq!(pid_of("moldtune-helper-x-abc"), None);
        assert_eq!(pid_of("other-helper-1-abc"), None);
    }

    /// A directory as a dead moldtune leaves it: named like ours, the marker unlocked.
    fn left(tmp: &Path, name: &str) -> std::path::PathBuf {
        let p = tmp.join(name);
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join(MARKER), "").unwrap();
        std::fs::write(p.join("stdout"), "x").unwrap();
        p
    }

    #[test]
    fn an_abandoned_scratch_is_swept_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = left(tmp.path(), "moldtune-helper-99999999-abc123");
        // A user's own directory named like ours, with no marker: never ours.
        let users = tmp.path().join("moldtune-app-20251127-final");
        std::fs::create_dir(&users).unwrap();
        std::fs::write(users.join("results.csv"), "x").unwrap();
        let other = left(tmp.path(), "somebody-1-abc123");
        let link = tmp.path().join("moldtune-check-1-zz");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        // Fresh: not swept (it may be a moldtune that is just starting).
        sweep(tmp.path(), Duration::from_secs(3600));
        assert!(gone.is_dir());
        sweep(tmp.path(), Duration::ZERO);
        assert!(!gone.exists(), "an unlocked marker's directory is swept");
        assert!(users.join("results.csv").is_file(), "no marker: kept");
        assert!(other.join("stdout").is_file(), "a name not ours is kept");
        assert!(
            link.symlink_metadata().is_ok(),
            "a link is never followed nor removed"
        );
    }

    /// A live maker's directory is kept whatever its pid says (another pid namespace, another
    /// node): its marker is locked.
    #[test]
    fn a_locked_scratch_is_kept_whatever_its_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let held = left(tmp.path(), "moldtune-mctree-99999999-abc123");
        let f = File::open(held.join(MARKER)).unwrap();
        assert!(try_lock(&f));
        sweep(tmp.path(), Duration::ZERO);
        assert!(held.join("stdout").is_file(), "locked: kept");
        drop(f);
        sweep(tmp.path(), Duration::ZERO);
        assert!(!held.exists(), "released: swept");
    }

    #[test]
    fn a_live_scratch_is_locked_from_the_start() {
        let s = Scratch::new("test").unwrap();
        let marker = File::open(s.path().join(MARKER)).unwrap();
        assert!(!try_lock(&marker), "its maker holds the lock");
        assert!(abandoned(s.path(), Duration::ZERO).is_none());
    }

    #[test]
    fn scratch_directories_are_private_and_removed_on_drop() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("test").unwrap();
        let p = s.path().to_path_buf();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            pid_of(&p.file_name().unwrap().to_string_lossy()) == Some(std::process::id() as i32)
        );
        drop(s);
        assert!(!p.exists());
    }
}
