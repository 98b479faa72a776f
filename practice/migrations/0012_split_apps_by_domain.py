"""Question content, mock interviews and review leave this app for apps of their own.

Their tables stay where they are (each model keeps its `db_table`); the state moves, the
content types follow the models, and grading tasks queued under the old path run."""

import django.db.models.deletion
from django.db import migrations, models

MOVED = {
    "questions": ("concept", "question", "questionrevision"),
    "review": ("gradedispute", "calibrationlabel", "calibrationrun"),
    "mocks": ("mocksession", "mockevent"),
}
DELETED_FIRST = ("MockEvent", "MockSession", "CalibrationLabel", "CalibrationRun", "GradeDispute")
DELETED_LAST = ("QuestionRevision", "Question", "Concept")
# The grading task's import path, as queued rows name it: tasks queued before the move run too.
OLD_TASK, NEW_TASK = "interview.flow.grade_submission", "practice.services.grade_submission"


def moved_rows_follow(apps, schema_editor):
    """Content types (and so permissions) of the moved models, and queued grading tasks."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for app, models_moved in MOVED.items():
        content_type.objects.filter(app_label="interview", model__in=models_moved).update(
            app_label=app
        )
    task_result = apps.get_model("django_tasks_database", "DBTaskResult")
    task_result.objects.filter(task_path=OLD_TASK).update(task_path=NEW_TASK)


def moved_rows_go_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for app, models_moved in MOVED.items():
        content_type.objects.filter(app_label=app, model__in=models_moved).update(
            app_label="interview"
        )
    task_result = apps.get_model("django_tasks_database", "DBTaskResult")
    task_result.objects.filter(task_path=NEW_TASK).update(task_path=OLD_TASK)


class Migration(migrations.Migration):
    dependencies = [
        ('interview', '0001_squashed_0011_miscon_grade_misconceptions'),
        ('questions', '0001_initial'),
        ('authoring', '0002_question_content_app'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('django_tasks_database', '0021_conditional_partial_index_ordering'),
    ]

    operations = [
        # The tables stay: only Django's idea of which app owns them changes. The models that
        # point at others go first, and the question's link to its current revision before
        # the revision itself.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                *[migrations.DeleteModel(name) for name in DELETED_FIRST],
                migrations.AlterField(
                    model_name="attempt",
                    name="revision",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="attempts",
                        to="questions.questionrevision",
                    ),
                ),
                migrations.RemoveField(model_name="question", name="current_revision"),
                *[migrations.DeleteModel(name) for name in DELETED_LAST],
            ],
        ),
        migrations.RunPython(moved_rows_follow, moved_rows_go_back),
    ]
