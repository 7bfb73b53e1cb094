//! Errors, inputs and outputs shared by the commands.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use fastpair::write::{AtomicFile, Sink};
use fastpair::{Column, ReadOptions, Reader};

/// Like `eprintln!`, but a closed or full stderr is ignored instead of
/// panicking (there is nowhere left to report it).
macro_rules! eprint_line {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}
pub(crate) use eprint_line;

/// Why a command stopped.
#[derive(Debug)]
pub enum CliError {
    /// stdout was closed by its reader (e.g. `| head`): stop quietly.
    BrokenPipe,
    /// Anything else: one line for the user.
    Message(String),
}

impl CliError {
    pub fn msg(m: impl Into<String>) -> Self {
        CliError::Message(m.into())
    }
}

/// An I/O error, with what was being done.
pub fn io_error(context: impl std::fmt::Display, e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::BrokenPipe
    } else {
        CliError::Message(format!("{context}: {e}"))
    }
}

impl From<fastpair::Error> for CliError {
    fn from(e: fastpair::Error) -> Self {
        match &e {
            fastpair::Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => {
                CliError::BrokenPipe
            }
            _ => CliError::Message(e.to_string()),
        }
    }
}

/// A library error about the file at `path`, with the path in front when
/// the error does not already name it.
pub fn file_error(path: &Path, e: fastpair::Error) -> CliError {
    match e {
        fastpair::Error::Io { .. } => e.into(),
        e => CliError::Message(format!("{}: {e}", display(path))),
    }
}

/// `-` means stdin/stdout.
pub fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How a path appears in messages.
pub fn display(path: &Path) -> String {
    if is_std(path) {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// Opens a fastpair file (or reads one from stdin) and validates its footer
/// (dictionaries are checked when first used). A file that arrives as a stream is held in memory, so
/// it may be at most `memory` bytes (`--memory`).
pub fn open_reader(path: &Path, memory: u64) -> Result<Reader, CliError> {
    open_reader_with(path, memory, ReadOptions::default())
}

/// [`open_reader`] with options.
pub fn open_reader_with(path: &Path, memory: u64, opts: ReadOptions) -> Result<Reader, CliError> {
    use std::os::unix::fs::FileTypeExt;
    let r = if is_std(path) {
        Reader::from_bytes_with(read_stream(io::stdin().lock(), path, memory)?, opts)
    } else if std::fs::metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        t.is_fifo() || t.is_char_device() || t.is_socket()
    }) {
        // A named pipe, a process substitution `<(cmd)`, `/dev/stdin` or
        // another device: read like stdin.
        let f = File::open(path).map_err(|e| io_error(format!("opening {}", display(path)), e))?;
        Reader::from_bytes_with(read_stream(f, path, memory)?, opts)
    } else {
        Reader::open_with(path, opts)
    };
    r.map_err(|e| file_error(path, e))
}

/// The bytes of a fastpair file that arrives as a stream (it is read at
/// random offsets, so it is held whole, up to `limit` bytes). A stream whose
/// first bytes are not the magic is refused at once rather than read to its
/// end (`/dev/zero`), and one longer than `limit` as soon as it passes it (an
/// endless stream that starts with FASTPAIR).
fn read_stream(mut s: impl Read, path: &Path, limit: u64) -> Result<Vec<u8>, CliError> {
    let name = display(path);
    let mut bytes = Vec::new();
    (&mut s)
        .take(fastpair::format::MAGIC.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(format!("reading {name}"), e))?;
    if bytes.len() == fastpair::format::MAGIC.len() && bytes != fastpair::format::MAGIC {
        return Err(CliError::msg(format!(
            "{name}: not a fastpair file (it does not start with the bytes FASTPAIR)"
        )));
    }
    let room = limit.saturating_sub(bytes.len() as u64);
    s.take(room.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(format!("reading {name}"), e))?;
    if bytes.len() as u64 > limit {
        return Err(CliError::msg(format!(
            "{name}: a fastpair file read from a pipe is held in memory, and this one is longer \
             than --memory {}; save it to a file first (or raise --memory)",
            human_bytes(limit)
        )));
    }
    Ok(bytes)
}

/// What a stream starting with `head` looks like, when it starts like a
/// Parquet file or an Arrow IPC file or stream.
pub fn tabular_lookalike(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"PAR1") {
        Some("a Parquet file (PAR1)")
    } else if head.starts_with(b"ARROW1") {
        Some("an Arrow IPC file (ARROW1)")
    } else if head.starts_with(&[0xff, 0xff, 0xff, 0xff]) {
        Some("an Arrow IPC stream")
    } else {
        None
    }
}

