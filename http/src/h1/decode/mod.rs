//! Decoding for both roles: `scan.rs` finds where a head ends (request or response alike),
//! `fields.rs` is the field-line grammar, `framing.rs` the body framing rules both roles share,
//! `request.rs` and `response.rs` the start lines and the rules only one side has, `body.rs`
//! the body as its framing delimits it. The head decoders report a [`Failure`] (`failure.rs`),
//! the body decoder a [`BodyFault`]; the roles decide what each one means to them.

mod body;
mod failure;
mod fields;
mod framing;
mod request;
mod response;
mod scan;

pub use failure::Failure;
pub use framing::Framing;
pub use response::Violation;

pub(crate) use body::{BodyDecoder, BodyFault};
pub(crate) use framing::BodyFraming;
pub(crate) use request::{take_head, Head};
pub(crate) use response::{parse_response, ResponseHead};
pub(crate) use scan::{HeadBounds, HeadScan};
