//! Request → [`Outcome`]: the method, the path, what is there, and which representation to
//! send. Every file-system call goes through [`Root`].

use std::borrow::Cow;
use std::io;
use std::sync::Arc;

use super::cache::FileCache;
use super::open::{EntryKind, Handle, OpenError, Opened, Root};
use super::path::{self, Rejection};
use super::{meta, page, Settings, INDEX_FILE, SMALL_FILE_MAX};
use crate::compress::{self, Coding};
use crate::method::Method;
use crate::request::Request;

/// What a request resolves to.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Neither GET nor HEAD: 405 with `Allow: GET, HEAD`.
    MethodNotAllowed,
    /// A path no conforming client sends: 400.
    BadRequest,
    /// Nothing to serve: 404.
    NotFound,
    /// Refused by policy or permissions: 403.
    Forbidden,
    /// A directory asked for without its trailing slash: 301 to this location.
    Redirect(String),
    /// A directory listing page (HTML).
    Listing(String),
    /// A file to send.
    File(Served),
}

/// How a file's bytes are encoded on the way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As stored.
    Identity,
    /// The stored `.gz` sibling, sent with `Content-Encoding: gzip`.
    Precompressed,
    /// Compressed on the fly in the negotiated coding.
    Compress,
}

/// A file chosen for the response.
#[derive(Debug)]
pub(crate) struct Served {
    pub opened: Opened,
    pub content_type: Cow<'static, str>,
    pub encoding: Encoding,
    /// Whether the answer depends on `Accept-Encoding` (another client could get another
    /// encoding).
    pub vary: bool,
}

/// What one resolution works with.
struct Ctx<'a> {
    root: &'a Root,
    s: &'a Settings,
    /// The open-file cache, unless off or the request has a Range header (range bodies need a
    /// descriptor of their own).
    cache: Option<&'a FileCache>,
}

/// Resolves `req` against the root.
pub(crate) fn resolve(
    root: &Root,
    s: &Settings,
    cache: Option<&FileCache>,
    req: &Request<'_>,
) -> io::Result<Outcome> {
    if !matches!(req.method(), Method::Get | Method::Head) {
        return Ok(Outcome::MethodNotAllowed);
    }
    let rel = match path::validate(req.path(), &s.prefix, s.hidden) {
        Ok(r) => r,
        Err(Rejection::Malformed) => return Ok(Outcome::BadRequest),
        Err(Rejection::Hidden) => return Ok(Outcome::Forbidden),
        Err(Rejection::OutsidePrefix) => return Ok(Outcome::NotFound),
    };
    let cx = Ctx {
        root,
        s,
        cache: cache.filter(|_| req.header("range").is_none()),
    };
    let opened = match cx.open(&rel.rel)? {
        Ok(o) => o,
        Err(other) => return Ok(other),
    };
    match opened.stat.kind {
        EntryKind::File if rel.trailing_slash => Ok(Outcome::NotFound),
        EntryKind::File => cx.file(req, opened, &rel.rel),
        EntryKind::Other => Ok(Outcome::Forbidden),
        EntryKind::Directory if !rel.trailing_slash => Ok(Outcome::Redirect(
            path::directory_location(&s.prefix, &rel.rel, req.query()),
        )),
        EntryKind::Directory => {
            drop(opened);
            cx.directory(req, &rel.rel)
        }
    }
}

impl Ctx<'_> {
    /// Opens `rel` (from the cache when allowed), mapping "nothing to serve" to its outcome.
    fn open(&self, rel: &str) -> io::Result<Result<Opened, Outcome>> {
        if let Some((file, stat)) = self.cache.and_then(|c| c.get(rel)) {
            return Ok(Ok(Opened {
                handle: Handle::Shared(file),
                stat,
            }));
        }
        let s = self.s;
        match self.root.open_rel(rel, s.symlinks_out, s.inline_io) {
            Ok(o) => Ok(Ok(self.keep(rel, o))),
            Err(OpenError::NotFound) => Ok(Err(Outcome::NotFound)),
            Err(OpenError::Forbidden) => Ok(Err(Outcome::Forbidden)),
            Err(OpenError::Io(e)) => Err(e),
        }
    }

    /// Puts a small fast-path file into the cache (when on) and returns it as shared.
    fn keep(&self, rel: &str, o: Opened) -> Opened {
        let Some(cache) = self.cache else {
            return o;
        };
        match o.handle {
            Handle::Inline(f)
                if o.stat.kind == EntryKind::File && o.stat.size <= SMALL_FILE_MAX =>
            {
                let file = Arc::new(f);
                cache.put(rel, Arc::clone(&file), o.stat);
                Opened {
                    handle: Handle::Shared(file),
                    stat: o.stat,
                }
            }
            handle => Opened {
                handle,
                stat: o.stat,
            },
        }
    }

    /// A directory with its trailing slash: its index file, its listing, or 404.
    fn directory(&self, req: &Request<'_>, rel: &str) -> io::Result<Outcome> {
        let s = self.s;
        let index = if rel.is_empty() {
            INDEX_FILE.to_string()
        } else {
            format!("{rel}/{INDEX_FILE}")
        };
        match self.open(&index)? {
            Ok(o) if o.stat.kind == EntryKind::File => return self.file(req, o, &index),
            Ok(_) | Err(Outcome::NotFound) => {}
            Err(other) => return Ok(other),
        }
        if !s.listing {
            return Ok(Outcome::NotFound);
        }
        let (entries, left_out) = match self.root.list(rel, s.symlinks_out, s.hidden) {
            Ok(l) => l,
            Err(OpenError::NotFound) => return Ok(Outcome::NotFound),
            Err(OpenError::Forbidden) => return Ok(Outcome::Forbidden),
            Err(OpenError::Io(e)) => return Err(e),
        };
        let mut dir_path = s.prefix.clone();
        dir_path.push('/');
        if !rel.is_empty() {
            dir_path.push_str(rel);
            dir_path.push('/');
        }
        let offers = page::Offers {
            archives: s.archives,
            uploads: s.uploads.is_some(),
            mkdir: s.uploads.is_some_and(|u| u.mkdir),
        };
        let view = page::View::of(req);
        Ok(Outcome::Listing(page::render(
            &dir_path, entries, left_out, &view, offers,
        )))
    }

    /// A regular file: picks the representation (stored, `.gz` sibling, compressed on the fly).
    fn file(&self, req: &Request<'_>, opened: Opened, rel: &str) -> io::Result<Outcome> {
        let s = self.s;
        let content_type = meta::content_type(rel);
        let coding = if s.precompressed || s.gzip.is_some() {
            compress::negotiate(req.header("accept-encoding"))
        } else {
            Coding::Identity
        };
        if s.precompressed && coding == Coding::Gzip {
            if let Ok(Ok(gz)) = self.open(&format!("{rel}.gz")) {
                if gz.stat.kind == EntryKind::File {
                    return Ok(Outcome::File(Served {
                        opened: gz,
                        content_type,
                        encoding: Encoding::Precompressed,
                        vary: true,
                    }));
                }
            }
        }
        let on_the_fly = s.gzip.as_ref().is_some_and(|g| {
            opened.stat.size >= g.min_size as u64
                && compress::is_compressible(content_type.as_bytes())
        });
        let encoding = if on_the_fly && coding != Coding::Identity {
            Encoding::Compress
        } else {
            Encoding::Identity
        };
        Ok(Outcome::File(Served {
            opened,
            content_type,
            encoding,
            vary: on_the_fly,
        }))
    }
}
