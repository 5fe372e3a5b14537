//! The directory listing page (pure): breadcrumbs, a filter box, icons by kind, archive links, the upload
//! form, and the entries — directories first, sortable by name, size or date through plain
//! links (`?sort=size&order=desc`), human sizes with the exact bytes in a tooltip. Every name is
//! HTML-escaped and percent-encoded in links; `listing.css` (light and dark by
//! `prefers-color-scheme`) and `listing.js` (live filter, upload progress; the page works
//! without it) are inlined.
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | [`View`] (sort, order, filter from the query) and [`render`] |
//! | `format.rs` | human sizes, UTC dates, icons by kind, bidi-safe names |
//! | `listing.css`, `listing.js`, `icons.svg` | the inlined style, script and icons |

mod format;

use std::cmp::Ordering;
use std::fmt::Write as _;

use super::listing::Entry;
use super::path::{encode_component_into, encode_path_into};
use crate::html::escape_into;
use crate::request::Request;

/// The stylesheet, inlined into every page.
const CSS: &str = include_str!("listing.css");
/// The script, inlined into every page.
const JS: &str = include_str!("listing.js");
/// The icons, inlined once into every page and referenced by each row.
const ICONS: &str = include_str!("icons.svg");

/// The column the entries are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sort {
    Name,
    Size,
    Modified,
}

impl Sort {
    fn key(self) -> &'static str {
        match self {
            Sort::Name => "name",
            Sort::Size => "size",
            Sort::Modified => "date",
        }
    }
}

/// How the page is asked to look: `?sort=name|size|date&order=asc|desc&filter=text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    pub sort: Sort,
    pub desc: bool,
    pub filter: String,
}

impl View {
    /// The view a request's query asks for (unknown values fall back to name, ascending).
    pub(crate) fn of(req: &Request<'_>) -> View {
        let sort = match req.query_param("sort").as_deref() {
            Some("size") => Sort::Size,
            Some("date") => Sort::Modified,
            _ => Sort::Name,
        };
        View {
            sort,
            desc: req.query_param("order").as_deref() == Some("desc"),
            filter: req
                .query_param("filter")
                .map(|f| f.trim().to_string())
                .unwrap_or_default(),
        }
    }
}

impl Default for View {
    fn default() -> Self {
        View {
            sort: Sort::Name,
            desc: false,
            filter: String::new(),
        }
    }
}

/// What the page offers besides the entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Offers {
    pub archives: bool,
    pub uploads: bool,
    pub mkdir: bool,
}

/// Renders the listing of the directory at URL path `dir_path` (decoded, with its trailing
/// slash).
pub(crate) fn render(
    dir_path: &str,
    mut entries: Vec<Entry>,
    left_out: usize,
    view: &View,
    offers: Offers,
) -> String {
    let needle = view.filter.to_lowercase();
    entries.retain(|e| needle.is_empty() || e.name.to_lowercase().contains(&needle));
    sort(&mut entries, view);
    let mut title = String::new();
    escape_into(dir_path, &mut title);
    let mut html =
        String::with_capacity(CSS.len() + JS.len() + ICONS.len() + 1024 + entries.len() * 300);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <title>Index of {title}</title>\n<style>{CSS}</style></head>\n<body>\n{ICONS}"
    );
    breadcrumbs(dir_path, &mut html);
    toolbar(view, offers, &mut html);
    head_row(view, &mut html);
    if dir_path != "/" {
        html.push_str(
            "<tr><td class=\"n\"><a href=\"../\"><svg class=\"g\"><use href=\"#i-up\"/></svg>../</a></td>\
             <td class=\"s\"></td><td class=\"m\"></td></tr>\n",
        );
    }
    for e in &entries {
        row(e, &mut html);
    }
    html.push_str("</tbody></table>\n<footer>");
    let dirs = entries.iter().filter(|e| e.is_dir).count();
    let _ = write!(html, "{} directories, {} files", dirs, entries.len() - dirs);
    if left_out > 0 {
        let _ = write!(html, "; {left_out} more entries not shown");
    }
    let _ = write!(html, "</footer>\n<script>{JS}</script>\n</body></html>\n");
    html
}

/// Directories first, then by the chosen column (names break ties), in the chosen order.
fn sort(entries: &mut [Entry], view: &View) {
    entries.sort_by(|a, b| {
        let by_name = || {
            a.name
                .to_lowercase()
                .cmp(&b.name.to_lowercase())
                .then_with(|| a.name.cmp(&b.name))
        };
        let column = match view.sort {
            Sort::Name => by_name(),
            Sort::Size => a.size.cmp(&b.size).then_with(by_name),
            Sort::Modified => a.modified.cmp(&b.modified).then_with(by_name),
        };
        let column = if view.desc { column.reverse() } else { column };
        match b.is_dir.cmp(&a.is_dir) {
            Ordering::Equal => column,
            dirs_first => dirs_first,
        }
    });
}

