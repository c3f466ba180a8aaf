//! The page's WebSocket to the server (`/api/ws`), for the playground and the
//! reproduction page alike: its callbacks feed one channel that the caller's loop reads,
//! an open that takes too long is reported, and dropping the socket closes it.

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use replayground_shared::protocol::{ClientMessage, Envelope, PROTOCOL_VERSION};
use wasm_bindgen::JsCast as _;
use wasm_bindgen::closure::Closure;

/// The server's WebSocket endpoint (same origin as the page).
pub const WS_PATH: &str = "/api/ws";

/// How long the page waits for the WebSocket to open.
const OPEN_TIMEOUT_MS: i32 = 5_000;

/// What the socket (or the person, through a cancel button) hands to the caller's loop.
pub enum SocketEvent {
    Open,
    /// [`OPEN_TIMEOUT_MS`] passed (meaningless once open).
    OpenTimedOut,
    Message(String),
    /// The socket closed (or failed, which closes it); the reason when the server gave one.
    Closed(String),
    /// The person asked to stop (sent through [`PageSocket::waker`]).
    CancelRequested,
}

impl std::fmt::Debug for SocketEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Open => "Open",
            Self::OpenTimedOut => "OpenTimedOut",
            Self::Message(_) => "Message",
            Self::Closed(_) => "Closed",
            Self::CancelRequested => "CancelRequested",
        })
    }
}

/// The page's WebSocket address: the page's own host, `wss:` under `https:`.
pub fn socket_url() -> Option<String> {
    let location = web_sys::window()?.location();
    let scheme = if location.protocol().ok()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    Some(format!("{scheme}://{}{WS_PATH}", location.host().ok()?))
}

/// Which of the socket's events a callback reports.
#[derive(Clone, Copy)]
enum Callback {
    Open,
    Message,
    Close,
}

/// One closure type for every socket callback: each distinct closure costs the bundle its
/// own wasm-bindgen glue.
fn socket_callback(tx: &UnboundedSender<SocketEvent>, kind: Callback) -> Closure<dyn FnMut(web_sys::Event)> {
    let tx = tx.clone();
    Closure::new(move |event: web_sys::Event| {
        let message = match kind {
            Callback::Open => SocketEvent::Open,
            Callback::Message => match event
                .dyn_ref::<web_sys::MessageEvent>()
                .and_then(|m| m.data().as_string())
            {
                Some(text) => SocketEvent::Message(text),
                None => return,
            },
            Callback::Close => SocketEvent::Closed(
                event
                    .dyn_ref::<web_sys::CloseEvent>()
                    .map(web_sys::CloseEvent::reason)
                    .unwrap_or_default(),
            ),
        };
        let _ = tx.unbounded_send(message);
    })
}

/// An open socket: its callbacks live as long as it does, and dropping it closes it.
pub struct PageSocket {
    socket: web_sys::WebSocket,
    events: UnboundedSender<SocketEvent>,
    _callbacks: [Closure<dyn FnMut(web_sys::Event)>; 4],
    _open_timeout: Closure<dyn FnMut()>,
    open_timeout_id: i32,
}

impl Drop for PageSocket {
    fn drop(&mut self) {
        self.socket.set_onopen(None);
        self.socket.set_onmessage(None);
        self.socket.set_onclose(None);
        self.socket.set_onerror(None);
        if let Some(window) = web_sys::window() {
            window.clear_timeout_with_handle(self.open_timeout_id);
        }
        let _ = self.socket.close();
    }
}

impl PageSocket {
    /// Starts connecting to `url`; the events arrive on the returned channel, `Open` (or
    /// `OpenTimedOut`, or `Closed`) first. `None` when the browser refuses the address.
    pub fn open(url: &str) -> Option<(Self, UnboundedReceiver<SocketEvent>)> {
        let socket = web_sys::WebSocket::new(url).ok()?;
        let (tx, rx) = unbounded();
        let on_open = socket_callback(&tx, Callback::Open);
        let on_message = socket_callback(&tx, Callback::Message);
        let on_close = socket_callback(&tx, Callback::Close);
        // A socket the page's Content-Security-Policy blocks reports an error and no close
        // (an error event has no reason: it reads as a close without one).
        let on_error = socket_callback(&tx, Callback::Close);
        let timeout_tx = tx.clone();
        let open_timeout = Closure::<dyn FnMut()>::new(move || {
            let _ = timeout_tx.unbounded_send(SocketEvent::OpenTimedOut);
        });
        let open_timeout_id = web_sys::window()?
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                open_timeout.as_ref().unchecked_ref(),
                OPEN_TIMEOUT_MS,
            )
            .ok()?;
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        socket.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Some((
            Self {
                socket,
                events: tx,
                _callbacks: [on_open, on_message, on_close, on_error],
                _open_timeout: open_timeout,
                open_timeout_id,
            },
            rx,
        ))
    }

    /// Sends `message` numbered `seq` (a job's message: the job is `seq`); false when the
    /// connection is gone.
    pub fn send(&self, seq: u64, message: ClientMessage) -> bool {
        send_envelope(&self.socket, &Envelope::new(message).numbered(seq))
    }

    /// Opens the conversation with the protocol version this page speaks (`seq` 1).
    pub fn hello(&self) -> bool {
        self.send(
            1,
            ClientMessage::Hello {
                protocol: PROTOCOL_VERSION,
            },
        )
    }

    /// A sender into this socket's event channel, for a cancel button to wake the loop.
    pub fn waker(&self) -> UnboundedSender<SocketEvent> {
        self.events.clone()
    }

    /// The browser's socket, for sending a `cancel` from outside the loop.
    pub fn web_socket(&self) -> web_sys::WebSocket {
        self.socket.clone()
    }
}

/// Sends a `cancel` of `job`, numbered `seq`, on `socket`; false when it cannot.
pub fn send_cancel(socket: &web_sys::WebSocket, seq: u64, job: u64) -> bool {
    send_envelope(socket, &Envelope::job(job, ClientMessage::Cancel {}).numbered(seq))
}

fn send_envelope(socket: &web_sys::WebSocket, envelope: &Envelope<ClientMessage>) -> bool {
    serde_json::to_string(envelope).is_ok_and(|json| socket.send_with_str(&json).is_ok())
}
