#!/usr/bin/env python3
"""Questions about a `pisces export --parquet` folder, answered by DuckDB (SQL over the
files, partitions read from the paths), printed as one JSON document for the tests to
compare with `pisces stats`, `pisces ls` and `pisces grep`.

Usage: query.py DIR LITERAL
"""
import json
import sys

import duckdb

d, literal = sys.argv[1], sys.argv[2]
c = duckdb.connect()


def t(table):
    return f"read_parquet('{d}/{table}/**/*.parquet', hive_partitioning = true, union_by_name = true)"


def rows(sql, *params):
    return c.execute(sql, list(params)).fetchall()


usage = rows(f"""select count(*), coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0),
                        coalesce(sum(cache_write), 0), coalesce(sum(cost), 0) from {t('usage')}""")[0]
sessions = {a: {"sessions": n, "entries": e, "leaves": l}
            for a, n, e, l in rows(f"select agent, count(*), sum(entries), sum(leaves) from {t('sessions')} group by agent")}
entries = {a: n for a, n in rows(f"select agent, count(*) from {t('entries')} group by agent")}
like = "%" + literal.replace("%", "\\%").replace("_", "\\_") + "%"
matching = sorted(s for (s,) in rows(f"""
    select distinct session from {t('messages')} where text ilike ? escape '\\' or thinking ilike ? escape '\\'
    union
    select distinct session from {t('tool_calls')} where (name || ' ' || arguments) ilike ? escape '\\'
""", like, like, like))
schemas = sorted({v.decode() for (v,) in rows(f"select value from parquet_kv_metadata('{d}/*/**/*.parquet') where key = 'pisces.schema'")})
print(json.dumps({
    "usage": {"responses": usage[0], "input": usage[1], "output": usage[2], "cacheRead": usage[3],
              "cacheWrite": usage[4], "cost": usage[5]},
    "sessions": sessions,
    "entries": entries,
    "matching": matching,
    "schemas": schemas,
}))
