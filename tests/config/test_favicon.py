"""/favicon.ico: pages name their SVG icon, and a client that asks the old fixed address
(a bookmark, a feed reader) is sent to it instead of a 404."""


def test_the_old_icon_address_leads_to_the_sites_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302  # the icon's stored name changes with its content
    icon = client.get(response["Location"])
    assert icon.status_code == 200 and "svg" in icon["Content-Type"]
