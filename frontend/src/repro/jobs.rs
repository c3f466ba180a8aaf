//! The reproduction page's work on the server: the agent's events over the WebSocket
//! (`repro` job), the project upload with its progress, and stored reproductions through
//! the share store ([`crate::client::share`]).

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt as _;
use futures::channel::mpsc::UnboundedSender;
use futures::channel::oneshot;
use replayground_shared::protocol::{ClientMessage, ShareKind, SharedItem};
use replayground_shared::repro::{AgentEvent, ReproRequest, ReproTranscript};
use serde::Deserialize;
use wasm_bindgen::JsCast as _;
use wasm_bindgen::closure::Closure;

use super::draft::UploadedProject;
use crate::client::http::error_from_body;
use crate::client::share::{self, SHORT_LINK_PREFIX, StoreError};
use crate::client::socket::{PageSocket, SocketEvent, send_cancel, socket_url};

/// Where archives are uploaded.
pub const PROJECTS_URL: &str = "/api/projects";
/// The repro job's number on its socket (the `hello` is 1).
const JOB: u64 = 2;

/// What the page was asked to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageTarget {
    /// A new report (the form).
    New,
    /// A stored reproduction: `/s/{id}` or `/repro/?s={id}`.
    Stored(String),
}

/// Reads the page's address.
pub fn page_target(pathname: &str, search: &str) -> PageTarget {
    if let Some(id) = pathname.strip_prefix(SHORT_LINK_PREFIX)
        && !id.is_empty()
        && !id.contains('/')
    {
        return PageTarget::Stored(id.to_owned());
    }
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("s="))
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
        .map_or(PageTarget::New, |id| PageTarget::Stored(id.to_owned()))
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// A `finished` event arrived.
    Finished,
    /// The agent stopped with a `failed` event (its message is in the run state).
    Failed,
    /// Cancelled at the person's request.
    Cancelled,
    /// The server refused or lost the job; the sentence says why and what to do.
    Refused(String),
}

/// The server messages a repro job reads ([`replayground_shared::protocol::ServerMessage`]'s
/// shape); others are skipped unread, which keeps the trace model's decoders (about 60 KB
/// of wasm) out of this bundle.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Incoming {
    Agent {
        event: AgentEvent,
    },
    Cancelled,
    Error {
        message: String,
    },
    #[serde(other)]
    Other,
}

/// A server message's envelope around [`Incoming`].
#[derive(Debug, Deserialize)]
struct IncomingEnvelope {
    #[serde(default)]
    job: Option<u64>,
    body: Incoming,
}

/// Stops a running job: the server is told, and the run ends with [`RunEnd::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct RunControl(Rc<RefCell<Option<UnboundedSender<SocketEvent>>>>);

impl RunControl {
    pub fn cancel(&self) {
        if let Some(tx) = self.0.borrow().as_ref() {
            let _ = tx.unbounded_send(SocketEvent::CancelRequested);
        }
    }
}

