//! What each role does with the shared codec: the server answers requests on a connection it
//! owns (`server/`), the client reads responses off connections it opened (`client/`).

pub(crate) mod client;
pub(crate) mod server;
