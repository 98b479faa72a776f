"""A follow-up's answer has no SLO card and no napkin boxes, yet answers submitted before the
graders knew it got an "slo" or "checker" grade of 0, checked as an empty card or worksheet,
and blended into their score at its weight. Those grades go; the step's main answers keep
theirs."""

from django.db import migrations

CARD_GRADERS = ("slo", "checker")


def follow_up_card_grades_go(apps, schema_editor):
    grade = apps.get_model("interview", "Grade")
    grade.objects.filter(grader__in=CARD_GRADERS).exclude(
        submission__answer__follow_up_id=""
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("interview", "0013_self_check"),
    ]

    # Nothing to put back: the grades removed were wrong.
    operations = [migrations.RunPython(follow_up_card_grades_go, migrations.RunPython.noop)]
