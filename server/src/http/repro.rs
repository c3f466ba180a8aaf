//! The reproduction agent over HTTP: uploaded projects (`POST /api/projects`,
//! `GET /api/projects/{id}`), the reproduction page (`/repro/`, and `/s/{id}` when the
//! share is a reproduction), and the checked form of a WebSocket `repro` request.
//!
//! Projects live in memory, in the app's [`crate::projects::ProjectStore`].

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Redirect, Response};
use replayground_shared::protocol::ShareKind;
use replayground_shared::repro::{BugReport, MAX_PROJECT_ARCHIVE_BYTES, MAX_REPORT_FIELD_BYTES, ReproRequest, Stage};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::static_files::IndexPage;
use crate::app::AppState;
use crate::jobs::RequestError;
use crate::projects::{PROJECT_TTL, ProjectStore};
use crate::repro::project::Project;
use crate::store::is_valid_id;

/// `POST /api/projects`: the archive and nothing else.
pub const PROJECT_BODY_LIMIT: usize = MAX_PROJECT_ARCHIVE_BYTES;
/// The header that may name the upload when the query does not.
pub const FILE_NAME_HEADER: &str = "x-file-name";
/// `201` answer to `POST /api/projects`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectCreated {
    pub id: String,
    /// Files kept (Python and small text files).
    pub files: u32,
    pub python_files: u32,
    /// What was skipped and why.
    pub notes: Vec<String>,
    /// Seconds until the project is forgotten.
    pub expires_in_s: u64,
}

/// `GET /api/projects/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectSummary {
    pub id: String,
    pub name: String,
    pub files: u32,
    pub python_files: u32,
    /// The Python files' paths (the first 500).
    pub python_paths: Vec<String>,
    pub notes: Vec<String>,
    pub expires_in_s: u64,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The query of `POST /api/projects`.
#[derive(Debug, Default, Deserialize)]
pub struct UploadQuery {
    name: Option<String>,
}

fn too_large() -> ApiError {
    ApiError::too_large(format!(
        "The archive is larger than {} MB; upload only the source code (leave out data, checkpoints and virtual environments).",
        MAX_PROJECT_ARCHIVE_BYTES / (1024 * 1024)
    ))
}

/// `POST /api/projects?name=FILE` with the archive as the raw body.
#[tracing::instrument(skip_all, fields(archive_bytes, project_id))]
pub async fn upload(
    State(state): State<AppState>,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<ProjectCreated>), ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_PROJECT_ARCHIVE_BYTES) {
        return Err(too_large());
    }
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::bad_request(format!("The archive could not be read ({rejection}); upload it again."))
        }
    })?;
    tracing::Span::current().record("archive_bytes", body.len());
    if body.is_empty() {
        return Err(ApiError::bad_request(
            "The request has no archive: send the .zip or .tar.gz file as the request body.",
        ));
    }
    let name = query
        .name
        .or_else(|| {
            headers
                .get(FILE_NAME_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
        .map(|n| {
            n.rsplit(['/', '\\'])
                .next()
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect::<String>()
        })
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "project archive".to_owned());
    let archive_name = name.clone();
    // Unpacking is CPU-bound and bounded by the archive limits: off the async threads.
    let parsed = tokio::task::spawn_blocking(move || Project::from_archive(&archive_name, &body))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Reading the archive failed; try again.",
            )
        })?;
    let project = parsed.map_err(|e| {
        let message = e.to_string();
        if matches!(e, crate::repro::project::ProjectError::ArchiveTooLarge { .. }) {
            ApiError::too_large(message)
        } else {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
        }
    })?;
    let created = ProjectCreated {
        id: String::new(),
        files: count(project.files.len()),
        python_files: count(project.python_files().count()),
        notes: project.notes.clone(),
        expires_in_s: PROJECT_TTL.as_secs(),
    };
    let id = state.projects.insert(&name, project);
    tracing::Span::current().record("project_id", &id);
    Ok((StatusCode::CREATED, Json(ProjectCreated { id, ..created })))
}

