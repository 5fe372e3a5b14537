//! Writing an application: [`HttpError`] (errors that become the right response) and its
//! renderers, typed extractors on [`crate::Request`] and [`crate::Response::json`], the
//! [`Layer`] middleware model, per-request [`Extensions`], and cookies (plain, signed,
//! encrypted). The layers themselves live in [`crate::layer`]; in-process tests in
//! [`crate::testing`].
//!
//! - `error`: [`HttpError`] and its conversions; `render`: problem details / HTML renderers;
//!   `settle` (private): where an error becomes a response.
//! - `endpoint`: [`IntoEndpoint`], what a route serves (plain handler or `&S` handler).
//! - `extract`: `json`, `form`, `query_as`, `param_as`; `Response::json`.
//! - `layer`: [`Layer`] and [`Next`]; `ext`: [`Extensions`].
//! - `cookie`: [`Cookie`], [`SameSite`], [`SignedCookies`], [`EncryptedCookies`].

pub mod cookie;
pub(crate) mod endpoint;
mod error;
pub mod ext;
mod extract;
pub mod layer;
pub mod render;
pub(crate) mod settle;

pub use cookie::{Cookie, CookieError, EncryptedCookies, SameSite, SignedCookies};
pub use endpoint::{IntoEndpoint, Plain, WithState};
pub use error::HttpError;
pub use ext::Extensions;
pub use extract::DEFAULT_EXTRACT_LIMIT;
pub use layer::{Layer, Next};
pub use render::Renderer;
