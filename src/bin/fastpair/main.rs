//! `fastpair`: compress, decompress, read, inspect and scan compressed string
//! columns from the command line.
//!
//! Values are one per line by default (`\n`-separated; a final newline does
//! not start an extra row) or NUL-separated with `--nul`, so any byte string
//! round-trips. `-` stands for stdin or stdout. Errors print one line,
//! `fastpair: error: ...`, and exit with status 1; a closed stdout (broken
//! pipe) ends the program quietly.

mod cli;
mod compress;
#[cfg(feature = "parquet")]
mod dataset;
mod decompress;
mod get;
mod grep;
mod inspect;
mod io;
mod progress;
mod scan;
mod sql;
#[cfg(feature = "parquet")]
mod tabular;
mod values;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use io::CliError;

/// Whether stdout was closed when the process started (`>&-`); see
/// [`io::stdout_was_closed`].
pub(crate) static STDOUT_CLOSED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Runs before `main` and before the Rust runtime's start-up, which reopens
/// a closed stdin/stdout/stderr on /dev/null (after that, `>&-` and
/// `>/dev/null` look alike and writes to a closed stdout succeed silently).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PROBE_STDOUT: extern "C" fn() = {
    extern "C" fn probe() {
        extern "C" {
            fn fcntl(fd: i32, cmd: i32, ...) -> i32;
        }
        const F_GETFD: i32 = 1;
        // SAFETY: F_GETFD only reads descriptor 1's flags (no memory is
        // passed); it fails with EBADF when the descriptor is not open.
        let closed = unsafe { fcntl(1, F_GETFD) } == -1;
        STDOUT_CLOSED.store(closed, std::sync::atomic::Ordering::Relaxed);
    }
    probe
};

fn main() -> ExitCode {
    bound_allocator_caches();
    install_panic_hook();
    install_signal_handler();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    // Everything owned by a command (temporary files, writers) is dropped
    // inside `run`, before the exit status is chosen.
    // grep's own exit statuses: 0 selected, 1 none, 2 error.
    let cli = match cli.command {
        Command::Grep(a) => return grep::main(a),
        command => Cli { command },
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(CliError::Message(m)) => {
            io::eprint_line!("fastpair: error: {m}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Compress(a) => compress::run(a),
        Command::Decompress(a) => decompress::run(a),
        Command::Get(a) => get::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Scan(a) => scan::run(a),
        Command::Sql(a) => sql::run(a),
        Command::Grep(_) => unreachable!("grep runs from main"),
    }
}

/// `--help` and `--version` print as clap renders them; a usage error becomes
/// one line (clap's message and tip, without the usage block) and status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        let _ = e.print();
        return if e.use_stderr() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.to_string();
    let mut msg = String::new();
    for line in text
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        if !msg.is_empty() {
            msg.push_str(if msg.ends_with(':') { " " } else { "; " });
        }
        msg.push_str(line);
    }
    let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
    io::eprint_line!("fastpair: error: {msg} (see 'fastpair --help')");
    ExitCode::from(2)
}

/// SIGINT, SIGTERM and SIGHUP remove any temporary output file and exit with
/// the conventional status 128 + signal (130, 143, 129); once the output has
/// replaced its destination, a signal lets the command finish (status 0). Outputs written in
/// place (stdout, devices, FIFOs) have no temporary file to remove.
fn install_signal_handler() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            // Held until exit: no output is created or committed meanwhile.
            let temps = io::temp_files();
            if temps.is_empty() && io::COMMITTED.load(std::sync::atomic::Ordering::SeqCst) {
                // The output already replaced its destination: the command
                // has done its work, and exiting 128 + signal now would
                // report a failure that did not happen. Let it finish.
                return;
            }
            for p in temps.iter() {
                let _ = std::fs::remove_file(p);
            }
            std::process::exit(128 + sig);
        }
    });
}

