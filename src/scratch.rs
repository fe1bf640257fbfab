//! Private scratch directories in the system's temporary directory (helper output, `check`'s
//! builds, `best --measure`, mctree's pre-flight). Each is created atomically under an
//! unpredictable name with mode 0700 (the `tempfile` crate), so no path another local user
//! planted first — a directory, a symlink — is ever written through; each is removed when
//! dropped. A process killed with SIGKILL cannot remove its own: the names carry the pid
//! (`moldtune-<kind>-<pid>-<random>`), and the first scratch directory a moldtune makes sweeps
//! those that are provably a dead moldtune's — a directory (not a link) owned by this user,
//! untouched for a minute, whose pid is not alive.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// A private directory, removed on drop.
#[derive(Debug)]
pub struct Scratch(tempfile::TempDir);

/// How long a dead process's scratch directory must have been untouched to be swept.
const STALE: Duration = Duration::from_secs(60);

impl Scratch {
    /// A new directory `moldtune-<kind>-<pid>-<random>` in the temporary directory.
    pub fn new(kind: &str) -> std::io::Result<Scratch> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(&std::env::temp_dir(), STALE));
        use std::os::unix::fs::PermissionsExt;
        tempfile::Builder::new()
            .prefix(&format!("moldtune-{kind}-{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map(Scratch)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Removes the scratch directories in `tmp` that a dead moldtune left (see the module's doc).
pub fn sweep(tmp: &Path, stale: Duration) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if abandoned(&path, stale) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Whether `path` is a scratch directory of a moldtune that is gone.
fn abandoned(path: &Path, stale: Duration) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(pid) = path.file_name().and_then(|n| pid_of(&n.to_string_lossy())) else {
        return false;
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let old = (meta.modified().ok())
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= stale);
    meta.is_dir() && meta.uid() == nix::unistd::geteuid().as_raw() && old && !alive(pid)
}

/// The pid in `moldtune-<kind>-<pid>-<random>`.
fn pid_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("moldtune-")?;
    let mut parts = rest.split('-');
    let (_kind, pid, random) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && !random.is_empty())
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process `pid` exists (one of another user's counts: not provably gone).
fn alive(pid: i32) -> bool {
    use nix::errno::Errno;
    let r = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None);
    !matches!(r, Err(Errno::ESRCH))
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

    #[test]
    fn a_dead_processes_scratch_is_swept_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let mine = std::process::id();
        let make = |name: String| {
            let p = tmp.path().join(name);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("stdout"), "x").unwrap();
            p
        };
        let gone = make(format!("moldtune-helper-{dead}-abc123"));
        let live = make(format!("moldtune-helper-{mine}-abc123"));
        let other = make(format!("somebody-{dead}-abc123"));
        let link = tmp.path().join(format!("moldtune-check-{dead}-zz"));
        std::os::unix::fs::symlink(&other, &link).unwrap();
        // Fresh: not swept even when dead (it may be a moldtune that just started).
        sweep(tmp.path(), Duration::from_secs(3600));
        assert!(gone.is_dir());
        sweep(tmp.path(), Duration::ZERO);
        assert!(!gone.exists(), "a dead pid's scratch is swept");
        assert!(live.join("stdout").is_file(), "a live pid's is kept");
        assert!(other.join("stdout").is_file(), "a name not ours is kept");
        assert!(
            link.symlink_metadata().is_ok(),
            "a link is never followed nor removed"
        );
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
