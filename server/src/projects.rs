//! Uploaded projects, kept in memory for the reproduction agent: each for
//! [`PROJECT_TTL`], at most [`MAX_PROJECTS`] of them and [`MAX_PROJECT_STORE_BYTES`] of
//! source text together; the oldest go first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng as _;

use crate::repro::project::Project;

/// How long an uploaded project is kept.
pub const PROJECT_TTL: Duration = Duration::from_secs(60 * 60);
/// Projects kept at once.
pub const MAX_PROJECTS: usize = 64;
/// Source text kept for all projects together.
pub const MAX_PROJECT_STORE_BYTES: usize = 256 * 1024 * 1024;
const PROJECT_ID_LEN: usize = 16;
const PROJECT_ID_ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// One kept project.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) project: Arc<Project>,
    pub(crate) bytes: usize,
    pub(crate) created: Instant,
}

/// Uploaded projects, in memory, with a lifetime and caps.
pub struct ProjectStore {
    entries: Mutex<HashMap<String, Entry>>,
    ttl: Duration,
    max_projects: usize,
    max_bytes: usize,
}

impl std::fmt::Debug for ProjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectStore")
            .field("projects", &self.len())
            .finish_non_exhaustive()
    }
}

impl Default for ProjectStore {
    fn default() -> Self {
        Self::new(PROJECT_TTL, MAX_PROJECTS, MAX_PROJECT_STORE_BYTES)
    }
}

fn project_bytes(project: &Project) -> usize {
    project.files.iter().map(|f| f.path.len() + f.text.len()).sum()
}

impl ProjectStore {
    pub fn new(ttl: Duration, max_projects: usize, max_bytes: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            ttl,
            max_projects: max_projects.max(1),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves a map that is still consistent.
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `project`, forgetting expired and then the oldest projects to stay within
    /// the caps; answers its id.
    pub fn insert(&self, name: &str, project: Project) -> String {
        let bytes = project_bytes(&project);
        let id = new_project_id();
        let mut entries = self.lock();
        entries.retain(|_, e| e.created.elapsed() < self.ttl);
        while !entries.is_empty()
            && (entries.len() >= self.max_projects
                || entries.values().map(|e| e.bytes).sum::<usize>() + bytes > self.max_bytes)
        {
            let oldest = entries
                .iter()
                .min_by_key(|(_, e)| e.created)
                .map(|(id, _)| id.clone())
                .expect("not empty");
            entries.remove(&oldest);
        }
        entries.insert(
            id.clone(),
            Entry {
                name: name.to_owned(),
                project: Arc::new(project),
                bytes,
                created: Instant::now(),
            },
        );
        id
    }

    /// The project `id`, unless it is unknown or expired.
    pub fn get(&self, id: &str) -> Option<Arc<Project>> {
        self.with(id, |e| Arc::clone(&e.project))
    }

    /// `f` of the project `id`, unless it is unknown or expired.
    pub(crate) fn with<T>(&self, id: &str, f: impl FnOnce(&Entry) -> T) -> Option<T> {
        let entries = self.lock();
        entries.get(id).filter(|e| e.created.elapsed() < self.ttl).map(f)
    }

    /// Seconds until a project created at `created` is forgotten.
    pub(crate) fn expires_in(&self, created: Instant) -> u64 {
        self.ttl.saturating_sub(created.elapsed()).as_secs()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn new_project_id() -> String {
    let mut rng = rand::rng();
    (0..PROJECT_ID_LEN)
        .map(|_| PROJECT_ID_ALPHABET[rng.random_range(0..PROJECT_ID_ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::project::SourceFile;

    fn project(bytes: usize) -> Project {
        Project {
            files: vec![SourceFile {
                path: "a.py".into(),
                text: "x".repeat(bytes),
            }],
            notes: Vec::new(),
        }
    }

    #[test]
    fn projects_expire_and_the_oldest_go_first() {
        let store = ProjectStore::new(Duration::from_secs(3600), 2, 1000);
        let a = store.insert("a.zip", project(10));
        let b = store.insert("b.zip", project(10));
        assert!(store.get(&a).is_some() && store.get(&b).is_some());
        let c = store.insert("c.zip", project(10));
        assert!(store.get(&a).is_none(), "the oldest went first");
        assert!(store.get(&b).is_some() && store.get(&c).is_some());
        let big = store.insert("big.zip", project(995));
        assert_eq!(store.len(), 1, "the byte cap pushed the others out");
        assert!(store.get(&big).is_some());
        assert!(store.get("nope").is_none());

        let expired = ProjectStore::new(Duration::ZERO, 2, 1000);
        let id = expired.insert("a.zip", project(1));
        assert!(expired.get(&id).is_none());
    }
}