/// Keeps freed memory from piling up, so that `--memory` holds whatever the
/// thread count, without making the threads queue for one allocator lock.
///
/// glibc raises its mmap threshold each time a mapped block is freed (up to
/// 32 MiB), after which chunk-sized buffers come from per-thread arenas and
/// stay there once freed: a per-chunk-dictionary compress under `--memory
/// 64M` peaked at 28 MB on 1 thread and 112 MB on 16. A fixed threshold of
/// 1 MiB returns large buffers to the system on free (42 MB on 16 threads;
/// bench/MEMORY.md).
///
/// Small blocks stay in the arena of the thread that freed them, and each
/// arena keeps its own high-water mark: the log encoder run by 16 threads
/// one chunk at a time peaked at 477 MB under `--memory 192M`. One arena for
/// all threads held that to 193 MB but serialised every allocation: on this
/// project's 2-core VM a 40 MB log compressed in 4 MiB chunks took 2.8-2.9 s
/// on 2 threads against 2.4 s on one (bench/COMPRESS.md, "One malloc
/// arena"). So every thread keeps glibc's own arenas and [`trim_arenas`]
/// hands their free pages back to the system every 50 ms: the same peaks as
/// one arena, 1.6-1.9x faster on 2 threads, and on 16 cores a 435 MB log
/// in 8.4-8.7 s instead of 12.9-13.5 (23 s instead of 53 in 4 MiB chunks).
/// A threshold the user set (`MALLOC_MMAP_THRESHOLD_`) is left alone, as
/// is `MALLOC_ARENA_MAX`.
fn bound_allocator_caches() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_MMAP_THRESHOLD: i32 = -3;
        if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
            // SAFETY: mallopt only changes glibc's allocator settings, and
            // runs before any other thread of this process starts.
            unsafe { mallopt(M_MMAP_THRESHOLD, 1 << 20) };
        }
        trim_arenas(std::time::Duration::from_millis(50));
    }
}

/// Free bytes the arenas may hold before [`trim_arenas`] hands them back:
/// below it a trim saves little and the pages it drops are soon faulted in
/// again (one thread, 40 MB log in 4 MiB chunks: 2.24 s with this floor,
/// 2.27-2.32 s trimming every time; 16 threads: the same peaks, 91-93 MB;
/// a 64 MiB floor let them reach 112-131 MB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_FLOOR: usize = 16 << 20;

/// Starts a thread that, every `period` for the lifetime of the process,
/// returns the free pages of every malloc arena to the system (glibc's
/// `malloc_trim`) when they hold [`TRIM_FLOOR`] or more free bytes. Idle
/// threads' arenas otherwise keep the high-water mark of the last chunk
/// they encoded. 50 ms measured best of 10/50/200/1000 ms (40 MB log, 4 MiB
/// chunks, 16 threads on 2 cores: 1.84/1.68/1.59/1.59 s, peak 92/91/95/110
/// MB; one arena 92 MB in 2.9 s). If the thread cannot be started, memory
/// is only held less tightly.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_arenas(period: std::time::Duration) {
    /// glibc's `struct mallinfo2` (2.33+): ten `size_t` counters.
    #[repr(C)]
    struct MallInfo2 {
        arena: usize,
        ordblks: usize,
        smblks: usize,
        hblks: usize,
        hblkhd: usize,
        usmblks: usize,
        fsmblks: usize,
        uordblks: usize,
        fordblks: usize,
        keepcost: usize,
    }
    extern "C" {
        fn malloc_trim(pad: usize) -> i32;
        fn dlsym(
            handle: *mut std::ffi::c_void,
            name: *const std::ffi::c_char,
        ) -> *mut std::ffi::c_void;
    }
    // `mallinfo2` is looked up, not linked: it came with glibc 2.33, and a
    // binary that named it would not start on older systems. Without it
    // every period trims.
    // SAFETY: dlsym with RTLD_DEFAULT (null) only looks a symbol up.
    let found = unsafe { dlsym(std::ptr::null_mut(), c"mallinfo2".as_ptr()) };
    let mallinfo2: Option<unsafe extern "C" fn() -> MallInfo2> = (!found.is_null()).then(|| {
        // SAFETY: glibc's mallinfo2 has this signature.
        unsafe {
            std::mem::transmute::<*mut std::ffi::c_void, unsafe extern "C" fn() -> MallInfo2>(found)
        }
    });
    let _ = std::thread::Builder::new()
        .name("malloc-trim".into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            std::thread::sleep(period);
            // SAFETY: mallinfo2 only reads the arenas' counters under their
            // locks.
            if let Some(info) = mallinfo2 {
                if unsafe { info() }.fordblks < TRIM_FLOOR {
                    continue;
                }
            }
            // SAFETY: malloc_trim takes each arena's own lock and only
            // releases pages no allocation holds; it is safe to call from
            // any thread at any time.
            unsafe { malloc_trim(0) };
        });
}

/// A bug must still end in one line on stderr and a non-zero exit, not a
/// backtrace dump.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        io::eprint_line!("fastpair: error: internal error (a bug, please report it): {msg}{at}");
        std::process::exit(101);
    }));
}
