//! An uploaded project (.zip, .tar.gz, .tar or a directory) read safely into memory.
//!
//! Nothing is written to disk: archives are read entry by entry with size limits, so a
//! zip bomb, a path that climbs out of the project (`../`), a symlink or a device node
//! cannot do harm. Only Python files and a few small text files are kept.

use std::io::Read;
use std::path::{Component, Path};

use replayground_shared::repro::MAX_PROJECT_ARCHIVE_BYTES;

/// Most bytes all kept files may add up to once unpacked.
pub const MAX_UNPACKED_BYTES: u64 = 100 * 1024 * 1024;
/// Most entries an archive or directory may hold.
pub const MAX_FILES: usize = 5_000;
/// Largest Python file kept; bigger ones are skipped with a note.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Largest non-Python text file kept (README, requirements, configs).
pub const MAX_TEXT_FILE_BYTES: u64 = 256 * 1024;

/// Text files besides Python that help the agent (requirements, configs, README).
const TEXT_EXTENSIONS: [&str; 9] = ["md", "txt", "rst", "toml", "cfg", "ini", "yaml", "yml", "json"];

/// One file of the project: its path inside the project (`/`-separated) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    pub fn is_python(&self) -> bool {
        Path::new(&self.path)
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("py"))
    }
}

/// An uploaded project, in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    /// Python files and small text files, sorted by path.
    pub files: Vec<SourceFile>,
    /// What was skipped and why, one sentence each (shown to the user).
    pub notes: Vec<String>,
}

/// Why a project could not be read; each message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "The archive is {size_mb:.1} MB; the limit is {limit_mb} MB. Upload only the source code (leave out data, checkpoints and .git)."
    )]
    ArchiveTooLarge { size_mb: f64, limit_mb: usize },
    #[error("`{name}` is not a zip or tar.gz archive. Upload the project as a .zip, .tar.gz or .tar file.")]
    NotAnArchive { name: String },
    #[error("The archive `{name}` is damaged ({detail}). Create it again and upload it once more.")]
    Corrupt { name: String, detail: String },
    #[error(
        "The archive entry `{path}` points outside the project, so the archive was refused. Create the archive from inside the project folder."
    )]
    UnsafePath { path: String },
    #[error("The project unpacks to more than {} MB. Upload only the source code (leave out data and checkpoints).", MAX_UNPACKED_BYTES / (1024 * 1024))]
    TooLargeUnpacked,
    #[error(
        "The project holds more than {MAX_FILES} files. Upload only the source code (leave out data, virtual environments and .git)."
    )]
    TooManyFiles,
    #[error(
        "The archive entry `{path}` has an extended header of {bytes} bytes (the limit is {MAX_EXTENDED_HEADER_BYTES}), so the archive was refused. Create the archive again with shorter paths."
    )]
    HeaderTooLong { path: String, bytes: u64 },
    #[error("The project has no Python (.py) files that could be read. Upload the folder that holds the code.")]
    NoPython,
    #[error("Could not read `{path}`: {source}. Check that it exists and is readable.")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Hidden files and folders, caches and installed packages: not the project's own code.
fn is_skipped_folder(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "__pycache__" | "node_modules" | "site-packages" | "venv")
}

/// Which archive format the bytes are, from their magic numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Zip,
    TarGz,
    Tar,
}

fn sniff(bytes: &[u8]) -> Option<Format> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        Some(Format::Zip)
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        Some(Format::TarGz)
    } else if bytes.len() >= 262 && &bytes[257..262] == b"ustar" {
        Some(Format::Tar)
    } else {
        None
    }
}

/// Collects kept files while enforcing the limits.
struct Collector {
    files: Vec<SourceFile>,
    notes: Vec<String>,
    entries: usize,
    unpacked: u64,
    /// Paths of every regular file seen, for stripping a common top folder.
    seen: Vec<String>,
}

/// What to do with a regular file, decided from its path and size before reading it.
enum Wanted {
    Python,
    Text,
    Skip,
}

impl Collector {
    fn new() -> Self {
        Self {
            files: Vec::new(),
            notes: Vec::new(),
            entries: 0,
            unpacked: 0,
            seen: Vec::new(),
        }
    }