/// True when `head` (a file's first bytes) reads as text: UTF-8 (a
/// character cut at the end is fine) without control bytes other than tab,
/// newline, carriage return and NUL (the `--nul` separator). The first page
/// of a Parquet file and an Arrow message are binary.
pub fn looks_like_text(head: &[u8]) -> bool {
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    utf8 && head
        .iter()
        .all(|&b| b >= 0x20 && b != 0x7f || matches!(b, b'\t' | b'\n' | b'\r' | 0))
}

/// Reader options for streaming decodes under a memory budget: one decode
/// holds at most half the budget (a reused buffer may briefly coexist with
/// its replacement), and no per-row index is cached.
pub fn decode_options(memory: u64) -> ReadOptions {
    ReadOptions::default()
        .with_memory_cap(Some((memory / 2).max(1)))
        .with_cache_row_index(false)
}

/// Decodes the whole column in order, chunk by chunk, splitting a chunk into
/// row ranges until each fits the reader's memory cap, and hands each range
/// (its first row and its rows) to `f`, for a single pass: each chunk is
/// released once its ranges are handed over (`Reader::release_chunk`: its validation state is
/// dropped and a mapped file's pages leave the resident set), so memory
/// holds one chunk, not the file.
pub fn stream_ranges(
    reader: &mut Reader,
    path: &Path,
    mut f: impl FnMut(u64, &Column) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut col = Column::default();
    for i in 0..reader.num_chunks() {
        chunk_ranges(reader, path, i, &mut col, &mut f)?;
        reader.release_chunk(i);
    }
    Ok(())
}

/// The ranges of chunk `i`, each within the memory cap, handed to `f`.
pub fn chunk_ranges(
    reader: &Reader,
    path: &Path,
    i: usize,
    col: &mut Column,
    f: &mut impl FnMut(u64, &Column) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let info = reader.chunk_info(i);
    let mut todo = Vec::with_capacity(8);
    todo.push(info.first_row..info.first_row + info.entry.rows as u64);
    while let Some(r) = todo.pop() {
        if r.is_empty() {
            continue;
        }
        match reader.read_range_into(r.clone(), col) {
            Ok(()) => f(r.start, col)?,
            Err(fastpair::Error::MemoryCap { .. }) if r.end - r.start > 1 => {
                let mid = r.start + (r.end - r.start) / 2;
                todo.push(mid..r.end);
                todo.push(r.start..mid);
            }
            Err(fastpair::Error::MemoryCap { .. }) => {
                let mut one = Column::default();
                let valid = reader
                    .get_into(r.start, &mut one.values)
                    .map_err(|e| file_error(path, e))?;
                one.offsets = vec![0, one.values.len() as i64];
                one.validity = (!valid).then(|| vec![0u8]);
                f(r.start, &one)?;
            }
            Err(e) => return Err(file_error(path, e)),
        }
    }
    Ok(())
}

/// A value holds the separator the output uses, so printing it would be
/// ambiguous (it would read as several rows).
pub fn separator_error(row: u64, nul: bool) -> CliError {
    CliError::msg(format!(
        "row {row} contains a {} byte, which the output format cannot represent; use {}",
        if nul { "NUL" } else { "newline" },
        if nul {
            "the line format (without --nul)"
        } else {
            "--nul"
        },
    ))
}

/// Opens an input stream for reading values.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>, CliError> {
    if is_std(path) {
        Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())))
    } else {
        let f = File::open(path).map_err(|e| io_error(format!("opening {}", display(path)), e))?;
        Ok(Box::new(BufReader::with_capacity(1 << 20, f)))
    }
}

/// Temporary files of outputs not yet committed, removed by the signal
/// handler (see `main::install_signal_handler`). Held while a temporary file
/// is created and registered, and while one is renamed and unregistered, so
/// a signal never sees a half-done step.
pub static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub fn temp_files() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMP_FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a command writes its result:
/// - stdout (`-`);
/// - an existing destination that is not a regular file (a device, a FIFO,
///   a socket, `/dev/stdout`, a process substitution's `/dev/fd/N`),
///   written directly and streamed, never renamed over;
/// - otherwise a temporary file next to the destination (a symlink's
///   target), renamed over it only on [`Output::finish`] / `commit`.
pub enum Output {
    // `Stdout`, not its lock: the output must be `Send` (Parquet's writer
    // requires it); the 1 MiB buffer takes the lock once per flush.
    Stdout(BufWriter<io::Stdout>),
    Direct(BufWriter<File>, PathBuf),
    File(AtomicFile, PathBuf, TempGuard),
}

