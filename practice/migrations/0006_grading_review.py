from django.db import migrations, models


def move_slo_reviews(apps, schema_editor):
    """SLO card reviews used to ride in Grade.usage["review"]; they have their own field now."""
    Grade = apps.get_model("interview", "Grade")
    for grade in Grade.objects.filter(grader="slo").iterator():
        usage = dict(grade.usage or {})
        review = usage.pop("review", None)
        if review is not None:
            Grade.objects.filter(pk=grade.pk).update(slo_review=review, usage=usage)


def restore_slo_reviews(apps, schema_editor):
    Grade = apps.get_model("interview", "Grade")
    for grade in Grade.objects.filter(grader="slo", slo_review__isnull=False).iterator():
        Grade.objects.filter(pk=grade.pk).update(
            usage={**(grade.usage or {}), "review": grade.slo_review}
        )


class Migration(migrations.Migration):
    dependencies = [
        ("interview", "0005_drop_version_triggers"),
    ]

    operations = [
        migrations.AddField(
            model_name="grade",
            name="slo_review",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="submission",
            name="review_reason",
            field=models.CharField(blank=True, default="", max_length=300),
        ),
        migrations.RunPython(move_slo_reviews, restore_slo_reviews),
    ]
