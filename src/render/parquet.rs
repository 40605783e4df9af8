//! `pisces export --parquet`: the tables' rows written as Parquet files (arrow and parquet
//! crates, Snappy-compressed), one file per table and session, each carrying the schema's
//! version in its metadata (`pisces.schema`). Columns are documented in
//! docs/export-parquet.md; a file is written whole beside its place and renamed into it,
//! so a reader never sees half a file.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::export::tables::{Owner, SessionRows, SCHEMA};
use crate::session::usage::Totals;
use crate::store::summary::Summary;

/// One row of `usage`: a model response, counted once.
pub struct UsageRow<'a> {
    pub owner: &'a Owner,
    /// The response's key (a hash of the format's request and message ids), in hex.
    pub key: String,
    pub timestamp: Option<i64>,
    pub model: Option<&'a str>,
    pub totals: &'a Totals,
}

/// A table being built: its columns, each a name, a type and the array.
#[derive(Default)]
struct Table {
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
}

impl Table {
    fn add(&mut self, name: &str, ty: DataType, nullable: bool, array: ArrayRef) {
        self.fields.push(Field::new(name, ty, nullable));
        self.columns.push(array);
    }

    fn strings<'s>(&mut self, name: &str, values: impl Iterator<Item = Option<&'s str>>) {
        let mut b = StringBuilder::new();
        for v in values {
            b.append_option(v);
        }
        self.add(name, DataType::Utf8, true, Arc::new(b.finish()));
    }

    fn ints(&mut self, name: &str, values: impl Iterator<Item = Option<i64>>) {
        let mut b = Int64Builder::new();
        for v in values {
            b.append_option(v);
        }
        self.add(name, DataType::Int64, true, Arc::new(b.finish()));
    }

    fn floats(&mut self, name: &str, values: impl Iterator<Item = f64>) {
        let mut b = Float64Builder::new();
        for v in values {
            b.append_value(v);
        }
        self.add(name, DataType::Float64, false, Arc::new(b.finish()));
    }

    fn bools(&mut self, name: &str, values: impl Iterator<Item = Option<bool>>) {
        let mut b = BooleanBuilder::new();
        for v in values {
            b.append_option(v);
        }
        self.add(name, DataType::Boolean, true, Arc::new(b.finish()));
    }

    fn lists<'s>(&mut self, name: &str, values: impl Iterator<Item = &'s [String]>) {
        let mut b = ListBuilder::new(StringBuilder::new());
        for v in values {
            for s in v {
                b.values().append_value(s);
            }
            b.append(true);
        }
        let ty = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
        self.add(name, ty, true, Arc::new(b.finish()));
    }

    /// The owner's two columns, repeated on `n` rows.
    fn owner(&mut self, o: &Owner, n: usize) {
        self.strings("session", std::iter::repeat_n(Some(o.session.as_str()), n));
        self.strings("session_id", std::iter::repeat_n(Some(o.session_id.as_str()), n));
    }

    /// Writes the table to `path` (its folder made if needed), whole or not at all.
    fn write(self, path: &Path) -> std::io::Result<()> {
        let schema = Arc::new(Schema::new(self.fields));
        let batch = RecordBatch::try_new(schema.clone(), self.columns).map_err(std::io::Error::other)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(vec![KeyValue::new("pisces.schema".to_string(), SCHEMA.to_string())]))
            .build();
        let tmp = path.with_extension("parquet.tmp");
        let file = std::fs::File::create(&tmp)?;
        let mut w = ArrowWriter::try_new(file, schema, Some(props)).map_err(std::io::Error::other)?;
        w.write(&batch).map_err(std::io::Error::other)?;
        w.close().map_err(std::io::Error::other)?;
        std::fs::rename(&tmp, path)
    }
}

fn ms(t: Option<f64>) -> Option<i64> {
    t.filter(|t| t.is_finite()).map(|t| t as i64)
}

