//! Pieces every JSON document shares.

use crate::session::Session;

/// The `session` object every JSON document carries: the file as given, the header's id,
/// the agent that wrote it, version (1 when absent), cwd, the session name and
/// parentSession.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionJson<'s> {
    pub file: &'s str,
    pub id: &'s str,
    pub agent: &'static str,
    pub version: serde_json::Value,
    pub cwd: Option<&'s serde_json::Value>,
    pub name: Option<&'s str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<&'s serde_json::Value>,
}

impl<'s> SessionJson<'s> {
    pub fn of(session: &'s Session) -> SessionJson<'s> {
        let h = &session.header;
        SessionJson {
            file: &session.file,
            id: &h.id,
            agent: session.format().agent,
            version: h.version.clone().unwrap_or(serde_json::Value::from(1)),
            cwd: h.cwd.as_ref(),
            name: session.title.as_deref(),
            parent_session: h.parent_session.as_ref(),
        }
    }
}

/// [`SessionJson`] as a value, for documents built with `json!`.
pub fn session_json(session: &Session) -> serde_json::Value {
    serde_json::to_value(SessionJson::of(session)).unwrap_or_default()
}
