//! The pages' one client for the server's API, shared by the playground and the
//! reproduction page.

pub mod socket;
pub mod wire;
