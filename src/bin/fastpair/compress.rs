//! `fastpair compress IN -o OUT`: stream values into a fastpair file.

use std::io::BufRead;
use std::time::Instant;

use fastpair::write::BackgroundSink;
use fastpair::{DictMode, Writer, WriterOptions};

use crate::cli::{CompressArgs, InputFormat};
use crate::io::{display, human_bytes, open_input, thousands, CliError, Output};
use crate::progress::Progress;
use crate::values::{ValueBatches, Values};

pub fn run(a: CompressArgs) -> Result<(), CliError> {
    let mut opts = WriterOptions::default()
        .with_codec(a.codec)
        .with_log_templates(a.log_templates.into());
    // `logs` writes log templates (spec/FORMAT.md §5.8) on every chunk with
    // bytes, whatever `--log-templates` says.
    if a.codec == crate::cli::CodecArg::Logs {
        opts = opts.with_log_templates(fastpair::LogTemplates::Always);
    }
    if let Some(n) = a.chunk_rows {
        let max = fastpair::format::limits::MAX_CHUNK_ROWS as u64;
        if n > max {
            return Err(CliError::msg(format!(
                "--chunk-rows must be at most {}",
                thousands(max)
            )));
        }
        opts.chunk_rows = n as usize;
    }
    if let Some(n) = a.chunk_bytes {
        let max = fastpair::format::limits::MAX_VALUE_LEN;
        if n > max {
            return Err(CliError::msg(format!(
                "--chunk-bytes must be at most {}",
                human_bytes(max)
            )));
        }
        opts.chunk_bytes = n as usize;
    }
    if a.per_chunk_dict {
        opts.dict_mode = DictMode::PerChunk;
    }
    opts.dict_planes = a.dict_planes.into();
    if a.gpu {
        fastpair::gpu::available()
            .map_err(|e| CliError::msg(format!("--gpu: no usable GPU ({e})")))?;
        opts.gpu_encode = fastpair::GpuEncode::Required;
    }
    opts.memory_budget = usize::try_from(a.memory).unwrap_or(usize::MAX);
    // Refuse what cannot work before touching anything.
    let need = opts.min_memory_budget() as u64;
    if a.memory < need {
        return Err(CliError::msg(format!(
            "--memory {} is too small: one chunk of up to {} rows and {}{} needs about {}; raise --memory or lower --chunk-rows/--chunk-bytes{}",
            human_bytes(a.memory),
            thousands(opts.chunk_rows as u64),
            human_bytes(opts.chunk_bytes as u64),
            if a.per_chunk_dict {
                ""
            } else {
                " (plus the shared dictionary's training window)"
            },
            human_bytes(need),
            // The log encoder is counted whenever it may run.
            match opts.log_templates {
                fastpair::LogTemplates::Off => String::new(),
                _ => {
                    let mut off = opts.clone();
                    off.log_templates = fastpair::LogTemplates::Off;
                    format!(
                        " (with --log-templates off: about {})",
                        human_bytes(off.min_memory_budget() as u64)
                    )
                }
            },
        )));
    }
    #[cfg(feature = "parquet")]
    if let Some(kind) = crate::tabular::detect(&a.input, a.input_format)? {
        if crate::dataset::wants_dataset(&a.output) {
            return crate::dataset::compress(a, kind, opts);
        }
        return crate::tabular::compress(a, kind, opts);
    }
    #[cfg(not(feature = "parquet"))]
    if matches!(a.input_format, InputFormat::Parquet | InputFormat::Arrow) {
        return Err(CliError::msg(
            "this build reads Parquet and Arrow IPC input only with the `parquet` feature",
        ));
    }
    if !a.column.is_empty() {
        return Err(CliError::msg(
            "--column needs a Parquet or Arrow IPC input (this build reads those only with the `parquet` feature)",
        ));
    }
    // Open the input first: a missing input must not touch the output.
    let mut input = open_input(&a.input)?;
    // A fastpair file given to `compress` is almost surely a slip (its bytes
    // would be stored as text rows): say so instead of compressing it again.
    let head = input
        .fill_buf()
        .map_err(|e| crate::io::io_error(format!("reading {}", display(&a.input)), e))?;
    if a.input_format == InputFormat::Lines {
        // Told: every byte is values.
    } else if head.starts_with(&fastpair::format::MAGIC) {
        return Err(CliError::msg(format!(
            "{} is a fastpair file already; `fastpair decompress` reads it",
            display(&a.input)
        )));
    } else if let Some(what) = crate::io::tabular_lookalike(head) {
        // Here only when the input was not recognized as a file of that kind
        // (a pipe or stdin, which cannot be read at random offsets, or a
        // damaged file): binary would be stored as nonsense values.
        if !crate::io::looks_like_text(&head[..head.len().min(4096)]) {
            return Err(CliError::msg(format!(
                "{} starts like {what}: Parquet and Arrow input must be a regular file \
                 (save the stream to a file first), or pass --input-format lines to store its \
                 bytes as values",
                display(&a.input)
            )));
        }
    } else if matches!(a.input_format, InputFormat::Parquet | InputFormat::Arrow) {
        return Err(CliError::msg(format!(
            "{}: Parquet and Arrow input must be a regular file (not a pipe or device)",
            display(&a.input)
        )));
    }
    let out = Output::create(&a.output, &a.input, a.force)?;
    let out_name = out.name();
    let sep = if a.nul { 0 } else { b'\n' };
    let start = Instant::now();
    // One value makes a chunk of its own; buffering, training on and
    // encoding it takes about 3.3x its size (measured: a 300 MB value peaked
    // at 985 MB), so a value over a quarter of the budget is refused as soon
    // as it is read that far, rather than running past --memory.
    let mut values = Values::new(input, sep, display(&a.input)).with_max(
        a.memory / VALUE_MEMORY_FACTOR,
        format!(
            "which --memory {} cannot hold (one value needs about {VALUE_MEMORY_FACTOR}x its \
             size); raise --memory",
            human_bytes(a.memory)
        ),
    );
    let threads = opts.parallel_chunks;
    // The finished sections are written by a thread of their own: this
    // thread reads the rows (bench/COMPRESS.md, "The output written on its
    // own thread").
    let mut w = Writer::new(BackgroundSink::new(out)?, opts)?;
    let mut progress = Progress::new("compress");
    let limit = |e: fastpair::Error| match e {
        e @ fastpair::Error::LimitExceeded { .. } => CliError::msg(format!(
            "{}: {e}; nothing was written to {out_name}",
            display(&a.input)
        )),
        e => crate::io::output_error(&out_name, e),
    };
    if threads > 1 {
        // The values read and split on a thread of their own: this thread
        // only copies them into the writer's chunks (bench/COMPRESS.md,
        // "The rows read on a thread of their own").
        let mut batches = ValueBatches::spawn(values)?;
        while let Some(b) = batches.next()? {
            for v in b.values() {
                w.push(Some(v)).map_err(limit)?;
            }
            progress.force(b.rows, b.bytes_read);
            batches.recycle(b);
        }
    } else {
        while values.next_batch(|v| w.push(Some(v)).map_err(limit))? {
            progress.force(values.rows, values.bytes_read);
        }
    }
    progress.clear();
    // On any error above, `w` (and with it the temporary file) is dropped and
    // the destination is left as it was.
    let s = w.finish().map_err(limit)?;
    let secs = start.elapsed().as_secs_f64();
    if !a.quiet {
        let ratio = if s.file_bytes > 0 {
            s.input_bytes as f64 / s.file_bytes as f64
        } else {
            0.0
        };
        crate::io::eprint_line!(
            "{} rows, {} -> {} ({} bytes), ratio {:.2}, {} chunk(s), {} dictionar{}, {:.2} s ({}/s) -> {}",
            thousands(s.rows),
            human_bytes(s.input_bytes),
            human_bytes(s.file_bytes),
            thousands(s.file_bytes),
            ratio,
            s.chunks,
            s.dicts,
            if s.dicts == 1 { "y" } else { "ies" },
            secs,
            human_bytes((s.input_bytes as f64 / secs.max(1e-9)) as u64),
            out_name,
        );
        let lines = choice_lines(&s.choices, &s.dict_used, &s.dict_bytes);
        if !lines.is_empty() {
            crate::io::eprint_line!("{}", lines.trim_end_matches('\n'));
        }
        if s.held_back_by_memory > 0 {
            crate::io::eprint_line!(
                "note: chunks were encoded at most {} at a time on {} thread(s): --memory {} did not cover more at {} point(s); a larger --memory uses more threads (same bytes)",
                s.most_chunks_at_once,
                threads,
                human_bytes(a.memory),
                s.held_back_by_memory,
            );
        }
    }
    Ok(())
}

