//! The entries pi appends for a summary, with pi's key order (`JSON.stringify` of the
//! object pi builds; `undefined` values are left out).

use serde_json::{Map, Value};

use crate::session::js;

fn id_or_null(id: Option<&str>) -> Value {
    id.map_or(Value::Null, Value::from)
}

/// `branchWithSummary(newLeaf, summary, details, fromHook, usage)`: `{type:
/// "branch_summary", id, parentId, timestamp, fromId, summary, details, usage?,
/// fromHook}`.
pub fn branch_summary(
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    from_id: &str,
    summary: &str,
    details: Value,
    usage: Option<&Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "branch_summary".into());
    m.insert("id".into(), id.into());
    m.insert("parentId".into(), id_or_null(parent));
    m.insert("timestamp".into(), timestamp.into());
    m.insert("fromId".into(), from_id.into());
    m.insert("summary".into(), summary.into());
    m.insert("details".into(), details);
    if let Some(u) = usage {
        m.insert("usage".into(), u.clone());
    }
    m.insert("fromHook".into(), false.into());
    Value::Object(m)
}

/// `appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage)`:
/// `{type: "compaction", id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore,
/// details, usage?, fromHook, systemMessage?}`, where `systemMessage` is the replay of the
/// path's system messages with the entry's own time as its timestamp.
#[allow(clippy::too_many_arguments)]
pub fn compaction(
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    summary: &str,
    first_kept_entry_id: Value,
    tokens_before: f64,
    details: Value,
    usage: Option<&Value>,
    system_message: Option<Value>,
) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "compaction".into());
    m.insert("id".into(), id.into());
    m.insert("parentId".into(), id_or_null(parent));
    m.insert("timestamp".into(), timestamp.into());
    m.insert("summary".into(), summary.into());
    m.insert("firstKeptEntryId".into(), first_kept_entry_id);
    m.insert("tokensBefore".into(), js::number(tokens_before));
    m.insert("details".into(), details);
    if let Some(u) = usage {
        m.insert("usage".into(), u.clone());
    }
    m.insert("fromHook".into(), false.into());
    if let Some(Value::Object(mut sys)) = system_message {
        // `{...systemMessage, timestamp: new Date(timestamp).getTime()}`: same place.
        sys.insert("timestamp".into(), js::date_ms(Some(&Value::from(timestamp))).map_or(Value::Null, js::number));
        m.insert("systemMessage".into(), Value::Object(sys));
    }
    Value::Object(m)
}

/// The line for an entry: `JSON.stringify(entry)`.
pub fn line(entry: &Value) -> String {
    crate::session::js::stringify(entry)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_are_written_in_pis_key_order() {
        let e = branch_summary(
            "abcd1234",
            None,
            "2026-01-01T00:00:00.000Z",
            "ffff0000",
            "S",
            json!({"readFiles": [], "modifiedFiles": []}),
            None,
        );
        assert_eq!(
            line(&e),
            r#"{"type":"branch_summary","id":"abcd1234","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","fromId":"ffff0000","summary":"S","details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"#
        );
        let sys = json!({"role": "system", "content": "", "sections": {"a": "A"}, "timestamp": 5});
        let e = compaction(
            "c",
            Some("p"),
            "2026-01-01T00:00:01.000Z",
            "S",
            json!("k"),
            10.0,
            json!({}),
            Some(&json!({"input": 1})),
            Some(sys),
        );
        assert_eq!(
            line(&e),
            r#"{"type":"compaction","id":"c","parentId":"p","timestamp":"2026-01-01T00:00:01.000Z","summary":"S","firstKeptEntryId":"k","tokensBefore":10,"details":{},"usage":{"input":1},"fromHook":false,"systemMessage":{"role":"system","content":"","sections":{"a":"A"},"timestamp":1767225601000}}"#
        );
    }
}