/// `Index of / a / b /`, each step a link.
fn breadcrumbs(dir_path: &str, html: &mut String) {
    html.push_str("<h1>Index of <a href=\"/\">/</a>");
    let mut href = String::from("/");
    for segment in dir_path.split('/').filter(|s| !s.is_empty()) {
        encode_path_into(segment, &mut href);
        href.push('/');
        html.push_str("<a href=\"");
        escape_into(&href, html);
        html.push_str("\"><bdi>");
        escape_into(&format::visible_name(segment), html);
        html.push_str("</bdi></a><span class=\"sep\">/</span>");
    }
    html.push_str("</h1>\n");
}

/// The filter box, the archive links and the upload forms.
fn toolbar(view: &View, offers: Offers, html: &mut String) {
    html.push_str("<div class=\"bar\"><form method=\"get\" role=\"search\">");
    html.push_str(
        "<input type=\"search\" id=\"q\" name=\"filter\" placeholder=\"Filter\" value=\"",
    );
    escape_into(&view.filter, html);
    let _ = write!(
        html,
        "\" aria-label=\"Filter by name\"><input type=\"hidden\" name=\"sort\" value=\"{}\">\
         <input type=\"hidden\" name=\"order\" value=\"{}\"></form>",
        view.sort.key(),
        if view.desc { "desc" } else { "asc" }
    );
    if offers.archives {
        html.push_str(
            "<span class=\"dl\"><a href=\"?download=tar\" download>⬇ .tar</a> \
             <a href=\"?download=tar.gz\" download>⬇ .tar.gz</a></span>",
        );
    }
    html.push_str("</div>\n");
    if offers.uploads {
        html.push_str(
            "<div class=\"bar\"><form id=\"up\" method=\"post\" enctype=\"multipart/form-data\">\
             <input type=\"file\" name=\"file\" multiple required aria-label=\"Files to upload\">\
             <button type=\"submit\">Upload</button>\
             <progress id=\"bar\" max=\"100\" value=\"0\" hidden></progress>\
             <span id=\"msg\" role=\"status\"></span></form>",
        );
        if offers.mkdir {
            html.push_str(
                "<form method=\"post\" enctype=\"multipart/form-data\">\
                 <input name=\"mkdir\" placeholder=\"New folder\" required aria-label=\"New folder\">\
                 <button type=\"submit\">Create</button></form>",
            );
        }
        html.push_str("</div>\n");
    }
}

/// The table head: each column a link sorting by it (again: the other order).
fn head_row(view: &View, html: &mut String) {
    html.push_str("<table>\n<thead><tr>");
    for (sort, label, class) in [
        (Sort::Name, "Name", "n"),
        (Sort::Size, "Size", "s"),
        (Sort::Modified, "Modified", "m"),
    ] {
        let current = view.sort == sort;
        let desc = current && !view.desc;
        let arrow = match (current, view.desc) {
            (false, _) => "",
            (true, false) => " ▲",
            (true, true) => " ▼",
        };
        let _ = write!(
            html,
            "<th class=\"{class}\"><a href=\"?sort={}&amp;order={}",
            sort.key(),
            if desc { "desc" } else { "asc" }
        );
        if !view.filter.is_empty() {
            html.push_str("&amp;filter=");
            encode_component_into(&view.filter, html);
        }
        let _ = write!(html, "\">{label}{arrow}</a></th>");
    }
    html.push_str("</tr></thead>\n<tbody>\n");
}

