"""Attempt.state_version, kept by triggers on the attempt's answers, submissions and grades.

Triggers rather than application code so that no write path can forget it: the grading
worker, `requeue_grading`, a queryset .update() and the admin all bump it the same way.
"""

from django.db import migrations, models

# (table, how to find the attempt id from the changed row {r})
SOURCES = [
    ("interview_stepanswer", "{r}.attempt_id"),
    (
        "interview_submission",
        "(SELECT attempt_id FROM interview_stepanswer WHERE id = {r}.answer_id)",
    ),
    (
        "interview_grade",
        "(SELECT a.attempt_id FROM interview_stepanswer a"
        " JOIN interview_submission s ON s.answer_id = a.id WHERE s.id = {r}.submission_id)",
    ),
]
EVENTS = [("insert", "INSERT", "NEW"), ("update", "UPDATE", "NEW"), ("delete", "DELETE", "OLD")]


def _sqlite(schema_editor, create: bool) -> None:
    for table, attempt_of in SOURCES:
        for name, event, row in EVENTS:
            trigger = f"{table}_bumps_attempt_on_{name}"
            if not create:
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger}")
                continue
            schema_editor.execute(
                f"CREATE TRIGGER {trigger} AFTER {event} ON {table} FOR EACH ROW BEGIN "
                "UPDATE interview_attempt SET state_version = state_version + 1 "
                f"WHERE id = {attempt_of.format(r=row)}; END"
            )


def _postgresql(schema_editor, create: bool) -> None:
    for table, attempt_of in SOURCES:
        function = f"{table}_bumps_attempt"
        if not create:
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}() CASCADE")
            continue
        schema_editor.execute(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$\n"
            "DECLARE r record;\n"
            "BEGIN\n"
            "  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;\n"
            "  UPDATE interview_attempt SET state_version = state_version + 1\n"
            f"  WHERE id = {attempt_of.format(r='r')};\n"
            "  RETURN NULL;\n"
            "END $$ LANGUAGE plpgsql"
        )
        schema_editor.execute(
            f"CREATE TRIGGER {table}_bumps_attempt AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()"
        )


def _triggers(create: bool):
    def apply(apps, schema_editor) -> None:
        vendor = schema_editor.connection.vendor
        if vendor == "sqlite":
            _sqlite(schema_editor, create)
        elif vendor == "postgresql":
            _postgresql(schema_editor, create)
        else:
            raise RuntimeError(f"no state_version triggers written for {vendor}")

    return apply


class Migration(migrations.Migration):
    dependencies = [("interview", "0002_attempts")]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="state_version",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(_triggers(create=True), _triggers(create=False)),
    ]
