"""The SLO card's load figure is labelled as the load the candidate says it is: it read "Peak
load (QPS)" after they chose "That load figure is the: mean"."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice.models import Attempt, StepAnswer
from questions.models import Question

pytestmark = pytest.mark.django_db


def load_label(page: str) -> str:
    label = re.search(r'<label for="card-peak_qps">(.*?)</label>', page, re.S).group(1)
    return " ".join(re.sub(r"<[^>]+>", "", label).split())


@pytest.mark.parametrize(("kind", "label"), [("mean", "Mean load"), ("peak", "Peak load")])
def test_the_load_label_says_the_kind_the_card_holds(bank_loaded, kind, label):
    user = User.objects.create_user("loader", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = Attempt.objects.create(user=user, revision=revision)
    StepAnswer.objects.create(
        attempt=attempt, step_key="clarify", text="", version=1,
        fields={"peak_qps": "20", "qps_kind": kind},
    )  # fmt: skip
    client = Client()
    client.force_login(user)
    page = client.get(f"/attempts/{attempt.pk}/steps/clarify/").content.decode()
    assert load_label(page) == f"{label} (QPS)"
    # Both words are on the page for practice.js to follow a change of the radios.
    assert 'data-peak="Peak load" data-mean="Mean load"' in page


@pytest.mark.browser
def test_the_load_label_follows_the_radios_live(open_step):
    from playwright.sync_api import expect

    page, _ = open_step("clarify")
    label = page.locator("label[for=card-peak_qps]")
    expect(label).to_have_text(re.compile(r"^\s*Peak load\s*\(QPS\)\s*$"))
    page.get_by_label("mean", exact=True).check()
    expect(label).to_have_text(re.compile(r"^\s*Mean load\s*\(QPS\)\s*$"))
    expect(page.get_by_label("Mean load (QPS)")).to_have_id("card-peak_qps")
    page.get_by_label("peak", exact=True).check()
    expect(label).to_have_text(re.compile(r"^\s*Peak load\s*\(QPS\)\s*$"))
