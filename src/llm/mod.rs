//! Talking to models: provider request formats (and, later, the HTTP providers).

pub mod wire;