/// `sessions`: one row, the session's `ls` row.
pub fn write_session(path: &Path, o: &Owner, s: &Summary) -> std::io::Result<()> {
    let mut t = Table::default();
    // (The agent is the partition's column: a column of the same name would clash.)
    t.owner(o, 1);
    t.strings("title", std::iter::once(s.title.as_deref()));
    t.strings("cwd", std::iter::once(s.cwd.as_deref()));
    t.ints("started", std::iter::once(ms(s.started)));
    t.ints("last_active", std::iter::once(ms(s.last_active)));
    t.ints("entries", std::iter::once(Some(s.entries as i64)));
    t.ints("leaves", std::iter::once(Some(s.leaves as i64)));
    t.ints("forks", std::iter::once(Some(s.forks as i64)));
    t.strings("parent", std::iter::once(s.parent.as_deref()));
    t.lists("models", std::iter::once(s.models.as_slice()));
    totals(&mut t, std::slice::from_ref(&s.totals));
    t.write(path)
}

fn totals(t: &mut Table, rows: &[Totals]) {
    t.floats("input", rows.iter().map(|r| r.input));
    t.floats("output", rows.iter().map(|r| r.output));
    t.floats("cache_read", rows.iter().map(|r| r.cache_read));
    t.floats("cache_write", rows.iter().map(|r| r.cache_write));
    t.floats("tokens", rows.iter().map(Totals::tokens));
    t.floats("cost", rows.iter().map(|r| r.cost));
}

/// `entries`.
pub fn write_entries(path: &Path, r: &SessionRows) -> std::io::Result<()> {
    let e = &r.entries;
    let mut t = Table::default();
    t.owner(&r.owner, e.len());
    t.strings("entry_id", e.iter().map(|x| x.id.as_deref()));
    t.strings("parent_id", e.iter().map(|x| x.parent_id.as_deref()));
    t.ints("line", e.iter().map(|x| Some(x.line)));
    t.strings("type", e.iter().map(|x| Some(x.kind)));
    t.strings("role", e.iter().map(|x| x.role));
    t.ints("timestamp", e.iter().map(|x| x.timestamp));
    t.ints("depth", e.iter().map(|x| Some(x.depth)));
    t.lists("tips", e.iter().map(|x| x.tips.as_slice()));
    t.write(path)
}

/// `messages`.
pub fn write_messages(path: &Path, r: &SessionRows) -> std::io::Result<()> {
    let m = &r.messages;
    let mut t = Table::default();
    t.owner(&r.owner, m.len());
    t.strings("entry_id", m.iter().map(|x| x.entry_id.as_deref()));
    t.ints("line", m.iter().map(|x| Some(x.line)));
    t.strings("role", m.iter().map(|x| Some(x.role.as_str())));
    t.ints("timestamp", m.iter().map(|x| x.timestamp));
    t.strings("text", m.iter().map(|x| Some(x.text.as_str())));
    t.strings("thinking", m.iter().map(|x| x.thinking.as_deref()));
    t.write(path)
}

/// `tool_calls`.
pub fn write_tool_calls(path: &Path, r: &SessionRows) -> std::io::Result<()> {
    let c = &r.tool_calls;
    let mut t = Table::default();
    t.owner(&r.owner, c.len());
    t.strings("entry_id", c.iter().map(|x| x.entry_id.as_deref()));
    t.ints("line", c.iter().map(|x| Some(x.line)));
    t.strings("call_id", c.iter().map(|x| Some(x.call_id.as_str())));
    t.strings("name", c.iter().map(|x| Some(x.name.as_str())));
    t.strings("arguments", c.iter().map(|x| Some(x.arguments.as_str())));
    t.strings("result_entry_id", c.iter().map(|x| x.result_entry_id.as_deref()));
    t.strings("result", c.iter().map(|x| x.result.as_deref()));
    t.bools("is_error", c.iter().map(|x| x.is_error));
    t.ints("exit_code", c.iter().map(|x| x.exit_code));
    t.ints("duration_ms", c.iter().map(|x| x.duration_ms));
    t.write(path)
}

/// `usage`: the responses a session owns.
pub fn write_usage(path: &Path, rows: &[UsageRow]) -> std::io::Result<()> {
    let mut t = Table::default();
    t.strings("session", rows.iter().map(|r| Some(r.owner.session.as_str())));
    t.strings("session_id", rows.iter().map(|r| Some(r.owner.session_id.as_str())));
    t.strings("key", rows.iter().map(|r| Some(r.key.as_str())));
    t.ints("timestamp", rows.iter().map(|r| r.timestamp));
    t.strings("model", rows.iter().map(|r| r.model));
    let totals: Vec<Totals> = rows.iter().map(|r| *r.totals).collect();
    self::totals(&mut t, &totals);
    t.write(path)
}
