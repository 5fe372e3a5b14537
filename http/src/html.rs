//! HTML text escaping: directory listings and applications' pages (TFB's fortunes) share it.

/// Appends `text` with `&`, `<`, `>`, `"` and `'` escaped, safe inside elements and quoted
/// attribute values.
pub fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_the_five_characters_and_keeps_the_rest() {
        let mut out = String::new();
        super::escape_into("<a href=\"x\">'&'</a> — é", &mut out);
        assert_eq!(
            out,
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; — é"
        );
    }
}
