"""The drills app's first two migrations (its tables, then instructors' assignments) as one;
no database applied one without the other."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('drills', '0001_initial'), ('drills', '0002_assignment')]

    initial = True

    dependencies = [
        ('questions', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ConceptSync',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('last_grade_id', models.PositiveBigIntegerField(default=0)),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name='DrillSet',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField()),
                ('focus', models.CharField(blank=True, default='', max_length=40)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drill_sets', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-pk'],
            },
        ),
        migrations.CreateModel(
            name='Card',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=100)),
                ('source', models.CharField(choices=[('drill', 'Drill'), ('concept', 'Concept')], max_length=10)),
                ('state', models.JSONField(default=dict)),
                ('due', models.DateTimeField()),
                ('last_review', models.DateTimeField(blank=True, null=True)),
                ('reviews', models.PositiveIntegerField(default=0)),
                ('lapses', models.PositiveIntegerField(default=0)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cards', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['due'],
                'indexes': [models.Index(fields=['user', 'due'], name='drills_card_user_id_ed17f9_idx')],
                'constraints': [models.UniqueConstraint(fields=('user', 'key'), name='one_card_per_key')],
            },
        ),
        migrations.CreateModel(
            name='DrillItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField()),
                ('kind', models.CharField(max_length=40)),
                ('seed', models.BigIntegerField()),
                ('fingerprint', models.CharField(max_length=32)),
                ('answer', models.CharField(blank=True, default='', max_length=500)),
                ('verdict', models.CharField(blank=True, default='', max_length=20)),
                ('mistake', models.CharField(blank=True, default='', max_length=40)),
                ('hint', models.TextField(blank=True, default='')),
                ('value', models.FloatField(blank=True, null=True)),
                ('expected', models.FloatField(blank=True, null=True)),
                ('answered_at', models.DateTimeField(blank=True, null=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drill_items', to=settings.AUTH_USER_MODEL)),
                ('drill_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='drills.drillset')),
            ],
            options={
                'ordering': ['drill_set', 'position'],
                'indexes': [models.Index(fields=['user', 'answered_at'], name='drills_dril_user_id_91cb2a_idx'), models.Index(fields=['user', 'kind', 'fingerprint'], name='drills_dril_user_id_492ac1_idx')],
                'constraints': [models.UniqueConstraint(fields=('drill_set', 'position'), name='one_item_per_slot')],
            },
        ),
        migrations.CreateModel(
            name='Assignment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(blank=True, default='', max_length=40)),
                ('note', models.CharField(blank=True, default='', max_length=300)),
                ('created_at', models.DateTimeField()),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drill_assignments', to=settings.AUTH_USER_MODEL)),
                ('instructor', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drill_assignments_given', to=settings.AUTH_USER_MODEL)),
                ('question', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='questions.question')),
                ('drill_set', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='drills.drillset')),
            ],
            options={
                'ordering': ['-created_at', '-pk'],
                'indexes': [models.Index(fields=['candidate', 'started_at'], name='drills_assi_candida_571f6b_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('kind', ''), ('question__isnull', False)), models.Q(models.Q(('kind', ''), _negated=True), ('question__isnull', True)), _connector='OR'), name='assignment_drills_or_question')],
            },
        ),
    ]
