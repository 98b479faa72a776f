"""One model row by equality, without the ORM's query compiler.

Every signed-in request loads its session, its user and the attempt it is about. Through the
ORM each of those lookups costs about 0.6 ms here, nearly all of it spent building the same
SQL again; the query itself takes 0.04 ms. `get_row` builds the SELECT once per (model,
fields), then runs it on Django's own connection (so transactions, test databases and query
counting see it) and makes the instance with `Model.from_db`, applying the same database
converters the ORM applies, so what comes back is the instance the ORM would have returned.

Only for lookups by equality on concrete fields that match at most one row (primary keys,
unique keys); anything else belongs to the ORM.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import connections, models, router


@cache
def _plan(model: type[models.Model], keys: tuple[str, ...], alias: str):
    connection = connections[alias]
    quote = connection.ops.quote_name
    opts = model._meta
    fields = opts.concrete_fields
    by_name = {f.name: f for f in fields} | {f.attname: f for f in fields}
    by_name["pk"] = opts.pk
    where = [by_name[key] for key in keys]
    sql = "SELECT {} FROM {} WHERE {}".format(
        ", ".join(quote(f.column) for f in fields),
        quote(opts.db_table),
        " AND ".join(f"{quote(f.column)} = %s" for f in where),
    )
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(opts.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if found:
            converters.append((index, column, found))
    return sql, where, [f.attname for f in fields], converters


def get_row[M: models.Model](model: type[M], **equals: Any) -> M | None:
    """The one row of `model` whose fields equal `equals`, or None. Keys are field names,
    attnames (`user_id`) or `pk`; call with the same keys each time and the SQL is reused."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    keys = tuple(sorted(equals))
    sql, where, attnames, converters = _plan(model, keys, alias)
    params = []
    for key, field in zip(keys, where, strict=True):
        value = equals[key]
        if isinstance(value, models.Model):
            value = value.pk
        params.append(field.get_db_prep_value(value, connection, prepared=False))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchmany(2)
    if not rows:
        return None
    if len(rows) > 1:
        raise model.MultipleObjectsReturned(f"get_row({model.__name__}, {keys}) matched several")
    values = list(rows[0])
    for index, column, found in converters:
        for convert in found:
            values[index] = convert(values[index], column, connection)
    return model.from_db(alias, attnames, values)
