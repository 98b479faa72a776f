"""A dispute keeps whether it was sent on the candidate's own self-check (a request for an
instructor's grade), so a model grade that arrives later does not turn it into a dispute of
that grade. Disputes already stored take it from their grades as they stand: a self-check
and no model grade (the instructor's aside, as `review.services.asks_for_a_grade` reads)."""

from django.db import migrations, models


def sent_on_self_check(apps, schema_editor):
    dispute = apps.get_model("review", "GradeDispute")
    dispute.objects.filter(submission__grades__grader="self").exclude(
        submission__grades__grader="llm"
    ).update(asks_for_grade=True)


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0001_initial"),
        ("interview", "0014_follow_up_card_grades"),
    ]

    operations = [
        migrations.AddField(
            model_name="gradedispute",
            name="asks_for_grade",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(sent_on_self_check, migrations.RunPython.noop),
    ]
