"""Background tasks (Django's tasks framework, database backend from django-tasks-db)."""

from django.tasks import task

from interview.flow import submission_grade


@task(queue_name="grading")
def grade_submission(submission_id: int) -> str:
    """Grade one submission. Idempotent: a re-run after a crash upserts, never duplicates."""
    submission = submission_grade(submission_id=submission_id)
    return submission.grade_status if submission else "missing"
