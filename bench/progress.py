"""The progress page for a heavy candidate against today's History page: `python -m
bench.progress` (also run by bench.run).

On a fresh SQLite file (migrated, content loaded), one candidate gets 1,000 attempts spread
over a year, each with five graded steps (the model's grade beside the keyword matcher's, one
in ten self-checked instead), and 10,000 drill answers over the same year. Then, in one
process, one request at a time through Django's test client, the trivial view, History and
the progress page are each fetched ROUNDS times in turn. One JSON line:
{"bench": "progress", "attempts", "drill_answers", "queries", "minimal_p50_ms",
"history_p50_ms", "history_p99_ms", "progress_p50_ms", "progress_p99_ms",
"p50_ratio_vs_history", "p99_ratio_vs_history", "p99_ratio_vs_minimal"}.
The budget: the progress page within History's (a p99 ratio to History of 1.5 or less).
Knobs: BENCH_PROGRESS_ATTEMPTS, BENCH_PROGRESS_DRILLS, BENCH_PROGRESS_ROUNDS, and
BENCH_PROGRESS_PROFILE=1 to print a cProfile of one request to each page instead.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ATTEMPTS = int(os.environ.get("BENCH_PROGRESS_ATTEMPTS", "1000"))
DRILL_ANSWERS = int(os.environ.get("BENCH_PROGRESS_DRILLS", "10000"))
ROUNDS = int(os.environ.get("BENCH_PROGRESS_ROUNDS", "40"))
STEPS = ("clarify", "estimate", "architecture", "bottlenecks", "tradeoffs")
VERDICTS = ("correct", "correct", "correct", "close", "known_mistake", "wrong")


def populate() -> int:
    """The heavy candidate's rows, made with the ORM in bulk; returns the user's id."""
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.db import transaction
    from django.utils import timezone

    from drills.engine import AVAILABLE
    from drills.models import DrillItem, DrillSet
    from practice.models import Attempt, Grade, StepAnswer, Submission
    from questions.models import Question

    rng = random.Random(7)
    now = timezone.now()
    revisions = [q.current_revision for q in Question.objects.all()]
    user = User.objects.create_user("heavy", password="bench-Passphrase-1")
    with transaction.atomic():
        attempts = Attempt.objects.bulk_create(
            Attempt(user=user, revision=rng.choice(revisions), status="finished")
            for _ in range(ATTEMPTS)
        )
        when = {a.pk: now - timedelta(minutes=rng.randrange(365 * 24 * 60)) for a in attempts}
        for attempt in attempts:
            Attempt.objects.filter(pk=attempt.pk).update(started_at=when[attempt.pk])
        answers = StepAnswer.objects.bulk_create(
            StepAnswer(attempt=a, step_key=step, text="answer") for a in attempts for step in STEPS
        )
        submissions = Submission.objects.bulk_create(
            Submission(answer=a, number=1, text="answer", draft_version=1, grade_status="done")
            for a in answers
        )
        for attempt in attempts:
            Submission.objects.filter(answer__attempt=attempt).update(submitted_at=when[attempt.pk])
        grades = []
        for sub in submissions:
            score = rng.random()
            grades.append(Grade(submission=sub, grader="rubric", score=score))
            grader = "self" if rng.random() < 0.1 else "llm"
            grades.append(Grade(submission=sub, grader=grader, score=rng.random()))
        Grade.objects.bulk_create(grades, batch_size=2000)
        sets = DrillSet.objects.bulk_create(
            DrillSet(user=user, created_at=now - timedelta(minutes=rng.randrange(365 * 24 * 60)))
            for _ in range(DRILL_ANSWERS // 5)
        )
        DrillItem.objects.bulk_create(
            (
                DrillItem(
                    drill_set=s,
                    user=user,
                    position=p,
                    kind=rng.choice(AVAILABLE),
                    seed=rng.randrange(2**40),
                    fingerprint=f"{s.pk}-{p}",
                    answer="1",
                    verdict=rng.choice(VERDICTS),
                    answered_at=s.created_at,
                )
                for s in sets
                for p in range(1, 6)
            ),
            batch_size=2000,
        )
    return user.pk


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def inner() -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", verbosity=0)
    call_command("load_content", stdout=open(os.devnull, "w"))
    user_id = populate()
    if os.environ.get("BENCH_PROGRESS_PROFILE"):  # where the page's time goes
        import cProfile

        from django.contrib.auth.models import User

        client = Client()
        client.force_login(User.objects.get(pk=user_id))
        for url in ("/drills/progress/", "/history/"):
            client.get(url)
            cProfile.runctx(f"client.get({url!r})", globals(), locals(), sort="cumtime")
        return
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(pk=user_id))
    urls = {
        "minimal": "/__bench__/minimal",
        "history": "/history/",
        "progress": "/drills/progress/",
    }
    for url in urls.values():  # warm up: templates, the concept copy, the specs
        assert client.get(url).status_code == 200, url
    with CaptureQueriesContext(connection) as captured:
        client.get(urls["progress"])
    queries = len(captured)
    reset_queries()
    samples: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(ROUNDS):
        for name, url in urls.items():
            start = time.perf_counter()
            response = client.get(url)
            samples[name].append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
    p50 = {n: percentile(s, 50) for n, s in samples.items()}
    p99 = {n: percentile(s, 99) for n, s in samples.items()}
    print(
        json.dumps(
            {
                "bench": "progress",
                "attempts": ATTEMPTS,
                "drill_answers": DRILL_ANSWERS,
                "queries": queries,
                "minimal_p50_ms": round(p50["minimal"], 1),
                "history_p50_ms": round(p50["history"], 1),
                "history_p99_ms": round(p99["history"], 1),
                "progress_p50_ms": round(p50["progress"], 1),
                "progress_p99_ms": round(p99["progress"], 1),
                "p50_ratio_vs_history": round(p50["progress"] / p50["history"], 2),
                "p99_ratio_vs_history": round(p99["progress"] / p99["history"], 2),
                "p99_ratio_vs_minimal": round(p99["progress"] / p99["minimal"], 1),
            }
        ),
        flush=True,
    )


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-progress-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("REDIS_URL", None)
    env.pop("GRADER_BASE_URL", None)
    try:
        subprocess.run(
            [sys.executable, "-m", "bench.progress", "--inner"], cwd=ROOT, env=env, check=True
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    inner() if "--inner" in sys.argv else main()
