//! [`StaticFiles`]: a [`Handler`] serving a directory tree — confinement, directories, caching
//! headers, conditional and range requests, gzip — in three steps, after tower-http's
//! `ServeDir`: validate the path, resolve it to an `Outcome`, build the
//! response from the outcome.
//!
//! | file | job |
//! |---|---|
//! | `path.rs` | request path → relative path (pure): `..`, backslashes, controls, dot-files |
//! | `open.rs` | `Root`: `openat2` beneath the root, what runs on the fiber and why |
//! | `resolve.rs` | method, path, open, directory/index/listing, `.gz` sibling → `Outcome` |
//! | `respond.rs` | `Outcome` → status, headers, body (preconditions, ranges, gzip) |
//! | `conditional.rs` | If-Match / If-Unmodified-Since / If-None-Match / If-Modified-Since (pure) |
//! | `meta.rs` | ETag, Last-Modified text, Content-Type (pure) |
//! | `cache.rs` | the opt-in open-file cache for small files |
//! | `body.rs` | small bodies read into the response (`preadv2(RWF_NOWAIT)`, else the pool) |
//! | `listing.rs` | directory entries (on the pool) |
//! | `page/` | the listing page (pure): sorting, filter, breadcrumbs, forms, CSS and script |
//! | `upload.rs` | POST multipart / PUT into the tree, through a temporary file and a rename |
//! | `archive.rs` | a directory as a streamed `.tar` / `.tar.gz` (`?download=`) |
//!
//! [`Handler::handle`] below is the one place the three jobs are chosen (upload, archive,
//! read); anything that wraps the file server (authentication, metrics) wraps that handler.

mod archive;
mod body;
mod cache;
mod conditional;
mod listing;
mod meta;
mod open;
mod page;
mod path;
mod resolve;
mod respond;
mod upload;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use body::SMALL_FILE_MAX;
pub use cache::MAX_CACHED_FILES;
pub use listing::MAX_ENTRIES as MAX_LISTING_ENTRIES;
pub use upload::Uploads;

use crate::compress;
use crate::handler::{Handler, HandlerResult};
use crate::method::Method;
use crate::request::Request;
use crate::response::Response;

/// The file served for a directory, when present.
pub const INDEX_FILE: &str = "index.html";

/// Settings shared by the resolve and respond steps.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    prefix: String,
    listing: bool,
    hidden: bool,
    symlinks_out: bool,
    cache_control: Option<String>,
    precompressed: bool,
    gzip: Option<compress::Compression>,
    inline_io: bool,
    cache: Option<Duration>,
    archives: bool,
    uploads: Option<Uploads>,
}

/// Serves the files under a directory; see the [module docs](self) and the crate README.
#[derive(Debug)]
pub struct StaticFiles {
    root: open::Root,
    settings: Settings,
    cache: Option<Arc<cache::FileCache>>,
}

/// Configures a [`StaticFiles`]; every setter documents its default.
#[derive(Debug, Clone)]
pub struct StaticFilesBuilder {
    root: PathBuf,
    settings: Settings,
}

impl StaticFiles {
    /// A builder serving `root`.
    pub fn builder(root: impl AsRef<Path>) -> StaticFilesBuilder {
        StaticFilesBuilder {
            root: root.as_ref().to_path_buf(),
            settings: Settings {
                prefix: String::new(),
                listing: false,
                hidden: false,
                symlinks_out: false,
                cache_control: None,
                precompressed: true,
                gzip: None,
                inline_io: true,
                cache: None,
                archives: false,
                uploads: None,
            },
        }
    }

    /// Serves `root` with every default.
    pub fn new(root: impl AsRef<Path>) -> io::Result<StaticFiles> {
        StaticFiles::builder(root).build()
    }

    /// The canonical path of the served directory.
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

impl StaticFilesBuilder {
    /// Serves only request paths under `prefix` (e.g. `/static`), mapped with the prefix
    /// removed; others get 404. Default: none (the whole path maps under the root).
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.settings.prefix = path::normalise_prefix(prefix);
        self
    }

