//! [`Config`]: a WebSocket's limits and timers, each default a named constant.

use std::time::Duration;

use super::deflate::DeflateConfig;

/// Default largest frame payload accepted.
pub const DEFAULT_MAX_FRAME: u64 = 16 << 20;
/// Default largest message accepted (after decompression).
pub const DEFAULT_MAX_MESSAGE: u64 = 64 << 20;
/// Default wait for the peer's answer to our close frame before the connection is cut.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Default longest wait for more of a frame once it has started (a peer that stops
/// mid-frame is cut).
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(30);

/// Default wait between messages, buffers kept, before a socket counts as quiet and gives
/// back its buffers and the deep part of its fiber's stack. Going quiet costs a few system
/// calls and, on the next message, the stack pages and buffers touched again. At 20 ms (the
/// h1 loop's `limits::DEFAULT_PARK_AFTER`) 1,000 echo clients went quiet between nearly every
/// message (`compare --scenario ws-echo-c1000`: 44,329 messages/s, its figure on this box
/// unloaded, is one per client every 23 ms; measured 4.26 CPU s per 100k messages against
/// 2.81 without the quiet wait); a second is past such rhythms.
pub const DEFAULT_QUIET_AFTER: Duration = Duration::from_secs(1);

/// A WebSocket's limits and timers.
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) max_frame: u64,
    pub(crate) max_message: u64,
    pub(crate) ping_interval: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) close_timeout: Duration,
    pub(crate) frame_timeout: Duration,
    pub(crate) quiet_after: Duration,
    pub(crate) deflate: Option<DeflateConfig>,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: the limits above, no pings, no idle timeout, no compression.
    pub fn new() -> Config {
        Config {
            max_frame: DEFAULT_MAX_FRAME,
            max_message: DEFAULT_MAX_MESSAGE,
            ping_interval: None,
            idle_timeout: None,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            frame_timeout: DEFAULT_FRAME_TIMEOUT,
            quiet_after: DEFAULT_QUIET_AFTER,
            deflate: None,
        }
    }

    /// Largest frame payload accepted (default [`DEFAULT_MAX_FRAME`]); more is close code 1009.
    pub fn max_frame(mut self, bytes: u64) -> Config {
        self.max_frame = bytes;
        self
    }

    /// Largest message accepted, after decompression (default [`DEFAULT_MAX_MESSAGE`]); more
    /// is close code 1009.
    pub fn max_message(mut self, bytes: u64) -> Config {
        self.max_message = bytes;
        self
    }

    /// Sends a ping when nothing arrived for this long (default: never).
    pub fn ping_interval(mut self, every: Duration) -> Config {
        self.ping_interval = Some(every);
        self
    }

    /// Closes with 1001 when nothing arrived for this long (default: never).
    pub fn idle_timeout(mut self, after: Duration) -> Config {
        self.idle_timeout = Some(after);
        self
    }

    /// How long to wait for the peer's answer to our close (default [`DEFAULT_CLOSE_TIMEOUT`]).
    pub fn close_timeout(mut self, after: Duration) -> Config {
        self.close_timeout = after;
        self
    }

    /// Longest wait for more of a started frame (default [`DEFAULT_FRAME_TIMEOUT`]); then
    /// the connection closes with 1001.
    pub fn frame_timeout(mut self, after: Duration) -> Config {
        self.frame_timeout = after;
        self
    }

    /// How long a socket waits between messages with its buffers before it gives them back,
    /// with the deep part of its fiber's stack, and waits on holding neither (default
    /// [`DEFAULT_QUIET_AFTER`]; zero: at once, before every wait between messages).
    pub fn quiet_after(mut self, after: Duration) -> Config {
        self.quiet_after = after;
        self
    }

    /// Offers (client) or accepts (server) permessage-deflate with these parameters
    /// (default: off).
    pub fn deflate(mut self, deflate: DeflateConfig) -> Config {
        self.deflate = Some(deflate);
        self
    }
}
