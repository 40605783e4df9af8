//! The subset of pi-schema's `parse()` (coerce, then validate) the built-in tools' schemas
//! need: objects with `required`/`properties`, arrays with `items`, string, number, boolean.
//!
//! Coercion (pi-schema coerce.js): optional properties set to `null` are dropped, numeric
//! strings become numbers, `"true"`/`"false"` become booleans, and a single value where an
//! array is expected is wrapped into one. Errors are pi-schema's (explain.js): a path as
//! dotted segments (`edits.0.oldText`, `root` for the top) and `missing` or
//! `expected <type>, got <typeName>`.

use serde_json::{Map, Value};

pub type Errors = Vec<(String, String)>;

pub fn parse(schema: &Value, value: &Value) -> Result<Value, Errors> {
    let coerced = coerce(schema, value.clone());
    let mut errors = Vec::new();
    check(schema, &coerced, "", &mut errors);
    if errors.is_empty() {
        Ok(coerced)
    } else {
        Err(errors)
    }
}

fn coerce(schema: &Value, value: Value) -> Value {
    match (schema["type"].as_str(), value) {
        (Some("object"), Value::Object(map)) => {
            let required: Vec<&str> =
                schema["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let props = schema["properties"].as_object();
            let mut out = Map::new();
            for (k, v) in map {
                match props.and_then(|p| p.get(&k)) {
                    Some(_) if v.is_null() && !required.contains(&k.as_str()) => {}
                    Some(s) => {
                        out.insert(k, coerce(s, v));
                    }
                    None => {
                        out.insert(k, v);
                    }
                }
            }
            Value::Object(out)
        }
        (Some("array"), Value::Array(items)) => {
            Value::Array(items.into_iter().map(|v| coerce(&schema["items"], v)).collect())
        }
        (Some("array"), v) if !v.is_null() => Value::Array(vec![coerce(&schema["items"], v)]),
        (Some("number"), Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && !s.trim().is_empty() => serde_json::Number::from_f64(n)
                .map(|n| {
                    // Keep integers as integers, as JSON.parse would.
                    if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                        Value::from(n.as_f64().unwrap() as i64)
                    } else {
                        Value::Number(n)
                    }
                })
                .unwrap_or(Value::String(s)),
            _ => Value::String(s),
        },
        (Some("boolean"), Value::String(s)) if s == "true" || s == "false" => Value::Bool(s == "true"),
        (_, v) => v,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
    }
}

fn display(pointer: &str) -> String {
    if pointer.is_empty() {
        "root".into()
    } else {
        pointer[1..].split('/').collect::<Vec<_>>().join(".")
    }
}

fn check(schema: &Value, v: &Value, path: &str, errors: &mut Errors) {
    let Some(ty) = schema["type"].as_str() else { return };
    let ok = match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => type_name(v) == "integer",
        "boolean" => v.is_boolean(),
        _ => true,
    };
    if !ok {
        errors.push((display(path), format!("expected {ty}, got {}", type_name(v))));
        return;
    }
    if let Value::Object(map) = v {
        for k in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !map.contains_key(k) {
                errors.push((display(&format!("{path}/{k}")), "missing".into()));
            }
        }
        if let Some(props) = schema["properties"].as_object() {
            for (k, s) in props {
                if let Some(pv) = map.get(k) {
                    check(s, pv, &format!("{path}/{k}"), errors);
                }
            }
        }
    }
    if let Value::Array(items) = v {
        for (i, item) in items.iter().enumerate() {
            check(&schema["items"], item, &format!("{path}/{i}"), errors);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coerces_and_reports_like_pi_schema() {
        let s = json!({"type":"object","required":["path"],"properties":{"path":{"type":"string"},"limit":{"type":"number"},"edits":{"type":"array","items":{"type":"object","required":["oldText"],"properties":{"oldText":{"type":"string"}}}}}});
        assert_eq!(parse(&s, &json!({"path":"a","limit":"5"})).unwrap(), json!({"path":"a","limit":5}));
        assert_eq!(parse(&s, &json!({"path":"a","limit":null})).unwrap(), json!({"path":"a"}));
        assert_eq!(
            parse(&s, &json!({"path":"a","edits":{"oldText":"x"}})).unwrap(),
            json!({"path":"a","edits":[{"oldText":"x"}]})
        );
        assert_eq!(
            parse(&s, &json!({"path":3,"edits":[{}]})).unwrap_err(),
            vec![
                ("path".to_string(), "expected string, got integer".to_string()),
                ("edits.0.oldText".to_string(), "missing".to_string())
            ]
        );
        assert_eq!(
            parse(&s, &json!("x")).unwrap_err(),
            vec![("root".to_string(), "expected object, got string".to_string())]
        );
    }
}