    fn count_entry(&mut self) -> Result<(), ProjectError> {
        self.entries += 1;
        if self.entries > MAX_FILES {
            Err(ProjectError::TooManyFiles)
        } else {
            Ok(())
        }
    }

    /// Decides whether a regular file at `path` (already checked safe) is read.
    fn wanted(&mut self, path: &str, size: u64) -> Wanted {
        self.seen.push(path.to_owned());
        let hidden = path.split('/').any(is_skipped_folder);
        if hidden {
            return Wanted::Skip;
        }
        let extension = path.rsplit_once('.').map_or("", |(_, ext)| ext).to_ascii_lowercase();
        if extension == "py" {
            if size > MAX_FILE_BYTES {
                self.notes.push(format!(
                    "Skipped {path}: it is {:.1} MB and the limit for one file is {} MB.",
                    size as f64 / (1024.0 * 1024.0),
                    MAX_FILE_BYTES / (1024 * 1024)
                ));
                return Wanted::Skip;
            }
            return Wanted::Python;
        }
        if TEXT_EXTENSIONS.contains(&extension.as_str()) && size <= MAX_TEXT_FILE_BYTES {
            return Wanted::Text;
        }
        Wanted::Skip
    }

    /// Reads at most `limit` bytes of an entry, counting them against the unpacked total
    /// (a declared size can lie, so the reader itself is bounded).
    fn read(&mut self, path: &str, reader: impl Read, limit: u64, kind: &Wanted) -> Result<(), ProjectError> {
        let mut bytes = Vec::new();
        reader
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| ProjectError::Corrupt {
                name: path.to_owned(),
                detail: error.to_string(),
            })?;
        self.unpacked += bytes.len() as u64;
        if self.unpacked > MAX_UNPACKED_BYTES {
            return Err(ProjectError::TooLargeUnpacked);
        }
        if bytes.len() as u64 > limit {
            if matches!(kind, Wanted::Python) {
                self.notes.push(format!(
                    "Skipped {path}: it is larger than {} MB, the limit for one file.",
                    MAX_FILE_BYTES / (1024 * 1024)
                ));
            }
            return Ok(());
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.files.push(SourceFile {
                path: path.to_owned(),
                text,
            }),
            Err(_) if matches!(kind, Wanted::Python) => {
                self.notes.push(format!("Skipped {path}: it is not valid UTF-8 text."));
            }
            Err(_) => {}
        }
        Ok(())
    }

    fn read_wanted(&mut self, path: &str, size: u64, reader: impl Read) -> Result<(), ProjectError> {
        match self.wanted(path, size) {
            Wanted::Skip => {
                self.unpacked += size;
                if self.unpacked > MAX_UNPACKED_BYTES {
                    return Err(ProjectError::TooLargeUnpacked);
                }
                Ok(())
            }
            kind @ Wanted::Python => self.read(path, reader, MAX_FILE_BYTES, &kind),
            kind @ Wanted::Text => self.read(path, reader, MAX_TEXT_FILE_BYTES, &kind),
        }
    }

    fn finish(mut self, strip_top_folder: bool) -> Result<Project, ProjectError> {
        if strip_top_folder && let Some(top) = common_top_folder(&self.seen) {
            for file in &mut self.files {
                file.path = file.path[top.len() + 1..].to_owned();
            }
        }
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        self.files.dedup_by(|a, b| a.path == b.path);
        if !self.files.iter().any(SourceFile::is_python) {
            return Err(ProjectError::NoPython);
        }
        Ok(Project {
            files: self.files,
            notes: self.notes,
        })
    }
}

/// The folder every path starts with (GitHub archives wrap the project in `repo-main/`).
fn common_top_folder(paths: &[String]) -> Option<String> {
    let first = paths.first()?.split_once('/')?.0;
    paths
        .iter()
        .all(|path| path.split_once('/').is_some_and(|(top, _)| top == first))
        .then(|| first.to_owned())
}

