//! `oracle register site`: the register as a static web site (an index with the progress chart,
//! one page per entry), plain HTML and CSS that work offline and from `file://`.
//!
//! The register is read and audited exactly as `register verify` does; a register that does not
//! verify is rendered all the same, its failing entries marked with the reasons. The site is
//! written into a temporary directory next to `--out` and renamed into place, so a failure never
//! leaves a partial site that looks complete.

mod forge;
mod page;
mod progress;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use git2::Repository;
use serde::Serialize;
use thiserror::Error;

pub use forge::{Forge, commit_subject};
pub use progress::{MeasuredPoint, Step, render_progress};

use crate::governance::entry::{Entry, EntryId};
use crate::governance::hash::Sha256Hex;
use crate::governance::register::{self, AppendError, Audit, Finding, RegisterFile};
use crate::measurement::{self, Measurement, MeasurementError};

/// The file that marks a directory as a site written by this module (and so replaceable).
const MARKER: &str = ".oracle-register-site";

/// What to build from where.
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// The repository whose `register/` is published.
    pub repo: PathBuf,
    /// The site's directory (replaced as a whole when it holds an earlier site).
    pub out: PathBuf,
    /// Where the site will be served, for canonical links (`https://…`); links between pages
    /// are relative either way.
    pub base_url: Option<String>,
}

/// What was built, as `oracle register site` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct SiteSummary {
    /// Whether the register verified when the site was built.
    pub ok: bool,
    /// The register's head sha256.
    pub head: Sha256Hex,
    /// Entry files in the register.
    #[serde(rename = "n")]
    pub count: usize,
    /// Everything `register verify` found wrong (empty when the chain verifies).
    #[serde(rename = "errors")]
    pub findings: Vec<Finding>,
    /// The site's directory.
    pub out: PathBuf,
    /// Files written into the site.
    pub files: usize,
}

impl fmt::Display for SiteSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{}: {}", finding.file, finding.message)?;
        }
        writeln!(
            f,
            "site {}: {} files, head={} n={}{}",
            self.out.display(),
            self.files,
            self.head,
            self.count,
            if self.ok {
                String::new()
            } else {
                format!(
                    " (register verify: {} problem(s), marked on the site)",
                    self.findings.len()
                )
            }
        )
    }
}

