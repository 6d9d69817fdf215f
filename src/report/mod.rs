//! Paper-ready report bundles: figures, tables, an HTML page, Markdown and a manifest.
//!
//! # Brief overview
//!
//! [`render`] turns the tidy result rows of one run into the files of `reports/<name>/`
//! (design §7). The caller has already written `results.parquet` and `spec.yaml`; `render`
//! writes everything else and, last, `manifest.json` with the SHA-256 of every file:
//!
//! ```text
//! index.html                 self-contained page (inline SVG, CSS and script; no network)
//! report.md                  the same content for GitHub and paper drafts
//! figures/figN_<y>_vs_<x>.svg / .pdf   one per figure spec (figure.rs, pdf.rs); figNa_, figNb_...
//!                            for the pages of a figure too tall for one
//! figures/figN_<y>_vs_<x>.csv          the plotted series of each figure page, tidy
//! tables/agreement.{csv,tex,md}        model vs. simulation (agreement.rs, tables.rs)
//! tables/agreement_compact.tex         the same, fewer columns, for one column of a paper
//! tables/coverage.{csv,tex,md}         the simulation's intervals checked (coverage.rs)
//! tables/results.{csv,tex,md}          every result row (tables.rs)
//! manifest.json              provenance + SHA-256 of every other file (manifest.rs)
//! ```
//!
//! [`verify`] re-hashes a bundle against its manifest (`runner verify`). The result columns'
//! names and kinds, and the check of a figure's columns, are the spec's (`spec::columns`).
//!
//! **Architecture Invariant:** the report reads rows, the spec's `report:` section and the
//! provenance; it never runs a task, never touches the network and never reads system
//! fonts. Every file is written atomically (temporary file in the same directory, then
//! rename), so a crash leaves either the old or the new file, never half of one.

mod agreement;
mod binomial;
mod collect;
mod columns;
mod coverage;
mod figure;
mod headers;
mod intervals;
mod manifest;
mod pages;
mod pdf;
mod saturation;
#[cfg(test)]
mod side_tests;
mod tables;
#[cfg(test)]
mod tests;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::files::write_atomic;
use crate::spec::report::{FigureKind, ReportSpec, TableKind};
use crate::store::provenance::Provenance;
use crate::store::row::Row;

pub use collect::{Collected, Collector};

/// Everything [`render`] needs besides the rows.
#[derive(Clone, Copy, Debug)]
pub struct ReportInput<'a> {
    /// Experiment name (the spec's `name`).
    pub experiment: &'a str,
    /// Report title.
    pub title: &'a str,
    /// The spec's `description:`, shown under the title.
    pub description: Option<&'a str>,
    /// The spec's `report:` section.
    pub spec: &'a ReportSpec,
    /// Where the results came from.
    pub provenance: &'a Provenance,
    /// Resolved template directory overriding built-in templates by file name, or `None`.
    pub template_dir: Option<&'a Path>,
}

/// Why a report could not be rendered or verified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A bundle file could not be written.
    #[error("cannot write `{}`: {source}; check that the directory is writable", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A bundle file or directory could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A figure spec is invalid (for example an unknown column) or drawing failed.
    #[error("figure {number}: {message}")]
    Figure {
        /// 1-based figure number in the spec.
        number: usize,
        /// What went wrong.
        message: String,
    },
    /// A figure could not be converted to PDF.
    #[error("cannot convert figure `{figure}` to PDF: {message}")]
    Pdf {
        /// Figure file stem.
        figure: String,
        /// What went wrong.
        message: String,
    },
    /// A template failed to load, parse or render.
    #[error(
        "template `{name}`: {message}; fix the template or remove it from `template_dir` to use the built-in one"
    )]
    Template {
        /// Template name.
        name: String,
        /// The minijinja error with location.
        message: String,
    },
    /// A bundle subdirectory (`figures/`, `tables/`, `templates/`) is a symbolic link or
    /// not a directory: `runner` writes only inside the bundle and never follows a link out.
    #[error(
        "`{}` is {what}, not a directory of the bundle; runner writes only inside the bundle and never follows a link out of it, so nothing was written. Remove it (runner creates the directory again) and link the other way round (for example `ln -s {} paper/{name}`), or copy the files you need out of the bundle after each run",
        path.display(), absolute.display()
    )]
    NotADirectory {
        /// The subdirectory.
        path: PathBuf,
        /// The subdirectory as an absolute path (for the example command).
        absolute: PathBuf,
        /// Its last path component (`figures`).
        name: String,
        /// What it is instead, in words ("a symbolic link to `/home/me/paper`").
        what: String,
    },
    /// The spec's template directory could not be copied into the bundle.
    #[error("cannot copy template `{}` into the bundle: {source}", path.display())]
    TemplateCopy {
        /// The template file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// `manifest.json` is not a valid manifest.
    #[error("manifest `{}` is not valid: {message}; re-render the bundle with `runner report`", path.display())]
    Manifest {
        /// The manifest path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl ReportError {
    /// The error of a failed write of `path`, for `map_err`.
    fn write(path: &Path) -> impl FnOnce(io::Error) -> ReportError + '_ {
        move |source| ReportError::Write { path: path.to_path_buf(), source }
    }
}

