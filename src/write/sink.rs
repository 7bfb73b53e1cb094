//! Where a writer's bytes go: the [`Sink`] trait, memory, and
//! [`AtomicFile`] (a temporary file renamed over the destination on commit).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where a writer's bytes go; `commit` runs once everything is written.
pub trait Sink: Write {
    /// Makes the written file visible (e.g. rename a temporary file).
    fn commit(self) -> Result<()>;

    /// Writes `bytes`, which the sink may keep instead of copying (the
    /// writer hands over each encoded chunk section this way; a
    /// [`super::BackgroundSink`] sends it to its writing thread whole).
    fn write_owned(&mut self, bytes: Vec<u8>) -> std::io::Result<()> {
        self.write_all(&bytes)
    }
}

impl Sink for Vec<u8> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}

/// A file written under a temporary name and renamed over the destination on
/// commit; dropped uncommitted, it is removed and the destination is untouched.
///
/// - The temporary file lives in the directory of the file finally replaced
///   (a symlink's target, followed to the end of the chain), so the rename is
///   atomic; it is created exclusively (`O_EXCL`, never following a planted
///   link) under a short unpredictable name (`.fp-XXXXXXXX.tmp`).
/// - A replaced file keeps its permission bits and, where the process may
///   set them, its owner and group. A new file gets `0666` minus the umask.
/// - A destination marked read-only, or that this user may not write (the
///   kernel's access check, so ACLs and owners count), is refused unless
///   [`AtomicFile::create_with`] is told to replace it anyway.
/// - A destination that exists and is not a regular file (a device, a FIFO,
///   a socket) is refused: renaming over it would replace it; write to such
///   a destination directly instead.
///
/// Errors name the destination as the caller gave it, never the temporary name.
pub struct AtomicFile {
    tmp: Option<BufWriter<tempfile::NamedTempFile>>,
    tmp_path: PathBuf,
    /// The path renamed onto (symlinks resolved).
    target: PathBuf,
    /// The destination as the caller named it, for messages.
    shown: PathBuf,
}

/// Most symlinks followed when resolving a destination (as Linux's ELOOP).
const MAX_LINK_HOPS: usize = 40;

/// Follows `path` through symlinks to the path that is not a link (which may
/// not exist yet).
pub(crate) fn resolve_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINK_HOPS} levels of symbolic links"
    )))
}

/// For an existing regular file: whether this process may write it, by the
/// kernel's own access check with the effective user and groups
/// (`faccessat` with `AT_EACCESS`: ACLs, capabilities and read-only mounts
/// included), not by the mode bits alone.
fn writable_by_this_user(path: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        extern "C" {
            fn faccessat(dirfd: i32, path: *const std::ffi::c_char, mode: i32, flags: i32) -> i32;
        }
        const AT_FDCWD: i32 = -100;
        const W_OK: i32 = 2;
        const AT_EACCESS: i32 = 0x200;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return Ok(());
        };
        // SAFETY: `c` is a NUL-terminated path that outlives the call, which
        // only reads it.
        if unsafe { faccessat(AT_FDCWD, c.as_ptr(), W_OK, AT_EACCESS) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
    Ok(())
}

impl AtomicFile {
    /// Prepares to replace `dest`; refuses a read-only destination.
    pub fn create(dest: &Path) -> Result<Self> {
        Self::create_with(dest, false)
    }

    /// Prepares to replace `dest`; with `replace_read_only`, a destination
    /// without write permission is replaced too (keeping its permissions).
    pub fn create_with(dest: &Path, replace_read_only: bool) -> Result<Self> {
        let shown = dest.to_path_buf();
        let err =
            |what: &str, e: std::io::Error| Error::io(format!("{what} {}", dest.display()), e);
        let target = resolve_symlinks(dest).map_err(|e| err("resolving", e))?;
        target.file_name().ok_or_else(|| {
            Error::InvalidArgument(format!("{} is not a file path", dest.display()))
        })?;
        let existing = match std::fs::metadata(&target) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err("checking", e)),
        };
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(Error::InvalidArgument(format!(
                    "{} is a directory",
                    dest.display()
                )));
            }
            if !m.is_file() {
                return Err(Error::InvalidArgument(format!(
                    "{} exists and is not a regular file; it cannot be replaced atomically",
                    dest.display()
                )));
            }
            if !replace_read_only {
                // Both the mode bits (a file marked read-only is kept even
                // for root, whom the kernel lets write anything) and the
                // kernel's own access check for this user (ACLs, owners,
                // read-only mounts: a file this user cannot write is not
                // swapped for one it owns just because the folder allows
                // the rename).
                if m.permissions().readonly() {
                    return Err(Error::InvalidArgument(format!(
                        "{} is read-only; not replacing it",
                        dest.display()
                    )));
                }
                if let Err(why) = writable_by_this_user(&target) {
                    return Err(Error::InvalidArgument(format!(
                        "{} is read-only for this user ({why}); not replacing it",
                        dest.display()
                    )));
                }
            }
        }
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut b = tempfile::Builder::new();
        b.prefix(".fp-").suffix(".tmp").rand_bytes(8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like File::create: 0666 minus the umask (the kernel applies it).
            b.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // tempfile's errors name the temporary path; report the OS error alone.
        let tmp = b.tempfile_in(dir).map_err(|e| {
            let e = e
                .raw_os_error()
                .map(std::io::Error::from_raw_os_error)
                .unwrap_or_else(|| std::io::Error::new(e.kind(), e.kind().to_string()));
            err("creating a temporary file next to", e)
        })?;
        if let Some(m) = &existing {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                // Owner first (changing it may clear set-id bits), then the
                // mode. Not being allowed to give the file away is normal.
                let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
            }
            tmp.as_file()
                .set_permissions(m.permissions())
                .map_err(|e| err("copying the permissions of", e))?;
        }
        let tmp_path = tmp.path().to_path_buf();
        Ok(Self {
            tmp: Some(BufWriter::with_capacity(1 << 20, tmp)),
            tmp_path,
            target,
            shown,
        })
    }

    /// The temporary file's path (for a caller that must remove it on a
    /// signal, when no destructor runs).
    pub fn temp_path(&self) -> &Path {
        &self.tmp_path
    }

    /// The file that commit replaces (the destination, symlinks resolved).
    pub fn target(&self) -> &Path {
        &self.target
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_mut().expect("open until commit").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_mut().expect("open until commit").flush()
    }
}

impl Sink for AtomicFile {
    fn commit(mut self) -> Result<()> {
        let shown = self.shown.display().to_string();
        let tmp = self.tmp.take().expect("open until commit");
        // On an error below, `tmp` (a NamedTempFile) removes itself on drop.
        let tmp = tmp
            .into_inner()
            .map_err(|e| Error::io(format!("writing {shown}"), e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(format!("syncing {shown}"), e))?;
        tmp.persist(&self.target)
            .map_err(|e| Error::io(format!("replacing {shown}"), e.error))?;
        // Make the rename itself durable (best effort: not every filesystem
        // lets a directory be opened and synced).
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// Borrows a Vec as a sink.
pub(super) struct VecSink<'a>(pub(super) &'a mut Vec<u8>);

impl Write for VecSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for VecSink<'_> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}
