//! The HTTP APIs pisces talks, one module each: the whole request it sends (the body
//! around the conversation that [`super::wire`] converts, and the headers) and the parser
//! of the streamed reply. [`super::http`] sends the request and feeds the parser.

pub(crate) mod anthropic;
pub(crate) mod openai;