/// The subdirectories of a bundle that `runner` writes into.
pub const SUBDIRECTORIES: [&str; 3] = ["figures", "tables", TEMPLATES];

/// The bundle subdirectory holding the copy of the spec's `template_dir` (see
/// [`copy_templates`]).
pub const TEMPLATES: &str = "templates";

/// Refuses a bundle whose `figures/`, `tables/` or `templates/` is a symbolic link or anything
/// but a real directory, before anything is written: cleaning or writing through such a link
/// would touch files outside the bundle (a paper's figure directory, say). A missing
/// subdirectory is fine (a render creates it).
pub fn check_bundle(bundle_dir: &Path) -> Result<(), ReportError> {
    for name in SUBDIRECTORIES {
        let path = bundle_dir.join(name);
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            // Missing, or the bundle itself is not a directory: the first write says so.
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                continue;
            }
            Err(source) => return Err(ReportError::Read { path, source }),
        };
        if metadata.is_dir() {
            continue;
        }
        let what = if metadata.file_type().is_symlink() {
            match fs::read_link(&path) {
                Ok(target) => format!("a symbolic link to `{}`", target.display()),
                Err(_) => "a symbolic link".to_owned(),
            }
        } else {
            crate::files::kind_in_words(&metadata).to_owned()
        };
        let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        return Err(ReportError::NotADirectory { path, absolute, name: name.to_owned(), what });
    }
    Ok(())
}

/// Renders the report of `rows` into `bundle_dir` and returns the paths written, manifest last.
///
/// Refuses a bundle whose subdirectories are symbolic links ([`check_bundle`]) before writing
/// anything. Rendered files the previous `manifest.json` listed that this render does not
/// write (say, a figure the spec no longer has) are removed, as are `runner`'s own temporary
/// files left by an interrupted write ([`crate::files::is_temporary`]); any other file is left
/// alone (and `runner verify` reports it as not listed). The new manifest lists exactly the
/// bundle's inputs (`results.parquet`, `spec.yaml`, the copied templates) and the files this
/// render wrote.
///
/// When a step fails (a figure, a template, a write), the bundle is still left consistent:
/// the pages and figures of the previous render that this one did not write are removed, and
/// `manifest.json` lists what is there and states the failure (`runner verify` reports it),
/// before the error is returned.
pub fn render(
    bundle_dir: &Path,
    input: &ReportInput<'_>,
    rows: &[Row],
) -> Result<Vec<PathBuf>, ReportError> {
    render_collected(bundle_dir, input, &Collected::of(input.spec, rows))
}

/// [`render`] from the rows as a [`Collector`] took them: what writes a bundle as its rows
/// stream past, never holding them all.
pub fn render_collected(
    bundle_dir: &Path,
    input: &ReportInput<'_>,
    rows: &Collected,
) -> Result<Vec<PathBuf>, ReportError> {
    check_bundle(bundle_dir)?;
    let figures_dir = bundle_dir.join("figures");
    let tables_dir = bundle_dir.join("tables");
    for dir in [bundle_dir, &figures_dir, &tables_dir] {
        fs::create_dir_all(dir)
            .map_err(|source| ReportError::Write { path: dir.to_path_buf(), source })?;
    }
    let previous = manifest::previous_files(bundle_dir);
    for name in [".", "figures", "tables", TEMPLATES] {
        remove_temporaries(&bundle_dir.join(name))?;
    }
    let mut written = Vec::new();
    let outcome = render_files(bundle_dir, input, rows, &mut written);
    let failure = outcome.as_ref().err().map(ToString::to_string);
    let written_relative: Vec<String> =
        written.iter().filter_map(|path| manifest::relative(bundle_dir, path)).collect();
    for listed in previous.iter().filter(|path| manifest::is_rendered(path)) {
        if !written_relative.contains(listed) {
            remove_listed(bundle_dir, listed)?;
        }
    }
    let mut files = manifest::inputs(bundle_dir, input.template_dir);
    files.extend(written_relative);
    files.sort();
    files.dedup();
    let seeds = rows.seeds().clone();
    let manifest = manifest::build(
        bundle_dir,
        &files,
        input.experiment,
        input.title,
        input.provenance,
        seeds.into_iter().collect(),
        failure,
    )?;
    let manifest_path = bundle_dir.join(manifest::MANIFEST);
    let mut json = serde_json::to_string_pretty(&manifest).map_err(|error| {
        ReportError::Manifest { path: manifest_path.clone(), message: error.to_string() }
    })?;
    json.push('\n');
    write_atomic(&manifest_path, json.as_bytes()).map_err(ReportError::write(&manifest_path))?;
    outcome?;
    written.push(manifest_path);
    Ok(written)
}