/// Unregisters a temporary file from [`TEMP_FILES`] when dropped (the file
/// itself is removed by its `AtomicFile`, or was renamed). Holds a shared
/// `flock` on the temporary file while the command runs, which tells a later
/// run's stale-file cleaning that it is in use.
pub struct TempGuard(PathBuf, #[allow(dead_code)] Option<File>);

impl Drop for TempGuard {
    fn drop(&mut self) {
        temp_files().retain(|p| *p != self.0);
    }
}

/// Set once an output has replaced its destination and no temporary file is
/// pending: a signal that lands from then on must not report failure (the
/// work is done), so the handler lets the command finish.
pub static COMMITTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True when `path` names a node that must be written in place: it exists
/// and is not a regular file, or it (or a link on the way) is a kernel
/// handle under `/dev` or `/proc` (e.g. `/dev/stdout` -> `/proc/self/fd/1`,
/// which may point at a regular file the shell opened for us).
fn write_in_place(path: &Path) -> io::Result<bool> {
    let special = |p: &Path| p.starts_with("/dev") || p.starts_with("/proc");
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if special(&p) {
            return Ok(std::fs::metadata(&p).is_ok());
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(m) => return Ok(!m.is_file() && !m.is_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// Whether stdout was a closed descriptor when the process started (`>&-`).
/// Recorded before the Rust runtime reopens a closed standard descriptor on
/// /dev/null, after which writes would vanish with success.
pub fn stdout_was_closed() -> bool {
    crate::STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Refuses to write to a stdout that was closed (`>&-`): the rows would go
/// nowhere and the command would report success.
pub fn check_stdout_open() -> Result<(), CliError> {
    if stdout_was_closed() {
        return Err(CliError::msg(
            "stdout is closed (>&-): there is nowhere to write the output; redirect it \
             (e.g. >/dev/null to discard it) or use -o FILE",
        ));
    }
    Ok(())
}

/// 1 or 2 when `path` (or a link on the way to the file) names this
/// process's stdout or stderr (`/dev/stdout`, `/dev/fd/1`,
/// `/proc/self/fd/1`, ...): such an output is written through the inherited
/// descriptor, keeping the shell's open mode and offset (`>>` appends).
fn inherited_descriptor(path: &Path) -> Option<u8> {
    let pid = format!("/proc/{}/fd", std::process::id());
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        for (fd, name) in [(1u8, "stdout"), (2, "stderr")] {
            let n = fd.to_string();
            if p == Path::new("/dev").join(name)
                || [
                    "/dev/fd",
                    "/proc/self/fd",
                    "/proc/thread-self/fd",
                    pid.as_str(),
                ]
                .iter()
                .any(|d| p == Path::new(d).join(&n))
            {
                return Some(fd);
            }
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).ok()?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return None,
        }
    }
    None
}

/// Temporary outputs (`.fp-XXXXXXXX.tmp`, made by `AtomicFile`) left in the
/// destination's directory by a run that was killed (SIGKILL, a crash, a
/// power cut) before it could remove them. Removed when all of these hold:
/// the name has exactly our pattern, it is a regular file (never a link)
/// owned by this user, it was last written more than [`STALE_AFTER`] ago,
/// and no live process holds it: a running command keeps a shared `flock`
/// on its temporary file ([`TempGuard`]), so `flock(LOCK_EX | LOCK_NB)`
/// succeeds only on an abandoned one (the kernel drops a killed process's
/// locks). Errors are ignored: cleaning is a courtesy.
fn clean_stale_temps(dest: &Path) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let target = std::fs::canonicalize(dest)
            .ok()
            .or_else(|| {
                let parent = dest.parent().filter(|p| !p.as_os_str().is_empty())?;
                Some(std::fs::canonicalize(parent).ok()?.join("x"))
            })
            .or_else(|| std::env::current_dir().ok().map(|d| d.join("x")));
        let Some(dir) = target.as_ref().and_then(|t| t.parent()) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { geteuid() };
        let now = std::time::SystemTime::now();
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(n) = name.to_str() else { continue };
            let is_ours = n.len() == ".fp-".len() + 8 + ".tmp".len()
                && n.starts_with(".fp-")
                && n.ends_with(".tmp")
                && n[4..12].bytes().all(|b| b.is_ascii_alphanumeric());
            if !is_ours {
                continue;
            }
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let old = m
                .modified()
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > STALE_AFTER);
            if !m.is_file() || m.uid() != me || !old {
                continue;
            }
            // Opened without following a link (it was a regular file above;
            // O_NOFOLLOW refuses one swapped in since).
            use std::os::unix::fs::OpenOptionsExt;
            let Ok(f) = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(O_NOFOLLOW)
                .open(&p)
            else {
                continue;
            };
            if f.metadata()
                .is_ok_and(|fm| fm.ino() == m.ino() && fm.dev() == m.dev())
                && try_lock(&f, LOCK_EX)
            {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = dest;
}

/// A temporary file untouched for this long, and held by no process, is an
/// abandoned one. Long, because a library `Writer::create` (which holds no
/// lock) may sit idle on a slow input with its temporary file in the same
/// folder.
#[cfg(target_os = "linux")]
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(6 * 3600);
#[cfg(target_os = "linux")]
const O_NOFOLLOW: i32 = 0o400000;
#[cfg(target_os = "linux")]
const LOCK_SH: i32 = 1;
#[cfg(target_os = "linux")]
const LOCK_EX: i32 = 2;
#[cfg(target_os = "linux")]
const LOCK_NB: i32 = 4;
#[cfg(target_os = "linux")]
extern "C" {
    fn flock(fd: i32, op: i32) -> i32;
    fn geteuid() -> u32;
}

/// Takes `op` (LOCK_SH or LOCK_EX) on `f` without waiting; false when
/// another open file holds a conflicting lock.
#[cfg(target_os = "linux")]
fn try_lock(f: &File, op: i32) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor `f` owns for the duration of the call.
    unsafe { flock(f.as_raw_fd(), op | LOCK_NB) == 0 }
}

/// The file a path names, as (device, inode), following links; `-` is
/// whatever stdin or stdout (per `output`) is open on. `None` when it does not
/// exist (yet) or cannot be examined.
fn file_id(path: &Path, output: bool) -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let m = if is_std(path) {
        let fd = if output {
            io::stdout().as_fd().try_clone_to_owned()
        } else {
            io::stdin().as_fd().try_clone_to_owned()
        };
        File::from(fd.ok()?).metadata().ok()?
    } else {
        std::fs::metadata(path).ok()?
    };
    // Pipes, terminals and devices can be both ends of a command at once
    // without harm (`/dev/null`); only a file can be overwritten while read.
    m.is_file().then(|| (m.dev(), m.ino()))
}

