"""Drop the database triggers that earlier versions of migrations 0003 and 0004 created.

A database migrated before then still has them; they would bump the versions a second time
(harmless) but break SQLite table rebuilds (an AlterField on a table they name). The writes in
interview.flow bump the versions now. Nothing to undo: the triggers are not coming back.
"""

from django.db import migrations

TABLES = ["interview_stepanswer", "interview_submission", "interview_grade"]
SQLITE_TRIGGERS = [
    f"{table}_bumps_attempt_on_{event}"
    for table in TABLES
    for event in ("insert", "update", "delete")
] + ["interview_stepanswer_row_version"]
POSTGRESQL_TRIGGERS = [(f"{table}_bumps_attempt", table) for table in TABLES] + [
    ("interview_stepanswer_row_version", "interview_stepanswer")
]
POSTGRESQL_FUNCTIONS = [f"{table}_bumps_attempt" for table in TABLES] + [
    "interview_stepanswer_row_version"
]


def drop_triggers(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for trigger in SQLITE_TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    elif vendor == "postgresql":
        for trigger, table in POSTGRESQL_TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
        for function in POSTGRESQL_FUNCTIONS:
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}()")


class Migration(migrations.Migration):
    dependencies = [("interview", "0004_stepanswer_row_version")]

    operations = [migrations.RunPython(drop_triggers, migrations.RunPython.noop)]