/// Copies the regular files of the spec's template directory `source` (already resolved
/// against the spec's directory) into the bundle's `templates/`, and returns that directory
/// for [`ReportInput::template_dir`]; `None` (no `template_dir`) returns `None`.
///
/// The bundle then re-renders the same from anywhere, on any machine (`runner report`), and
/// `runner verify` covers the templates too. Copies the previous manifest listed that are no
/// longer in `source` are removed. Refuses a symbolic-linked bundle subdirectory first
/// ([`check_bundle`]); each template is read as a regular file of at most 1 MiB.
pub fn copy_templates(
    bundle_dir: &Path,
    source: Option<&Path>,
) -> Result<Option<PathBuf>, ReportError> {
    check_bundle(bundle_dir)?;
    let target = bundle_dir.join(TEMPLATES);
    let mut copied = Vec::new();
    if let Some(source) = source {
        let read_error = |source_error| ReportError::TemplateCopy {
            path: source.to_path_buf(),
            source: source_error,
        };
        let mut names = Vec::new();
        for entry in fs::read_dir(source).map_err(read_error)? {
            let entry = entry.map_err(read_error)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
                continue;
            }
            names.push(name);
        }
        names.sort();
        fs::create_dir_all(&target)
            .map_err(|source| ReportError::Write { path: target.clone(), source })?;
        for name in names {
            let from = source.join(&name);
            let bytes = crate::files::read_regular(&from, MAX_TEMPLATE_BYTES)
                .map_err(|source| ReportError::TemplateCopy { path: from.clone(), source })?;
            let to = target.join(&name);
            write_atomic(&to, &bytes).map_err(ReportError::write(&to))?;
            copied.push(format!("{TEMPLATES}/{name}"));
        }
    }
    for listed in manifest::previous_files(bundle_dir) {
        if listed.starts_with(&format!("{TEMPLATES}/")) && !copied.contains(&listed) {
            remove_listed(bundle_dir, &listed)?;
        }
    }
    if source.is_none() {
        // Only an empty directory goes; a file the user put there stays.
        let _ = fs::remove_dir(&target);
        return Ok(None);
    }
    Ok(Some(target))
}

/// The largest template file copied into a bundle.
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

/// Removes the bundle file `relative` (a path the previous manifest listed) when it is a
/// regular file; a symbolic link or anything else in its place is left alone.
fn remove_listed(bundle_dir: &Path, relative: &str) -> Result<(), ReportError> {
    let Some(path) = manifest::safe_join(bundle_dir, relative) else { return Ok(()) };
    if fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.is_file()) {
        fs::remove_file(&path).map_err(|source| ReportError::Write { path, source })?;
    }
    Ok(())
}

/// Removes `runner`'s own temporary files (left by `kill -9` during a write) from `dir`.
fn remove_temporaries(dir: &Path) -> Result<(), ReportError> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(()) };
    for entry in entries.flatten() {
        let temporary = crate::files::is_temporary(&entry.file_name().to_string_lossy());
        if temporary && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|source| ReportError::Write { path, source })?;
        }
    }
    Ok(())
}

