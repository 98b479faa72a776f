"""StepAnswer.row_version, kept by trigger; an answer's edits stop bumping its attempt.

Until now every write to an answer bumped Attempt.state_version, so one autosave on one step
made every cached page of the attempt render again. Now an UPDATE of an answer bumps that
answer's own row_version, and pages are keyed on the attempt's state_version plus the
row_versions of the answers they show. Inserts and deletes of answers, and every write to
submissions and grades, still bump the attempt (migration 0003).
"""

from django.db import migrations, models

from importlib import import_module

# Migration 0003's nine triggers: SQLite rebuilds a table to add a column, and a trigger that
# names the table mid-rebuild fails, so they are dropped around the AddField and made again.
state_triggers = import_module("interview.migrations.0003_attempt_state_version")._triggers

SQLITE_OLD = "interview_stepanswer_bumps_attempt_on_update"
SQLITE_NEW = "interview_stepanswer_row_version"
PG_FUNCTION = "interview_stepanswer_row_version"


def _sqlite(schema_editor, forward: bool) -> None:
    if forward:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {SQLITE_OLD}")
        # The inner UPDATE does not fire this trigger again: SQLite's recursive_triggers is off
        # unless a connection turns it on, and nothing here does.
        schema_editor.execute(
            f"CREATE TRIGGER {SQLITE_NEW} AFTER UPDATE ON interview_stepanswer FOR EACH ROW "
            "BEGIN UPDATE interview_stepanswer SET row_version = OLD.row_version + 1 "
            "WHERE id = NEW.id; END"
        )
    else:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {SQLITE_NEW}")


def _postgresql(schema_editor, forward: bool) -> None:
    if forward:
        schema_editor.execute(
            "DROP TRIGGER IF EXISTS interview_stepanswer_bumps_attempt ON interview_stepanswer"
        )
        schema_editor.execute(
            "CREATE TRIGGER interview_stepanswer_bumps_attempt AFTER INSERT OR DELETE "
            "ON interview_stepanswer FOR EACH ROW "
            "EXECUTE FUNCTION interview_stepanswer_bumps_attempt()"
        )
        # BEFORE UPDATE: whatever row_version the statement wrote, the row gets the old one + 1.
        schema_editor.execute(
            f"CREATE OR REPLACE FUNCTION {PG_FUNCTION}() RETURNS trigger AS $$\n"
            "BEGIN NEW.row_version := OLD.row_version + 1; RETURN NEW; END $$ "
            "LANGUAGE plpgsql"
        )
        schema_editor.execute(
            f"CREATE TRIGGER {PG_FUNCTION} BEFORE UPDATE ON interview_stepanswer "
            f"FOR EACH ROW EXECUTE FUNCTION {PG_FUNCTION}()"
        )
    else:
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {PG_FUNCTION}() CASCADE")


def _row_version_triggers(forward: bool):
    """Forward: 0003's triggers again, less the answer-update one, plus row_version's.
    Backward: none at all (0003's come back after the column goes)."""

    def apply(apps, schema_editor) -> None:
        vendor = schema_editor.connection.vendor
        if forward:
            state_triggers(create=True)(apps, schema_editor)
        if vendor == "sqlite":
            _sqlite(schema_editor, forward)
        elif vendor == "postgresql":
            _postgresql(schema_editor, forward)
        else:
            raise RuntimeError(f"no row_version triggers written for {vendor}")
        if not forward:
            state_triggers(create=False)(apps, schema_editor)

    return apply


class Migration(migrations.Migration):
    dependencies = [("interview", "0003_attempt_state_version")]

    operations = [
        migrations.RunPython(state_triggers(create=False), state_triggers(create=True)),
        migrations.AddField(
            model_name="stepanswer",
            name="row_version",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(_row_version_triggers(forward=True), _row_version_triggers(forward=False)),
    ]
