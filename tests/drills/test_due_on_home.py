"""The home page lists the soonest due cards, a few at most, and says how many more the drills
page lists: a dozen concepts due would otherwise push the question bank a phone's length
down. The drills page lists every one."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from drills import engine
from drills.models import Card
from drills.templatetags.drills_home import DUE_ON_HOME


def _due_list(html: str) -> str:
    return html.split('<ul class="due-list"')[1].split("</ul>")[0]


def test_the_home_page_lists_the_soonest_due_and_links_the_rest(client, content_loaded):
    user = User.objects.create_user("busy", password="a-long-Passphrase-42")
    kinds = list(engine.AVAILABLE)
    now = timezone.now()
    for minutes, kind in enumerate(kinds):  # the first kind is the soonest due
        Card.objects.create(
            user=user,
            key=f"drill:{kind}",
            source=Card.Source.DRILL,
            due=now - timedelta(minutes=len(kinds) - minutes),
            state={},
        )
    assert len(kinds) > DUE_ON_HOME
    client.force_login(user)
    home = client.get("/").content.decode()
    listed = _due_list(home)
    assert listed.count("<li>") == DUE_ON_HOME
    assert f'name="kind" value="{kinds[0]}"' in listed
    assert f'name="kind" value="{kinds[-1]}"' not in listed
    assert f"{len(kinds) - DUE_ON_HOME} more due today on the drills page" in home

    drills = client.get("/drills/").content.decode()
    assert _due_list(drills).count("<li>") == len(kinds)
    assert "more due today on the drills page" not in drills