/// Memory one value needs while it is compressed, as a multiple of its size
/// (rounded up from the 3.3x measured; see bench/MEMORY.md).
const VALUE_MEMORY_FACTOR: u64 = 4;

/// Dictionaries whose codec choice is printed one by one; the rest are counted.
const MAX_LISTED_CHOICES: usize = 4;

/// The codec of each dictionary and the estimates behind it; a dictionary
/// no chunk's codes use (`used`) says so instead, since its estimates are
/// those of a layout the file does not use.
fn choice_lines(choices: &[fastpair::write::Choice], used: &[bool], bytes: &[u64]) -> String {
    let mut out = String::new();
    for (i, c) in choices.iter().enumerate().take(MAX_LISTED_CHOICES) {
        if used.is_empty() {
            // spec/FORMAT.md §3, version 11: no dictionary stored at all.
            out.push_str(&format!(
                "dictionary {i}: {}, not stored (every chunk is log templates: they name the implicit dictionary 0)\n",
                c.codec.name()
            ));
            continue;
        }
        if used.get(i) == Some(&false) {
            out.push_str(&format!(
                "dictionary {i}: {}, unused (every chunk naming it is log templates): stored as the 256 single bytes ({} bytes)\n",
                c.codec.name(),
                bytes.get(i).copied().unwrap_or(0)
            ));
            continue;
        }
        let mut est: Vec<String> = c
            .estimates
            .iter()
            .enumerate()
            .map(|(k, e)| {
                format!(
                    "{}{}{}{} {} ({:.2} B/code)",
                    e.codec.name(),
                    // FSST-12 after another candidate: screened out, the
                    // estimate of its screening dictionary.
                    if k > 0 && e.codec == fastpair::Codec::Fsst12 {
                        " screen"
                    } else {
                        ""
                    },
                    if e.codec != fastpair::Codec::Fsst12 && e.longest_token <= 8 {
                        " tokens<=8B"
                    } else {
                        ""
                    },
                    if e.value_dict { " value-dict" } else { "" },
                    human_bytes(e.bytes as u64),
                    e.bytes_per_code
                )
            })
            .collect();
        // `auto` without an FSST-12 estimate: OnPair-12's tokens were long
        // enough that FSST-12 was neither screened nor trained.
        if !est.is_empty()
            && c.estimates
                .iter()
                .all(|e| e.codec != fastpair::Codec::Fsst12)
        {
            est.push(format!(
                "fsst12 skipped (onpair12 >= {} B/code)",
                fastpair::write::SCREEN_MAX_BYTES_PER_CODE
            ));
        }
        if est.is_empty() {
            out.push_str(&format!("dictionary {i}: {}\n", c.codec.name()));
        } else {
            out.push_str(&format!(
                "dictionary {i}: {} (estimated codes+sidecar+dictionary: {})\n",
                c.codec.name(),
                est.join(", ")
            ));
        }
    }
    if choices.len() > MAX_LISTED_CHOICES {
        for codec in [
            fastpair::Codec::Fsst12,
            fastpair::Codec::OnPair12,
            fastpair::Codec::OnPair16,
        ] {
            let n = choices.iter().filter(|c| c.codec == codec).count();
            out.push_str(&format!("{} dictionaries in all use {}\n", n, codec.name()));
        }
    }
    out
}