/// `GET /api/projects/{id}`.
pub async fn summary(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<ProjectSummary>, ApiError> {
    state
        .projects
        .with(&id, |e| ProjectSummary {
            id: id.clone(),
            name: e.name.clone(),
            files: count(e.project.files.len()),
            python_files: count(e.project.python_files().count()),
            python_paths: e.project.python_files().take(500).map(|f| f.path.clone()).collect(),
            notes: e.project.notes.clone(),
            expires_in_s: state.projects.expires_in(e.created),
        })
        .map(Json)
        .ok_or_else(|| unknown_project(&id))
}

fn unknown_project(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "There is no uploaded project {id}: projects are kept for {} minutes; upload the archive again.",
        PROJECT_TTL.as_secs() / 60
    ))
}

/// The browser pages the server serves: the playground and the reproduction page.
#[derive(Debug)]
pub struct Pages {
    pub playground: IndexPage,
    pub repro: IndexPage,
}

/// `GET /repro/`.
pub async fn repro_page(State(pages): State<Arc<Pages>>, headers: HeaderMap) -> Response {
    pages.repro.response(&headers)
}

/// `GET /repro` → `/repro/` (the page's assets are relative to the folder).
pub async fn repro_redirect() -> Redirect {
    Redirect::permanent("/repro/")
}

/// `GET /s/{id}`: the reproduction page for a stored reproduction, else the playground
/// (which also explains unknown links).
pub async fn share_page(state: &AppState, pages: &Pages, id: &str, headers: &HeaderMap) -> Response {
    if is_valid_id(id)
        && let Ok(Some(item)) = state.store.get(id).await
        && item.kind == ShareKind::Repro
    {
        return pages.repro.response(headers);
    }
    pages.playground.response(headers)
}

/// A `repro` request checked at the boundary; the project is resolved by the session.
#[derive(Debug, Clone)]
pub struct ReproJob {
    pub report: BugReport,
    pub project_id: Option<String>,
    pub project: Option<Arc<Project>>,
    pub ablate: BTreeSet<Stage>,
}

impl TryFrom<ReproRequest> for ReproJob {
    type Error = RequestError;

    fn try_from(request: ReproRequest) -> Result<Self, RequestError> {
        if let Err(message) = request.report.check() {
            let report = &request.report;
            let too_large = [
                &report.title,
                &report.description,
                &report.observed,
                &report.expected,
                &report.free_text,
            ]
            .into_iter()
            .chain(&report.snippets)
            .any(|text| text.len() > MAX_REPORT_FIELD_BYTES);
            return Err(if too_large {
                RequestError::TooLarge(message)
            } else {
                RequestError::Invalid(message)
            });
        }
        if request.report.snippets.len() > 32 {
            return Err(RequestError::TooLarge(
                "The report has more than 32 code snippets; keep the ones that show the bug.".to_owned(),
            ));
        }
        Ok(Self {
            report: request.report,
            project_id: request.project.filter(|id| !id.trim().is_empty()),
            project: None,
            ablate: request.ablate.into_iter().collect(),
        })
    }
}

impl ReproJob {
    /// Looks the project up; the message says what to do when it is gone.
    pub fn resolve(&mut self, projects: &ProjectStore) -> Result<(), String> {
        if let Some(id) = &self.project_id {
            self.project = Some(projects.get(id).ok_or_else(|| unknown_project(id).message)?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked_at_the_boundary() {
        let empty = ReproRequest::default();
        assert!(matches!(ReproJob::try_from(empty), Err(RequestError::Invalid(m)) if m.contains("empty")));
        let huge = ReproRequest {
            report: BugReport {
                observed: "x".repeat(MAX_REPORT_FIELD_BYTES + 1),
                ..BugReport::default()
            },
            ..ReproRequest::default()
        };
        assert!(matches!(ReproJob::try_from(huge), Err(RequestError::TooLarge(_))));
        let mut job = ReproJob::try_from(ReproRequest {
            report: BugReport {
                title: "t".into(),
                ..BugReport::default()
            },
            project: Some("gone".into()),
            ablate: vec![Stage::Plan],
        })
        .unwrap();
        assert!(job.ablate.contains(&Stage::Plan));
        let error = job.resolve(&ProjectStore::default()).unwrap_err();
        assert!(error.contains("upload the archive again"), "{error}");
    }
}