/// Checks an archive entry's path and turns it into a `/`-separated relative path.
/// `None` for entries that name no file (`./`); an error for absolute or climbing paths.
fn safe_path(raw: &str) -> Result<Option<String>, ProjectError> {
    let unsafe_path = || ProjectError::UnsafePath { path: raw.to_owned() };
    let normalised = raw.replace('\\', "/");
    let bytes = normalised.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if normalised.starts_with('/') || drive {
        return Err(unsafe_path());
    }
    let mut parts = Vec::new();
    for part in normalised.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(unsafe_path()),
            _ => parts.push(part),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

impl Project {
    /// Reads an uploaded archive (.zip, .tar.gz / .tgz or .tar); the format is recognised
    /// from the bytes, `file_name` only names the upload in messages.
    pub fn from_archive(file_name: &str, bytes: &[u8]) -> Result<Project, ProjectError> {
        if bytes.len() > MAX_PROJECT_ARCHIVE_BYTES {
            return Err(ProjectError::ArchiveTooLarge {
                size_mb: bytes.len() as f64 / (1024.0 * 1024.0),
                limit_mb: MAX_PROJECT_ARCHIVE_BYTES / (1024 * 1024),
            });
        }
        let corrupt = |detail: String| ProjectError::Corrupt {
            name: file_name.to_owned(),
            detail,
        };
        let mut collector = Collector::new();
        let read = match sniff(bytes) {
            Some(Format::Zip) => read_zip(&mut collector, bytes),
            Some(Format::TarGz) => read_tar(&mut collector, flate2::read::GzDecoder::new(bytes)),
            Some(Format::Tar) => read_tar(&mut collector, bytes),
            None => {
                return Err(ProjectError::NotAnArchive {
                    name: file_name.to_owned(),
                });
            }
        };
        read.map_err(|error| match error {
            ArchiveError::Project(error) => error,
            ArchiveError::Format(detail) => corrupt(detail),
        })?;
        collector.finish(true)
    }

    /// Reads a project folder on the server's disk (the CLI's `--project DIR`); symlinks
    /// and special files are ignored, the same limits apply.
    pub fn from_dir(dir: &Path) -> Result<Project, ProjectError> {
        let mut collector = Collector::new();
        walk(&mut collector, dir, "")?;
        collector.finish(false)
    }

    /// The Python files, sorted by path.
    pub fn python_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files.iter().filter(|file| file.is_python())
    }

    /// The file at `path`, if the project has it.
    pub fn file(&self, path: &str) -> Option<&SourceFile> {
        self.files.iter().find(|file| file.path == path)
    }
}

enum ArchiveError {
    Project(ProjectError),
    Format(String),
}

impl From<ProjectError> for ArchiveError {
    fn from(error: ProjectError) -> Self {
        Self::Project(error)
    }
}

fn read_zip(collector: &mut Collector, bytes: &[u8]) -> Result<(), ArchiveError> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|error| ArchiveError::Format(error.to_string()))?;
    for index in 0..archive.len() {
        collector.count_entry()?;
        let entry = archive
            .by_index(index)
            .map_err(|error| ArchiveError::Format(error.to_string()))?;
        let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let Some(path) = safe_path(&raw)? else { continue };
        if entry.is_dir() || entry.is_symlink() {
            continue;
        }
        let size = entry.size();
        collector.read_wanted(&path, size, entry)?;
    }
    Ok(())
}

/// Largest GNU long-name / long-link or pax header accepted: the `tar` crate would read
/// any size into memory before the other limits apply.
pub const MAX_EXTENDED_HEADER_BYTES: u64 = 4096;

/// A tar stream may exceed the unpacked limit by its headers and padding (at most two
/// blocks per entry).
const TAR_OVERHEAD_BYTES: u64 = MAX_FILES as u64 * 1024 + 1024 * 1024;

/// Reads at most `left` bytes, then fails: under the decompressor, so that no part of
/// the tar reader (headers included) sees more than the unpacked limit.
struct Limited<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte past the limit tells "too large" from "ends exactly here".
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.exceeded = true;
            return Err(std::io::Error::other("the archive unpacks past the limit"));
        }
        let room = usize::try_from(self.left).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

fn read_tar(collector: &mut Collector, reader: impl Read) -> Result<(), ArchiveError> {
    let mut limited = Limited {
        inner: reader,
        left: MAX_UNPACKED_BYTES + TAR_OVERHEAD_BYTES,
        exceeded: false,
    };
    let result = read_tar_entries(collector, &mut limited);
    if limited.exceeded {
        return Err(ProjectError::TooLargeUnpacked.into());
    }
    result
}

