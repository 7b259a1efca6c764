"""The weekly digest as a person meets it: on Settings they give an address,
a day, an hour and how many years back; the email that comes (through a
real mail server in this process, aiosmtpd over STARTTLS with a sign-in)
has a link that confirms it; then "Send me this week's digest now" brings
the digest, which reads well in a browser (it is shown here with its inline
covers, as a mail client shows it)."""

from __future__ import annotations

import base64
import re

from playwright.sync_api import expect

from mail_server import running_mail_server
from test_accessibility import Scans

ADDRESS = "listener@example.org"


def test_opt_in_confirm_from_the_email_and_get_the_digest(pages, stack, fake, tmp_path, shot):
    with running_mail_server(tmp_path) as mail:
        app = stack.app(fake, "--demo", environment={"VINYLOGUE_SMTP_URL": mail.url(), "VINYLOGUE_MAIL_FROM": "vinylogue@example.test",
                                                     "VINYLOGUE_SMTP_CA_FILE": str(mail.ca_file)})
        page = pages.new_page()
        page.goto(app("/settings"))
        section = page.locator("#digest")
        expect(section.get_by_role("heading", name="This week, years ago, by email")).to_be_visible()
        expect(section).to_contain_text("Off. Give an address")
        section.get_by_label("Email address").fill(ADDRESS)
        section.get_by_label("Day").select_option(label="Friday")
        section.get_by_label("Hour (in your time zone)").select_option(label="19:00")
        section.get_by_label("Years back").select_option(label="2 years")
        section.get_by_role("button", name="Save the digest").click()
        expect(page.locator("#digest").get_by_role("status")).to_contain_text("Vinylogue is sending a link to that address")
        expect(page.locator("#digest")).to_contain_text(f"Waiting for you to confirm {ADDRESS}")
        shot(page, "waiting")

        # The link in the email that came, opened as the person would.
        [confirmation] = mail.wait_for(1)
        text = confirmation.message.get_body(("plain",)).get_content()
        link = re.search(r"http://127\.0\.0\.1:\d+/digest/confirm\?token=[0-9a-f]{64}", text)
        assert link, text
        page.goto(link.group(0))
        expect(page.get_by_role("heading", name="Confirm your weekly digest")).to_be_visible()
        page.get_by_role("button", name="Confirm this address").click()
        expect(page.get_by_role("heading", name="Your weekly digest is on")).to_be_visible()
        expect(page.locator("main")).to_contain_text(f"The first one goes to {ADDRESS} on Friday")
        shot(page, "confirmed")
        page.get_by_role("link", name="Back to Settings").click()
        section = page.locator("#digest")
        expect(section).to_contain_text(f"On: the next one goes to {ADDRESS} on Friday")
        expect(section.get_by_label("Day")).to_have_value("6")
        expect(section.get_by_label("Hour (in your time zone)")).to_have_value("19")

        section.get_by_role("button", name="Send me this week’s digest now").click()
        expect(page.locator("#digest").get_by_role("status")).to_have_text("This week’s digest is on its way.")
        digest = mail.wait_for(2)[1].message
        assert digest["Subject"].startswith("This week a year ago: ")
        page.reload()
        expect(page.locator("#digest")).to_contain_text("Digest sent on request ·")
        shot(page, "settings")

        # The email as a mail client shows it: its covers come from inside it.
        html = digest.get_body(("html",)).get_content()
        for part in digest.walk():
            if part.get_content_maintype() == "image":
                data = base64.b64encode(part.get_content()).decode()
                html = html.replace("cid:" + part["Content-ID"].strip("<>"), f"data:{part.get_content_type()};base64,{data}")
        reader = pages.new_page()
        reader.set_content(html)
        expect(reader.get_by_role("heading", name="This week, years ago")).to_be_visible()
        expect(reader.get_by_role("heading", name="A year ago")).to_be_visible()
        expect(reader.get_by_role("heading", name="2 years ago")).to_be_visible()
        expect(reader.get_by_role("heading", name="3 years ago")).to_have_count(0)
        covers = reader.locator("img")
        assert covers.count() >= 5
        for n in range(covers.count()):
            assert covers.nth(n).evaluate("image => image.complete && image.naturalWidth > 0"), n
        shot(reader, "email")

        # The email's colours are inline, the same in either scheme; the
        # scan tries both all the same, as a reader's client may be in either.
        scans = Scans()
        scans.run(reader, "the digest email")
        confirmation_html = confirmation.message.get_body(("html",))
        if confirmation_html is not None:
            reader.set_content(confirmation_html.get_content())
            scans.run(reader, "the confirmation email")
        scans.check()
