//! The `Fortune` row, the twelve standard fortunes, and TFB's HTML table.

/// One Fortune row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fortune {
    /// Row id (0 for the one added at request time).
    pub id: i32,
    /// The message, any UTF-8.
    pub message: String,
}

/// The fortune every request adds before sorting.
pub const ADDED_AT_REQUEST: &str = "Additional fortune added at request time.";

/// TFB's twelve fortunes, ids 1..=12.
pub const STANDARD: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. — Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "フレームワークのベンチマーク",
];

/// Adds the request-time fortune, sorts by message and renders the page.
pub fn page(mut rows: Vec<Fortune>) -> Vec<u8> {
    rows.push(Fortune {
        id: 0,
        message: ADDED_AT_REQUEST.into(),
    });
    rows.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let mut out = String::with_capacity(1200 + rows.len() * 64);
    out.push_str(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for f in &rows {
        out.push_str("<tr><td>");
        out.push_str(itoa::Buffer::new().format(f.id));
        out.push_str("</td><td>");
        moria_http::html::escape_into(&f.message, &mut out);
        out.push_str("</td></tr>");
    }
    out.push_str("</table></body></html>");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_sorts() {
        let page = page(vec![
            Fortune {
                id: 2,
                message: "b <&> \"'".into(),
            },
            Fortune {
                id: 1,
                message: "a".into(),
            },
        ]);
        let page = String::from_utf8(page).unwrap();
        let a = page.find("<td>1</td><td>a</td>").unwrap();
        let added = page.find(ADDED_AT_REQUEST).unwrap();
        let b = page
            .find("<td>2</td><td>b &lt;&amp;&gt; &quot;&#39;</td>")
            .unwrap();
        assert!(added < a && a < b, "{page}");
    }
}
