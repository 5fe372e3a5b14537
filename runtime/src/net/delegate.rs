//! Delegation macros: the socket types wrap an inner socket and forward I/O to it.

/// Implements `Read`, `Write` (or both) and `AsRawFd` for a type by forwarding to `self.inner`.
macro_rules! forward_io {
    (read: $t:ty) => {
        impl std::io::Read for $t {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.inner.read(buf)
            }
        }
    };
    (write: $t:ty) => {
        impl std::io::Write for $t {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.inner.write(buf)
            }

            fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
                self.inner.write_vectored(bufs)
            }

            fn flush(&mut self) -> std::io::Result<()> {
                self.inner.flush()
            }
        }
    };
    (fd: $t:ty) => {
        impl std::os::fd::AsRawFd for $t {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.inner.as_raw_fd()
            }
        }

        impl $t {
            /// Whether a read would return at once (data, end of stream or an error) right
            /// now; never waits. An idle connection that reports readable was closed or sent
            /// something unasked, e.g. a pooled database connection whose server went away.
            pub fn readable_now(&self) -> std::io::Result<bool> {
                crate::net::ready::readable_now(std::os::fd::AsRawFd::as_raw_fd(self))
            }
        }
    };
}

pub(crate) use forward_io;
