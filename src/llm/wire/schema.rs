//! Strict JSON-schema tool parameters, as pi-ai's `api/constrained-sampling.js` builds them
//! for tools declared with `constrainedSampling: {type: "json_schema", strict}`.

use serde_json::{json, Map, Value};

/// Keywords no provider's strict mode accepts (`UNSUPPORTED_STRICT_SCHEMA_KEYS`).
const UNSUPPORTED_STRICT_SCHEMA_KEYS: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// A provider's extra test for keywords its strict mode rejects.
pub(super) type UnsupportedKeyword = fn(&str, &Value) -> bool;

/// `isAnthropicStrictUnsupportedKeyword` (`api/anthropic-messages.js`): keywords Anthropic's
/// strict tool use rejects with a 400 for the whole request.
pub(super) fn anthropic_unsupported_keyword(key: &str, value: &Value) -> bool {
    const KEYWORDS: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    ];
    const FORMATS: &[&str] =
        &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];
    if KEYWORDS.contains(&key) {
        return true;
    }
    match key {
        "minItems" => !(value.as_f64() == Some(0.0) || value.as_f64() == Some(1.0)),
        "format" => !value.as_str().is_some_and(|f| FORMATS.contains(&f)),
        _ => false,
    }
}

/// `resolveJsonSchemaStrictSampling(tool, supportsStrictMode, isUnsupportedKeyword)`:
/// whether the tool is sent in strict mode.
///
/// pi throws for a tool whose `strict` is `"require"` when strict mode is impossible (the
/// request is never sent); we cannot fail here, so such a tool is sent non-strict.
pub(super) fn resolve_strict(tool: &Value, supports_strict: bool, unsupported: Option<UnsupportedKeyword>) -> bool {
    let Some(config) = tool.get("constrainedSampling") else {
        return false;
    };
    if config.get("type").and_then(Value::as_str) != Some("json_schema") {
        return false;
    }
    supports_strict && make_strict(tool.get("parameters").unwrap_or(&Value::Null), unsupported).is_some()
}

/// `getJsonSchemaToolParameters(tool, strict)`.
pub(super) fn tool_parameters(tool: &Value, strict: bool) -> Value {
    let parameters = tool.get("parameters").cloned().unwrap_or(Value::Null);
    if strict {
        make_strict(&parameters, None).unwrap_or(parameters)
    } else {
        parameters
    }
}

/// `makeStrictJsonSchema(schema, isUnsupportedKeyword)`: every property required (optional
/// ones become nullable), `additionalProperties: false` on every object; `None` when the
/// schema cannot be made strict.
pub(super) fn make_strict(schema: &Value, unsupported: Option<UnsupportedKeyword>) -> Option<Value> {
    let mut cloned = schema.clone();
    make_node_strict(&mut cloned, unsupported)?;
    (cloned.get("type").and_then(Value::as_str) == Some("object")).then_some(cloned)
}

/// `isStructuredSchema`: an object or array schema, which strict unions cannot hold.
fn is_structured(schema: &Value) -> bool {
    let Value::Object(s) = schema else {
        return false;
    };
    let has_type = |t: &str| match s.get("type") {
        Some(Value::String(x)) => x == t,
        Some(Value::Array(xs)) => xs.iter().any(|x| x == t),
        _ => false,
    };
    has_type("object") || has_type("array") || s.contains_key("properties") || s.contains_key("items")
}

/// `schemaAllowsNull`.
fn allows_null(schema: &Value) -> bool {
    let Value::Object(s) = schema else {
        return false;
    };
    match s.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if s.get("const") == Some(&Value::Null)
        || s.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
    {
        return true;
    }
    s.get("anyOf").and_then(Value::as_array).is_some_and(|vs| vs.iter().any(allows_null))
}

/// `makeJsonSchemaNodeStrict`, in place; `None` stands for pi's
/// `UnsupportedStrictJsonSchemaError`.
fn make_node_strict(schema: &mut Value, unsupported: Option<UnsupportedKeyword>) -> Option<()> {
    let Value::Object(s) = schema else {
        return None;
    };
    if UNSUPPORTED_STRICT_SCHEMA_KEYS.iter().any(|k| s.contains_key(*k)) {
        return None;
    }
    if let Some(f) = unsupported {
        if s.iter().any(|(k, v)| f(k, v)) {
            return None;
        }
    }
    if !s.contains_key("type") && !s.contains_key("anyOf") && !s.contains_key("enum") {
        return None;
    }
    if let Some(any_of) = s.get_mut("anyOf") {
        let variants = any_of.as_array_mut().filter(|v| !v.is_empty())?;
        for variant in variants {
            if is_structured(variant) {
                return None;
            }
            make_node_strict(variant, unsupported)?;
        }
    }
    if let Some(items) = s.get_mut("items") {
        if items.is_array() {
            return None;
        }
        make_node_strict(items, unsupported)?;
    }
    let is_object = s.get("type").and_then(Value::as_str) == Some("object");
    if s.contains_key("properties") && !is_object {
        return None;
    }
    if !is_object {
        return Some(());
    }
    if s.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false)) {
        return None;
    }
    if s.get("properties").is_some_and(|p| !p.is_object()) {
        return None;
    }
    let required: Vec<String> = match s.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r.iter().map(|k| k.as_str().map(str::to_string)).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    let mut properties = match s.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    if required.iter().any(|k| !properties.contains_key(k)) {
        return None;
    }
    for (key, property) in properties.iter_mut() {
        make_node_strict(property, unsupported)?;
        if !required.contains(key) && !allows_null(property) {
            *property = json!({"anyOf": [property.take(), {"type": "null"}]});
        }
    }
    let names: Vec<Value> = properties.keys().map(|k| Value::String(k.clone())).collect();
    // pi edits `schema.properties` in place, so an absent map stays absent.
    if s.contains_key("properties") {
        s.insert("properties".into(), Value::Object(properties));
    }
    s.insert("required".into(), Value::Array(names));
    s.insert("additionalProperties".into(), Value::Bool(false));
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_nullable_and_required() {
        let schema = json!({"type":"object","required":["path"],"properties":{"path":{"type":"string"},"limit":{"type":"number"}}});
        let strict = make_strict(&schema, None).unwrap();
        assert_eq!(
            strict,
            json!({"type":"object","required":["path","limit"],"properties":{"path":{"type":"string"},"limit":{"anyOf":[{"type":"number"},{"type":"null"}]}},"additionalProperties":false})
        );
    }

    #[test]
    fn anthropic_rejects_numeric_bounds() {
        let schema = json!({"type":"object","properties":{"n":{"type":"number","minimum":1}}});
        assert!(make_strict(&schema, None).is_some());
        assert!(make_strict(&schema, Some(anthropic_unsupported_keyword)).is_none());
    }
}