fn read_tar_entries(collector: &mut Collector, reader: impl Read) -> Result<(), ArchiveError> {
    let format = |error: std::io::Error| ArchiveError::Format(error.to_string());
    let mut archive = tar::Archive::new(reader);
    // Raw entries: long names and pax headers are read here, within a size limit.
    let entries = archive.entries().map_err(format)?.raw(true);
    let mut long_path: Option<Vec<u8>> = None;
    for entry in entries {
        let mut entry = entry.map_err(format)?;
        let kind = entry.header().entry_type();
        if kind.is_gnu_longname()
            || kind.is_gnu_longlink()
            || kind.is_pax_local_extensions()
            || kind.is_pax_global_extensions()
        {
            let bytes = entry.header().size().map_err(format)?;
            if bytes > MAX_EXTENDED_HEADER_BYTES {
                let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
                return Err(ProjectError::HeaderTooLong { path, bytes }.into());
            }
            let mut data = Vec::with_capacity(bytes as usize);
            entry.read_to_end(&mut data).map_err(format)?;
            if kind.is_gnu_longname() {
                let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                data.truncate(end);
                long_path = Some(data);
            } else if kind.is_pax_local_extensions() {
                for extension in tar::PaxExtensions::new(&data).flatten() {
                    if extension.key_bytes() == b"path" {
                        long_path = Some(extension.value_bytes().to_vec());
                    }
                }
            }
            continue;
        }
        collector.count_entry()?;
        let raw_path = long_path.take().unwrap_or_else(|| entry.path_bytes().into_owned());
        let raw = String::from_utf8_lossy(&raw_path).into_owned();
        let Some(path) = safe_path(&raw)? else { continue };
        // Directories, links, devices and FIFOs name nothing to read.
        if !matches!(
            entry.header().entry_type(),
            tar::EntryType::Regular | tar::EntryType::Continuous
        ) {
            continue;
        }
        let size = entry
            .header()
            .size()
            .map_err(|error| ArchiveError::Format(error.to_string()))?;
        collector.read_wanted(&path, size, entry)?;
    }
    Ok(())
}

fn walk(collector: &mut Collector, dir: &Path, prefix: &str) -> Result<(), ProjectError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ProjectError::Io { path, source }
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .collect::<Result<_, _>>()
        .map_err(io(dir))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        collector.count_entry()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_skipped_folder(&name) {
            continue;
        }
        let path = entry.path();
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        // symlink_metadata: a link is not followed, so it cannot lead outside the folder.
        let metadata = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        if metadata.is_dir() {
            walk(collector, &path, &relative)?;
        } else if metadata.is_file() {
            debug_assert!(
                Path::new(&relative)
                    .components()
                    .all(|c| matches!(c, Component::Normal(_)))
            );
            match collector.wanted(&relative, metadata.len()) {
                Wanted::Skip => {}
                kind => {
                    let file = std::fs::File::open(&path).map_err(io(&path))?;
                    let limit = if matches!(kind, Wanted::Python) {
                        MAX_FILE_BYTES
                    } else {
                        MAX_TEXT_FILE_BYTES
                    };
                    collector.read(&relative, file, limit, &kind)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_paths_refuse_climbing_and_absolute_names() {
        assert_eq!(safe_path("a/./b.py").unwrap().as_deref(), Some("a/b.py"));
        assert_eq!(safe_path("./").unwrap(), None);
        for bad in [
            "../evil.py",
            "a/../../evil.py",
            "/etc/passwd",
            "C:\\x.py",
            "a\\..\\..\\x.py",
        ] {
            assert!(matches!(safe_path(bad), Err(ProjectError::UnsafePath { .. })), "{bad}");
        }
    }

    #[test]
    fn a_common_top_folder_is_found_only_when_every_path_has_it() {
        let paths = |list: &[&str]| list.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            common_top_folder(&paths(&["repo-main/a.py", "repo-main/pkg/b.py"])).as_deref(),
            Some("repo-main")
        );
        assert_eq!(common_top_folder(&paths(&["repo-main/a.py", "setup.py"])), None);
        assert_eq!(common_top_folder(&paths(&["a.py"])), None);
    }

    #[test]
    fn formats_are_recognised_from_their_bytes() {
        assert_eq!(sniff(b"PK\x03\x04rest"), Some(Format::Zip));
        assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Some(Format::TarGz));
        assert_eq!(sniff(b"print('hello')"), None);
    }
}
