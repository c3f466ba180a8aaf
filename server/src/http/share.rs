//! `POST /api/share` and `GET /api/share/{id}`: short links to a playground view or a
//! reproduction, stored on SQLite or Postgres.

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use replayground_shared::protocol::{
    MAX_CODE_BYTES, MAX_SHARE_PAYLOAD_BYTES, ShareCreated, ShareKind, ShareRequest, SharedItem,
};
use replayground_shared::share::PlaygroundView;

use super::error::{ApiError, ApiJson};
use crate::app::AppState;
use crate::store::{StoreError, is_valid_id};

/// A share checked at the boundary: its payload fits, and a playground payload is a view.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShare {
    pub kind: ShareKind,
    pub payload: serde_json::Value,
}

impl TryFrom<ShareRequest> for NewShare {
    type Error = ApiError;

    fn try_from(request: ShareRequest) -> Result<Self, ApiError> {
        let size = serde_json::to_vec(&request.payload).map_or(usize::MAX, |json| json.len());
        if size > MAX_SHARE_PAYLOAD_BYTES {
            return Err(ApiError::too_large(format!(
                "The share payload is {} KB; the limit is {} KB.",
                size.div_ceil(1024),
                MAX_SHARE_PAYLOAD_BYTES / 1024
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
                    "The shared program is {} KB; the limit is {} KB.",
                    view.code.len().div_ceil(1024),
                    MAX_CODE_BYTES / 1024
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