impl Output {
    /// Opens the destination for the result of reading `input`; `force`
    /// replaces a read-only file. Refused when the destination is the input
    /// itself (by name, through a link, or as the shell's redirection of
    /// stdout): the input would be replaced by its own result, or written
    /// while it is still being read.
    pub fn create(path: &Path, input: &Path, force: bool) -> Result<Self, CliError> {
        if let (Some(o), Some(i)) = (file_id(path, true), file_id(input, false)) {
            if o == i {
                return Err(CliError::msg(format!(
                    "-o {} is the input file ({}): write the output elsewhere",
                    if is_std(path) {
                        "<stdout>".into()
                    } else {
                        path.display().to_string()
                    },
                    display(input)
                )));
            }
        }
        if is_std(path) {
            check_stdout_open()?;
            return Ok(Output::Stdout(BufWriter::with_capacity(
                1 << 20,
                io::stdout(),
            )));
        }
        let shown = path.display();
        if path.is_dir() {
            return Err(CliError::msg(format!("{shown} is a directory")));
        }
        if let Some(fd) = inherited_descriptor(path) {
            // Reopening /dev/stdout would start a new open file at offset 0
            // without the shell's O_APPEND (`>>` would overwrite the start of
            // the log): write to the descriptor we were given instead.
            use std::os::fd::AsFd;
            let dup = if fd == 1 {
                check_stdout_open()?;
                io::stdout().as_fd().try_clone_to_owned()
            } else {
                io::stderr().as_fd().try_clone_to_owned()
            }
            .map_err(|e| io_error(format!("opening {shown}"), e))?;
            return Ok(Output::Direct(
                BufWriter::with_capacity(1 << 20, File::from(dup)),
                path.to_path_buf(),
            ));
        }
        if write_in_place(path).map_err(|e| io_error(format!("opening {shown}"), e))? {
            // No truncation: devices and FIFOs have none, and a regular file
            // reached through /proc or /dev was opened by our caller.
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| io_error(format!("opening {shown}"), e))?;
            return Ok(Output::Direct(
                BufWriter::with_capacity(1 << 20, f),
                path.to_path_buf(),
            ));
        }
        clean_stale_temps(path);
        let mut temps = temp_files();
        let f = AtomicFile::create_with(path, force).map_err(|e| match e {
            fastpair::Error::InvalidArgument(m) if m.ends_with("not replacing it") => {
                CliError::msg(format!("{m} (use --force to replace it)"))
            }
            fastpair::Error::InvalidArgument(m) => CliError::msg(m),
            e => CliError::from(e),
        })?;
        temps.push(f.temp_path().to_path_buf());
        #[cfg(target_os = "linux")]
        let lock = File::open(f.temp_path())
            .ok()
            .filter(|l| try_lock(l, LOCK_SH));
        #[cfg(not(target_os = "linux"))]
        let lock = None;
        let guard = TempGuard(f.temp_path().to_path_buf(), lock);
        Ok(Output::File(f, path.to_path_buf(), guard))
    }

    /// Flushes stdout or the device, or renames the finished file over the
    /// destination.
    pub fn finish(self) -> Result<(), CliError> {
        let name = self.name();
        Sink::commit(self).map_err(|e| output_error(&name, e))
    }

    pub fn name(&self) -> String {
        match self {
            Output::Stdout(_) => "<stdout>".into(),
            Output::Direct(_, p) | Output::File(_, p, _) => p.display().to_string(),
        }
    }
}