/// Runs the agent on the server, handing each event to `on_event` as it arrives.
pub async fn run_agent(request: ReproRequest, control: &RunControl, mut on_event: impl FnMut(AgentEvent)) -> RunEnd {
    let unreachable = || {
        RunEnd::Refused(
            "Could not reach the server. Check that it is running (`cargo xtask serve`) and press Run again; your report is kept."
                .to_owned(),
        )
    };
    let Some((socket, mut rx)) = socket_url().and_then(|url| PageSocket::open(&url)) else {
        return unreachable();
    };
    *control.0.borrow_mut() = Some(socket.waker());
    let mut opened = false;
    let mut cancelling = false;
    let end = loop {
        let Some(event) = rx.next().await else {
            break unreachable();
        };
        match event {
            SocketEvent::Open => {
                opened = true;
                let job = ClientMessage::Repro {
                    request: request.clone(),
                };
                if !(socket.hello() && socket.send(JOB, job)) {
                    break unreachable();
                }
            }
            SocketEvent::OpenTimedOut if !opened => break unreachable(),
            SocketEvent::OpenTimedOut => {}
            SocketEvent::CancelRequested => {
                if !opened {
                    break RunEnd::Cancelled;
                }
                cancelling = true;
                if !send_cancel(&socket.web_socket(), 3, JOB) {
                    break RunEnd::Cancelled;
                }
            }
            SocketEvent::Closed(_) if cancelling => break RunEnd::Cancelled,
            SocketEvent::Closed(reason) => {
                let why = if reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({reason})")
                };
                break RunEnd::Refused(format!(
                    "The connection to the server closed before the run ended{why}. Press Run to try again; your report is kept."
                ));
            }
            SocketEvent::Message(text) => match serde_json::from_str::<IncomingEnvelope>(&text) {
                Ok(IncomingEnvelope {
                    job: Some(JOB),
                    body: Incoming::Agent { event },
                }) => {
                    let end = match &event {
                        AgentEvent::Finished { .. } => Some(RunEnd::Finished),
                        AgentEvent::Failed { .. } => Some(RunEnd::Failed),
                        _ => None,
                    };
                    on_event(event);
                    if let Some(end) = end {
                        break end;
                    }
                }
                Ok(IncomingEnvelope {
                    job: Some(JOB),
                    body: Incoming::Cancelled,
                }) => break RunEnd::Cancelled,
                Ok(IncomingEnvelope {
                    body: Incoming::Error { message },
                    ..
                }) => break RunEnd::Refused(message),
                Ok(_) => {}
                Err(e) => {
                    break RunEnd::Refused(format!(
                        "The server sent a message this page cannot read ({e}). Reload the page: it may be older than the server."
                    ));
                }
            },
        }
    };
    control.0.borrow_mut().take();
    drop(socket);
    end
}

/// `201` answer of `POST /api/projects`.
#[derive(Debug, Clone, Deserialize)]
struct ProjectCreated {
    id: String,
    files: u32,
    python_files: u32,
}

/// Uploads an archive with `XMLHttpRequest` (fetch reports no upload progress), calling
/// `on_progress` with the fraction sent.
pub async fn upload_project(
    file: web_sys::File,
    on_progress: impl Fn(f64) + 'static,
) -> Result<UploadedProject, String> {
    let failed = |why: &str| format!("The upload failed: {why}. Pick the file again to retry.");
    let xhr = web_sys::XmlHttpRequest::new().map_err(|_| failed("the browser cannot send files"))?;
    let name = file.name();
    let url = format!("{PROJECTS_URL}?name={}", js_sys::encode_uri_component(&name));
    xhr.open("POST", &url)
        .map_err(|_| failed("the request could not be opened"))?;
    let _ = xhr.set_request_header("content-type", "application/octet-stream");
    let progress = Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(move |event: web_sys::ProgressEvent| {
        if event.length_computable() && event.total() > 0.0 {
            on_progress(event.loaded() / event.total());
        }
    });
    let upload = xhr.upload().map_err(|_| failed("the browser cannot report progress"))?;
    upload.set_onprogress(Some(progress.as_ref().unchecked_ref()));
    let (done_tx, done_rx) = oneshot::channel::<bool>();
    let done_tx = Rc::new(RefCell::new(Some(done_tx)));
    let finish = |ok: bool| {
        let done_tx = Rc::clone(&done_tx);
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            if let Some(tx) = done_tx.borrow_mut().take() {
                let _ = tx.send(ok);
            }
        })
    };
    let on_load = finish(true);
    let on_error = finish(false);
    xhr.set_onload(Some(on_load.as_ref().unchecked_ref()));
    xhr.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    xhr.set_onabort(Some(on_error.as_ref().unchecked_ref()));
    xhr.send_with_opt_blob(Some(&file))
        .map_err(|_| failed("the file could not be sent"))?;
    let loaded = done_rx.await.unwrap_or(false);
    upload.set_onprogress(None);
    if !loaded {
        return Err(failed("the server could not be reached"));
    }
    let status = xhr.status().unwrap_or(0);
    let body = xhr.response_text().ok().flatten().unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(format!(
            "The server refused {name}: {}",
            error_from_body(&status.to_string(), &body)
        ));
    }
    let created: ProjectCreated =
        serde_json::from_str(&body).map_err(|e| failed(&format!("the server's answer is not a project ({e})")))?;
    Ok(UploadedProject {
        id: created.id,
        file_name: name,
        files: created.files,
        python_files: created.python_files,
    })
}

