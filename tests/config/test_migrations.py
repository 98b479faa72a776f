"""Schema changes on a SQLite database that holds rows: the migrations leave no trigger to
break SQLite's table rebuilds (earlier releases created some; a database that still has them
is part-way through the squashed migrations and is sent to the release that drops them, see
test_split_upgrade.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Starts processes (servers, commands), each on a SQLite file of its own whatever DATABASE_URL
# says: CI's PostgreSQL run would repeat the SQLite run exactly.
pytestmark = [pytest.mark.processes, pytest.mark.one_database]

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter on its own SQLite file, whatever database the suite uses: a
# schema change in the test database would outlive this test.
SCRIPT = """
import django
django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, migrations, models
from django.db.migrations.loader import MigrationLoader

call_command("migrate", verbosity=0)
call_command("load_content", verbosity=0)

from practice import services as flow
from practice.models import Grade, Submission
from questions.models import Question

user = User.objects.create_user("rows", password="rows-Passphrase-1")
revision = Question.objects.get(slug="chat-api-50qps").current_revision
attempt = flow.attempt_start(user=user, revision=revision)
for step in ("architecture", "bottlenecks", "tradeoffs"):
    answer = flow.answer_open(attempt=attempt, step_key=step)
    submitted = flow.step_submit(answer=answer, text="A router, replicas.", fields={},
                                 base_version=0)
    flow.submission_grade(submission_id=submitted.submission.pk)

with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'")
    triggers = cursor.fetchone()[0]

state = MigrationLoader(connection).project_state()
altered = state.clone()
operation = migrations.AlterField(
    "submission", "text", models.TextField(blank=True, default="", help_text="as submitted")
)
operation.state_forwards("interview", altered)
with connection.schema_editor() as editor:
    operation.database_forwards("interview", editor, state, altered)
print(Submission.objects.count(), Grade.objects.count(), triggers)
"""


def test_altering_submission_on_a_sqlite_database_with_rows_succeeds(tmp_path) -> None:
    database = tmp_path / "rows.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("GRADER_BASE_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    submissions, grades, triggers = map(int, out.stdout.split()[-3:])
    assert submissions == 3 and grades >= 3
    assert triggers == 0
