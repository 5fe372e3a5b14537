//! WebSocket (RFC 6455) with permessage-deflate (RFC 7692), server and client, as blocking
//! code on fibers: a handler is `loop { let msg = ws.read()?; ws.send(...)?; }`.
//!
//! | file | what |
//! |---|---|
//! | `frame.rs` | the frame header: parse, encode, the rules a header can break |
//! | `mask.rs` | masking and unmasking, resumable at any offset |
//! | `utf8.rs` | incremental UTF-8 validation of text as it arrives |
//! | `inbound.rs` | frames → messages: fragmentation, control frames between fragments, limits |
//! | `inbound/streaming.rs` | a data message handed out as it arrives, not assembled |
//! | `outbound.rs` | messages → frames: compression, masking with a CSPRNG key |
//! | `prepared.rs` | [`Prepared`]: a message framed once for many sockets (broadcast) |
//! | `deflate.rs` | permessage-deflate: parameters, negotiation, compressor and decompressor |
//! | `parked.rs` | sockets that wait between messages without a fiber (`accept_parked`) |
//! | `timers.rs` | ping interval, idle timeout, the close wait, the server's shutdown |
//! | `socket.rs` | [`WebSocket`], [`WsReader`], [`WsWriter`]: read, send, close, split |
//! | `socket/streaming.rs` | [`WebSocket::read_stream`] and its [`MessageReader`] |
//! | `stream.rs` | the connection under it: TCP or TLS, whole or split |
//! | `handshake.rs` | accept key, client key, tokens, subprotocol choice |
//! | `message.rs` | [`Message`], [`CloseFrame`], close codes |
//! | `config.rs` | [`Config`]: limits and timers |
//! | `error.rs` | [`Error`] and the close code of each protocol failure |
//!
//! The client side is [`Client::websocket`](crate::client::Client::websocket)
//! (`client/websocket.rs`). The server side's handshake ([`Acceptor`]) lives with the dispatch layer, which alone knows
//! `Request` and `Response` (`dispatch/ws.rs`); the hand-off after the 101 is `upgrade.rs`.

mod config;
mod deflate;
mod error;
mod frame;
mod handshake;
mod inbound;
mod mask;
mod message;
mod outbound;
mod parked;
mod prepared;
mod socket;
mod stream;
mod timers;
mod utf8;

pub use crate::dispatch::ws::Acceptor;
pub use config::{
    Config, DEFAULT_CLOSE_TIMEOUT, DEFAULT_FRAME_TIMEOUT, DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE,
    DEFAULT_QUIET_AFTER,
};
pub use deflate::DeflateConfig;
pub use error::{Error, Result};
pub use message::{CloseFrame, Message, CLOSE_GOING_AWAY, CLOSE_NORMAL};
pub use prepared::Prepared;
pub use socket::{MessageReader, WebSocket, WsReader, WsWriter};

pub(crate) use deflate::{accept_offer, check_response, Deflater, Inflater};
pub(crate) use handshake::{
    accept_key, choose_protocol, client_key, has_token, is_valid_key, VERSION,
};
pub(crate) use inbound::Inbound;
pub(crate) use outbound::Outbound;
pub(crate) use parked::serve_parked;
pub(crate) use socket::ReadSide;
pub(crate) use stream::{Stream, Timed};
pub(crate) use timers::ServerLink;