/// Stores a reproduction; answers the absolute `/s/{id}` link.
pub async fn share(transcript: &ReproTranscript) -> Result<String, String> {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    share::store(ShareKind::Repro, transcript, &origin)
        .await
        .map_err(|e| match e {
            StoreError::Unwritable(e) => e.to_string(),
            StoreError::Unreachable(e) => format!("Could not reach the server ({e}); try Share again."),
            StoreError::Refused(e) => format!("The server did not store the reproduction: {e}"),
            StoreError::NotALink(e) => format!("The server's answer is not a share link ({e})."),
        })
}

/// Fetches a stored reproduction.
pub async fn load(id: &str) -> Result<ReproTranscript, String> {
    let failed =
        |why: String| format!("This reproduction link cannot be opened: {why}. The form below starts a new one.");
    let body = share::fetch(id).await.map_err(failed)?;
    let item: SharedItem =
        serde_json::from_str(&body).map_err(|e| failed(format!("the server's answer is not a share ({e})")))?;
    if item.kind != ShareKind::Repro {
        return Err(failed(format!(
            "it holds a {} share; open it at /s/{id} in the playground",
            item.kind.as_str()
        )));
    }
    serde_json::from_value(item.payload).map_err(|e| failed(format!("its contents are not a reproduction ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_names_a_stored_reproduction() {
        assert_eq!(page_target("/repro/", ""), PageTarget::New);
        assert_eq!(page_target("/s/Ab3", ""), PageTarget::Stored("Ab3".into()));
        assert_eq!(page_target("/repro/", "?s=Xy9"), PageTarget::Stored("Xy9".into()));
        assert_eq!(page_target("/repro/", "?x=1&s=Xy9"), PageTarget::Stored("Xy9".into()));
        assert_eq!(page_target("/repro/", "?s=%3Cb%3E"), PageTarget::New);
        assert_eq!(page_target("/s/", ""), PageTarget::New);
    }

    #[test]
    fn server_messages_read_as_the_protocol_writes_them() {
        use replayground_shared::protocol::{Envelope, ErrorCode, ServerMessage};
        let read = |m: ServerMessage| {
            let text = serde_json::to_string(&Envelope::job(2, m).numbered(4)).unwrap();
            serde_json::from_str::<IncomingEnvelope>(&text).unwrap()
        };
        let event = AgentEvent::Token {
            attempt: 1,
            text: "x".into(),
        };
        let agent = read(ServerMessage::Agent { event: event.clone() });
        assert!(matches!(agent, IncomingEnvelope { job: Some(2), body: Incoming::Agent { event: e } } if e == event));
        assert!(matches!(
            read(ServerMessage::Cancelled),
            IncomingEnvelope {
                job: Some(2),
                body: Incoming::Cancelled
            }
        ));
        let error = ServerMessage::Error {
            reply_to: Some(2),
            code: ErrorCode::BadMessage,
            message: "The report is empty.".into(),
            retry_after_s: None,
        };
        assert!(matches!(read(error).body, Incoming::Error { message } if message == "The report is empty."));
        assert!(matches!(
            read(ServerMessage::Pong { reply_to: 3 }).body,
            Incoming::Other
        ));
    }
}