/// An OS error without the temporary file's path that `tempfile` adds: a
/// full disk is reported against the output the user named.
fn plain(e: io::Error) -> io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    // tempfile wraps the OS error in one whose text ends in ` at path "…"`
    // (and whose source is not the OS error): keep the kind and the text.
    let text = e.get_ref().map(|inner| inner.to_string());
    match text
        .as_deref()
        .and_then(|t| t.rfind(" at path \"").map(|i| &t[..i]))
    {
        Some(t) => io::Error::new(e.kind(), t.to_string()),
        None => e,
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::Direct(w, _) => w.write(buf),
            Output::File(f, _, _) => f.write(buf).map_err(plain),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.write_all(buf),
            Output::Direct(w, _) => w.write_all(buf),
            Output::File(f, _, _) => f.write_all(buf).map_err(plain),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::Direct(w, _) => w.flush(),
            Output::File(f, _, _) => f.flush().map_err(plain),
        }
    }
}

/// A library error from writing the output `out_name`: an I/O error whose
/// context does not name the output (the writer's "writing section",
/// "flushing") is reported as writing the output, and the temporary file's
/// path that `tempfile` adds to an OS error is dropped.
pub fn output_error(out_name: &str, e: fastpair::Error) -> CliError {
    match e {
        fastpair::Error::Io { context, source } => {
            let context = if context.contains(out_name) {
                context
            } else {
                format!("writing {out_name}")
            };
            io_error(context, plain(source))
        }
        e => CliError::from(e),
    }
}

impl Sink for Output {
    fn commit(self) -> fastpair::Result<()> {
        let flush = |w: &mut dyn Write, name: String| {
            w.flush().map_err(|e| fastpair::Error::Io {
                context: format!("writing {name}"),
                source: e,
            })
        };
        match self {
            Output::Stdout(mut w) => flush(&mut w, "<stdout>".into()),
            Output::Direct(mut w, p) => flush(&mut w, p.display().to_string()),
            Output::File(f, _, guard) => {
                // The signal handler waits for this lock: it sees either the
                // temporary file still registered (and removes it), or the
                // output committed and nothing pending (and lets us finish).
                let mut held = temp_files();
                let r = f.commit();
                held.retain(|p| *p != guard.0);
                if r.is_ok() && held.is_empty() {
                    COMMITTED.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                drop(held);
                drop(guard);
                r
            }
        }
    }
}

/// Formats an integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Formats a byte count for people (e.g. `1.23 MB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formatting() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_234_000), "1.23 MB");
    }
}
