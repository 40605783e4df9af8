//! The subset of pi-schema's `parse()` (coerce, then validate) the built-in tools' schemas
//! need: objects with `required`/`properties`, arrays with `items`, string, number, boolean.
//!
//! Coercion (pi-schema coerce.js): optional properties set to `null` are dropped, a single
//! value where an array is expected is wrapped into one, and primitives are converted by
//! type as its `coercePrimitive` does (strings in JavaScript's number syntax and booleans to
//! numbers, `"true"`/`"false"`/1/0 to booleans, numbers and booleans to strings).
//!
//! Errors are pi-schema's (explain.js): a path as dotted segments (`edits.0.oldText`, `root`
//! for the top) and `missing` or `expected <type>, got <typeName>`.

use serde_json::{Map, Value};

use crate::session::js;

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
        // Pass 3 of pi-schema's coerce: primitives by type (`coercePrimitive`).
        (Some(ty @ ("number" | "integer")), v) => {
            let parsed = match &v {
                Value::Null => Some(0.0),
                Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
                Value::String(s) if !s.trim_matches(js::is_js_whitespace).is_empty() => {
                    js_to_number(s).filter(|n| if ty == "number" { n.is_finite() } else { n.fract() == 0.0 })
                }
                _ => None,
            };
            parsed.map_or(v, js::number)
        }
        (Some("boolean"), v) => match v {
            Value::Null => Value::Bool(false),
            Value::String(s) if s == "true" || s == "false" => Value::Bool(s == "true"),
            Value::Number(n) if n.as_f64() == Some(1.0) || n.as_f64() == Some(0.0) => {
                Value::Bool(n.as_f64() == Some(1.0))
            }
            v => v,
        },
        (Some("string"), v) => match v {
            Value::Null => Value::String(String::new()),
            Value::Bool(b) => Value::String(b.to_string()),
            Value::Number(n) => Value::String(js::to_js_string(Some(&n.as_f64().map_or(Value::Number(n), js::number)))),
            v => v,
        },
        (_, v) => v,
    }
}

/// JavaScript's `Number(string)`: surrounding whitespace ignored, decimal literals (with an
/// exponent, `.5`, `5.`), `0x`/`0o`/`0b` integers, `Infinity`; `None` for NaN.
fn js_to_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(js::is_js_whitespace);
    if t.is_empty() {
        return Some(0.0);
    }
    for (prefix, radix) in [("0x", 16), ("0X", 16), ("0o", 8), ("0O", 8), ("0b", 2), ("0B", 2)] {
        if let Some(digits) = t.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            return Some(
                digits.chars().fold(0.0, |n, c| n * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))),
            );
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return Some(if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // Only digits, one dot and an exponent: Rust's parser also takes `inf` and `nan`.
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let digits = mantissa.chars().filter(|c| *c != '.').count();
    let valid_mantissa = digits > 0
        && mantissa.chars().filter(|c| *c == '.').count() <= 1
        && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.');
    let valid_exponent = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    if !(valid_mantissa && valid_exponent) {
        return None;
    }
    t.parse::<f64>().ok()
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
            parse(&s, &json!({"path":{},"edits":[{}]})).unwrap_err(),
            vec![
                ("path".to_string(), "expected string, got object".to_string()),
                ("edits.0.oldText".to_string(), "missing".to_string())
            ]
        );
        // pi-schema's primitive coercions: numbers and booleans to strings, JS number syntax,
        // booleans to numbers, 1/0 to booleans.
        let p =
            json!({"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"},"b":{"type":"boolean"}}});
        assert_eq!(parse(&p, &json!({"s":5,"n":"0x3","b":1})).unwrap(), json!({"s":"5","n":3,"b":true}));
        assert_eq!(parse(&p, &json!({"s":2.5,"n":true,"b":0})).unwrap(), json!({"s":"2.5","n":1,"b":false}));
        assert_eq!(
            parse(&p, &json!({"s":false,"n":" 1e2 ","b":"true"})).unwrap(),
            json!({"s":"false","n":100,"b":true})
        );
        assert!(parse(&p, &json!({"n":"inf"})).is_err());
        assert!(parse(&p, &json!({"n":"Infinity"})).is_err());
        assert!(parse(&p, &json!({"b":2})).is_err());
        assert_eq!(
            parse(&s, &json!("x")).unwrap_err(),
            vec![("root".to_string(), "expected object, got string".to_string())]
        );
    }
}