/// Why no site was written.
#[derive(Debug, Error)]
pub enum SiteError {
    /// `--repo` is not the root of a git repository.
    #[error("--repo {path}: not a git repository ({message})")]
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// git's reason.
        message: String,
    },
    /// The register could not be read.
    #[error(transparent)]
    Register(#[from] AppendError),
    /// `--out` cannot hold the site.
    #[error("--out {path}: {message}")]
    Out {
        /// The path given.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A file of `measurements/` is not a sound measurement.
    #[error(transparent)]
    Measurement(#[from] MeasurementError),
    /// `--base-url` is not an http(s) URL.
    #[error("--base-url `{0}`: expected an http:// or https:// URL without spaces or quotes")]
    BaseUrl(String),
}

/// One file of `register/` as the site shows it.
#[derive(Debug, Clone)]
pub struct EntryView {
    /// The id its file name gives.
    pub id: EntryId,
    /// The file's exact bytes.
    pub file: RegisterFile,
    /// sha256 of those bytes.
    pub sha256: Sha256Hex,
    /// The entry, or why it cannot be read.
    pub entry: Result<Entry, String>,
    /// First line of the candidate commit's message, when the repository has that commit.
    pub subject: Option<String>,
    /// What `register verify` found wrong with this file.
    pub findings: Vec<Finding>,
}

impl EntryView {
    /// The entry's page inside the site.
    #[must_use]
    pub fn page(&self) -> String {
        format!("{}.html", self.id)
    }
}

/// Everything the pages are rendered from.
#[derive(Debug, Clone)]
pub struct Site {
    /// Entry files in numbering order.
    pub views: Vec<EntryView>,
    /// The audit of the whole register.
    pub audit: Audit,
    /// The measured points of `measurements/`, checked against the register.
    pub measurements: Vec<Measurement>,
    /// The forge commits link to, if `origin` has a web form.
    pub forge: Option<Forge>,
    /// Where the site is served, without a trailing slash.
    pub base_url: Option<String>,
}

impl Site {
    /// Reads and audits the register of `repository` rooted at `root`.
    ///
    /// # Errors
    /// [`SiteError::Register`] when `register/` cannot be read, [`SiteError::Measurement`] when
    /// a file of `measurements/` is not a sound measurement.
    pub fn read(
        root: &Path,
        repository: &Repository,
        base_url: Option<String>,
    ) -> Result<Self, SiteError> {
        let files = register::read_files(root)?;
        // The same findings as `oracle register verify`, the rules of each entry included.
        let audit = register::verify_files(root, &files);
        let mut numbered: Vec<(EntryId, RegisterFile)> = files
            .into_iter()
            .filter_map(|file| EntryId::from_file_name(&file.name).map(|id| (id, file)))
            .collect();
        numbered.sort_by_key(|(id, _)| *id);
        let views = numbered
            .into_iter()
            .map(|(id, file)| {
                let entry = Entry::parse(&file.bytes).map_err(|error| error.to_string());
                let subject = entry
                    .as_ref()
                    .ok()
                    .and_then(|entry| commit_subject(repository, entry.candidate.commit.as_str()));
                let findings = audit
                    .findings
                    .iter()
                    .filter(|finding| finding.file == file.name)
                    .cloned()
                    .collect();
                EntryView {
                    id,
                    sha256: Sha256Hex::of(&file.bytes),
                    file,
                    entry,
                    subject,
                    findings,
                }
            })
            .collect();
        let measurements = measurement::read_all(root, &audit)?;
        Ok(Self {
            views,
            measurements,
            audit,
            forge: Forge::of_repository(repository),
            base_url,
        })
    }

    /// The site's files: (name, contents).
    #[must_use]
    pub fn render(&self) -> Vec<(String, String)> {
        let mut files = vec![
            ("index.html".to_owned(), page::index(self)),
            ("style.css".to_owned(), page::STYLE.to_owned()),
            (
                MARKER.to_owned(),
                "written by `oracle register site`; the directory is replaced on the next build\n"
                    .to_owned(),
            ),
        ];
        for (index, view) in self.views.iter().enumerate() {
            files.push((view.page(), page::entry(self, index)));
        }
        files
    }
}

/// Builds the site of `options.repo` into `options.out`.
///
/// # Errors
/// [`SiteError`]; `--out` is then unchanged.
pub fn build(options: &SiteOptions) -> Result<SiteSummary, SiteError> {
    let base_url = options
        .base_url
        .as_deref()
        .map(|url| check_base_url(url).ok_or_else(|| SiteError::BaseUrl(url.to_owned())))
        .transpose()?;
    let repository =
        Repository::open(&options.repo).map_err(|error| SiteError::NotARepository {
            path: options.repo.clone(),
            message: error.message().to_owned(),
        })?;
    let site = Site::read(&options.repo, &repository, base_url)?;
    let files = site.render();
    write_site(&options.out, &files)?;
    Ok(SiteSummary {
        ok: site.audit.ok(),
        out: options.out.clone(),
        head: site.audit.head.clone(),
        count: site.audit.count,
        findings: site.audit.findings,
        files: files.len(),
    })
}

/// `url` without a trailing slash, if it is an http(s) URL that is safe inside an attribute.
fn check_base_url(url: &str) -> Option<String> {
    let web = url.starts_with("https://") || url.starts_with("http://");
    let clean = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "\"'<>`".contains(c));
    (web && clean).then(|| url.trim_end_matches('/').to_owned())
}

/// Writes `files` into a fresh directory next to `out` and renames it to `out`, replacing an
/// earlier site there (and nothing else).
fn write_site(out: &Path, files: &[(String, String)]) -> Result<(), SiteError> {
    let fail = |message: String| SiteError::Out {
        path: out.to_owned(),
        message,
    };
    let name = out
        .file_name()
        .ok_or_else(|| fail("names no directory".into()))?
        .to_string_lossy()
        .into_owned();
    let parent = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let earlier = match fs::read_dir(out) {
        Ok(mut listing) => {
            if !out.join(MARKER).is_file() && listing.next().is_some() {
                return Err(fail(format!(
                    "exists and is not a site written by `oracle register site` (no {MARKER}); \
                     remove it or choose another directory"
                )));
            }
            true
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(error) => return Err(fail(error.to_string())),
    };
    fs::create_dir_all(&parent).map_err(|error| fail(format!("creating its parent: {error}")))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempdir_in(&parent)
        .map_err(|error| fail(format!("creating a directory next to it: {error}")))?;
    for (file, contents) in files {
        let path = staging.path().join(file);
        fs::write(&path, contents).map_err(|error| fail(format!("{}: {error}", path.display())))?;
    }
    // Until the rename the staging directory is removed on any failure; after it, it is the site.
    let staged = staging.keep();
    let swap = || -> std::io::Result<()> {
        if earlier {
            let retired = tempfile::Builder::new()
                .prefix(&format!(".{name}.old-"))
                .tempdir_in(&parent)?
                .keep();
            // Renaming onto the empty directory just made replaces it atomically.
            fs::rename(out, &retired)?;
            fs::rename(&staged, out)?;
            fs::remove_dir_all(&retired)
        } else {
            fs::rename(&staged, out)
        }
    };
    swap().map_err(|error| {
        let _ = fs::remove_dir_all(&staged);
        fail(format!("moving the new site into place: {error}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_must_be_web_urls_safe_in_attributes() {
        assert_eq!(
            check_base_url("https://coherent.example/register/").as_deref(),
            Some("https://coherent.example/register")
        );
        for bad in [
            "coherent.example",
            "javascript:alert(1)",
            "https://a.example/\"onload=x",
            "https://a b",
        ] {
            assert_eq!(check_base_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_directory_that_is_not_a_site_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("notes.txt"), "mine").unwrap();
        let files = vec![("index.html".to_owned(), "new".to_owned())];
        let error = write_site(&out, &files).unwrap_err();
        assert!(error.to_string().contains("is not a site"), "{error}");
        assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");

        let site = dir.path().join("fresh");
        let with_marker = vec![
            ("index.html".to_owned(), "one".to_owned()),
            (MARKER.to_owned(), String::new()),
        ];
        write_site(&site, &with_marker).unwrap();
        fs::write(site.join("stale.html"), "old").unwrap();
        write_site(&site, &with_marker).unwrap();
        assert!(
            !site.join("stale.html").exists(),
            "the earlier site is replaced"
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
