//! The Prometheus text exposition format (0.0.4) and OpenMetrics 1.0, written once for every
//! collector: families with `# HELP`/`# TYPE`, escaped labels, cumulative histogram buckets.

use std::fmt::{self, Write as _};

use super::instruments::{HistogramSnapshot, BUCKETS_MICROS};

/// Which exposition format a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text format 0.0.4 (`text/plain; version=0.0.4`).
    Prometheus,
    /// OpenMetrics 1.0 text (`application/openmetrics-text; version=1.0.0`), ends with `# EOF`.
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the scraper's `Accept` header asks for it, else the Prometheus format.
    pub fn negotiate(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    /// The `Content-Type` of a body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The kind of a metric family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A scrape's text being written: collectors add families to it.
#[derive(Debug)]
pub struct Exposition {
    out: String,
    format: Format,
}

/// One metric family being written: every sample of it goes out together, after its header.
#[derive(Debug)]
pub struct Family<'e> {
    out: &'e mut String,
    name: &'static str,
    kind: Kind,
}

impl Exposition {
    /// An empty exposition in `format`, with room for `capacity` bytes.
    pub fn new(format: Format, capacity: usize) -> Exposition {
        Exposition {
            out: String::with_capacity(capacity),
            format,
        }
    }

    /// Starts a counter family; its samples are named `name_total`.
    pub fn counter(&mut self, name: &'static str, help: &str) -> Family<'_> {
        self.family(name, help, Kind::Counter)
    }

    /// Starts a gauge family.
    pub fn gauge(&mut self, name: &'static str, help: &str) -> Family<'_> {
        self.family(name, help, Kind::Gauge)
    }

    /// Starts a histogram family (`name_bucket`, `name_sum`, `name_count`); values in seconds.
    pub fn histogram(&mut self, name: &'static str, help: &str) -> Family<'_> {
        self.family(name, help, Kind::Histogram)
    }

    /// The text, ended as its format requires.
    pub fn finish(mut self) -> String {
        if self.format == Format::OpenMetrics {
            self.out.push_str("# EOF\n");
        }
        self.out
    }

    fn family(&mut self, name: &'static str, help: &str, kind: Kind) -> Family<'_> {
        let (kind_name, suffix) = match kind {
            Kind::Counter => ("counter", "_total"),
            Kind::Gauge => ("gauge", ""),
            Kind::Histogram => ("histogram", ""),
        };
        // Prometheus' format names a counter family after its samples; OpenMetrics after the
        // metric, without `_total`.
        let suffix = if self.format == Format::OpenMetrics {
            ""
        } else {
            suffix
        };
        let out = &mut self.out;
        let _ = write!(out, "# HELP {name}{suffix} ");
        for c in help.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        let _ = writeln!(out, "\n# TYPE {name}{suffix} {kind_name}");
        Family { out, name, kind }
    }
}

impl Family<'_> {
    /// Writes one sample of a counter or gauge with `labels`.
    pub fn value(&mut self, labels: &[(&str, &str)], v: impl fmt::Display) -> &mut Self {
        debug_assert!(
            self.kind != Kind::Histogram,
            "{}: use observed()",
            self.name
        );
        let suffix = if self.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        self.line(suffix, labels, Le::None, v);
        self
    }

    /// Writes one histogram series with `labels`: its buckets, sum and count.
    pub fn observed(&mut self, labels: &[(&str, &str)], h: &HistogramSnapshot) -> &mut Self {
        debug_assert!(self.kind == Kind::Histogram, "{}: use value()", self.name);
        for (i, n) in h.cumulative.iter().enumerate() {
            let le = BUCKETS_MICROS.get(i).map_or(Le::Inf, |&b| Le::Bound(b));
            self.line("_bucket", labels, le, n);
        }
        self.line("_sum", labels, Le::None, Seconds(h.sum_micros));
        self.line("_count", labels, Le::None, h.count);
        self
    }

    fn line(&mut self, suffix: &str, labels: &[(&str, &str)], le: Le, v: impl fmt::Display) {
        let out = &mut *self.out;
        out.push_str(self.name);
        out.push_str(suffix);
        if !labels.is_empty() || le != Le::None {
            out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push_str("=\"");
                escape_label(out, v);
                out.push('"');
            }
            if !labels.is_empty() && le != Le::None {
                out.push(',');
            }
            match le {
                Le::None => {}
                Le::Bound(b) => {
                    let _ = write!(out, "le=\"{}\"", Seconds(b));
                }
                Le::Inf => out.push_str("le=\"+Inf\""),
            }
            out.push('}');
        }
        let _ = writeln!(out, " {v}");
    }
}

/// A histogram sample's `le` label: none, a bucket bound in microseconds, or `+Inf`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Le {
    None,
    Bound(u64),
    Inf,
}

/// Microseconds written as seconds (`250` → `0.00025`).
struct Seconds(u64);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, us) = (self.0 / 1_000_000, self.0 % 1_000_000);
        if us == 0 {
            return write!(f, "{s}");
        }
        let (mut frac, mut width) = (us, 6);
        while frac % 10 == 0 {
            frac /= 10;
            width -= 1;
        }
        write!(f, "{s}.{frac:0width$}")
    }
}

/// Appends a label value with `\`, `"` and newlines escaped.
fn escape_label(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Histogram;
    use std::time::Duration;

    #[test]
    fn counter_names_follow_the_format() {
        let mut e = Exposition::new(Format::Prometheus, 0);
        e.counter("x_requests", "Requests.").value(&[("a", "1")], 3);
        assert_eq!(
            e.finish(),
            "# HELP x_requests_total Requests.\n# TYPE x_requests_total counter\n\
             x_requests_total{a=\"1\"} 3\n"
        );
        let mut e = Exposition::new(Format::OpenMetrics, 0);
        e.counter("x_requests", "Requests.").value(&[], 3);
        assert_eq!(
            e.finish(),
            "# HELP x_requests Requests.\n# TYPE x_requests counter\nx_requests_total 3\n# EOF\n"
        );
    }

    #[test]
    fn labels_are_escaped() {
        let mut e = Exposition::new(Format::Prometheus, 0);
        e.gauge("g", "G.").value(&[("p", "a\"b\\c\nd")], -1);
        assert!(e.finish().contains("g{p=\"a\\\"b\\\\c\\nd\"} -1\n"));
    }

    #[test]
    fn histogram_buckets_are_seconds() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(300));
        let mut e = Exposition::new(Format::Prometheus, 0);
        e.histogram("d_seconds", "D.")
            .observed(&[("r", "/")], &h.snapshot());
        let text = e.finish();
        assert!(text.contains("d_seconds_bucket{r=\"/\",le=\"0.00025\"} 0\n"));
        assert!(text.contains("d_seconds_bucket{r=\"/\",le=\"0.0005\"} 1\n"));
        assert!(text.contains("d_seconds_bucket{r=\"/\",le=\"10\"} 1\n"));
        assert!(text.contains("d_seconds_bucket{r=\"/\",le=\"+Inf\"} 1\n"));
        assert!(text.contains("d_seconds_sum{r=\"/\"} 0.0003\n"));
        assert!(text.contains("d_seconds_count{r=\"/\"} 1\n"));
    }
}
