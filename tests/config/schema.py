"""The schema of the app's tables as the database reports it, in a form two databases can be
compared by: per table, its columns (type, null, size) and its constraints (kind, columns, target),
without names or column order, which differ between a table built at once and one built up
field by field."""

from __future__ import annotations

APP_TABLE_PREFIXES = (
    "interview_", "questions_", "authoring_", "mocks_", "review_", "drills_", "simulator_",
)  # fmt: skip


def schema_of(connection, prefixes=APP_TABLE_PREFIXES) -> dict[str, dict]:
    introspection = connection.introspection
    schema = {}
    with connection.cursor() as cursor:
        for table in sorted(introspection.table_names(cursor)):
            if not table.startswith(prefixes):
                continue
            columns = {
                column.name: [
                    introspection.get_field_type(column.type_code, column),
                    column.null_ok,
                    column.display_size,
                ]
                for column in introspection.get_table_description(cursor, table)
            }
            constraints = sorted(
                "|".join(
                    [
                        _kind(info),
                        ",".join(info["columns"]),
                        ".".join(info["foreign_key"] or ()),
                    ]
                )
                for info in introspection.get_constraints(cursor, table).values()
            )
            schema[table] = {"columns": columns, "constraints": constraints}
    return schema


def _kind(info: dict) -> str:
    if info["primary_key"]:
        return "pk"
    if info["foreign_key"]:
        return "fk"
    if info["unique"]:
        return "unique"
    if info["check"]:
        return "check"
    return "index" if info["index"] else "other"
