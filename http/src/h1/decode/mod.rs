//! Decoding for both roles: `scan.rs` finds where a head ends (request or response alike),
//! `fields.rs` is the field-line grammar, `framing.rs` the body framing rules both roles share,
//! `request.rs` and `response.rs` the start lines and the rules only one side has. Every
//! decoder reports a [`Failure`] (`failure.rs`); the roles decide what each one means to them.

mod failure;
mod fields;
mod framing;
mod request;
mod response;
mod scan;

pub use failure::Failure;
pub use framing::Framing;
pub use response::Violation;

pub(crate) use framing::BodyFraming;
pub(crate) use request::{parse_head, Head};
pub(crate) use response::{parse_response, ResponseHead};
pub(crate) use scan::{HeadBounds, HeadScan};