/// Writes figures, tables and pages, pushing each path to `written`.
fn render_files(
    bundle_dir: &Path,
    input: &ReportInput<'_>,
    rows: &Collected,
    written: &mut Vec<PathBuf>,
) -> Result<(), ReportError> {
    let figures_dir = bundle_dir.join("figures");
    let tables_dir = bundle_dir.join("tables");
    let plot_rows = rows.plot_rows();
    let mut page_figures = Vec::new();
    let side_tables = figure::side::SideTables::read(bundle_dir, &input.spec.figures)?;
    for (index, spec) in input.spec.figures.iter().enumerate() {
        // A figure too tall for one page comes as several (`fig1a_...`, `fig1b_...`); a
        // histogram or link heat map has a page per point.
        let figures = match spec.kind {
            FigureKind::Lines => figure::build(index + 1, spec, &plot_rows)?,
            _ => figure::side::build(index + 1, spec, rows.rows(), &side_tables)?,
        };
        for mut figure in figures {
            figure.svg = tables::sanitize(figure.svg);
            let svg_path = figures_dir.join(format!("{}.svg", figure.stem));
            write_atomic(&svg_path, figure.svg.as_bytes())
                .map_err(ReportError::write(&svg_path))?;
            written.push(svg_path);
            let pdf_path = figures_dir.join(format!("{}.pdf", figure.stem));
            let pdf = pdf::svg_to_pdf(&figure.svg, &figure.stem)?;
            write_atomic(&pdf_path, &pdf).map_err(ReportError::write(&pdf_path))?;
            written.push(pdf_path);
            // The plotted series, tidy, for restyling elsewhere.
            let csv_path = figures_dir.join(format!("{}.csv", figure.stem));
            write_atomic(&csv_path, tables::sanitize(figure.csv).as_bytes())
                .map_err(ReportError::write(&csv_path))?;
            written.push(csv_path);
            page_figures.push(pages::PageFigure {
                number: index + 1,
                display_width_px: (figure.width_pt * 2.4).round() as u32,
                stem: figure.stem,
                title: figure.title,
                caption: figure.caption,
                svg: figure.svg,
            });
        }
    }

    // Tables and the summary show the load points the spec asked for; the dense model
    // curves are drawing aids for the figures (and stay in results.parquet). The rows of
    // saturation searches are no load points: only the saturation table reads them.
    let grid_rows = rows.grid_rows();
    let table_rows = load_point_rows(grid_rows);
    let table_rows: &[Row] = &table_rows;
    let mut agreement_table = None;
    let mut results_table = None;
    let mut saturation_table = None;
    let mut comparison_table = None;
    let mut coverage_table = None;
    for kind in &input.spec.tables {
        match kind {
            TableKind::ModelVsSimulation if agreement_table.is_none() => {
                // Every pair of methods when external ones make more than one, else the one
                // pair (the model against the simulation, by default).
                let agreement = agreement::compute_all(table_rows).unwrap_or_else(|| {
                    match agreement::pairs(table_rows).first() {
                        Some((compared, reference)) => {
                            agreement::compute_pair(table_rows, compared, reference)
                        }
                        None => agreement::compute(table_rows),
                    }
                });
                let table = tables::agreement_table(&agreement);
                let mut compact = tables::agreement_compact_table(&agreement);
                tables::finish(&mut compact, "agreement");
                let source = format!("compact agreement table of experiment {}", input.experiment);
                let path = tables_dir.join("agreement_compact.tex");
                write_atomic(&path, tables::sanitize(tables::to_tex(&compact, &source)).as_bytes())
                    .map_err(ReportError::write(&path))?;
                written.push(path);
                let csv = tables::agreement_csv(&agreement);
                let csv = |out: &mut dyn io::Write| out.write_all(tables::sanitize(csv).as_bytes());
                agreement_table =
                    Some(write_table(&tables_dir, "agreement", table, csv, input, written)?);
            }
            TableKind::Comparison if comparison_table.is_none() => {
                let table = tables::comparison_table(table_rows);
                let csv = tables::comparison_csv(table_rows);
                let csv = |out: &mut dyn io::Write| out.write_all(tables::sanitize(csv).as_bytes());
                comparison_table =
                    Some(write_table(&tables_dir, "comparison", table, csv, input, written)?);
            }
            TableKind::Results if results_table.is_none() => {
                let table = tables::results_table(table_rows);
                let csv = |out: &mut dyn io::Write| tables::write_results_csv(table_rows, out);
                results_table =
                    Some(write_table(&tables_dir, "results", table, csv, input, written)?);
            }
            TableKind::Saturation if saturation_table.is_none() => {
                let lines = saturation::compute(grid_rows);
                let (table, csv) = (saturation::table(&lines), saturation::csv(&lines));
                let csv = |out: &mut dyn io::Write| out.write_all(tables::sanitize(csv).as_bytes());
                saturation_table =
                    Some(write_table(&tables_dir, "saturation", table, csv, input, written)?);
            }
            TableKind::Coverage if coverage_table.is_none() => {
                let coverage = coverage::compute(table_rows);
                let table = tables::coverage_table(&coverage);
                let csv = tables::coverage_csv(&coverage);
                let csv = |out: &mut dyn io::Write| out.write_all(tables::sanitize(csv).as_bytes());
                coverage_table =
                    Some(write_table(&tables_dir, "coverage", table, csv, input, written)?);
            }
            _ => {}
        }
    }

    let context = pages::PageContext {
        experiment: input.experiment.to_owned(),
        title: input.title.to_owned(),
        description: input.description.map(str::to_owned),
        provenance: input.provenance.clone(),
        command_line: pages::shell_join(&input.provenance.command_line),
        summary: rows.summary().clone(),
        figures: page_figures,
        agreement: agreement_table,
        comparison: comparison_table,
        results: results_table,
        saturation: saturation_table,
        coverage: coverage_table,
        seed_count: rows.seeds().len(),
    };
    for (template, file) in
        [(pages::HTML_TEMPLATE, "index.html"), (pages::MARKDOWN_TEMPLATE, "report.md")]
    {
        let text = pages::render(template, input.template_dir, &context)?;
        let path = bundle_dir.join(file);
        write_atomic(&path, text.as_bytes()).map_err(ReportError::write(&path))?;
        written.push(path);
    }

    Ok(())
}