/// One entry's row.
fn row(e: &Entry, html: &mut String) {
    let slash = if e.is_dir { "/" } else { "" };
    let shown = format::visible_name(&e.name);
    html.push_str("<tr data-entry><td class=\"n\">");
    if e.linkable {
        let mut href = String::new();
        // A name with ':' before any '/' would read as a URL scheme: anchor it with "./".
        if e.name.contains(':') {
            href.push_str("./");
        }
        encode_path_into(&e.name, &mut href);
        href.push_str(slash);
        html.push_str("<a href=\"");
        escape_into(&href, html);
        html.push_str("\">");
    }
    let _ = write!(
        html,
        "<svg class=\"g\"><use href=\"#i-{}\"/></svg>",
        format::icon(&e.name, e.is_dir)
    );
    if e.linkable {
        html.push_str("<bdi>");
        escape_into(&shown, html);
        html.push_str("</bdi>");
        html.push_str(slash);
        html.push_str("</a>");
    } else {
        html.push_str("<bdi class=\"bad\" title=\"name is not UTF-8: not servable\">");
        escape_into(&shown, html);
        html.push_str("</bdi>");
    }
    html.push_str("</td><td class=\"s\"");
    if e.is_dir {
        html.push_str(">—");
    } else {
        let _ = write!(
            html,
            " title=\"{} bytes\">{}",
            e.size,
            format::human_size(e.size)
        );
    }
    html.push_str("</td><td class=\"m\">");
    if let Some(t) = e.modified {
        let (short, iso) = format::date(t);
        let _ = write!(html, "<time datetime=\"{iso}\">{short}</time>");
    }
    html.push_str("</td></tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn entry(name: &str, is_dir: bool, size: u64, secs: u64) -> Entry {
        Entry {
            name: name.into(),
            linkable: true,
            is_dir,
            size,
            modified: Some(UNIX_EPOCH + Duration::from_secs(secs)),
        }
    }

    fn page(dir: &str, entries: Vec<Entry>, view: &View) -> String {
        render(dir, entries, 0, view, Offers::default())
    }

    #[test]
    fn names_are_escaped_and_links_encoded() {
        let html = page(
            "/a&b/",
            vec![
                entry("<script>x</script>.txt", false, 12, 784_111_777),
                entry("a b\"c'&d", false, 1, 0),
                entry("r\u{202E}txt.exe", false, 1, 0),
            ],
            &View::default(),
        );
        assert!(html.contains("Index of /a&amp;b/"));
        assert!(!html.contains("<script>x"));
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;.txt</bdi>"));
        assert!(html.contains("href=\"%3Cscript%3Ex%3C/script%3E.txt\""));
        assert!(html.contains("href=\"a%20b%22c&#39;&amp;d\""));
        assert!(html.contains("<bdi>a b&quot;c&#39;&amp;d</bdi>"));
        assert!(html.contains("r[U+202E]txt.exe"));
        assert!(!html.contains('\u{202E}'));
        assert!(html.contains("title=\"12 bytes\">12 B</td>"));
        assert!(html.contains("<time datetime=\"1994-11-06T08:49:37Z\">1994-11-06 08:49</time>"));
    }

    #[test]
    fn names_that_are_not_utf8_are_shown_without_a_link() {
        let mut bad = entry("bad\u{FFFD}<b>", false, 1, 0);
        bad.linkable = false;
        let html = page("/", vec![bad], &View::default());
        assert!(html.contains("class=\"bad\""));
        assert!(html.contains("bad\u{FFFD}&lt;b&gt;"));
        assert!(!html.contains("href=\"bad"));
    }

    fn order(html: &str, names: &[&str]) -> Vec<usize> {
        let mut at: Vec<(usize, usize)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (html.find(&format!("<bdi>{n}</bdi>")).unwrap(), i))
            .collect();
        at.sort();
        at.into_iter().map(|(_, i)| i).collect()
    }

    #[test]
    fn directories_first_then_the_chosen_column() {
        let entries = vec![
            entry("b.txt", false, 1, 30),
            entry("zdir", true, 0, 10),
            entry("A.txt", false, 500, 10),
            entry("adir", true, 0, 20),
        ];
        let names = ["adir", "zdir", "A.txt", "b.txt"];
        let by = |sort, desc| {
            let view = View {
                sort,
                desc,
                filter: String::new(),
            };
            order(&page("/", entries.clone(), &view), &names)
        };
        assert_eq!(by(Sort::Name, false), [0, 1, 2, 3]);
        assert_eq!(by(Sort::Name, true), [1, 0, 3, 2]);
        assert_eq!(by(Sort::Size, false), [0, 1, 3, 2]);
        assert_eq!(by(Sort::Size, true), [1, 0, 2, 3]);
        assert_eq!(by(Sort::Modified, false), [1, 0, 2, 3]);
        let html = page("/x/", entries, &View::default());
        assert!(html.contains("href=\"?sort=name&amp;order=desc\">Name ▲</a>"));
        assert!(html.contains("href=\"?sort=size&amp;order=asc\">Size</a>"));
        assert!(html.contains("href=\"../\""));
    }

    #[test]
    fn the_filter_keeps_matching_names_and_stays_in_sort_links() {
        let view = View {
            sort: Sort::Size,
            desc: false,
            filter: "A&".into(),
        };
        let html = page(
            "/",
            vec![entry("xa&y", false, 1, 0), entry("other", false, 1, 0)],
            &view,
        );
        assert!(html.contains("xa&amp;y"));
        assert!(!html.contains("other"));
        assert!(html.contains("value=\"A&amp;\""));
        assert!(html.contains("&amp;filter=A%26\">Size ▲"));
    }

    #[test]
    fn scheme_like_names_are_anchored_and_offers_shown() {
        let offers = Offers {
            archives: true,
            uploads: true,
            mkdir: true,
        };
        let html = render(
            "/x/",
            vec![entry("javascript:alert(1)", false, 1, 0)],
            3,
            &View::default(),
            offers,
        );
        assert!(html.contains("href=\"./javascript:alert(1)\""));
        assert!(html.contains("?download=tar.gz"));
        assert!(html.contains("enctype=\"multipart/form-data\""));
        assert!(html.contains("name=\"mkdir\""));
        assert!(html.contains("3 more entries not shown"));
    }
}
