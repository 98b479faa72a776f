from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("interview", "0010_mock_sessions"),
    ]

    operations = [
        migrations.AddField(
            model_name="grade",
            name="misconceptions",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