/// The rows of load points: `rows` without the saturation searches' rows, borrowed when it
/// has none.
fn load_point_rows(rows: &[Row]) -> std::borrow::Cow<'_, [Row]> {
    if rows.iter().any(Row::is_saturation_search) {
        let points = rows.iter().filter(|row| !row.is_saturation_search()).cloned().collect();
        std::borrow::Cow::Owned(points)
    } else {
        std::borrow::Cow::Borrowed(rows)
    }
}

/// Checks a bundle against its `manifest.json` (`runner verify`).
///
/// Returns one line per problem: a listed file that is missing or whose SHA-256 changed, or
/// a file in the bundle that the manifest does not list. An empty list means the bundle is
/// intact. Fails only when the manifest itself is missing or unreadable.
pub fn verify(bundle_dir: &Path) -> Result<Vec<String>, ReportError> {
    manifest::verify(bundle_dir)
}

/// Before a re-render (`runner report`): the files the manifest lists that a render does not
/// write (`results.parquet`, `spec.yaml`) must still be there, unchanged. One line per
/// problem; empty when the bundle is whole or has no manifest yet. Re-rendering over a missing
/// or changed input would write a fresh manifest that no longer shows the loss.
pub fn check_inputs(bundle_dir: &Path) -> Result<Vec<String>, ReportError> {
    manifest::check_inputs(bundle_dir)
}

/// Writes `tables/<stem>.{csv,tex,md}`: the CSV whole (streamed by `csv` through a buffer),
/// the LaTeX and Markdown of at most [`tables::MAX_TABLE_ROWS`] rows with a note saying how
/// many were left out and where they are.
fn write_table(
    dir: &Path,
    stem: &str,
    mut table: tables::Table,
    csv: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
    input: &ReportInput<'_>,
    written: &mut Vec<PathBuf>,
) -> Result<pages::PageTable, ReportError> {
    tables::finish(&mut table, stem);
    let csv_path = dir.join(format!("{stem}.csv"));
    crate::files::persist_atomic(&csv_path, |file| {
        let mut out = io::BufWriter::new(file);
        csv(&mut out)?;
        io::Write::flush(&mut out)
    })
    .map_err(|source| ReportError::Write { path: csv_path.clone(), source })?;
    written.push(csv_path);
    let markdown = tables::to_markdown(&table);
    let source = format!("{} table of experiment {}", stem, input.experiment);
    for (extension, text) in [("tex", tables::to_tex(&table, &source)), ("md", markdown.clone())] {
        let path = dir.join(format!("{stem}.{extension}"));
        write_atomic(&path, tables::sanitize(text).as_bytes())
            .map_err(ReportError::write(&path))?;
        written.push(path);
    }
    Ok(pages::PageTable::new(table, markdown, stem))
}
