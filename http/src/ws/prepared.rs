//! [`Prepared`]: messages framed once, to send to many sockets (a chat room's broadcast)
//! without framing or copying them again for each.

use std::sync::Arc;

use super::frame::{encode_head, FrameHead, OpCode};

/// A text or binary message, or a batch of them, framed once as a server sends it (unmasked,
/// uncompressed); clones share the bytes. Sent with
/// [`WsWriter::send_prepared`](super::WsWriter::send_prepared) or
/// [`WebSocket::send_prepared`](super::WebSocket::send_prepared): one write of the shared
/// frames per socket, except where the socket must mask (client) or compress
/// (permessage-deflate agreed), which frames each payload as `send` would.
#[derive(Clone, Debug)]
pub struct Prepared {
    frames: Arc<[u8]>,
    parts: Arc<[Part]>,
}

/// One message of a [`Prepared`]: its opcode, where its frame's payload lies in the bytes,
/// and where the frame ends.
#[derive(Clone, Copy, Debug)]
struct Part {
    opcode: OpCode,
    payload_at: usize,
    end: usize,
}

impl Prepared {
    /// A text message.
    pub fn text(text: &str) -> Prepared {
        Prepared::new(OpCode::Text, text.as_bytes())
    }

    /// A binary message.
    pub fn binary(data: &[u8]) -> Prepared {
        Prepared::new(OpCode::Binary, data)
    }

    /// The messages of `batch`, in order, as one: a socket gets them with one write.
    pub fn batch(batch: &[Prepared]) -> Prepared {
        let mut frames = Vec::with_capacity(batch.iter().map(|p| p.frames.len()).sum());
        let mut parts = Vec::new();
        for p in batch {
            let base = frames.len();
            frames.extend_from_slice(&p.frames);
            parts.extend(p.parts.iter().map(|part| Part {
                opcode: part.opcode,
                payload_at: base + part.payload_at,
                end: base + part.end,
            }));
        }
        Prepared {
            frames: frames.into(),
            parts: parts.into(),
        }
    }

    fn new(opcode: OpCode, payload: &[u8]) -> Prepared {
        let head = FrameHead {
            fin: true,
            rsv1: false,
            opcode,
            mask: None,
            len: payload.len() as u64,
        };
        let mut frame = Vec::with_capacity(payload.len() + 10);
        encode_head(&mut frame, &head);
        let payload_at = frame.len();
        frame.extend_from_slice(payload);
        let end = frame.len();
        Prepared {
            frames: frame.into(),
            parts: [Part {
                opcode,
                payload_at,
                end,
            }]
            .into(),
        }
    }

    /// Every frame, headers and payloads.
    pub(crate) fn frames(&self) -> &[u8] {
        &self.frames
    }

    /// Each message's opcode and payload.
    pub(crate) fn messages(&self) -> impl Iterator<Item = (OpCode, &[u8])> {
        self.parts
            .iter()
            .map(|p| (p.opcode, &self.frames[p.payload_at..p.end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::frame::parse_head;

    #[test]
    fn prepared_frames_parse_back_to_their_messages_batched_or_not() {
        let lens = [0usize, 125, 126, 65_535, 65_536];
        let singles: Vec<Prepared> = lens
            .iter()
            .map(|&len| Prepared::binary(&vec![b'x'; len]))
            .collect();
        let batch = Prepared::batch(&singles);
        let mut bytes = batch.frames();
        for (&len, (opcode, payload)) in lens.iter().zip(batch.messages()) {
            let (head, at) = parse_head(bytes, false).unwrap().unwrap();
            assert_eq!(
                (head.opcode, head.fin, head.mask),
                (OpCode::Binary, true, None)
            );
            assert_eq!((head.len, opcode), (len as u64, OpCode::Binary));
            assert_eq!(&bytes[at..at + len], payload);
            bytes = &bytes[at + len..];
        }
        assert!(bytes.is_empty());
        assert_eq!(batch.messages().count(), lens.len());
        let text = Prepared::text("hé");
        assert_eq!(
            text.messages().next(),
            Some((OpCode::Text, "hé".as_bytes()))
        );
    }
}
