//! A JSON object read with its keys in document order (serde_json's `Map` sorts them), so a
//! multi-table batch runs its tables in the order the client wrote them.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value as JsonValue;

/// `{"A":…,"B":…}` as `[("A",…),("B",…)]`.
pub(crate) struct Ordered(pub(crate) Vec<(String, JsonValue)>);

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object {\"Table\":[…],…}")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Ordered, M::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(1));
        while let Some(entry) = map.next_entry::<String, JsonValue>()? {
            entries.push(entry);
        }
        Ok(Ordered(entries))
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(OrderedVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_document_order() {
        let o: Ordered = serde_json::from_str(r#"{"b":1,"a":2,"c":[3]}"#).unwrap();
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert!(serde_json::from_str::<Ordered>("[1]").is_err());
    }
}