    /// Lists a directory without `index.html` as an HTML page (otherwise 404). Default: off.
    pub fn listing(mut self, on: bool) -> Self {
        self.settings.listing = on;
        self
    }

    /// Serves (and lists) names starting with a dot. Default: off (403, not listed).
    pub fn hidden_files(mut self, on: bool) -> Self {
        self.settings.hidden = on;
        self
    }

    /// Follows symlinks that lead out of the root. Default: off (403).
    pub fn symlinks_outside_root(mut self, on: bool) -> Self {
        self.settings.symlinks_out = on;
        self
    }

    /// The `Cache-Control` value sent with files (e.g. `public, max-age=3600`). Default: none.
    pub fn cache_control(mut self, value: Option<&str>) -> Self {
        self.settings.cache_control = value.map(str::to_string);
        self
    }

    /// Serves `name.gz` instead of `name` to clients accepting gzip, when that sibling exists.
    /// Default: on.
    pub fn precompressed_gzip(mut self, on: bool) -> Self {
        self.settings.precompressed = on;
        self
    }

    /// Compresses textual files of at least `min_size` bytes on the fly (gzip or deflate as
    /// the client prefers; no ranges then) when no `.gz` sibling exists; `None` turns it off.
    /// Default: off.
    pub fn gzip(mut self, settings: Option<compress::Compression>) -> Self {
        self.settings.gzip = settings;
        self
    }

    /// Lets calls that cannot wait on a device run on the fiber (cached opens, `statx`,
    /// page-cache reads, closes; see `open.rs`); `false` sends every file-system call through
    /// the offload pool. Default: on.
    pub fn inline_io(mut self, on: bool) -> Self {
        self.settings.inline_io = on;
        self
    }

    /// Keeps small files (up to [`SMALL_FILE_MAX`]) open with their metadata for `valid_for`
    /// after each check, so repeated requests skip the open, stat and close (at most
    /// [`MAX_CACHED_FILES`]; requests with a Range header bypass it). A file changed within the
    /// window is served with its old metadata, like nginx's `open_file_cache_valid`. `None`
    /// turns it off. Default: off.
    pub fn open_file_cache(mut self, valid_for: Option<Duration>) -> Self {
        self.settings.cache = valid_for;
        self
    }

    /// Offers each directory as a streamed `.tar` / `.tar.gz` at `?download=tar` /
    /// `?download=tar.gz` (linked from the listing). Default: off.
    pub fn archives(mut self, on: bool) -> Self {
        self.settings.archives = on;
        self
    }

    /// Accepts uploads: `POST` of `multipart/form-data` to a directory's URL (each file part
    /// stored there) and `PUT` of one file to its URL, with the listing showing an upload
    /// form; `None` refuses them (405). Default: off.
    pub fn uploads(mut self, uploads: Option<Uploads>) -> Self {
        self.settings.uploads = uploads;
        self
    }

    /// Opens the root (it must be a directory) and probes the kernel's confinement support.
    pub fn build(self) -> io::Result<StaticFiles> {
        if self
            .settings
            .cache_control
            .as_deref()
            .is_some_and(|v| v.bytes().any(|c| c.is_ascii_control()))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cache-control value with a control character",
            ));
        }
        Ok(StaticFiles {
            root: open::Root::open(&self.root)?,
            cache: self
                .settings
                .cache
                .map(|d| Arc::new(cache::FileCache::new(d))),
            settings: self.settings,
        })
    }
}

impl Handler for StaticFiles {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        let s = &self.settings;
        if let Some(up) = &s.uploads {
            if matches!(req.method(), Method::Post | Method::Put) {
                upload::handle(&self.root, s, up, req, res);
                return Ok(());
            }
        }
        if let Some(format) = archive::Format::requested(req).filter(|_| s.archives) {
            archive::respond(&self.root, s, format, req, res)?;
            return Ok(());
        }
        let outcome = resolve::resolve(&self.root, &self.settings, self.cache.as_deref(), req)?;
        respond::respond(req, res, outcome, &self.settings)?;
        Ok(())
    }
}
