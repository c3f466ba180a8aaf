//! The pages' one client for the server's API, shared by the playground and the
//! reproduction page: HTTP ([`http`]), the share store ([`share`]), the WebSocket
//! ([`socket`]) and the server's messages as the pages read them ([`wire`]). Each page's
//! own jobs (`playground::jobs`, `repro::jobs`) go through these.

pub mod http;
pub mod share;
pub mod socket;
pub mod wire;
