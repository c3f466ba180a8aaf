//! `POST /api/share` and `GET /api/share/{id}`: short links to a playground view or a
//! reproduction, stored on SQLite or Postgres.

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use replayground_shared::protocol::{
    MAX_CODE_BYTES, MAX_SHARE_PAYLOAD_BYTES, MAX_STDIN_BYTES, ShareCreated, ShareKind, ShareRequest, SharedItem,
};
use replayground_shared::share::PlaygroundView;

use super::error::{ApiError, ApiJson};
use crate::app::AppState;
use crate::store::{StoreError, is_valid_id};

/// The fields of a playground share's payload (`PlaygroundView`).
const VIEW_FIELDS: [&str; 4] = ["code", "stdin", "breakpoints", "step"];

/// A share checked at the boundary: its payload fits, and a playground payload is a view.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShare {
    pub kind: ShareKind,
    pub payload: serde_json::Value,
}

impl TryFrom<ShareRequest> for NewShare {
    type Error = ApiError;

    fn try_from(request: ShareRequest) -> Result<Self, ApiError> {
        use replayground_shared::text::size_and_limit;
        let size = serde_json::to_vec(&request.payload).map_or(usize::MAX, |json| json.len());
        if size > MAX_SHARE_PAYLOAD_BYTES {
            return Err(ApiError::too_large(format!(
                "The share payload is {}.",
                size_and_limit(size, MAX_SHARE_PAYLOAD_BYTES)
            )));
        }
        if request.kind == ShareKind::Playground {
            let view: PlaygroundView = serde_json::from_value(request.payload.clone()).map_err(|e| {
                ApiError::bad_request(format!(
                    "A playground share's payload must be {{\"code\": \"...\", \"stdin\": \"...\", \"breakpoints\": [..], \"step\": N}} ({e})."
                ))
            })?;
            if view.code.len() > MAX_CODE_BYTES {
                return Err(ApiError::too_large(format!(
                    "The shared program is {}.",
                    size_and_limit(view.code.len(), MAX_CODE_BYTES)
                )));
            }
            // A share must rerun: its input is held to the trace request's limit.
            if view.stdin.len() > MAX_STDIN_BYTES {
                return Err(ApiError::too_large(format!(
                    "The shared input is {}.",
                    size_and_limit(view.stdin.len(), MAX_STDIN_BYTES)
                )));
            }
            // Only what a view holds is stored: anything else is refused, not kept.
            if let Some(unknown) = request
                .payload
                .as_object()
                .and_then(|given| given.keys().find(|key| !VIEW_FIELDS.contains(&key.as_str())))
            {
                return Err(ApiError::bad_request(format!(
                    "A playground share has no field `{unknown}`; send only code, stdin, breakpoints and step."
                )));
            }
        }
        Ok(Self {
            kind: request.kind,
            payload: request.payload,
        })
    }
}

fn store_error(e: &StoreError) -> ApiError {
    tracing::error!("share store failure: {e}");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "The share store is not answering; try again in a moment.",
    )
    .retry_after(5)
}

#[tracing::instrument(skip_all, fields(kind, share_id))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<ShareRequest>,
) -> Result<(StatusCode, Json<ShareCreated>), ApiError> {
    let share = NewShare::try_from(request)?;
    tracing::Span::current().record("kind", share.kind.as_str());
    let stored = state.store.payload_bytes().await.map_err(|e| store_error(&e))?;
    let size = serde_json::to_vec(&share.payload).map_or(0, |json| json.len() as u64);
    if stored + size > state.config.max_share_storage_bytes {
        tracing::warn!(stored, "share storage is full");
        return Err(ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "The server's share storage is full, so this share was not stored; copy the program instead, or ask the operator to raise --max-share-storage-mib.",
        ));
    }
    let id = state
        .store
        .put(share.kind, &share.payload)
        .await
        .map_err(|e| store_error(&e))?;
    tracing::Span::current().record("share_id", &id);
    state.metrics.shares_created.inc();
    let url = format!("/s/{id}");
    Ok((StatusCode::CREATED, Json(ShareCreated { id, url })))
}

#[tracing::instrument(skip_all, fields(share_id))]
pub async fn fetch(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<SharedItem>, ApiError> {
    let unknown = || ApiError::not_found("There is no share with this id; check that the link was copied whole.");
    let Ok(Path(id)) = id else {
        return Err(unknown());
    };
    if !is_valid_id(&id) {
        return Err(unknown());
    }
    tracing::Span::current().record("share_id", &id);
    match state.store.get(&id).await {
        Ok(Some(item)) => Ok(Json(item)),
        Ok(None) => Err(unknown()),
        Err(e) => Err(store_error(&e)),
    }
}
