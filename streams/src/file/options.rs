//! [`OpenOptions`]: how to open a [`File`], opened on the offload pool.

use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::File;

/// Options for opening a [`File`], as `std::fs::OpenOptions` (all off by default).
#[derive(Debug, Clone)]
pub struct OpenOptions {
    std: fs::OpenOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenOptions {
    /// No access and no creation; set what is needed.
    pub fn new() -> Self {
        OpenOptions {
            std: fs::OpenOptions::new(),
        }
    }

    /// Opens for reading.
    pub fn read(&mut self, on: bool) -> &mut Self {
        self.std.read(on);
        self
    }

    /// Opens for writing.
    pub fn write(&mut self, on: bool) -> &mut Self {
        self.std.write(on);
        self
    }

    /// Writes go to the end of the file.
    pub fn append(&mut self, on: bool) -> &mut Self {
        self.std.append(on);
        self
    }

    /// Truncates an existing file to 0 bytes.
    pub fn truncate(&mut self, on: bool) -> &mut Self {
        self.std.truncate(on);
        self
    }

    /// Creates the file if missing.
    pub fn create(&mut self, on: bool) -> &mut Self {
        self.std.create(on);
        self
    }

    /// Creates the file, failing if it exists.
    pub fn create_new(&mut self, on: bool) -> &mut Self {
        self.std.create_new(on);
        self
    }

    /// Permission bits of a created file (default 0o666, less the umask).
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.std.mode(mode);
        self
    }

    /// Opens `path` on the offload pool.
    pub fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let options = self.std.clone();
        let path = path.as_ref().to_path_buf();
        let std = moria_runtime::blocking_io(move || options.open(path))?;
        Ok(File::from_std(std))
    }
}
